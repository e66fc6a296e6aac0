"""The tournament blind clock. Pure: time is passed in, never read.

A structure (data read by ``houses/loaders.py``: ``houses/structures/<name>.toml``, or a
house's own file) is a list of periods,
each a level (``level``, ``sb``, ``bb``, ``ante``, ``minutes``) or a break (``break_minutes``).
The clock runs, pauses and resumes; ``advance(t)`` returns the ``level``, ``break`` and
``clock.warning`` events for every boundary passed since the last call, each stamped with the
time it happened. The last level runs on until the clock is stopped.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from controller.datafiles import ProblemsError
from controller.events import (
    Announcement,
    BreakEnded,
    BreakStarted,
    ClockChanged,
    ClockWarning,
    Event,
    Level,
)

WARNING_SECONDS = 60.0
SYNC_DRIFT_SECONDS = 1.0  # less than this between the table's clock and the hub's goes unsaid
# Every reading of the venue clock arrives late by its trip over the venue's network (a Wi-Fi
# stall holds it for hundreds of ms): a running reading this little behind the table's own is
# that lateness, not the floor's doing, and is not followed. Taking it would set the table
# back by the trip; a reading ahead is always taken, so the table keeps the freshest. The floor
# setting the clock back (adding time) moves it by seconds: that is followed.
LATE_READING_SECONDS = 0.5
_LEVEL_KEYS = {"level", "sb", "bb", "ante", "minutes", "note", "color_up", "announce"}
_BREAK_KEYS = {"break_minutes", "note", "color_up", "announce"}
# The tournament's figures a structure may give (the TV's average stack and prize pool, the
# desk's add-on limit); each a whole number. The prize shares are a payout table's
# (controller/payouts.py, houses/payouts/): a structure's old flat ``payouts`` list is refused,
# saying where they went.
_FIGURES = ("starting_stack", "add_on_stack", "add_on_most", "buy_in", "add_on_price",
            # Late registration: entries and re-entries close at the start of this level, and
            # (if given) once fewer than this many are left after somebody went out.
            "late_entry_until_level", "late_entry_min_left",
            # Re-entries a player may make (absent: as many as late registration allows).
            "max_reentries")
_TOP_KEYS = {"name", "title", "source", "schedule", "note", "currency", *_FIGURES}


class StructureError(ProblemsError):
    """A blind structure that cannot be used; ``problems`` lists every one with its key."""

    subject = "structure"


@dataclass(frozen=True, slots=True)
class Period:
    seconds: float
    level: int | None = None  # None for a break
    sb: int = 0
    bb: int = 0
    ante: int = 0
    note: str = ""
    announcements: tuple[str, ...] = ()  # what the floor announces as this period starts

    @property
    def is_break(self) -> bool:
        return self.level is None


@dataclass(frozen=True)
class Structure:
    name: str
    title: str
    source: str
    periods: tuple[Period, ...]
    starting_stack: int | None = None  # chips a buy-in (and a re-entry) buys
    add_on_stack: int | None = None  # chips an add-on buys
    add_on_most: int | None = None  # add-ons a player may take
    buy_in: int | None = None  # what an entry costs (prize pool), in ``currency``
    add_on_price: int | None = None
    currency: str = ""
    late_entry_until_level: int | None = None  # None: the structure says nothing of it
    late_entry_min_left: int | None = None
    max_reentries: int | None = None  # None: unlimited while late registration is open

    def level_at(self, elapsed: float) -> int:
        """The level in play after ``elapsed`` clock seconds (on a break, the level before
        it; 1 before the first)."""
        index = self.index_at(elapsed)
        return next((p.level for p in reversed(self.periods[:index + 1])
                     if p.level is not None), 1)

    def starts(self) -> list[float]:
        """The clock seconds at which each period begins."""
        starts, total = [], 0.0
        for period in self.periods:
            starts.append(total)
            total += period.seconds
        return starts

    @cached_property
    def _ends(self) -> tuple[float, ...]:
        """The clock seconds at which each period ends (summed in order, as the clock does)."""
        ends, total = [], 0.0
        for period in self.periods:
            total += period.seconds
            ends.append(total)
        return tuple(ends)

    def index_at(self, elapsed: float) -> int:
        """The period in play after ``elapsed`` clock seconds (the last one once all are
        over). Asked at every input: a binary search, not a walk through the periods."""
        return min(bisect_right(self._ends, elapsed), len(self.periods) - 1)


def _number(value: Any, where: str, problems: list[str], *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(f"{where}: must be a number, not {value!r}")
        return 0.0
    if value < 0 or (positive and value == 0):
        problems.append(f"{where}: must be {'> 0' if positive else '>= 0'}, not {value!r}")
    return float(value)


def structure_from_data(data: Mapping[str, Any], origin: str) -> Structure:
    problems: list[str] = []
    for key in sorted(set(data) - _TOP_KEYS):
        if key == "payouts":
            problems.append("payouts: a structure no longer gives the prize shares: they are "
                            "the tournament's payout table's (houses/payouts/, chosen or "
                            "edited by a supervisor on the dashboard); remove this key")
            continue
        problems.append(f"{key}: unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    # One name, the file's (or the built-in's): a copied file keeping the name inside it would
    # be one structure at the hub and another at the tables (and after a restart).
    name = origin
    if "name" in data and data["name"] != origin:
        problems.append(f"name: {data['name']!r} is not this structure's name {origin!r} (a "
                        f"structure is named by its file: remove the key, or write {origin!r})")
    schedule = data.get("schedule")
    periods: list[Period] = []
    if not isinstance(schedule, list) or not schedule:
        problems.append("schedule: must be a non-empty list of [[schedule]] levels and breaks")
        schedule = []
    last_level = 0
    for i, entry in enumerate(schedule):
        where = f"schedule[{i}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be a table")
            continue
        note = str(entry.get("note") or entry.get("color_up") or entry.get("announce") or "")
        announcements = tuple(str(entry[key]) for key in ("color_up", "announce")
                              if isinstance(entry.get(key), str) and entry[key])
        if "break_minutes" in entry:
            for key in sorted(set(entry) - _BREAK_KEYS):
                problems.append(f"{where}.{key}: unknown key for a break")
            minutes = _number(entry["break_minutes"], f"{where}.break_minutes", problems,
                              positive=True)
            periods.append(Period(minutes * 60.0, None, note=note, announcements=announcements))
            continue
        for key in sorted(set(entry) - _LEVEL_KEYS):
            problems.append(f"{where}.{key}: unknown key for a level "
                            f"(allowed: {', '.join(sorted(_LEVEL_KEYS))})")
        for key in ("level", "sb", "bb", "minutes"):
            if key not in entry:
                problems.append(f"{where}.{key}: missing")
        level = entry.get("level", 0)
        if isinstance(level, int) and not isinstance(level, bool):
            if level != last_level + 1:
                problems.append(f"{where}.level: {level} follows level {last_level}; "
                                "levels count up from 1 without gaps")
            last_level = level
        else:
            problems.append(f"{where}.level: must be a whole number")
        sb = _number(entry.get("sb", 0), f"{where}.sb", problems)
        bb = _number(entry.get("bb", 0), f"{where}.bb", problems, positive=True)
        ante = _number(entry.get("ante", 0), f"{where}.ante", problems)
        if sb > bb:
            problems.append(f"{where}.sb: small blind {sb:g} is larger than the big blind {bb:g}")
        minutes = _number(entry.get("minutes", 0), f"{where}.minutes", problems, positive=True)
        periods.append(Period(minutes * 60.0, int(level) if isinstance(level, int) else 0,
                              int(sb), int(bb), int(ante), note, announcements))
    figures: dict[str, int] = {}
    for key in _FIGURES:
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                problems.append(f"{key}: must be a whole number, 0 or more")
            else:
                figures[key] = value
    levels = sum(1 for p in periods if not p.is_break)
    until = figures.get("late_entry_until_level")
    if until is not None and not 2 <= until <= levels:
        problems.append(f"late_entry_until_level: the level at whose start late entries close, "
                        f"2 to {levels} (the schedule's levels)")
    if figures.get("late_entry_min_left") == 0:
        problems.append("late_entry_min_left: at least 1 (or leave it out)")
    currency = data.get("currency", "")
    if not isinstance(currency, str) or len(currency) > 8:
        problems.append("currency: a short text ($, EUR)")
        currency = ""
    if problems:
        raise StructureError(origin, problems)
    return Structure(str(name), str(data.get("title", name)), str(data.get("source", "")),
                     tuple(periods), currency=currency, **figures)


STRUCTURE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
# No tournament plays a month of clock time: a longer reading is a sender's mistake (or an
# attack), refused before it reaches the clock, the screens or the journal.
MAX_CLOCK_SECONDS = 30 * 24 * 3600.0


def check_structure_name(name: str) -> None:
    """A structure is asked for by name, never by path: a command or an input that names one
    must not make anybody read a file of its choosing."""
    if not isinstance(name, str) or not STRUCTURE_NAME.match(name):
        raise StructureError(str(name)[:80], [
            "a structure is named by letters, digits, '-' and '_' (up to 64), not a path; a "
            "house's own structures go in the structures directory of its configuration"])


def no_structures(name: str) -> Structure:
    """The structure loader of a table given none: every structure is unknown (the shell
    passes ``houses.loaders.load_structure`` or a house's own directory)."""
    check_structure_name(name)
    raise StructureError(name, ["this table was given no blind structures"])


class BlindClock:
    """Running, paused, on a break or finished; tells which level applies at any time."""

    def __init__(self, structure: Structure, t: float) -> None:
        self.structure = structure
        self.started_t = t
        self.elapsed_before = 0.0  # clock seconds accumulated before the current run
        self.running_since: float | None = t
        self.index = -1  # period last announced
        self.warned_index = -1
        self.stopped = False
        self._bounds: list[float] = []
        total = 0.0
        for period in structure.periods:
            total += period.seconds
            self._bounds.append(total)

    # -- time
    def elapsed(self, t: float) -> float:
        if self.running_since is None:
            return self.elapsed_before
        return self.elapsed_before + max(0.0, t - self.running_since)

    def _wall_time_of(self, elapsed: float) -> float:
        """The input time at which the clock reads ``elapsed`` (the clock is running)."""
        assert self.running_since is not None
        return self.running_since + (elapsed - self.elapsed_before)

    @property
    def paused(self) -> bool:
        return self.running_since is None and not self.stopped

    def pause(self, t: float, reason: str | None = None) -> list[Event]:
        """Pause (``reason``: why, when not the floor's own command, e.g. a floor call)."""
        events = self.advance(t)
        if self.running_since is not None:
            self.elapsed_before = self.elapsed(t)
            self.running_since = None
            events.append(self._state_event("paused", t, reason))
        return events

    def resume(self, t: float) -> list[Event]:
        if self.running_since is None and not self.stopped:
            self.running_since = t
            return [self._state_event("running", t), *self.advance(t)]
        return []

    def stop(self, t: float) -> list[Event]:
        if self.stopped:
            return []  # the venue clock repeats its stopped state every few seconds
        events = self.advance(t)
        self.elapsed_before = self.elapsed(t)
        self.running_since = None
        self.stopped = True
        events.append(self._state_event("stopped", t))
        return events

    def sync(self, elapsed: float, running: bool, t: float) -> list[Event]:
        """Follow the venue clock: it read ``elapsed`` seconds at ``t``. A period the clock
        moves into is announced; the periods skipped are not replayed. ``synced`` is reported
        when the table had drifted (``SYNC_DRIFT_SECONDS``), was stopped, ran when the hub's
        clock did not (or the reverse), or changes period: the hub repeats its clock every few
        seconds, and a table that agrees with it has nothing to say. A running reading a
        little behind the table's own is only late (``LATE_READING_SECONDS``)."""
        drift = round(elapsed - self.elapsed(t), 3)
        if (running and self.running_since is not None and not self.stopped
                and -LATE_READING_SECONDS < drift < 0):
            return self.advance(t)
        target = self.structure.index_at(elapsed)
        news = (abs(drift) >= SYNC_DRIFT_SECONDS or self.stopped or target != self.index
                or running != (self.running_since is not None))
        self.stopped = False
        self.elapsed_before = elapsed
        self.running_since = t if running else None
        events: list[Event] = [ClockChanged(
            state="synced", structure=self.structure.name, elapsed=round(elapsed, 3),
            drift=drift, running=running, t=t)] if news else []
        if target != self.index:
            self.index = target - 1
            self.warned_index = target - 1
            if self.running_since is None:
                self.running_since = t  # announce the period, then stop again
                events += self.advance(t)
                self.running_since = None
                return events
        return events + self.advance(t)

    def advance(self, t: float) -> list[Event]:
        events: list[Event] = []
        if self.stopped:
            return events
        elapsed = self.elapsed(t)
        target = self.structure.index_at(elapsed)
        while True:
            if self.index >= 0:
                self._maybe_warn(elapsed, t, events)
            if self.index >= target:
                break
            self.index += 1
            start_elapsed = self._bounds[self.index] - self.structure.periods[self.index].seconds
            at = self._wall_time_of(start_elapsed) if self.running_since is not None else t
            previous = self.structure.periods[self.index - 1] if self.index > 0 else None
            if previous is not None and previous.is_break:
                events.append(BreakEnded(t=at))
            events.append(self._period_event(self.index, at))
            period = self.structure.periods[self.index]
            events.extend(Announcement(text=text, level=period.level, break_=period.is_break, t=at)
                          for text in period.announcements)
        return events

    def _maybe_warn(self, elapsed: float, t: float, events: list[Event]) -> None:
        index = self.index
        if index == len(self._bounds) - 1 or self.warned_index >= index:
            return
        period = self.structure.periods[index]
        warn_elapsed = max(self._bounds[index] - WARNING_SECONDS,
                           self._bounds[index] - period.seconds)
        if elapsed < warn_elapsed:
            return
        self.warned_index = index
        at = self._wall_time_of(warn_elapsed) if self.running_since is not None else t
        events.append(ClockWarning(seconds_left=round(self._bounds[index] - warn_elapsed, 3),
                                   level=period.level, break_=period.is_break, t=at))

    def _period_event(self, index: int, at: float) -> Event:
        period = self.structure.periods[index]
        following = self.structure.periods[index + 1] if index + 1 < len(self._bounds) else None
        if period.is_break:
            return BreakStarted(minutes=period.seconds / 60.0, note=period.note or None, t=at)
        assert period.level is not None  # a period that is not a break has its level
        upcoming = None
        if following is not None and following.level is not None:
            upcoming = {"level": following.level, "sb": following.sb, "bb": following.bb,
                        "ante": following.ante}
        return Level(level=period.level, sb=period.sb, bb=period.bb, ante=period.ante,
                     minutes=period.seconds / 60.0, note=period.note or None, next=upcoming,
                     break_next=following.is_break if following is not None else None, t=at)

    def _state_event(self, state: str, t: float, reason: str | None = None) -> ClockChanged:
        return ClockChanged(state=state, structure=self.structure.name,
                            elapsed=round(self.elapsed(t), 3), t=t, reason=reason)

    def _level_period(self) -> Period | None:
        for index in range(self.index, -1, -1):
            period = self.structure.periods[index]
            if not period.is_break:
                return period
        return None

    def current_level(self) -> int | None:
        """The level in play now: during a break, the level before it."""
        period = self._level_period()
        return period.level if period is not None else None

    def current_blinds(self) -> dict[str, int] | None:
        """The amounts of the level in play (``current_level``'s), for a hand's record."""
        period = self._level_period()
        if period is None:
            return None
        return {"sb": period.sb, "bb": period.bb, "ante": period.ante}

    def snapshot(self, t: float) -> dict[str, Any]:
        period = self.structure.periods[max(self.index, 0)]
        return {
            "structure": self.structure.name,
            "level": self.current_level(),
            "on_break": period.is_break,
            "running": self.running_since is not None,
            "remaining": round(self._bounds[max(self.index, 0)] - self.elapsed(t), 3),
        }
