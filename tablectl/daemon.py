"""``tablectl run``: the table daemon, the parts wired from the configuration.

One queue into the core: the card reader's thread, the button's gpiozero callbacks, the MQTT
link's commands and the timer all put items on it (tablectl/parts.py builds the parts, each
callback puts one typed item); the main loop alone touches the table core. Each input the core
handles is committed with the events it caused, in one SQLite transaction, to the journal and
the outbox: after a SIGKILL or a power cut, replaying the journal rebuilds the hand in progress
and the clock, and no event is lost or sent twice. After each commit the subscribers follow
the events (tablectl/subscribers.py): the screen, the buzzer, the link, the state snapshot.
Between hands, every SNAPSHOT_EVERY lines, the core and the screen are snapshotted into the
outbox (controller/snapshot.py) and the journal compacted behind: a start restores the newest
snapshot and replays the lines after it, whatever the table's age.

Time is the daemon's own: monotonic seconds, continued from the journal's last time after a
restart (the time the table was down is not counted until the venue clock says otherwise; a Pi
has no real-time clock). systemd: ``READY=1`` once running, ``WATCHDOG=1`` pings, ``STATUS=``
lines; SIGTERM stops cleanly (status ``offline``, outbox flushed as far as the broker allows);
SIGHUP reloads what can change without a restart (profile, gestures, dealing gap, volume).
"""

from __future__ import annotations

import json
import math
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from contract.commands import Command
from contract.snapshots import VenueClockReading
from contract.supervise import EXIT_WORKER_DIED, FAILED, SystemdNotifier, failures
from contract.wire import decode
from controller.datafiles import ProblemsError
from controller.decks import DeckRegistry
from controller.events import ClockAction, Event, JournalQuarantined
from controller.inputs import (
    ClockCommand,
    Gesture,
    HandForHand,
    Input,
    SeatsChange,
    Setup,
    input_to_dict,
    parse_input,
)
from controller.screens import ALERT_LINES, DisplayModel, Status
from controller.snapshot import SnapshotError, restore, snapshot
from controller.table import Table, TableConfig, TableUsageError
from houses.loaders import house_structure, load_profile
from tablectl.command_to_core import command_input, venue_clock_input
from tablectl.config import Config, ConfigError, load_config
from tablectl.parts import (
    ButtonPressed,
    DealerInput,
    Factories,
    FloorCommand,
    HasVolume,
    HubLink,
    Parts,
    Read,
    Reload,
    VenueClockFollowed,
    Wiring,
)
from tablectl.signals import StopSignals
from tablectl.subscribers import HUB_CONNECT_GRACE, ScreenFeed, StatePublisher, Subscriber

if TYPE_CHECKING:
    from hardware.outbox import Outbox

__all__ = ["HUB_CONNECT_GRACE", "TICK", "Daemon", "load_config", "main_run"]

# Seconds between the timer's turns (the clock's time, the display, the link's status): the
# dealer sees the clock's second change within a quarter of a second.
TICK = 0.25
UNTIL_POLL = 0.02  # seconds between a waiting caller's checks of its condition
# A venue clock reading's age (the hub's wall clock against this table's) is trusted within
# a minute; beyond, the two wall clocks disagree and the age says nothing.
READING_CLOCKS_AGREE = 60.0
# A reading this much older than the last one followed is the hub's wall clock stepped back
# (NTP), not a stale reading: it is followed, and readings are ordered from it on.
HUB_CLOCK_STEP = 600.0
# What a reload applies to a running table; any other key that changed it names ("restart to
# apply"), and the table runs on with that key's running value.
APPLIED_ON_RELOAD = frozenset({("table", "profile"), ("table", "deal_gap"),
                               ("button", "actions"), ("buzzer", "volume")})
# A snapshot of the table (the core and its display's model) is written at its first rest
# (between hands) after this many journal lines, and the journal compacted behind the one
# before (hardware/outbox.py): a start restores the newest and replays the lines after it, so
# it takes as long after a year as after a day (a 30 s start limit on a Pi was passed after
# some 68,000 hands when every start replayed the whole journal).
SNAPSHOT_EVERY = 2000
# A long replay (a journal from before snapshots) writes its snapshots as the dealing did, and
# asks systemd for more time to start every this many seconds of it (EXTEND_TIMEOUT_USEC, this
# plus START_GRACE each time): a start cut short all the same is taken up from its last
# snapshot by the next, not from the beginning.
REPLAY_SAY_EVERY = 5.0
START_GRACE = 25.0
REPLAY_CHUNK = 5000  # journal lines read at a time at a start


class ReadingAges:
    """How old each venue clock reading is, by the hub's wall clock against this table's, and
    whether it is newer than the last one followed: by its version (the clock's incarnation
    and revision) where both say one, else by when the hub took it."""

    def __init__(self, wall: Callable[[], float]) -> None:
        self.wall = wall
        self.last: float | None = None  # the hub's time of the last reading followed
        # The last reading followed that said its version (the clock's incarnation and
        # revision): a later one is ordered against it by the contract's rule.
        self.followed: VenueClockReading | None = None

    def age(self, reading: VenueClockReading) -> float | None:
        """How old ``reading`` is, in seconds; None when it is older than one already
        followed: following it would set the clock back (the broker's queue after a cut) or
        undo a change (a reading published before the floor's change and delivered after
        it). Against the last one followed, a reading ``older_than`` it (same incarnation, a
        lower revision) is dropped and one ``newer_than`` it followed whatever its time says;
        an equal one (a republication) and any other are ordered by ``at``. A reading without
        ``at``, or from a hub whose wall clock is a minute or more from this table's (no NTP
        yet on a Pi without a battery clock), is taken as of now, as before readings said
        when."""
        at = reading.at
        if reading.older_than(self.followed):
            return None
        newer = reading.newer_than(self.followed)
        versioned = reading.incarnation is not None and reading.revision is not None
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
            if versioned:
                self.followed = reading
            return 0.0
        if not newer and self.last is not None and self.last - HUB_CLOCK_STEP < at < self.last:
            return None  # (the same moment again is a redelivery or a second publication)
        if versioned:
            self.followed = reading
        self.last = float(at)
        age = self.wall() - at
        if abs(age) >= READING_CLOCKS_AGREE:
            return 0.0
        return max(0.0, age)


class Daemon:
    """The table: its core, its outbox and its parts, run by one loop. ``factories`` builds
    the parts (from the configuration unless a simulator injects its own)."""

    def __init__(self, config: Config, *, config_path: str | None = None,
                 out: TextIO = sys.stdout, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 factories: Factories | None = None) -> None:
        self.config = config
        self.config_path = config_path
        self.out = out
        self.factories = factories or Factories()
        self._mono = clock
        self._wall = wall
        self.reading_ages = ReadingAges(wall)
        self.queue: queue.Queue[object] = queue.Queue()
        self.venue_clock_readings = 0  # venue clock states handled (tests wait on it)
        self.notifier = SystemdNotifier()
        self.running = threading.Event()
        self.stop_signals = StopSignals()  # SIGTERM and Ctrl-C, from handle_signals on
        self.reload_asked = False  # SIGHUP
        self.parts = Parts()
        self.subscribers: list[Subscriber] = []
        self.state: StatePublisher | None = None  # with a link to the hub
        self.offset = 0.0
        self.events = 0
        self.resumed = 0  # journal lines replayed at start
        self.quarantined: list[tuple[int, str]] = []  # (journal line id, why) at this start
        self.snapshot_every = SNAPSHOT_EVERY
        self.since_snapshot = 0  # journal lines since the last snapshot
        self.journal_t = 0.0  # the latest time of a journal line (the daemon's time goes on)
        self.restored: int | None = None  # the journal line the snapshot restored covers
        # (snapshot id, the journal line it covered, why) set aside at this start
        self.snapshots_lost: list[tuple[int, int, str]] = []
        self.part_failures: dict[str, int] = {}  # a part that follows the table: its failures
        self.table = self._new_table()  # the core, nothing fed until ``start``
        self._outbox: Outbox | None = None  # opened by ``start`` (the journal, the events)
        self.screen = ScreenFeed(self._new_model(), started_at=self._mono())
        self.subscribe(self.screen.committed)  # from the first commit on (the setup's)

    @property
    def link(self) -> HubLink | None:
        return self.parts.link

    @property
    def outbox(self) -> Outbox:
        """The table's journal and events, opened by ``start``."""
        if self._outbox is None:
            raise RuntimeError("the daemon's outbox is opened by start()")
        return self._outbox

    def wall_ms(self) -> int:
        """The injected wall clock, in UTC milliseconds (what a quarantine is stamped with)."""
        return int(self._wall() * 1000)

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        return self._mono() + self.offset

    # ------------------------------------------------------------------ startup
    def _new_model(self) -> DisplayModel:
        """The display's model as a start makes it (nothing shown yet)."""
        config = self.config
        # A ruling pages by what the display holds under its title (the terminal draws the LCD).
        device = "oled" if config.display.backend in ("ssd1306", "sh1106") else "lcd"
        return DisplayModel(status=Status(hub="connecting" if config.mqtt.enabled else None),
                            alert_lines=ALERT_LINES[device])

    def _new_table(self) -> Table:
        """The core as the configuration makes it, nothing fed (evaluating no hand: a start's
        replay emits nothing)."""
        config = self.config
        registry = DeckRegistry()
        if config.table.decks:
            from pathlib import Path

            from tablectl.deck_commands import load_registry

            registry = load_registry(Path(config.table.decks))
        structures = config.clock.structures
        return Table(load_profile(config.table.profile),
                     TableConfig(deal_gap=config.table.deal_gap,
                                 gestures=dict(config.button.actions), evaluate=False),
                     registry=registry,
                     structure_loader=lambda name: house_structure(name, structures))

    def start(self) -> Daemon:
        config = self.config
        self._outbox = self.factories.outbox(config)
        resumed = self._resume()
        self._report_quarantine()
        self.table.config.evaluate = True
        # The hand record's evaluator, loaded now rather than at the first hand's end: the
        # import takes about a second on a busy machine (more on a Pi), and the loop would
        # hold the dealer's presses while it ran.
        import pokerkit  # noqa: F401
        past = self._past_house_size(config.table.seats)
        if past:
            raise ConfigError(str(self.config_path or "the configuration"),
                              [f"seats: {past}"])
        # A new table is set up as configured; so is one whose snapshots could all not be
        # read and whose journal kept after them sets up no table.
        if not resumed or (self.snapshots_lost and self.restored is None
                           and self.table.seats is None):
            self.feed(Setup(config.table.game, tuple(sorted(config.table.seats)),
                            config.table.button, t=self.now()))
            if config.clock.mode == "standalone" and config.clock.structure:
                self.feed(ClockCommand(ClockAction.START, config.clock.structure, t=self.now()))
        self._start_parts()
        self.running.set()
        self.notifier.send("READY=1\nSTATUS=dealing: table " + config.table.id)
        return self

    def _resume(self) -> bool:
        """Rebuild the core and the screen: the newest snapshot that can be restored, then the
        journal lines after it (their events are in the outbox already). A snapshot that
        cannot be restored (unreadable, altered, of a format this version does not read) is
        set aside and the one before it tried, with the journal kept after it; none left, the
        journal kept is replayed into a new table. A line that cannot be replayed (unreadable,
        or the core fails on it) is quarantined and reported. Either way the table carries on:
        it never crash-loops on its own journal. Whether there was anything to resume."""
        stored = self.outbox.snapshots()
        after = 0
        for snapshot_id, upto, text, intact in stored:
            table, model = self._new_table(), self._new_model()
            try:
                if not intact:
                    raise SnapshotError("its text is not the one written (its digest differs)")
                t, notes = restore(decode(text), table, model)
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"[:500]
                self.outbox.quarantine_snapshot(snapshot_id, reason, self.wall_ms())
                self.snapshots_lost.append((snapshot_id, upto, reason))
                continue
            for note in notes:
                self.out.write(f"[{self.config.table.id}] {note}\n")
            self.table, self.screen.model = table, model
            self.journal_t, self.restored, after = t, upto, upto
            break
        self.resumed, self.since_snapshot = self._replay(after)
        # Continue the daemon's time where the journal stopped.
        self.offset = self.journal_t + 0.001 - self._mono()
        return bool(stored) or self.resumed > 0

    def _replay(self, after: int) -> tuple[int, int]:
        """The journal lines after line ``after`` through the core: how many, and how many
        since the last snapshot (a long replay writes some)."""
        replayed = since = 0
        said = self._mono()
        last_t = self.journal_t
        while chunk := self.outbox.journal_lines(after, REPLAY_CHUNK):
            for line_id, text in chunk:
                replayed, since, after = replayed + 1, since + 1, line_id
                try:
                    line = decode(text)
                    t = line.get("t") or last_t
                    if line.get("type") == "tick":
                        last_t = max(last_t, float(t))
                        self.table.advance(float(t))
                        continue
                    item = parse_input(line)
                    last_t = max(last_t, item.t or last_t)
                    events = self.table.handle(item)
                except TableUsageError:
                    continue  # refused when it was first fed too: the table said so then
                except Exception as exc:
                    reason = f"{type(exc).__name__}: {exc}"[:500]
                    self.outbox.quarantine(line_id, reason, self.wall_ms())
                    self.quarantined.append((line_id, reason))
                    continue
                finally:
                    self.journal_t = last_t
                self.screen.committed(events)  # the screen as it was; nothing sounds or goes out
                mono = self._mono()
                if mono - said >= REPLAY_SAY_EVERY:
                    said = mono
                    more = int((REPLAY_SAY_EVERY + START_GRACE) * 1e6)
                    self.notifier.send(f"EXTEND_TIMEOUT_USEC={more}\nWATCHDOG=1\nSTATUS="
                                       f"resuming: {replayed} journal lines replayed")
                if since >= self.snapshot_every and self.table.at_rest:
                    self._supervised(self._snapshot, line_id)  # as if it had been dealt so
                    since = 0
        return replayed, since

    def _snapshot(self, upto: int | None = None) -> None:
        """Write the table's snapshot (at rest) covering the journal up to ``upto`` (None:
        every line committed), the journal compacted behind the one before."""
        self.outbox.write_snapshot(snapshot(self.table, self.screen.model, self.journal_t),
                                   self.wall_ms(), upto)
        self.since_snapshot = 0

    def _report_quarantine(self) -> None:
        table = self.config.table.id
        for line_id, reason in self.quarantined:
            self.out.write(f"[{table}] journal line {line_id} quarantined: {reason}\n")
            self._journal_event(line_id, reason)
        for snapshot_id, upto, reason in self.snapshots_lost:
            if self.restored is not None:
                after = (f"it resumed from the snapshot before it (of the journal up to line "
                         f"{self.restored}) and the lines after it: nothing is lost")
            else:
                after = ("no snapshot left: it started again from its configuration and the "
                         "journal lines kept (the hand numbers, the blind clock and the "
                         "dealer's shift from before are lost: the floor sets them again)")
            # What it means first: the hub's alert keeps 500 characters.
            said = (f"the table's snapshot {snapshot_id} (of the journal up to line {upto}) "
                    f"could not be restored; {after}; it was set aside: {reason}")
            self.out.write(f"[{table}] {said}\n")
            self._journal_event(upto, said[:500])

    def _journal_event(self, line: int, reason: str) -> None:
        self.outbox.append(JournalQuarantined(line=line, reason=reason, t=self.now()).to_json(),
                           self.outbox.now_ms())
        self.events += 1

    def _start_parts(self) -> None:
        """The parts, and those that follow what the table commits from now on."""
        self.parts = Parts.build(self.factories, Wiring(self.config, self.queue.put, self.now,
                                                        self.out, self.outbox))
        self.screen.display = self.parts.display
        link = self.parts.link
        if link is not None:
            self.state = StatePublisher(link, self.table, self.outbox, now=self.now,
                                        mono=self._mono, wall=self._wall)
            self.subscribe(self.state.committed)
            self.subscribe(lambda events: link.notify() if events else None)
        if self.parts.buzzer is not None:
            self.subscribe(self.parts.buzzer.committed)

    def subscribe(self, subscriber: Subscriber) -> None:
        """``subscriber`` follows every commit from now on: called on the main loop with the
        events (perhaps none) each input or tick committed."""
        self.subscribers.append(subscriber)

    # ------------------------------------------------------------------ the core
    def feed(self, item: Input) -> list[Event]:
        """One input from the table's own devices through the core; a refusal is printed."""
        try:
            return self._handle(item)
        except TableUsageError as exc:
            self.out.write(f"[{self.config.table.id}] refused: {exc}\n")
            return []

    def _handle(self, item: Input) -> list[Event]:
        """One input through the core; the input and its events committed together."""
        events = self.table.handle(item)
        self._commit(input_to_dict(item), events)
        return events

    def _commit(self, line: dict[str, Any], events: Sequence[Event]) -> None:
        self.outbox.record(line, [event.to_json() for event in events],
                           self.outbox.now_ms())  # its start's clock (Outbox.now_ms)
        self.events += len(events)
        t = line.get("t")
        if isinstance(t, int | float) and not isinstance(t, bool):
            self.journal_t = max(self.journal_t, float(t))
        for subscriber in self.subscribers:
            self._supervised(subscriber, events)
        self.since_snapshot += 1
        if self.since_snapshot >= self.snapshot_every and self.table.at_rest:
            # After the screen has followed the commit: the snapshot holds what it shows.
            self._supervised(self._snapshot)

    def _supervised(self, part: Callable[..., object], *args: Any) -> None:
        """A part that follows the table (the display, the buzzer, the link, the state
        snapshot) failing is said once, then counted: the table deals on, what it committed
        kept. (An OLED's I2C write fails now and then; a dead loop would take the hub link and
        the clock with it.) The part is tried again at its next turn."""
        try:
            part(*args)
        except Exception as exc:
            name = getattr(part, "__qualname__", type(part).__name__)
            failures = self.part_failures.get(name, 0)
            self.part_failures[name] = failures + 1
            if failures == 0:
                self.out.write(f"[{self.config.table.id}] {name} failed, the table deals on "
                               f"(its later failures are counted): {type(exc).__name__}: "
                               f"{exc}\n")

    def tick(self) -> None:
        t = self.now()
        link = self.parts.link
        if link is not None:
            self._supervised(self.screen.hub_link, link.connected, self._mono())
        events = self.table.advance(t)
        if events:
            self._commit({"type": "tick", "t": t}, events)
        self._supervised(self.screen.draw, t, self.table)
        if self.state is not None:
            self._supervised(self.state.publish)

    def _dispatch(self, item: object) -> None:
        match item:
            case Read(what=what, t=t) if self.parts.reader is not None:
                for inp in self.parts.reader.inputs(what, t):
                    self.feed(inp)
            case ButtonPressed(gesture=gesture) if gesture.kind == "held":
                if self.parts.buzzer is not None:
                    self._supervised(self.parts.buzzer.play, "held")
            case ButtonPressed(gesture=gesture):
                self.feed(Gesture(gesture.kind, t=gesture.t))
            case DealerInput(input=inp):
                self.feed(inp)
            case Reload():
                self.reload()
            case VenueClockFollowed(reading=reading, retained=retained):
                self._follow_venue_clock(reading, retained)
            case FloorCommand():
                self._dispatch_command(item)

    def _follow_venue_clock(self, reading: VenueClockReading, retained: bool) -> None:
        """The hub's clock (checked against the contract by the link), the authority: follow
        it, as of when the hub took it (a retained state may be older still: it starts a clock
        the table does not have, and the next fresh one corrects it)."""
        self.venue_clock_readings += 1
        age = self.reading_ages.age(reading)
        if age is None:
            return
        structure = reading.structure
        if structure is None:  # the hub stopped the clock
            if self.table.clock is not None and not retained:
                self.feed(ClockCommand(ClockAction.STOP, t=self.now()))
            return
        if retained and self.table.clock is not None and \
                self.table.clock.structure.name == structure:
            return
        try:  # the core's own check too: a name, a finite and bounded reading
            item = venue_clock_input(reading, age, self.now())
        except ValueError as exc:
            self.out.write(f"[{self.config.table.id}] venue clock refused: {exc}\n")
            return
        self.feed(item)

    # ------------------------------------------------------------------ running
    def handle_signals(self) -> Daemon:
        """SIGTERM, Ctrl-C and SIGHUP noted from now on (before ``start``, so that a table that
        says it runs takes a reload: SIGHUP's default ends the process). The handlers only
        note (tablectl.signals says why): the loop, which turns at least every tick, stops on
        SIGTERM or Ctrl-C and takes a SIGHUP's reload."""
        self.stop_signals.install()
        signal.signal(signal.SIGHUP, self._note_reload)
        return self

    def run(self) -> int:
        try:  # whatever ends the loop, the table stops cleanly: link flushed, offline said
            self.loop()
        finally:
            self.stop()
        if FAILED.is_set():
            self.out.write(f"[{self.config.table.id}] a worker died, exiting so that systemd "
                           f"restarts the table: {'; '.join(failures)}\n")
            return EXIT_WORKER_DIED
        return 0

    def _note_reload(self, signum: int, frame: FrameType | None) -> None:
        self.reload_asked = True  # the loop reloads (a handler takes no lock: tablectl.signals)

    def loop(self, until: Callable[[], bool] | None = None) -> None:
        """Take items and tick until stopped, or (a simulator, a test) until ``until`` holds:
        it is asked before each turn, and at least every UNTIL_POLL seconds."""
        next_tick = self._mono()
        last_ping = 0.0
        while self.running.is_set() and not FAILED.is_set() and not (until and until()) \
                and not self.stop_signals.is_set():
            if self.reload_asked:
                self.reload_asked = False
                self._dispatch(Reload())
            wait = max(0.0, next_tick - self._mono())
            try:  # an item, or the next tick: the loop wakes for nothing else
                item = self.queue.get(timeout=min(wait, UNTIL_POLL) if until else wait)
            except queue.Empty:
                item = None
            if item is not None:
                self._dispatch(item)
            mono = self._mono()
            if mono >= next_tick:
                next_tick = max(next_tick + TICK, mono)  # no burst of ticks after a stall
                self.tick()
            watchdog = self.notifier.watchdog
            if watchdog and mono - last_ping >= watchdog:
                last_ping = mono
                hand = self.table.hand.number if self.table.hand else "-"
                self.notifier.send(f"WATCHDOG=1\nSTATUS=hand {hand}, {self.events} events")

    def _dispatch_command(self, item: FloorCommand) -> None:
        try:
            item.reply.append(self.apply_command(item.command))
        finally:
            item.done.set()  # the link's thread waits for it: never left waiting
        if self.state is not None:  # a floor command's effect shows at once, not at the tick
            self._supervised(self.state.publish)

    def apply_command(self, command: Command) -> str | None:
        """A floor command through the core, committed; None, or why it was refused."""
        try:
            item = command_input(command, self.now())
        except ValueError as exc:
            return str(exc)
        if item is None:
            return f"{command.name} is handled by the link"
        seats = item.seats if isinstance(item, SeatsChange | Setup) else None
        past = self._past_house_size(seats or ())
        if past:
            return past  # a command from a tool that is not the hub (which checks it too)
        if isinstance(item, HandForHand) and self.table.hand_for_hand.holds(item.state):
            # The hub tells every table that joins whether hand-for-hand is on: an order the
            # table already follows changes nothing, and is not journaled (a line at every
            # reconnect).
            return None
        try:
            self._handle(item)
        except TableUsageError as exc:
            return str(exc)  # the floor's command was refused: the answer says why
        return None

    def _past_house_size(self, seats: Iterable[int]) -> str | None:
        """Why these seats cannot be this house's (a seat past its table size), or None."""
        rule = self.table.profile.rules["table_size"]
        size = int(rule.value)
        past = sorted(seat for seat in seats if seat > size)
        if not past:
            return None
        return (f"seat {', '.join(map(str, past))}: {self.table.profile.name} seats {size} a "
                f"table ({rule.source}); no seat past {size}")

    def reload(self) -> None:
        """SIGHUP: the file read again; what a running table can take applied, every other
        key that changed named (the table runs on with its running value), a file that cannot
        be used refused whole, the running configuration kept."""
        if self.config_path is None:
            return
        running = self.config
        try:
            config = load_config(self.config_path)
            profile = (load_profile(config.table.profile)
                       if config.table.profile != running.table.profile else None)
        except (ProblemsError, OSError) as exc:
            self.out.write(f"[{running.table.id}] reload refused, keeping the running "
                           f"configuration:\n{exc}\n")
            return
        changed = [(section.name, key.name) for section in fields(running)
                   for key in fields(getattr(running, section.name))
                   if getattr(getattr(running, section.name), key.name)
                   != getattr(getattr(config, section.name), key.name)]
        applied = [key for key in changed if key in APPLIED_ON_RELOAD]
        if profile is not None:
            self.table.profile = profile
            if self.state is not None:
                self.state.changed = True  # the snapshot names the profile
        self.table.config.deal_gap = config.table.deal_gap
        self.table.config.gestures = dict(config.button.actions)
        if isinstance(self.parts.buzzer, HasVolume):
            self.parts.buzzer.volume = config.buzzer.volume
        for section, key in applied:  # the running configuration: only what was applied
            running = replace(running, **{section: replace(
                getattr(running, section), **{key: getattr(getattr(config, section), key)})})
        self.config = running
        restart = [f"{section}.{key}" for section, key in changed
                   if (section, key) not in APPLIED_ON_RELOAD]
        said = ", ".join(f"{section}.{key}" for section, key in applied) or "nothing changed"
        self.out.write(f"[{running.table.id}] reloaded: {said}"
                       + (f"; restart to apply {', '.join(restart)}" if restart else "") + "\n")
        self.notifier.send("STATUS=configuration reloaded")

    def stop(self) -> None:
        self.notifier.send("STOPPING=1")
        self.parts.close()
        self.outbox.close()

    def summary(self) -> dict[str, Any]:
        return {"table": self.config.table.id, "events": self.events,
                "hand": self.table.hand.number if self.table.hand else None,
                "resumed_inputs": self.resumed, "snapshot_upto": self.restored}


def main_run(config_path: str, out: TextIO = sys.stdout) -> int:
    import faulthandler

    # SIGUSR1: every thread's stack on stderr (the journal), the daemon running on. A table
    # that takes nothing in while alive says where it waits (``kill -USR1``).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    config = load_config(config_path)
    daemon = Daemon(config, config_path=config_path, out=out).handle_signals().start()
    out.write(f"[{config.table.id}] running: {json.dumps(daemon.summary())}\n")
    out.flush()
    return daemon.run()
