"""``tablectl sim``: simulated tables, each the real daemon (``tablectl run`` in its own
process) with the simulated shoe (the firmware's code on a pty) and a mock GPIO button pressed
by a scripted dealer, the display drawn in the terminal, the buzzer as text; with a private
Mosquitto and the recorder when Mosquitto is installed, on the local outbox alone otherwise.

Installed, though the tests use it most: ``tablectl sim`` is how a newcomer on a PC or a Pi
sees a table deal (``make demo``) and ``tablectl bench footprint`` measures a daemon with it.
The lab's venue on a network in namespaces builds on it from the harness, which is not
installed (harness/net_venue.py: its hosts through ``broker_address`` and ``host_prefix``, its
faults through ``run``'s ``chaos`` and ``off_script``, its checker through ``replay_journal``).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from controller.gestures import GestureConfig
from controller.inputs import parse_input
from controller.replay import replay
from controller.table import Table, TableConfig, TableUsageError
from houses.loaders import load_profile, load_structure
from simulators.dealer_script import session
from simulators.shoe import SimulatedShoe, next_on_the_shoe, perform, settle

PRESS = 0.08  # seconds a finger holds the button for a tap
GAP = 0.12  # between the two taps of a double tap
# A dealer never draws the next card within a fifth of a second of tapping; at a compressed
# pace the script would, so the simulator keeps this much real time after every gesture
# (the button's debounce reports a release 30 ms after it happens).
AFTER_GESTURE = 0.2
# Two separate taps closer than the button's double-tap window (0.4 s) would be one double tap:
# a dealer's taps are seconds apart, so at a compressed pace the simulator keeps them apart.
BETWEEN_GESTURES = 0.55
# After a double tap, whose release the button has settled 30 ms later (its debounce): the
# following dealer's next press.
AFTER_DOUBLE_TAP = 0.15
# The button pairs a tap with one released within its double-tap window before it
# (controller/gestures.py): after a lone tap the button holds, the next press waits that long.
PAIRING_SECONDS = GestureConfig().double_tap + 0.1


class Finger:
    """Presses a daemon's mock button through its control socket."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def send(self, what: bytes, at: float) -> None:
        # If the daemon is down (the chaos test kills it) the press is lost, as on a table.
        with contextlib.suppress(OSError):  # stamped: the moment the finger moved
            self.sock.sendto(what + b" %.6f" % at, self.path)

    def lead(self, gesture: str) -> float:
        """How long before the gesture's moment the finger starts pressing."""
        return {"tap": PRESS, "double_tap": 2 * PRESS + GAP, "hold": 2.0,
                "long_hold": 4.5}.get(gesture, PRESS)

    def press(self, gesture: str, at: float | None = None) -> None:
        """The gesture, begun at ``at`` (its moment in the script: a thread woken late on a
        busy machine still stamps each edge when the dealer's finger moved), else now."""
        start = time.monotonic() if at is None else at
        if gesture == "double_tap":
            self._hold(start, PRESS)
            self._hold(start + PRESS + GAP, PRESS)
        else:
            self._hold(start, self.lead(gesture))

    def _hold(self, down: float, seconds: float) -> None:
        # Real time keeps pace with the stamps: the daemon's button sees each edge in order.
        for edge, moment in ((b"down", down), (b"up", down + seconds)):
            if (wait := moment - time.monotonic()) > 0:
                time.sleep(wait)
            self.send(edge, moment)


def polling(first: float = 0.005, most: float = 0.05) -> Iterator[float]:
    """Pauses between two looks at a daemon's database for what it should soon have done:
    short at first (a quiet machine's daemon takes a press within milliseconds), then longer
    (a starved one may take seconds: each look opens the database, 0.09 ms of CPU, and four
    tables' dealers looking 100 times a second took 4 % of a core from it, and the GIL from
    the test's other threads 400 times a second)."""
    pause = first
    while True:
        yield pause
        pause = min(most, pause * 1.5)


# How long the scripted dealer waits for the daemon to take in a card before a press, or a
# press before the next card: what the most loaded test machine has needed, with room.
SETTLE_SECONDS = 15.0

# The scripted dealer keeps the cards of one dealing action at most 0.7 s apart and every
# pause at least 4 s (the core's 3 s gap + 1 s): any gap between gives the same rulings. The
# simulated table takes the middle, so that a busy machine delaying a read by a fraction of
# that margin (at 20x, 80 ms) cannot turn a pause into the rhythm or the reverse.
SIM_DEAL_GAP = 2.35


class SimTable:
    def __init__(self, venue: SimulatedVenue, index: int) -> None:
        self.venue = venue
        self.name = f"t{venue.first_table + index - 1}"
        rng = random.Random(venue.seed * 1000 + index)
        size = int(venue.profile.value("table_size"))  # the house's seats (Mike's nine)
        seats = tuple(sorted(rng.sample(range(1, size + 1), rng.randint(4, min(9, size)))))
        # Two dealers take turns at each table (a push every four hands), badges on the shoe,
        # so hands per hour per dealer show on the dashboard.
        self.lines, self.expected = session(
            rng, venue.profile, hands=venue.hands, irregularity_rate=venue.irregularities,
            seats=seats, brisk=venue.brisk, seat_changes=False,
            dealers=(f"D{index}1", f"D{index}2"), plan=venue.plan)
        # How many hands the core ends for this script: the table has taken in the whole
        # script when its outbox holds as many (its last input ends the last hand).
        self.hands_to_end = sum(1 for event in replay(
            [json.dumps(line) for line in self.lines], venue.profile,
            structure_loader=load_structure) if event["type"] == "hand.ended")
        self.directory = venue.directory / self.name
        self.directory.mkdir(parents=True, exist_ok=True)
        self.shoe = SimulatedShoe(self.directory / "shoe", shoe_id=f"sim-{self.name}").start()
        self.control = self.directory / "button.sock"
        # The daemon's last lines (its display frames, its buzzer): what the dealer sees.
        self.output: collections.deque[str] = collections.deque(maxlen=500)
        self.config = self.directory / "table.toml"
        self.process: subprocess.Popen[str] | None = None
        # The daemon whose button listens (None while one is killed or starting): a press
        # begun without one is lost, as on a table.
        self.listening: subprocess.Popen[str] | None = None
        self.ready = threading.Event()  # the daemon launched last says it runs
        self.lines_seen = 0  # lines the daemon wrote, all boots
        self.dumped = False  # its threads asked for once (dump_threads)
        self.reads_retried = 0  # reads of its database that failed and were tried again

    def script_seconds(self) -> float:
        """How long the dealer's script lasts in real time at the venue's pace."""
        times = [float(line["t"]) for line in self.lines[1:]
                 if isinstance(line.get("t"), int | float)]
        return (times[-1] - times[0]) * self.venue.pace if times else 0.0

    def write_config(self) -> None:
        setup = self.lines[0]
        venue = self.venue
        if venue.broker:
            host, port = venue.broker_address(self)
            mqtt = f'[mqtt]\nenabled = true\nhost = "{host}"\nport = {port}\n'
        else:
            mqtt = "[mqtt]\nenabled = false\n"
        clock = f'structure = "{venue.structure}"\n' if venue.structure else ""
        # With the hub, the tables follow its venue clock, as at a tournament.
        mode = "venue" if venue.venue_clock else "standalone"
        self.config.write_text(
            f'[table]\nvenue = "sim"\nid = "{self.name}"\nprofile = "{venue.profile.name}"\n'
            f'game = "{setup["game"]}"\nseats = {json.dumps(setup["seats"])}\n'
            f'button = {setup["button"]}\ndeal_gap = {SIM_DEAL_GAP * venue.pace}\n\n'
            f'[clock]\nmode = "{mode}"\n{clock}\n'
            # The shoe's clock is this machine's (the simulated shoe beside the daemon, in
            # every network namespace): its cards are stamped at their moments however late
            # a starved daemon reads them, as the finger stamps the presses.
            f'[shoe]\nbackend = "serial"\nport = "{self.directory / "shoe"}"\nclock = "host"\n\n'
            f'[button]\nbackend = "mock"\npin = 17\ncontrol = "{self.control}"\n\n'
            f'[display]\nbackend = "terminal"\n\n[buzzer]\nbackend = "tonal"\n\n{mqtt}\n'
            f'[storage]\ndata_dir = "{self.directory}"\n')

    def start_daemon(self) -> None:
        self.launch_daemon()
        self.await_daemon()

    def launch_daemon(self) -> None:
        """The daemon started, not waited for (``await_daemon``): a venue's tables start
        side by side."""
        self.listening = None
        self.process = subprocess.Popen(
            [*self.venue.host_prefix(self), sys.executable, "-m", "tablectl.cli", "run",
             "--config", str(self.config)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.ready = threading.Event()
        threading.Thread(target=self._forward, args=(self.process, self.ready),
                         daemon=True).start()

    def await_daemon(self) -> None:
        """Until the daemon ``launch_daemon`` started runs and its button listens."""
        if not self.ready.wait(30):
            assert self.process is not None
            ended = self.process.poll()
            said = "\n".join(list(self.output)[-20:]) or "(nothing)"
            raise RuntimeError(
                f"{self.name}: the daemon did not start within 30 s "
                + (f"(it exited with {ended})" if ended is not None else "(still running)")
                + f"; its last lines:\n{said}")
        deadline = time.monotonic() + 10
        while not self.control.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.listening = self.process

    def _forward(self, process: subprocess.Popen[str], ready: threading.Event) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.output.append(line.rstrip("\n"))
            self.lines_seen += 1
            if " running: " in line:
                ready.set()
            if not self.venue.quiet:
                self.venue.out.write(line)
                self.venue.out.flush()

    def kill_daemon(self) -> None:
        self.listening = None
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop_daemon(self, *, signalled: bool = False) -> None:
        """SIGTERM (unless ``signalled`` already), and until the daemon is gone."""
        self.listening = None
        if self.process is not None and self.process.poll() is None:
            if not signalled:
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill_daemon()

    def play(self, stop: threading.Event) -> None:
        """Act out the dealer's script in real time at the venue's pace. The shoe's clock is
        held at the earliest moment of the next shoe line until it is done (``hold``): a card
        drawn late, the player held up on a busy machine, is still stamped at its moment in
        the script, as the finger stamps its presses."""
        finger = Finger(self.control)
        pace = self.venue.pace
        start = time.monotonic()
        first = float(self.lines[1].get("t", 0.0)) if len(self.lines) > 1 else 0.0
        shift = 0.0
        not_before = 0.0
        gesture_not_before = 0.0

        def earliest(line: dict[str, object]) -> float | None:
            """The soonest ``line`` can be due (the shift only grows)."""
            t = line.get("t")
            return max(start + shift + (float(t) - first) * pace, not_before) \
                if isinstance(t, int | float) else None

        self.shoe.hold(next_on_the_shoe(self.lines, 1, earliest))
        try:
            for index in range(1, len(self.lines)):
                line = self.lines[index]
                if line["type"] == "deck_in" and self.follows_floor():
                    # Between hands, the floor has changed the table: from here the dealer
                    # deals to whoever sits there, as many hands as the script had left.
                    self._follow_the_floor(stop, dealing=False)
                    return
                t = line.get("t")
                due = start + shift + (float(t) - first) * pace if isinstance(t, int | float) \
                    else time.monotonic()
                gesture = str(line.get("gesture")) if line["type"] == "button" else None
                soonest = not_before
                if gesture is not None:
                    soonest = max(soonest, gesture_not_before + finger.lead(gesture))
                if due < soonest:
                    shift += soonest - due
                    due = soonest
                begin = due - (finger.lead(gesture) if gesture else 0.0)
                while (delay := begin - time.monotonic()) > 0:
                    if stop.wait(min(delay, 0.05)):
                        return
                if gesture is not None:
                    # The press must not overtake a card on its way: a busy machine can starve
                    # the daemon's serial thread for seconds (the finger still stamps the
                    # script's moment, so waiting costs nothing but time).
                    settle(self.shoe, SETTLE_SECONDS)
                    seen, pressed_on = self._last_button(), self.listening
                    finger.press(gesture, at=begin)
                    released = max(time.monotonic(), begin + finger.lead(gesture))
                    # Nor the next card the press: at ten times a dealer's pace the next card
                    # comes 0.2 s after the release, which a busy machine's button thread can
                    # outlast.
                    self._wait_button(seen, gesture, SETTLE_SECONDS, pressed_on)
                    not_before = max(time.monotonic(), released + AFTER_GESTURE)
                    gesture_not_before = released + BETWEEN_GESTURES
                elif line["type"] not in ("setup", "seats", "clock"):
                    # (setup is configured; seats and clock are no part of a brisk
                    # fixed-seat session)
                    started = self.hands_started() if line["type"] == "deck_in" else 0
                    perform(line, self.shoe, lambda _line, _at: None, at=due)
                    if line["type"] == "deck_in" and self.venue.hub is not None and \
                            self._floor_changed_the_hand(started):
                        # The floor's change reached the table just before this deck: its
                        # hand is not the script's any more.
                        self._follow_the_floor(stop, dealing=True)
                        return
                # The next shoe line's moment, as far as it is known now: moved on past what
                # was done, and later when a gesture put the rest off.
                self.shoe.hold(next_on_the_shoe(self.lines, index + 1, earliest))
        finally:
            self.shoe.hold(None)
        self.shoe.idle(10)

    def events_of(self, kind: str) -> int:
        """How many events of ``kind`` the table has committed (0 before its database)."""
        row = self._ask("SELECT COUNT(*) FROM outbox WHERE json_extract(event, '$.type') = ?",
                        (kind,))
        return int(row[0]) if row else 0

    def hands_started(self) -> int:
        return self.events_of("hand.started")

    def newest(self, kind: str, field: str) -> Any:
        """A field of the newest event of ``kind`` the table committed (None: no such event;
        a list or an object as its JSON text)."""
        row = self._ask(f"SELECT json_extract(event, '$.{field}') FROM outbox WHERE "
                        "json_extract(event, '$.type') = ? ORDER BY seq DESC LIMIT 1", (kind,))
        return row[0] if row else None

    def dealt_seats(self) -> list[int] | None:
        """The seats the newest hand was dealt to (None: no hand yet)."""
        seats = self.newest("hand.started", "seats")
        return list(json.loads(seats)) if seats else None

    def _floor_changed_the_hand(self, started: int) -> bool:
        """At a venue with a floor (the dashboard): the hand this deck began was dealt to
        other seats than the script's (the floor's seating came just before the deck)."""
        end = time.monotonic() + SETTLE_SECONDS
        pause = polling()
        while self.hands_started() <= started and time.monotonic() < end:
            time.sleep(next(pause))
        dealt = self.dealt_seats()
        return self.follows_floor() and dealt is not None and \
            sorted(dealt) != sorted(self.lines[0]["seats"])

    def _follow_the_floor(self, stop: threading.Event, *, dealing: bool) -> None:
        """From here the dealer deals to whoever sits there, as many hands as the script had
        left (``dealing``: the hand just begun first)."""
        self.venue.off_script.add(self.name)
        self.venue.say(f"{self.name}: the floor changed the table; its dealer now deals to "
                       "whoever sits there")
        self.shoe.hold(None)
        dealer = FollowingDealer(self, stop)
        if dealing:
            dealer.deal_hand(Finger(self.control))
        dealer.deal(until_ended=self.hands_to_end)

    def follows_floor(self) -> bool:
        """The hub changed this table's seating (a seating with its version) or runs
        hand-for-hand: the dealer's script, written for the seats it began with, no longer
        fits the table (it would deal cards to players gone, and flood the floor with false
        alerts)."""
        return self._ask(
            "SELECT 1 FROM outbox WHERE (json_extract(event, '$.type') = 'seating' AND "
            "json_extract(event, '$.version') IS NOT NULL) OR (json_extract(event, '$.type') "
            "= 'hand_for_hand' AND json_extract(event, '$.state') != 'off') LIMIT 1") is not None

    def _ask(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        """One row from the daemon's database, read-only while it writes; None before the
        daemon has made it."""
        rows = self.read(sql, args)
        return rows[0] if rows else None

    def read(self, sql: str, args: tuple[Any, ...] = (), *,
             seconds: float = SETTLE_SECONDS) -> list[Any]:
        """Rows from the daemon's database, read-only while it writes; none before the daemon
        has made it (no file, no tables yet). A read the daemon's writing kept out (busy,
        locked) is tried again for up to ``seconds``, never taken for "nothing there": the
        dealer goes by these counts."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                with contextlib.closing(sqlite3.connect(
                        f"file:{self.database()}?mode=ro", uri=True, timeout=0.5)) as db:
                    return db.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") == "SQLITE_CANTOPEN" or \
                        str(exc).startswith("no such table"):
                    return []  # not made yet: no file, or no tables in it
                self.reads_retried += 1
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def gestures_after(self, after: int) -> list[tuple[str, float]]:
        """The button gestures the daemon has journaled after id ``after`` and the one before
        them, in order, each with its moment."""
        rows = self.read(
            "SELECT json_extract(line, '$.gesture'), json_extract(line, '$.t') FROM "
            "journal WHERE id >= (SELECT COALESCE(MAX(id), 0) FROM journal WHERE id <= ? "
            "AND json_extract(line, '$.type') = 'button') AND json_extract(line, "
            "'$.type') = 'button' ORDER BY id", (after,))
        return [(str(gesture), float(t)) for gesture, t in rows]

    def _last_button(self) -> int:
        """The journal's id of the newest button gesture the daemon has taken in."""
        row = self._ask("SELECT MAX(id) FROM journal WHERE json_extract(line, '$.type') = "
                        "'button'")
        return int(row[0] or 0) if row else 0

    def _wait_button(self, after: int, gesture: str, timeout: float,
                     pressed_on: subprocess.Popen[str] | None) -> None:
        """Until the daemon has taken in ``gesture`` (journaled after id ``after``), or the
        timeout. Not for a press lost with its daemon: ``pressed_on`` the daemon listening
        when the finger began (``listening``); none was (killed by the chaos test, or started
        again and not yet listening), or it was killed since: it takes nothing in, and no
        hang either (waiting out the timeout held the cut-off table's dealer up 15 s)."""
        end = time.monotonic() + timeout
        pause = polling()
        while time.monotonic() < end and pressed_on is not None \
                and self.listening is pressed_on and pressed_on.poll() is None:
            if self._ask("SELECT 1 FROM journal WHERE id > ? AND json_extract(line, "
                         "'$.gesture') = ?", (after, gesture)):
                return
            time.sleep(next(pause))
        if pressed_on is not None and self.listening is pressed_on \
                and pressed_on.poll() is None:
            self.dump_threads(f"took no {gesture} press in {timeout:g} s")

    def describe(self, lines: int = 12) -> str:
        """For a failure's message: the simulated shoe's state (cards not yet read, frames not
        yet acknowledged by the daemon, the clock's hold) and the daemon's last lines."""
        state = f"shoe: {self.shoe.describe()}"
        said = "\n  ".join(list(self.output)[-lines:]) or "(nothing)"
        return (f"{self.name}: {state}; the daemon's last lines:\n  {said}\n"
                f"  its journal's last inputs and last events:\n  {self.recent()}")

    def recent(self, rows: int = 8) -> str:
        """The journal's last inputs and the outbox's last events, one short line each."""
        try:
            # (a failure's message: not held up long by a daemon that holds its lock)
            inputs = self.read("SELECT id, substr(line, 1, 110) FROM journal ORDER BY id DESC "
                               "LIMIT ?", (rows,), seconds=1)
            events = self.read("SELECT seq, substr(event, 1, 110) FROM outbox ORDER BY seq "
                               "DESC LIMIT ?", (rows,), seconds=1)
        except sqlite3.OperationalError as exc:
            return f"(its database not read: {exc})"
        return "\n  ".join(
            [f"{self.reads_retried} reads of its database failed and were tried again"]
            + [f"input {n}: {text}" for n, text in reversed(inputs)]
            + [f"event {n}: {text}" for n, text in reversed(events)])

    def dump_threads(self, why: str) -> None:
        """A daemon alive that takes nothing in: its threads' stacks (the daemon's faulthandler
        prints them on SIGUSR1) and its last lines, on stderr, once a table. What a hang
        leaves to read after the run."""
        if self.dumped or self.process is None or self.process.poll() is not None:
            return
        self.dumped = True
        before = seen = self.lines_seen
        os.kill(self.process.pid, signal.SIGUSR1)
        # Until the stacks have come and stopped coming: on a crowded machine (a load of 20)
        # the reader of the daemon's output may pause for a while between two of their lines.
        deadline = time.monotonic() + 10
        quiet_since: float | None = None  # from the first line of the stacks on
        while time.monotonic() < deadline:
            if self.lines_seen != seen:
                seen, quiet_since = self.lines_seen, time.monotonic()
            elif quiet_since is not None and time.monotonic() - quiet_since > 1.0:
                break
            time.sleep(0.02)
        lines = list(self.output)
        new = min(len(lines), seen - before)  # the stacks, and the twenty lines before them
        sys.stderr.write(f"{self.name}: the daemon {why}; its last lines and threads:\n"
                         + "\n".join(lines[-(new + 20):]) + "\n")
        sys.stderr.flush()

    def cards_in_newest_hand(self) -> int:
        """How many cards the table took in since its newest hand began (0 before any hand;
        a misdeal's redeal, which keeps the hand's number, counted from the redeal)."""
        row = self._ask("SELECT COUNT(*) FROM outbox WHERE json_extract(event, '$.type') = "
                        "'card' AND seq > (SELECT MAX(seq) FROM outbox WHERE "
                        "json_extract(event, '$.type') = 'hand.started')")
        return int(row[0]) if row else 0

    def hands_ended(self) -> int:
        return self.events_of("hand.ended")

    def last_seq(self) -> int:
        """The seq of the newest event in the table's outbox (0 before any)."""
        row = self._ask("SELECT value FROM meta WHERE key = 'next_seq'")
        return int(row[0]) - 1 if row else 0

    def database(self) -> Path:
        return self.directory / f"{self.name}.db"

    def journal_and_events(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        with sqlite3.connect(self.database()) as db:
            journal = [json.loads(r[0]) for r in db.execute("SELECT line FROM journal ORDER BY id")]
            events = [json.loads(r[0]) for r in db.execute("SELECT event FROM outbox ORDER BY seq")]
        return journal, events


class FollowingDealer:
    """Deals hand after hand at a simulated table to whoever its core seats for the hand (its
    ``hand.started``), as a dealer deals to the players sitting there: the table's seats
    follow the hub's seating, the dealer follows the table. A hand: the hole cards, then the
    dealer's double tap (everyone folds to the big blind). Hand-for-hand is kept: no deck
    while the table waits for the floor's release. A deck or a press lost while the daemon
    was down (killed, started again: its hand resumed from its journal) is made again; a
    deck the shoe kept meanwhile begins a hand once the daemon is back, which is dealt;
    ``paused`` holds the dealer meanwhile (a test that kills the daemon)."""

    CARDS = tuple(rank + suit for suit in "cdhs" for rank in "23456789TJQKA")

    def __init__(self, table: SimTable, stop: threading.Event,
                 paused: threading.Event | None = None) -> None:
        self.table = table
        self.stop = stop
        self.paused = paused or threading.Event()
        self.hands = 0  # decks put in
        self.failure: str | None = None
        self.next_press = 0.0
        self.doing = "not begun"  # what the dealer does now, since when: said by a failure
        self.doing_since = time.monotonic()

    def seats(self) -> list[int]:
        """The seats the table deals its next hand to, from what it committed: its setup,
        each seating taken now, each one held for the next hand and taken at a hand's end."""
        rows = self.table.read(
            "SELECT event FROM outbox WHERE json_extract(event, '$.type') IN "
            "('table.setup', 'seating', 'hand.ended') ORDER BY seq")
        seats: list[int] = []
        pending: list[int] | None = None
        for (text,) in rows:
            event = json.loads(text)
            if event["type"] == "hand.ended":
                seats, pending = (pending, None) if pending is not None else (seats, None)
            elif event.get("seats") is not None and event.get("effective") == "next_hand":
                pending = list(event["seats"])
            elif event.get("seats") is not None:
                seats, pending = list(event["seats"]), None
        return seats

    def _now_doing(self, what: str) -> None:
        if what != self.doing:
            self.doing, self.doing_since = what, time.monotonic()

    def describe(self) -> str:
        return (f"dealer at {self.table.name}: {self.hands} decks, {self.doing} for "
                f"{time.monotonic() - self.doing_since:.1f} s")

    def _until(self, condition: Any, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.stop.is_set():
            if condition():
                return True
            time.sleep(0.02)
        return False

    def _press(self, finger: Finger) -> None:
        time.sleep(max(0.0, self.next_press - time.monotonic()))
        seen, pressed_on = self.table._last_button(), self.table.listening
        finger.press("double_tap")
        # After a double tap the button starts afresh (controller/gestures.py: a third tap is
        # a tap): the next press only has to come after the release has settled, not outside
        # the double-tap window as after a tap. (At BETWEEN_GESTURES a tournament's tables
        # dealt a hand in 0.9 s, 0.4 s of it this wait.)
        self.next_press = time.monotonic() + AFTER_DOUBLE_TAP
        self.table._wait_button(seen, "double_tap", 5, pressed_on)
        if not self._in_step(seen):
            # Out of step: the first tap made a double tap with a tap just before it (a
            # script's double tap hard on the river's betting tap, seen on a loaded run), so
            # the second is a lone tap in its turn, which the button holds. Pressed again
            # within the button's window, the next double tap would be out of step too, and
            # so every hand after, each lone tap landing in the next hand, once among its hole
            # cards (betting closed with cards missing). It comes in, then the window passes,
            # before anything else: the next press is in step.
            self.doing += ", out of step"
            self.table._wait_button(self.table._last_button() - 1, "tap", 5, pressed_on)
            time.sleep(PAIRING_SECONDS)
            self.next_press = time.monotonic()

    def _in_step(self, seen: int) -> bool:
        """Whether the press's double tap came from its own two taps: the gesture before it a
        tap released a press and a gap (0.2 s) earlier (a press lost with its daemon: yes)."""
        gestures = self.table.gestures_after(seen)
        doubles = [i for i, (gesture, _) in enumerate(gestures) if gesture == "double_tap"]
        if not doubles or doubles[-1] == 0:
            return True
        (before, t0), (_, t1) = gestures[doubles[-1] - 1], gestures[doubles[-1]]
        return before == "tap" and abs(t1 - t0 - (PRESS + GAP)) < 0.02

    def _finish(self, finger: Finger) -> None:
        """The double tap until the hand is over."""
        ended, hand = self.table.hands_ended(), self.table.newest("hand.started", "hand")
        for press in range(20):
            while self.paused.is_set() and not self.stop.is_set():
                self._now_doing("paused in a hand")
                time.sleep(0.05)
            self._now_doing(f"double tap {press + 1} to end hand {hand}")
            self._press(finger)
            if self._until(lambda: self.table.hands_ended() > ended, 5) or self.stop.is_set():
                return
        self.failure = f"{self.table.name}: hand {hand} did not end after 20 double taps"

    def deal(self, until_ended: int | None = None) -> None:
        """Deal until ``until_ended`` hands have ended at the table (None: until stopped)."""
        finger = Finger(self.table.control)
        shoe = self.table.shoe
        try:
            while not self.stop.is_set() and self.failure is None and (
                    until_ended is None or self.table.hands_ended() < until_ended):
                if self.paused.is_set():
                    self._now_doing("paused")
                    time.sleep(0.05)
                    continue
                if len(seats := self.seats()) < 2 or \
                        self.table.newest("hand_for_hand", "state") == "waiting":
                    self._now_doing(f"waiting: seats {seats}, or hand-for-hand")
                    time.sleep(0.05)  # nobody to deal to, or the floor has not released
                    continue
                started = self.table.hands_started()
                if started > self.table.hands_ended():
                    # A hand the table resumed after a restart: dealt, it is finished; begun
                    # by a deck that went in while the daemon was down (the shoe kept it and
                    # sent it once the daemon was back), it is dealt first: the double tap
                    # of a hand with nothing dealt is no end of it (controller/table.py).
                    if shoe.plugged and not shoe.idle(SETTLE_SECONDS):
                        continue  # what the shoe kept not yet acknowledged: looked at again
                    # (a read the shoe saw acknowledged is committed a moment later)
                    if not self._until(lambda: self.table.cards_in_newest_hand() > 0, 1.0):
                        self.deal_hand(finger)
                    else:
                        self._finish(finger)
                    continue
                self.hands += 1
                self._now_doing(f"deck {self.hands} in")
                perform({"type": "deck_in", "deck": "R1" if self.hands % 2 else "B2"}, shoe,
                        lambda _line, _at: None)
                if not self._until(lambda n=started: self.table.hands_started() > n, 5):
                    continue  # the deck went in while the daemon was down: again
                self.deal_hand(finger)
        except Exception as exc:  # said by whoever watches the dealer (a test fails)
            self.failure = f"{self.table.name}: {exc!r}"

    def deal_hand(self, finger: Finger) -> None:
        """The hand just started, dealt: a hole card each twice to the seats it was dealt
        to, then the double tap."""
        moment = time.monotonic()
        self._now_doing(f"dealing hand {self.table.newest('hand.started', 'hand')}")
        for index, card in enumerate(self.CARDS[:2 * len(self.table.dealt_seats() or ())]):
            perform({"type": "card", "card": card}, self.table.shoe, lambda _line, _at: None,
                    at=moment + 0.005 * index)
        settle(self.table.shoe, SETTLE_SECONDS)
        self._finish(finger)


class SimulatedVenue:
    def __init__(self, directory: Path, *, tables: int = 3, hands: int = 20,
                 profile: str = "tda-2024", pace: float = 0.1, broker: Any = "auto",
                 seed: int = 1, irregularities: float = 0.25, structure: str | None = "tda-2024",
                 out: TextIO = sys.stdout, quiet: bool = False, brisk: bool = True,
                 recorder: bool = True, dashboard: str | None = None,
                 venue_clock: bool = False, plan: tuple[str | None, ...] | None = None,
                 first_table: int = 1, featured: str | None = None,
                 feed_delay: int = 30) -> None:
        self.directory = Path(directory)
        # With the dashboard: a table featured on the broadcast feed from its first hand, the
        # feed's security delay (seconds), a broadcast login and the table's overlay link.
        self.featured = featured
        self.feed_delay = feed_delay
        self.overlay: str | None = None  # the overlay page's URL, once made
        # Each hand's injected irregularity in turn (tests), instead of drawn at random.
        self.plan = plan
        self.first_table = first_table  # the tables are t<first_table>, t<first_table + 1>...
        self.brisk = brisk  # short betting rounds (demos, tests); False: a real table's pace
        self.profile = load_profile(profile)
        self.profile_source = profile  # a name or a file: the hub loads it the same way
        self.table_count = tables
        self.hands = hands
        self.pace = pace
        self.seed = seed
        self.irregularities = irregularities
        self.structure = structure
        self.out = out
        self.quiet = quiet
        # "auto", "required", "none", or a running Broker to use (and leave running): a hub's
        # tests bring their own broker and hub, and want the tables without a recorder.
        self.broker_mode = broker if isinstance(broker, str) else "given"
        self.broker: Any = None if isinstance(broker, str) else broker
        self.with_recorder = recorder
        self.recorder: Any = None
        self.store: Path | None = None  # the recorder's (or hub's) database
        self.dashboard = dashboard  # "HOST:PORT": the whole hub, with its floor dashboard
        self.hub: Any = None
        # Tables follow the venue clock (clock.mode = "venue"): the hub's tests start it, and
        # with the dashboard the simulator's hub starts the structure.
        self.venue_clock = venue_clock or bool(dashboard)
        self.tables: list[SimTable] = []
        # Tables a fault made deal otherwise than their script (a daemon killed, a shoe
        # unplugged): the checkers compare those with their inputs' replay only.
        self.off_script: set[str] = set()

    def start(self) -> SimulatedVenue:
        if self.broker_mode not in ("none", "given"):
            try:
                from simulators.broker import Broker

                self.broker = Broker(self.directory / "broker").start()
            except RuntimeError as exc:
                if self.broker_mode == "required":
                    raise
                self.say(f"no broker ({exc}): events stay in each table's local outbox")
        if self.broker is not None and self.dashboard:
            self._start_hub()
        elif self.broker is not None and self.with_recorder:
            from hub.recorder import Recorder

            self.store = self.directory / "recorder.db"
            self.recorder = Recorder(self.store, venue="sim",
                                     port=self.broker.port).start()
            self.recorder.connected.wait(10)
            self.say(f"private Mosquitto on 127.0.0.1:{self.broker.port} with the recorder")
        for index in range(1, self.table_count + 1):
            table = SimTable(self, index)
            table.write_config()
            table.launch_daemon()
            self.tables.append(table)
        for table in self.tables:  # (started side by side)
            table.await_daemon()
        if self.hub is not None and self.featured:
            self._feature()
        return self

    def _feature(self) -> None:
        """The featured table on the broadcast feed before its first hand (once the hub has
        heard it), the delay set, and its overlay link made by a broadcast login, printed."""
        import secrets

        from hub.auth import User, save_user
        from hub.service import FloorService

        table = str(self.featured)
        end = time.monotonic() + 30
        while table not in self.hub.floor.tables and time.monotonic() < end:
            time.sleep(0.05)
        demo = User("demo", "supervisor", "")
        self.hub.call(FloorService.feature, demo, table, True)
        self.hub.call(FloorService.set_broadcast_delay, demo, self.feed_delay)
        password = "studio-" + secrets.token_urlsafe(9)
        save_user(self.directory / "users.toml", "studio", "broadcast", password)
        studio = User("studio", "broadcast", "")
        links = self.hub.call(FloorService.make_overlay_link, studio, table)
        self.overlay = self.hub.url + links[0]["path"]
        self.say(f"table {table} featured on the broadcast feed, {self.feed_delay} s behind: "
                 f"the overlay for OBS Studio at {self.overlay}; the operator's desk at "
                 f"{self.hub.url}/broadcast, the feed at "
                 f"{self.hub.url}/api/broadcast/tables/{table} (user studio, password "
                 f"{password})")

    def _start_hub(self) -> None:
        """The venue hub in place of the bare recorder, with a demo supervisor."""
        import secrets

        from hub.auth import save_user
        from tablectl.hub_app import Hub, HubSettings

        host, _, port = str(self.dashboard).rpartition(":")
        password = "demo-" + secrets.token_urlsafe(9)  # never starts with "-" (an option)
        users = self.directory / "users.toml"
        save_user(users, "demo", "supervisor", password)
        self.store = self.directory / "hub.db"
        self.hub = Hub(HubSettings(venue="sim", db=str(self.store),
                                   users=str(users), port=self.broker.port,
                                   http_host=host or "127.0.0.1", http_port=int(port),
                                   profile=self.profile_source)).start()
        self.recorder = self.hub.recorder
        self.recorder.connected.wait(10)
        if self.structure:
            self.hub.clock.connected.wait(10)
            self.hub.clock.apply("start", self.structure)
        self.say(f"private Mosquitto on 127.0.0.1:{self.broker.port} with the hub; floor "
                 f"dashboard at {self.hub.url} (user demo, password {password})")

    def replay_journal(self, journal: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A fault-free run of what a daemon received: its journal through a fresh core
        configured as the simulated tables are (the checkers compare it with the live run)."""
        table = Table(self.profile, TableConfig(deal_gap=SIM_DEAL_GAP * self.pace,
                                                evaluate=False), load_structure)
        events = []
        for line in journal:
            if line["type"] == "tick":
                events += table.advance(float(line["t"]))
                continue
            try:
                events += table.handle(parse_input(line))
            except TableUsageError:
                continue
        return [event.to_json() for event in events]

    def broker_address(self, table: SimTable) -> tuple[str, int]:
        """Where ``table``'s daemon finds the broker."""
        return "127.0.0.1", int(self.broker.port)

    def host_prefix(self, table: SimTable) -> list[str]:
        """The command that runs a program on ``table``'s host (this machine: none)."""
        return []

    def say(self, text: str) -> None:
        self.out.write(f"[sim] {text}\n")
        self.out.flush()

    def run(self, stop: threading.Event | None = None, chaos: Any = None,
            stop_requested: Callable[[], bool] = lambda: False) -> None:
        """Every table's dealer through its script, until done or ``stop`` is set (by a test's
        chaos, or here when ``stop_requested``: a signal's flag, tablectl.signals)."""
        stop = stop or threading.Event()
        players = [threading.Thread(target=t.play, args=(stop,), daemon=True)
                   for t in self.tables]
        for player in players:
            player.start()
        try:
            if chaos is not None:
                chaos(self, stop)
            for player in players:
                while player.is_alive():
                    player.join(0.2)
                    if stop_requested():
                        stop.set()
        except KeyboardInterrupt:
            # Ctrl-C: the dealers stop now (a dealer still dealing would keep the tables busy
            # while they are asked to stop).
            stop.set()
            for player in players:
                player.join(5)
            raise
        # Every table has taken in its last input (a busy machine's daemon may still be at it
        # when the dealer's script is done), or gives up waiting: a distorted rhythm can end
        # fewer hands than the script (the tests compare).
        # A table a fault made deal otherwise (``off_script``) is not waited for: its player
        # saw every card taken in and every press journaled, and its hands are what they are.
        end = time.monotonic() + 30
        while time.monotonic() < end and not stop.is_set() and not stop_requested() and any(
                t.hands_ended() < t.hands_to_end for t in self.tables
                if t.name not in self.off_script):
            time.sleep(0.05)

    def uptos(self) -> dict[str, int]:
        """Each table's seq up to which the recorder holds every event."""
        return dict(self.recorder.upto) if self.recorder is not None else {}

    def wait_delivered(self, timeout: float = 60,
                       stop_requested: Callable[[], bool] = lambda: False) -> bool:
        """Whether the recorder holds every table's events within ``timeout`` seconds (False
        at once when ``stop_requested``)."""
        if self.store is None:
            return True  # nothing records: the events stay in the outboxes
        end = time.monotonic() + timeout
        while time.monotonic() < end and not stop_requested():
            upto = self.uptos()
            if all(upto.get(t.name, 0) >= t.last_seq() > 0 for t in self.tables):
                return True
            time.sleep(0.2)
        return False

    def stop_tables(self) -> None:
        # Every daemon told at once, then waited for: they shut down side by side.
        for table in self.tables:
            table.listening = None
            if table.process is not None and table.process.poll() is None:
                table.process.send_signal(signal.SIGTERM)
        for table in self.tables:
            table.stop_daemon(signalled=True)
            table.shoe.stop()

    def stop(self) -> None:
        self.stop_tables()
        if self.hub is not None:
            self.hub.stop()
        elif self.recorder is not None:
            self.recorder.stop()
        if self.broker is not None and self.broker_mode != "given":
            self.broker.kill()

    def summary(self) -> dict[str, Any]:
        result: dict[str, Any] = {"tables": {}, "broker": self.broker is not None,
                                  "store": self.store}
        for table in self.tables:
            _, events = table.journal_and_events()
            ended = [e for e in events if e["type"] == "hand.ended"]
            kinds: dict[str, int] = {}
            for e in events:
                if e["type"] == "irregularity":
                    kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
            delivered = self.recorder.upto.get(table.name, 0) if self.recorder else None
            result["tables"][table.name] = {
                "hands": len({e["hand"] for e in ended if e["outcome"] != "misdeal"}),
                "irregularities": kinds, "events": len(events), "delivered": delivered,
                "database": table.database()}
        return result
