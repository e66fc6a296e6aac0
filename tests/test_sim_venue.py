"""The daemon end to end: `tablectl sim` tables (each `tablectl run` in its own process, the
simulated shoe on a pty, a mock GPIO button pressed by a scripted dealer) against a real broker
and the recorder (the same under chaos: ``test_sim_venue_chaos.py``)."""

from __future__ import annotations

import contextlib
import json
import signal
import time

import pytest

from controller.replay import replay
from harness.netns import unavailable
from houses.loaders import load_structure
from tablectl.sim_venue import SimulatedVenue


def _rulings(events):
    return [(e["hand"], e["action"]) for e in events if e["type"] == "ruling"]


def _records(events):
    return [(e["hand"], e["outcome"], e["hole"], e["board"], e["burns"])
            for e in events if e["type"] == "hand.ended"]


def _recorded(venue, table):
    return [{"type": e["type"], "hand": e["hand"], **e["data"]}
            for e in venue.recorder.envelopes(table.name)]


def _explain(tmp_path, venue, table, journal, events, expected) -> str:
    """Why a table's rulings differ from its script's: whether the core gives the live rulings
    for what the daemon received (its journal), and the first differing hand's inputs as the
    script timed them (scaled to the venue's pace) beside the journal's, written to a file."""
    live, wanted = _rulings(events), _rulings(expected)
    received = _rulings(venue.replay_journal(journal))
    first = next((i for i, (a, b) in enumerate(zip(live, wanted, strict=False)) if a != b),
                 min(len(live), len(wanted)))
    hand = (live + wanted)[first][0] if live + wanted else None
    inputs = ("card", "button", "shoe", "deck_in", "deck_out", "dealer")

    def timed(lines, scale):
        kept = [x for x in lines if x.get("type") in inputs and isinstance(x.get("t"), float | int)]
        return [(round(float(x["t"]) * scale, 3), x.get("card") or x.get("gesture")
                 or x.get("state") or x["type"]) for x in kept]

    script_inputs, journal_inputs = timed(table.lines[1:], venue.pace), timed(journal, 1.0)
    path = tmp_path / f"{table.name}-differs.json"
    path.write_text(json.dumps({"hand": hand, "live": live, "script": wanted,
                                "script_inputs": script_inputs,
                                "journal_inputs": journal_inputs}, indent=1))

    def from_deal(inputs, number):  # the inputs from the number-th deck_in, times from it
        starts = [i for i, (_, what) in enumerate(inputs) if what == "deck_in"]
        first = starts[min(max(0, (number or 1) - 1), len(starts) - 1)] if starts else 0
        return [(round(t - inputs[first][0], 3), what) for t, what in inputs[first:first + 30]]

    rows = "\n".join(f"{a!s:>24} | {b!s:<24}" for a, b in zip(
        from_deal(script_inputs, hand), from_deal(journal_inputs, hand), strict=False))
    return (f"{table.name}: rulings differ from hand {hand} (live {live[first:first + 2]}, "
            f"script {wanted[first:first + 2]}); the journal's replay "
            f"{'gives the live rulings' if received == live else 'differs from the live too'}; "
            f"inputs in {path}; from that deal, script | journal:\n{rows}")


@pytest.mark.slow
@pytest.mark.skipif(unavailable() is None,
                    reason="test_net_venue.py deals the same way on a venue's network and checks "
                           "the tables' hands against their scripts")
def test_three_simulated_tables_match_the_replay_of_their_scripts(tmp_path):
    venue = SimulatedVenue(tmp_path, tables=3, hands=12, pace=0.1, broker="required",
                           irregularities=0.5, seed=11, quiet=True).start()
    try:
        venue.run()
        assert venue.wait_delivered(90)
        for table in venue.tables:
            journal, events = table.journal_and_events()
            expected = list(replay([json.dumps(x) for x in table.lines], venue.profile,
                                   structure_loader=load_structure))
            # The daemon gives the core's rulings for what it received ...
            assert _rulings(events) == _rulings(venue.replay_journal(journal)), table.name
            # ... and received the script's inputs in its rhythm.
            assert _rulings(events) == _rulings(expected), _explain(tmp_path, venue, table,
                                                                   journal, events, expected)
            assert _records(events) == _records(expected), table.name
            assert venue.recorder.seqs(table.name) == list(range(1, table.last_seq() + 1))
            recorded = _recorded(venue, table)
            assert [(e["type"], e["hand"]) for e in recorded] == [
                (e["type"], e.get("hand")) for e in events]
        assert venue.recorder.stats.invalid == 0
    finally:
        venue.stop()


def test_tablectl_sim_with_the_dashboard_runs_the_hub_and_keeps_it_up(tmp_path):
    import re
    import subprocess
    import sys

    from simulators.staff import Staff

    # Port 0: the dashboard says where it listens (a port picked free here could be taken by
    # another test's service before the simulator binds it, with four workers at once).
    process = subprocess.Popen(
        # (Twice the default pace: the hand's script 3 s, not 5; the hub is what is looked at.)
        [sys.executable, "-m", "tablectl.cli", "sim", "--tables", "1", "--hands", "1",
         "--pace", "0.05", "--quiet", "--dashboard", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    try:
        password = address = None
        printed = []
        for line in process.stdout:
            printed.append(line)
            found = re.search(r"dashboard at (http://\S+) \(user demo, password (\S+)\)", line)
            address, password = (found[1], found[2]) if found else (address, password)
            if "the dashboard stays at" in line:
                break
        assert password and address, "the demo login was not printed: " + "".join(printed)
        demo = Staff(address, "demo", password)
        [table] = demo.get("/api/state")[1]["tables"]
        assert table["name"] == "t1" and table["events"] > 10 and table["status"] == "online"
        hands = demo.get("/api/tables/t1/hands")[1]
        assert hands["private"] and hands["hands"][0]["hand"] == 1  # a supervisor's view
    finally:
        process.send_signal(signal.SIGTERM)
        rest = process.communicate(timeout=60)[0]
    assert process.returncode == 0, rest
    assert re.search(r"t1: 1 hands; .*; (\d+)/\1 events at the recorder", rest), rest


def test_a_daemon_prints_its_threads_on_sigusr1_and_deals_on(tmp_path, capsys):
    """What a hang leaves to read: SIGUSR1 to a running daemon puts every thread's stack in
    its output (faulthandler), the simulator copies them to stderr, and the daemon goes on."""
    venue = SimulatedVenue(tmp_path, tables=1, hands=1, broker="none", quiet=True).start()
    try:
        table = venue.tables[0]
        table.dump_threads("was asked, in a test")
        said = capsys.readouterr().err
        assert "t1: the daemon was asked, in a test; its last lines and threads:" in said
        assert "Current thread" in said or "Thread 0x" in said, said[-2000:]
        assert 'File "' in said and "daemon.py" in said, said[-2000:]
        assert table.process is not None and table.process.poll() is None
        table.dump_threads("asked again")  # once a table: a second ask prints nothing
        assert "asked again" not in capsys.readouterr().err
    finally:
        venue.stop()


def test_the_simulators_dealer_follows_the_floor_once_it_changes_the_table(tmp_path):
    """A floor trying the dashboard on simulated tables: a bust-out (or hand-for-hand) and
    the scripted dealer, who dealt the seats the script began with, would go on dealing the
    player who left (cards too many, false alerts at every hand). Once the floor has changed
    the table, the dealer deals each hand to whoever the table seats."""
    import json
    import threading

    from hub.auth import User
    from hub.service import FloorService
    from tests.conftest import wait_for

    venue = SimulatedVenue(tmp_path, tables=1, hands=8, quiet=True, irregularities=0.0,
                           pace=0.05, dashboard="127.0.0.1:0").start()
    dealing = threading.Thread(target=venue.run, daemon=True)
    try:
        table, hub = venue.tables[0], venue.hub
        assert hub is not None
        dealing.start()
        assert wait_for(lambda: table.hands_ended() >= 2, 60)
        seat = max(hub.floor.tables["t1"].seats)
        hub.call(FloorService.bust, User("demo", "supervisor", ""), "t1", seat)
        dealing.join(120)
        assert not dealing.is_alive()
        assert "t1" in venue.off_script and table.hands_ended() >= table.hands_to_end
        _, events = table.journal_and_events()
        started = [e for e in events if e["type"] == "hand.started"]
        assert seat not in started[-1]["seats"]  # dealt without the player who went out
        alerts = [a.kind for a in hub.floor.alerts.values()]
        assert alerts == [], alerts  # no irregularity dealt: no alert, before or after
        assert json.dumps(hub.floor.tables["t1"].seating["state"]) == '"dealt"'
    finally:
        venue.stop()


@contextlib.contextmanager
def _a_dealer_at_one_table(tmp_path):
    """One simulated table (no broker, no irregularity) and a following dealer at it."""
    import threading

    from tablectl.sim_venue import FollowingDealer

    venue = SimulatedVenue(tmp_path, tables=1, hands=1, broker="none", quiet=True,
                           irregularities=0.0, pace=0.05).start()
    stop = threading.Event()
    try:
        yield venue.tables[0], FollowingDealer(venue.tables[0], stop)
    finally:
        stop.set()
        venue.stop()


def test_a_double_tap_out_of_step_puts_no_hand_after_it_out_of_step(tmp_path, monkeypatch):
    """A dealer who closes the betting with a tap and double taps 0.05 s later (a loaded run's
    script did, on the river): the double tap's first tap makes the pair with the betting tap,
    and its second is a lone tap, which the button holds for its window. The following dealer
    sees its double tap out of step, lets the lone tap come in and the window pass: the next
    double tap is in step, and every hand after. (Before, the next double tap paired with the
    lone tap, and so on at every hand, each lone tap a hand late; once one landed among the
    next hand's hole cards: betting closed with cards missing, a floor call.)"""

    from tablectl.sim_venue import GAP, PRESS, Finger

    presses: list[str] = []
    press = Finger.press

    def hasty(finger, gesture, at=None):
        presses.append(gesture)
        if len(presses) == 2:  # hand 2's double tap, 0.05 s after a betting tap's release
            now = time.monotonic()  # (stamped so: a loaded machine's late sleep made 0.2 s)
            press(finger, "tap", at=now)
            press(finger, gesture, at=now + PRESS + 0.05)
            return
        press(finger, gesture, at)

    monkeypatch.setattr(Finger, "press", hasty)
    with _a_dealer_at_one_table(tmp_path) as (table, dealer):
        dealer.deal(until_ended=6)
        assert dealer.failure is None, dealer.failure
        journal, events = table.journal_and_events()
        gestures = [(line["gesture"], line["t"]) for line in journal if line["type"] == "button"]
        # In step, a double tap comes a press and a gap (0.2 s) after its own first tap, which
        # was reported as a tap; out of step, its first tap is the double tap, and its second
        # comes alone that long after.
        in_step = [i > 0 and gestures[i - 1][0] == "tap"
                   and abs(t - gestures[i - 1][1] - (PRESS + GAP)) < 0.02
                   for i, (gesture, t) in enumerate(gestures) if gesture == "double_tap"]
        assert in_step == [True, False, True, True, True, True], gestures
        assert [e for e in events if e["type"] in ("irregularity", "ruling")] == []


def test_a_deck_in_while_the_daemon_was_down_begins_a_hand_the_dealer_deals(tmp_path):
    """The dealer put the deck in as the daemon was killed (a loaded run's tournament did):
    the shoe keeps the deck's read and sends it once the daemon is back, whose hand begins
    then with nothing dealt. The following dealer deals that hand, then finishes it, and
    the next. (Before, it took the hand for one resumed after a restart, dealt: its double
    taps, which do not end a hand with nothing dealt, went on until it gave up.)"""

    from simulators.shoe import perform
    from tests.conftest import wait_for

    with _a_dealer_at_one_table(tmp_path) as (table, dealer):
        dealer.deal(until_ended=1)
        assert dealer.failure is None, dealer.failure
        table.kill_daemon()
        perform({"type": "deck_in", "deck": "B2"}, table.shoe, lambda _line, _at: None)
        table.start_daemon()
        assert wait_for(lambda: table.hands_started() == 2, 30)  # the kept deck, sent
        assert table.cards_in_newest_hand() == 0
        dealer.deal(until_ended=3)
        assert dealer.failure is None, (dealer.failure, dealer.describe())
        _, events = table.journal_and_events()
        hands = {e["hand"]: e for e in events if e["type"] == "hand.ended"}
        assert sorted(hands) == [1, 2, 3], hands
        assert all(len(hands[n]["hole"]) == len(table.dealt_seats() or ()) for n in hands)
        assert [e for e in events if e["type"] in ("irregularity", "ruling")] == []


def test_a_featured_table_shows_on_the_broadcast_feed_end_to_end(tmp_path):
    """`tablectl sim --dashboard ... --featured t1 --delay 1`: the table featured before its
    first hand, its overlay link made by the broadcast login the simulator prints; each hand
    the daemon deals reaches the overlay's stream, hole cards and all, once the delay lets
    it."""
    import http.client
    import io
    import json

    from tests.conftest import wait_for

    said = io.StringIO()
    venue = SimulatedVenue(tmp_path, tables=1, hands=2, quiet=True, irregularities=0.0,
                           pace=0.05, dashboard="127.0.0.1:0", featured="t1", feed_delay=1,
                           out=said).start()
    try:
        assert venue.overlay is not None and "/overlay#" in venue.overlay
        assert f"the overlay for OBS Studio at {venue.overlay}" in said.getvalue()
        assert f"the operator's desk at {venue.hub.url}/broadcast" in said.getvalue()
        venue.run()
        assert venue.wait_delivered()
        _, events = venue.tables[0].journal_and_events()
        ended = [e for e in events if e["type"] == "hand.ended"]
        key = venue.overlay.split("#", 1)[1]
        host, port = venue.hub.url.split("//")[1].split(":")

        def newest() -> dict | None:
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            try:
                connection.request("GET", "/api/overlay/stream",
                                   headers={"X-Overlay-Key": key})
                response = connection.getresponse()
                assert response.status == 200
                line = ""
                while not line.startswith("data: "):
                    line = response.readline().decode()
                return json.loads(line[6:])
            finally:
                connection.close()

        assert wait_for(lambda: (newest() or {}).get("hands")
                        and newest()["hands"][-1]["hand"] == ended[-1]["hand"], 30)
        shown = newest()["hands"][-1]
        assert {str(s["seat"]): s["cards"] for s in shown["seats"]} == ended[-1]["hole"]
        assert shown["blinds"] is not None  # the venue clock's level, as the table dealt it
    finally:
        venue.stop()
