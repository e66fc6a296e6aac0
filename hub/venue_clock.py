"""The venue clock: the hub is the authority for the tournament clock that every table follows.

It keeps the clock (structure, elapsed time, running or paused) on the hub's monotonic time and
publishes it, retained, on ``pkr/v1/<venue>/clock`` at every change and every few seconds, so a
table that joins late gets a state at most that old and is corrected by the next one. Floor
commands arrive on ``pkr/v1/<venue>/hub/cmd/clock`` (start STRUCTURE, pause, resume, add
SECONDS, level N, break start|end, stop, hand-for-hand on|off), each with a ``transaction``,
answered on ``pkr/v1/<venue>/hub/cmd-resp``.

``VenueClock`` is the clock itself, pure but for its time function; ``clock_answer`` applies a
floor command to it. The hub runs it on its floor's worker (hub/service.py);
``VenueClockService`` runs it on a connection of its own (``tablectl venue-clock``).
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract import topics
from contract.commands import (
    CommandError,
    HubClockCommand,
    VenueClockAction,
    parse_clock_command,
)
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Received, TlsSettings
from contract.snapshots import VenueClockReading
from contract.wire import encode
from controller.clock import MAX_CLOCK_SECONDS, Structure, StructureError
from houses.loaders import house_structure
from hub.calls import Call, submit

ACTIONS = tuple(VenueClockAction)


class ClockError(ValueError):
    """A clock action the floor got wrong (an unknown structure, no break left...): said to
    the floor, nothing changed."""


class VenueClock:
    """The clock itself, pure but for the time function it is given."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 structures: str | Path | None = None, incarnation: str | None = None) -> None:
        self.clock = clock
        self.structures = structures  # the house's own structures, beside the built-in ones
        self.structure: Structure | None = None
        self.elapsed_before = 0.0
        self.running_since: float | None = None
        self.hand_for_hand = False
        # Whether the floor has set the clock (or it was restored): a hub that knows no clock
        # publishes none, so that the tables keep counting until the floor acts.
        self.known = False
        # The reading's version: this clock's incarnation (one per start of the hub or of
        # ``tablectl venue-clock``) and its revision, counted up at every change. A copy of the
        # reading (the broker's retained message, the hub's echo, a table's clock) follows a
        # reading of the same incarnation only if its revision is not older than the last it
        # took: a message published before a change and delivered after it changes nothing.
        self.incarnation = incarnation or secrets.token_hex(6)
        self.revision = 0

    def elapsed(self) -> float:
        extra = self.clock() - self.running_since if self.running_since is not None else 0.0
        return self.elapsed_before + extra

    def apply(self, action: str, argument: Any = None) -> None:
        """One floor action; ``ClockError`` (the floor's mistake, said to the floor) changes
        nothing."""
        if action not in ACTIONS:
            raise ClockError(f"unknown clock action {action!r} (known: {', '.join(ACTIONS)})")
        now = self.clock()
        self._apply(VenueClockAction(action), argument, now)
        self.known = True
        self.revision += 1

    def _apply(self, action: VenueClockAction, argument: Any, now: float) -> None:
        if action == VenueClockAction.HAND_FOR_HAND:
            if argument not in ("on", "off"):
                raise ClockError(f"hand-for-hand: 'on' or 'off', not {argument!r}")
            self.hand_for_hand = argument == "on"
            return
        if action == VenueClockAction.START:
            if not isinstance(argument, str):
                raise ClockError(f"start: a structure name, not {argument!r}")
            try:
                self.structure = house_structure(argument, self.structures)
            except StructureError as exc:
                raise ClockError(str(exc)) from None
            self.elapsed_before, self.running_since = 0.0, now
            return
        if self.structure is None:
            raise ClockError("no clock: start one with a structure first")
        if action == VenueClockAction.PAUSE and self.running_since is not None:
            self.elapsed_before, self.running_since = self.elapsed(), None
        elif action == VenueClockAction.RESUME and self.running_since is None:
            self.running_since = now
        elif action == VenueClockAction.ADD:
            # Time added to the current level: the clock goes back by that much, but never
            # into the level before (a floor adds time to this level, not back to the last).
            if isinstance(argument, bool) or not isinstance(argument, int | float) or \
                    not math.isfinite(argument) or abs(argument) > MAX_CLOCK_SECONDS:
                raise ClockError(f"add: seconds (at most {MAX_CLOCK_SECONDS:.0f} either way), "
                                 f"not {argument!r}")
            elapsed = self.elapsed()
            start = self.structure.starts()[self.structure.index_at(elapsed)]
            self._set_elapsed(min(MAX_CLOCK_SECONDS, max(start, elapsed - float(argument))),
                              now)
        elif action == VenueClockAction.LEVEL:
            if isinstance(argument, bool) or not isinstance(argument, int):
                raise ClockError(f"level: a level number, not {argument!r}")
            level = argument
            levels = [period.level for period in self.structure.periods]
            if level not in levels:
                raise ClockError(f"level {level} is not in {self.structure.name}")
            self._set_elapsed(self.structure.starts()[levels.index(level)], now)
        elif action == VenueClockAction.BREAK:
            if not isinstance(argument, str):
                raise ClockError(f"break: 'start' or 'end', not {argument!r}")
            self._break(argument, now)
        elif action == VenueClockAction.STOP:
            self.structure = None

    def _break(self, which: str, now: float) -> None:
        """``start``: the next scheduled break begins now (the rest of the level is skipped);
        ``end``: the break ends now and the next level begins."""
        assert self.structure is not None
        periods, starts = self.structure.periods, self.structure.starts()
        index = self.structure.index_at(self.elapsed())
        if which == "start":
            if periods[index].is_break:
                raise ClockError("the clock is on a break already")
            later = [i for i in range(index + 1, len(periods)) if periods[i].is_break]
            if not later:
                raise ClockError(f"no break is left in {self.structure.name}")
            self._set_elapsed(starts[later[0]], now)
        elif which == "end":
            if not periods[index].is_break:
                raise ClockError("the clock is not on a break")
            if index + 1 >= len(periods):
                raise ClockError(f"the break is the end of {self.structure.name}")
            self._set_elapsed(starts[index + 1], now)
        else:
            raise ClockError(f"break: 'start' or 'end', not {which!r}")

    def _set_elapsed(self, elapsed: float, now: float) -> None:
        self.elapsed_before = elapsed
        if self.running_since is not None:
            self.running_since = now

    def saved(self) -> dict[str, Any]:
        """What the hub keeps in its database at every change, to resume after a restart."""
        return {"structure": self.structure.name if self.structure else None,
                "elapsed": self.elapsed(), "running": self.running_since is not None,
                "hand_for_hand": self.hand_for_hand}

    def restore(self, saved: dict[str, Any], seconds_since: float) -> None:
        """Resume a saved clock; a running one has run on for ``seconds_since`` (the hub was
        down, the room played on)."""
        self.hand_for_hand = bool(saved["hand_for_hand"])
        self.known = True
        self.revision += 1
        if saved["structure"] is None:
            self.structure = None
            return
        self.structure = house_structure(str(saved["structure"]), self.structures)
        running = bool(saved["running"])
        elapsed = float(saved["elapsed"]) + (max(0.0, seconds_since) if running else 0.0)
        self.elapsed_before = min(MAX_CLOCK_SECONDS, elapsed)
        self.running_since = self.clock() if running else None

    def reading(self, wall: float) -> VenueClockReading:
        """What the tables follow: the state, and when it was read on the hub's wall clock
        (a table adds the reading's age, a broker's queue after a cut or a slow link, instead
        of taking it as of now), and its version (``incarnation``, ``revision``)."""
        return VenueClockReading(**self.state(), at=round(wall, 3),
                                 incarnation=self.incarnation, revision=self.revision)

    def state(self) -> dict[str, Any]:
        if self.structure is None:
            return {"structure": None, "elapsed": 0.0, "running": False,
                    "hand_for_hand": self.hand_for_hand}
        elapsed = self.elapsed()
        index = self.structure.index_at(elapsed)
        period = self.structure.periods[index]
        ends = self.structure.starts()[index] + period.seconds
        # level, on_break and remaining are for viewers (the dashboard); tables compute them
        # from structure and elapsed themselves.
        return {"structure": self.structure.name, "elapsed": round(elapsed, 3),
                "running": self.running_since is not None, "hand_for_hand": self.hand_for_hand,
                "level": period.level, "on_break": period.is_break,
                "remaining": round(max(0.0, ends - elapsed), 3)}


def clock_answer(clock: VenueClock, command: HubClockCommand,
                 seen: OrderedDict[str, None]) -> tuple[dict[str, Any], bool]:
    """A floor command to the venue clock applied: the answer for ``hub/cmd-resp`` and
    whether the clock took it (a transaction in ``seen`` was handled already)."""
    transaction = command.transaction
    try:
        if transaction in seen:
            raise ClockError(f"transaction {transaction!r} was already handled: a replayed "
                             "command changes nothing")
        seen[transaction] = None
        while len(seen) > 1000:
            seen.popitem(last=False)
        clock.apply(command.action, command.value)
    except ClockError as exc:
        return refusal(transaction, exc), False
    return {"transaction": transaction, "command": "clock", "ok": True, **clock.state()}, True


def refusal(transaction: str | None, problem: Exception) -> dict[str, Any]:
    """The answer to a clock command refused (a ``CommandError`` says its transaction when
    it was readable)."""
    return {"transaction": transaction, "command": "clock", "ok": False,
            "error": str(problem)[:4096]}


class VenueClockService(MqttWorker):
    """The venue clock on MQTT with its own client: ``tablectl venue-clock``, a venue clock
    without the hub (the hub runs its own on the floor's worker, hub/service.py). Its worker
    alone touches the clock: ``apply`` from another thread goes through its queue."""

    worker_name = "venue-clock"

    def __init__(self, *, venue: str, host: str = "127.0.0.1", port: int = 1883,
                 tls: TlsSettings | None = None, interval: float = 5.0,
                 client_id: str = "venue-clock", structures: str | Path | None = None) -> None:
        super().__init__(Endpoint(host, port, client_id, tls))
        self.venue = venue
        self.interval = interval
        self.turn_seconds = interval
        self.clock = VenueClock(structures=structures)
        self.connected = threading.Event()
        self.seen: OrderedDict[str, None] = OrderedDict()
        self._due = 0.0

    # ------------------------------------------------------------------ the worker
    def setup(self) -> None:
        self._due = time.monotonic() + self.interval

    def subscribed(self) -> None:
        self.connected.set()  # connected and subscribed: a command sent now is heard

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False):
                self.subscribe(topics.hub(self.venue, "cmd/clock"), qos=1)
                self._publish()
            case Disconnected():
                self.connected.clear()
            case Received(payload=payload):
                self._command(payload)
            case Call():
                item.run()

    def turn(self) -> None:
        """Republish every ``interval`` seconds: a table that missed a change catches up."""
        if time.monotonic() >= self._due:
            self._due = time.monotonic() + self.interval
            if self.connected.is_set():
                self._publish()

    def _publish(self) -> None:
        if not self.clock.known:
            return  # nothing the tables should follow: they keep their own count
        self.client.publish(topics.venue_clock(self.venue),
                            encode(self.clock.reading(time.time()).to_json()), qos=1,
                            retain=True)

    def _command(self, payload: bytes) -> None:
        try:
            response, changed = clock_answer(self.clock, parse_clock_command(payload),
                                             self.seen)
        except CommandError as exc:
            response, changed = refusal(exc.transaction, exc), False
        if changed:
            self._publish()
        self.client.publish(topics.hub(self.venue, "cmd-resp"), encode(response), qos=1)

    # ------------------------------------------------------------------ from other threads
    def apply(self, action: str, argument: Any = None, timeout: float = 10.0) -> dict[str, Any]:
        """A clock action (``tablectl venue-clock --start``); ClockError says what is wrong."""
        def run() -> dict[str, Any]:
            self.clock.apply(action, argument)
            self._publish()
            return self.clock.state()

        return dict(submit(self, run).result(timeout))
