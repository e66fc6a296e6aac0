"""The daemon with parts injected (tablectl/parts.py's ``Factories``): fakes in place of the
display, the buzzer and the hub's link, to see what each is handed, and when."""

from __future__ import annotations

import io
from dataclasses import replace

from controller.gestures import GestureEvent
from controller.inputs import Gesture
from tablectl.config import config_from_data, load_config
from tablectl.daemon import Daemon
from tablectl.parts import ButtonPressed, Factories


class FakeDisplay:
    def __init__(self):
        self.screens = []

    def show(self, screen):
        self.screens.append(screen)
        return True


class FakeBuzzer:
    def __init__(self):
        self.commits = []
        self.played = []
        self.closed = False

    def committed(self, events):
        self.commits.append(list(events))

    def play(self, name):
        self.played.append(name)

    def close(self):
        self.closed = True


class FakeLink:
    connected = True

    def __init__(self):
        self.notified = 0
        self.states = []
        self.stopped = False

    def notify(self):
        self.notified += 1

    def publish_state(self, state):
        self.states.append(state)

    def stop(self):
        self.stopped = True


def _daemon(tmp_path, **sections):
    data = {"table": {"venue": "v", "id": "t1"}, "shoe": {"backend": "none"},
            "button": {"backend": "none"}, "display": {"backend": "none"},
            "buzzer": {"backend": "none"}, "mqtt": {"enabled": False},
            "storage": {"data_dir": str(tmp_path)}}
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    display, buzzer, link = FakeDisplay(), FakeBuzzer(), FakeLink()
    factories = replace(Factories(), display=lambda wiring: display,
                        buzzer=lambda wiring: buzzer, link=lambda wiring: link)
    daemon = Daemon(config_from_data(data, "test"), out=io.StringIO(), factories=factories)
    return daemon, display, buzzer, link


def test_a_fresh_table_draws_the_clock_its_configuration_started(tmp_path):
    # The configured setup and clock are committed before the parts exist: the screen
    # follows them all the same (it subscribes from the first commit on).
    daemon, display, _, _ = _daemon(tmp_path, clock={"structure": "tda-2024"})
    daemon.start()
    try:
        daemon.tick()
        assert display.screens[-1].kind == "clock"
        assert display.screens[-1].title.startswith("LVL 1")
    finally:
        daemon.stop()


def test_each_commit_reaches_the_buzzer_and_the_link_after_the_start(tmp_path):
    daemon, _, buzzer, link = _daemon(tmp_path)
    daemon.start()
    try:
        assert buzzer.commits == [] and link.notified == 0  # the setup was before them
        events = daemon.feed(Gesture("long_hold", t=daemon.now()))  # a floor call
        assert events and buzzer.commits == [events] and link.notified == 1
        assert daemon.feed(Gesture("tap", t=daemon.now())) == []  # nothing to close
        assert buzzer.commits[-1] == [] and link.notified == 1  # nothing new to send
        daemon.tick()
        assert link.states and link.states[-1]["links"] == {"hub": "ok"}
    finally:
        daemon.stop()
    assert buzzer.closed and link.stopped


def test_a_held_button_sounds_at_once_and_commits_nothing(tmp_path):
    daemon, _, buzzer, _ = _daemon(tmp_path)
    daemon.start()
    try:
        journal = len(daemon.outbox.journal_lines())
        daemon.queue.put(ButtonPressed(GestureEvent("held", daemon.now(), detail="hold")))
        daemon.loop(until=daemon.queue.empty)
        assert buzzer.played == ["held"] and buzzer.commits == []
        assert len(daemon.outbox.journal_lines()) == journal
    finally:
        daemon.stop()


def test_a_reload_applies_what_it_can_and_names_what_needs_a_restart(tmp_path):
    path = tmp_path / "table.toml"
    base = (f'[shoe]\nbackend = "none"\n[display]\nbackend = "none"\n[buzzer]\n'
            f'backend = "none"\n[mqtt]\nenabled = false\n[storage]\ndata_dir = "{tmp_path}"\n')
    path.write_text('[table]\nid = "t1"\n[button]\nbackend = "none"\n' + base)
    out = io.StringIO()
    daemon = Daemon(load_config(path), config_path=str(path), out=out).start()
    try:
        path.write_text('[table]\nid = "t2"\nprofile = "roberts-rules"\ndeal_gap = 2.5\n'
                        '[button]\nbackend = "none"\nhold = 2.0\n[button.actions]\n'
                        'tap = "ignore"\n' + base)
        daemon.reload()
        # Every key that changed is named, applied or not; the table runs on as t1 (its
        # topics, its outbox's name), with the button's timing it started with.
        assert out.getvalue().splitlines()[-1] == (
            "[t1] reloaded: table.profile, table.deal_gap, button.actions; restart to apply "
            "table.id, button.hold")
        assert daemon.table.profile.name == "roberts-rules"
        assert daemon.table.config.deal_gap == 2.5
        assert daemon.table.config.gestures["tap"] == "ignore"
        assert (daemon.config.table.id, daemon.config.button.hold) == ("t1", 1.5)
        daemon.reload()  # the same file again: still not applied, still said
        assert out.getvalue().splitlines()[-1] == (
            "[t1] reloaded: nothing changed; restart to apply table.id, button.hold")
        path.write_text('[table]\nid = "t 3"\n' + base)
        daemon.reload()  # refused whole: the running configuration is kept
        assert "reload refused" in out.getvalue() and daemon.config.table.id == "t1"
        path.write_text('[table]\nprofile = "tda-2099"\n[button]\nbackend = "none"\n' + base)
        daemon.reload()  # a profile that does not load: refused, the table deals on
        assert "tda-2099" in out.getvalue().rsplit("reload refused", 1)[1]
        assert daemon.table.profile.name == "roberts-rules"
    finally:
        daemon.stop()


def test_a_part_that_fails_is_said_once_and_the_table_deals_on(tmp_path):
    """A display that raises (an I2C write that failed) or a buzzer that does: the commit is
    made, the floor's command answered, the loop goes on; the failure is said once."""
    def buzzer_down(*_):
        raise OSError("GPIO: busy")

    def display_down(*_):
        raise OSError("I2C: remote I/O error")

    daemon, _, buzzer, _ = _daemon(tmp_path)
    buzzer.committed = buzzer_down  # it follows every commit from the start
    daemon.start()
    try:
        daemon.screen.draw = display_down
        journal = len(daemon.outbox.journal_lines())
        for _ in range(3):
            daemon.feed(Gesture("tap", t=daemon.now()))
            daemon.tick()
        said = [line for line in daemon.out.getvalue().splitlines() if "failed" in line]
        assert len(said) == 2, said
        assert "GPIO: busy" in said[0] and "I2C: remote I/O error" in said[1]
        counts = {name.rsplit(".", 1)[-1]: n for name, n in daemon.part_failures.items()}
        assert counts["buzzer_down"] >= 3 and counts["display_down"] == 3  # each tried again
        # What the taps caused was committed all the same.
        assert len(daemon.outbox.journal_lines()) >= journal + 3
    finally:
        daemon.stop()


def test_a_hand_for_hand_order_the_table_follows_already_commits_nothing(tmp_path):
    """The hub tells every table that joins whether hand-for-hand is on, on or off: an "off"
    to a table that is off, or an "on" to one on, is answered (no refusal) and changes
    nothing: no journal line, no event; an "off" to a table waiting for a release ends it,
    said once."""
    from contract.commands import HandForHandCommand
    from controller.events import HandForHandOrder

    daemon, _, buzzer, link = _daemon(tmp_path)
    daemon.start()
    try:
        journal, seq = len(daemon.outbox.journal_lines()), daemon.events
        off = HandForHandCommand(state=HandForHandOrder.OFF)
        assert daemon.apply_command(off) is None
        assert len(daemon.outbox.journal_lines()) == journal and daemon.events == seq
        assert buzzer.commits == [] and link.notified == 0
        assert daemon.apply_command(HandForHandCommand(state=HandForHandOrder.ON)) is None
        assert daemon.table.hand_for_hand.state == "waiting"
        on_again = len(daemon.outbox.journal_lines())
        assert daemon.apply_command(HandForHandCommand(state=HandForHandOrder.ON)) is None
        assert len(daemon.outbox.journal_lines()) == on_again
        assert daemon.apply_command(off) is None  # a barrier: this one is committed
        assert [[e.state for e in commit] for commit in buzzer.commits] == [["waiting"],
                                                                            ["off"]]
        assert len(daemon.outbox.journal_lines()) == journal + 2
    finally:
        daemon.stop()
