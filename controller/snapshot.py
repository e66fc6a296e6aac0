"""A table's state as data: what the daemon stores beside its journal so that a start replays
only the lines after it, not the table's whole history. Pure: JSON-able values in and out.

``snapshot(table, screen, t)`` takes the core and the display's model at rest (between hands,
no deck check running: ``Table.at_rest``), when what is half done is nothing; ``restore(data,
table, screen)`` puts it back into a table and a model built as the daemon builds them (its
profile, its configuration, its structures and deck registry are the daemon's, never the
snapshot's), and returns the journal's time the snapshot was taken at.

The format is versioned (``SNAPSHOT_VERSION``), and read strictly: every key present, none
unknown, every value of its type and range, else ``SnapshotError`` saying which. A later format
keeps a reader for each earlier one (``_READERS``); a version it has no reader for (a newer
one, after a downgrade) is refused the same way. Restored from a snapshot then fed the journal
after it, a table behaves as one fed the whole journal, event for event
(``tests/test_snapshot.py`` holds it to that, and holds every attribute of the objects it
covers to this module, so that a new one cannot be left out unseen).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from controller.cards import HOLE_CARDS, parse_ndef_text
from controller.clock import BlindClock
from controller.events import EventDataError, Level, ShoeState, from_json
from controller.hand import Hand, Phase
from controller.inputs import SHOE_STATES
from controller.screens import Alert, DeckCheckShown, DisplayModel
from controller.seating import Positions
from controller.table import Table
from controller.table_parts import DECLARABLE_GAMES, RunningShot

SNAPSHOT_VERSION = 2  # 2: the hub's seating version (1 read as none)
OUTCOMES = ("complete", "misdeal", "void")
BETTINGS = tuple(sorted({betting for _, betting, _ in DECLARABLE_GAMES}))
HAND_FOR_HAND_STATES = ("off", "playing", "waiting")
CLOCK_SOURCES = ("table", "venue")


class SnapshotError(ValueError):
    """A snapshot that cannot be restored: what is wrong, and where in it."""


# ---------------------------------------------------------------------------- writing

def snapshot(table: Table, screen: DisplayModel, t: float) -> dict[str, Any]:
    """The table (at rest) and its display's model, and ``t``, the journal's time so far (the
    daemon's time goes on from it at the next start)."""
    if not table.at_rest:
        raise ValueError("a table is snapshotted at rest: between hands, no deck check running")
    return {"version": SNAPSHOT_VERSION, "t": t, "core": _core(table),
            "screen": _screen(screen)}


def _positions(positions: Positions | None) -> dict[str, Any] | None:
    if positions is None:
        return None
    return {"button": positions.button, "small_blind": positions.small_blind,
            "big_blind": positions.big_blind, "seats": list(positions.seats)}


def _core(table: Table) -> dict[str, Any]:
    hand = table.hand
    clock = table.clock
    shot = table.shot.running
    reread = table.last_read()
    return {
        "now": table.now,
        "game": table.game,
        "seats": list(table.seats) if table.seats is not None else None,
        "setup_button": table.setup_button,
        "hand": None if hand is None else {
            "number": hand.number, "game": hand.game, "deck": hand.deck,
            "positions": _positions(hand.positions), "outcome": hand.outcome,
            "started_t": hand.started_t, "redeal": hand.redeal, "level": hand.level,
            "dealer": hand.dealer},
        "next_number": table.next_number,
        "last_positions": _positions(table.last_positions),
        "last_outcome": table.last_outcome,
        "redeals": table.redeals,
        "setup_tags": dict(table.setup_tags),
        "last_deck": table.last_deck,
        "shift": {"dealer": table.shift.dealer, "since": table.shift.since,
                  "hands": table.shift.hands},
        "clock": None if clock is None else {
            "structure": clock.structure.name, "started_t": clock.started_t,
            "elapsed_before": clock.elapsed_before, "running_since": clock.running_since,
            "index": clock.index, "warned_index": clock.warned_index, "stopped": clock.stopped},
        "clock_source": table.clock_source,
        "shot": None if shot is None else {
            "started": shot.started, "seconds": shot.seconds, "countdown": shot.countdown,
            "countdown_sent": shot.countdown_sent},
        "shoe_state": table.shoe_state,
        "reread": None if reread is None else {
            "card": reread[0], "deck": reread[1], "tag": reread[2], "t": reread[3]},
        "choice": {"declared": table.choice.declared,
                   "hand_declared": table.choice.hand_declared},
        "waiting": list(table.waiting),
        "betting": table.betting,
        "hand_for_hand": table.hand_for_hand.state,
        "seating_version": table.seating_version,
    }


def _screen(model: DisplayModel) -> dict[str, Any]:
    alert = model.alert
    check = model.deck_check
    return {
        "level": model.level.to_json() if model.level is not None else None,
        "on_break": model.on_break,
        "alert": None if alert is None else {
            "title": alert.title, "lines": [line for page in alert.pages for line in page],
            "started": alert.started, "cause": alert.cause},
        "shot": list(model.shot) if model.shot is not None else None,
        "deck_check": None if check is None else {
            "deck": check.deck, "count": check.count, "ok": check.ok, "text": check.text},
        # A running check's screen stays up until its result (infinity: no JSON number).
        "deck_check_until": (model.deck_check_until if math.isfinite(model.deck_check_until)
                             else None),
        "announcement": None if model.announcement is None else {
            "text": model.announcement[0], "until": model.announcement[1]},
        "hand_for_hand": model.hand_for_hand,
        "game": model.game,
        "status": {"hand": model.status.hand, "shoe": model.status.shoe,
                   "dealer": model.status.dealer},
    }


# ---------------------------------------------------------------------------- reading

class _Object:
    """One JSON object of a snapshot, read strictly: exactly ``keys``, each value checked as
    it is taken; an error names the value's place (``core.clock.index``)."""

    def __init__(self, data: Any, where: str, keys: tuple[str, ...]) -> None:
        if not isinstance(data, dict):
            raise SnapshotError(f"{where}: an object was expected, not {_kind(data)}")
        missing = [key for key in keys if key not in data]
        unknown = sorted(str(key) for key in data if key not in keys)
        if missing or unknown:
            said = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
            raise SnapshotError(f"{where}: {'; '.join(said)}")
        self.data: dict[str, Any] = data
        self.where = where

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _bad(self, key: str, wanted: str) -> SnapshotError:
        return SnapshotError(f"{self._at(key)}: {wanted} was expected, not "
                             f"{_kind(self.data[key])}")

    def obj(self, key: str, keys: tuple[str, ...]) -> _Object:
        return _Object(self.data[key], self._at(key), keys)

    def opt_obj(self, key: str, keys: tuple[str, ...]) -> _Object | None:
        return None if self.data[key] is None else self.obj(key, keys)

    def whole(self, key: str, low: int | None = None, high: int | None = None) -> int:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or \
                (low is not None and value < low) or (high is not None and value > high):
            bounds = f" from {low}" if low is not None else ""
            bounds += f" to {high}" if high is not None else ""
            raise self._bad(key, f"a whole number{bounds}")
        return value

    def opt_whole(self, key: str, low: int | None = None, high: int | None = None) -> int | None:
        return None if self.data[key] is None else self.whole(key, low, high)

    def number(self, key: str) -> float:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise self._bad(key, "a finite number")
        return float(value)

    def opt_number(self, key: str) -> float | None:
        return None if self.data[key] is None else self.number(key)

    def text(self, key: str, choices: tuple[str, ...] | None = None) -> str:
        value = self.data[key]
        if not isinstance(value, str) or (choices is not None and value not in choices):
            raise self._bad(key, f"one of {', '.join(choices)}" if choices else "a text")
        return value

    def opt_text(self, key: str, choices: tuple[str, ...] | None = None) -> str | None:
        return None if self.data[key] is None else self.text(key, choices)

    def flag(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def opt_flag(self, key: str) -> bool | None:
        return None if self.data[key] is None else self.flag(key)

    def items(self, key: str, item: Callable[[Any], bool], wanted: str) -> list[Any]:
        value = self.data[key]
        if not isinstance(value, list) or not all(item(x) for x in value):
            raise self._bad(key, f"a list of {wanted}")
        return value

    def seats(self, key: str) -> tuple[int, ...]:
        seats = self.items(key, _is_seat, "seat numbers from 1 to 10")
        if len(set(seats)) != len(seats):
            raise self._bad(key, "seats each named once")
        return tuple(seats)

    def opt_seats(self, key: str) -> tuple[int, ...] | None:
        return None if self.data[key] is None else self.seats(key)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return type(value).__name__ if not isinstance(value, str) else repr(value[:40])


def _is_seat(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= 10


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


_POSITIONS = ("button", "small_blind", "big_blind", "seats")
# The states a shoe stays in (lost reads are an event of a link that is back).
_SHOE_STAYS = tuple(s for s in SHOE_STATES if s != ShoeState.READS_LOST)


def _read_positions(data: _Object | None) -> Positions | None:
    if data is None:
        return None
    seats = data.seats("seats")
    if len(seats) < 2:
        raise SnapshotError(f"{data.where}.seats: a hand's seats are two or more")
    return Positions(data.whole("button", 1, 10), data.whole("small_blind", 1, 10),
                     data.whole("big_blind", 1, 10), seats)


def restore(data: Any, table: Table, screen: DisplayModel) -> tuple[float, list[str]]:
    """Put a snapshot into ``table`` and ``screen``, both as the daemon has just built them
    (nothing fed yet): the journal's time it was taken at, and what could not be put back as
    it was (each said as a sentence; a blind structure gone since, say). ``SnapshotError``
    when it cannot be read; the table and the model may then be half restored: build others."""
    if not isinstance(data, dict):
        raise SnapshotError(f"a snapshot is an object, not {_kind(data)}")
    version = data.get("version")
    reader = _READERS.get(version) if isinstance(version, int) and \
        not isinstance(version, bool) else None
    if reader is None:
        raise SnapshotError(f"version {_kind(version)}: this table's software reads version"
                            f"{'s' if len(_READERS) > 1 else ''} "
                            f"{', '.join(map(str, sorted(_READERS)))}")
    try:
        return reader(data, table, screen)
    except SnapshotError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # the core's own checks
        raise SnapshotError(f"{type(exc).__name__}: {exc}") from None


_CORE = ("now", "game", "seats", "setup_button", "hand", "next_number", "last_positions",
         "last_outcome", "redeals", "setup_tags", "last_deck", "shift", "clock",
         "clock_source", "shot", "shoe_state", "reread", "choice", "waiting", "betting",
         "hand_for_hand")
_HAND = ("number", "game", "deck", "positions", "outcome", "started_t", "redeal", "level",
         "dealer")
_CLOCK = ("structure", "started_t", "elapsed_before", "running_since", "index",
          "warned_index", "stopped")
_SCREEN = ("level", "on_break", "alert", "shot", "deck_check", "deck_check_until",
           "announcement", "hand_for_hand", "game", "status")
GAMES = tuple(HOLE_CARDS)


def _restore_v1(data: dict[str, Any], table: Table,
                screen: DisplayModel) -> tuple[float, list[str]]:
    top = _Object(data, "", ("version", "t", "core", "screen"))
    t = top.number("t")
    notes = _restore_core_v1(top.obj("core", _CORE), table)
    _restore_screen_v1(top.obj("screen", _SCREEN), screen)
    return t, notes


def _restore_v2(data: dict[str, Any], table: Table,
                screen: DisplayModel) -> tuple[float, list[str]]:
    """Version 1 and the hub's seating version (a version 1 snapshot's table had none: the
    hub sends its seating again, hub/seating.py)."""
    top = _Object(data, "", ("version", "t", "core", "screen"))
    t = top.number("t")
    core = top.obj("core", (*_CORE, "seating_version"))
    notes = _restore_core_v1(core, table)
    table.seating_version = core.whole("seating_version", 0)
    _restore_screen_v1(top.obj("screen", _SCREEN), screen)
    return t, notes


def _restore_core_v1(core: _Object, table: Table) -> list[str]:
    notes: list[str] = []
    table.now = core.number("now")
    table.game = core.text("game", GAMES)
    table.seats = core.opt_seats("seats")
    table.setup_button = core.opt_whole("setup_button", 1, 10)
    table.next_number = core.whole("next_number", 1)
    table.last_positions = _read_positions(core.opt_obj("last_positions", _POSITIONS))
    table.last_outcome = core.opt_text("last_outcome", OUTCOMES)
    table.redeals = core.whole("redeals", 0)
    tags = core.data["setup_tags"]
    if not isinstance(tags, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in tags.items()):
        raise SnapshotError("core.setup_tags: an object of tag texts was expected")
    for uid, text in tags.items():
        table.registry.tags[uid] = parse_ndef_text(text)
    table.setup_tags = dict(tags)
    table.last_deck = core.opt_text("last_deck")
    shift = core.obj("shift", ("dealer", "since", "hands"))
    table.shift.dealer = shift.opt_text("dealer")
    table.shift.since = shift.opt_number("since")
    table.shift.hands = shift.whole("hands", 0)
    table.clock_source = core.text("clock_source", CLOCK_SOURCES)
    clock = core.opt_obj("clock", _CLOCK)
    if clock is not None:
        table.clock, note = _read_clock(clock, table)
        notes += note
    shot = core.opt_obj("shot", ("started", "seconds", "countdown", "countdown_sent"))
    if shot is not None:
        table.shot.running = RunningShot(shot.number("started"), shot.number("seconds"),
                                         shot.number("countdown"), shot.flag("countdown_sent"))
    table.shoe_state = ShoeState(core.text("shoe_state", _SHOE_STAYS))
    reread = core.opt_obj("reread", ("card", "deck", "tag", "t"))
    if reread is not None:
        table.restore_last_read((reread.text("card"), reread.opt_text("deck"),
                              reread.opt_text("tag"), reread.opt_number("t")))
    choice = core.obj("choice", ("declared", "hand_declared"))
    table.choice.declared = choice.opt_whole("declared", 0, len(DECLARABLE_GAMES) - 1)
    table.choice.hand_declared = choice.opt_whole("hand_declared", 0, len(DECLARABLE_GAMES) - 1)
    table.waiting = tuple(core.items("waiting", _is_seat, "seat numbers from 1 to 10"))
    table.betting = core.opt_text("betting", BETTINGS)
    table.hand_for_hand.state = core.text("hand_for_hand", HAND_FOR_HAND_STATES)
    hand = core.opt_obj("hand", _HAND)
    if hand is not None:
        table.hand = _read_hand(hand, table)
    return notes


def _read_hand(data: _Object, table: Table) -> Hand:
    """The last hand, over (a snapshot is taken between hands): what the table still reads of
    it (its number, deck and positions; that it is over)."""
    positions = _read_positions(data.obj("positions", _POSITIONS))
    assert positions is not None
    hand = Hand(number=data.whole("number", 1), game=data.text("game", GAMES),
                positions=positions, profile=table.profile, deck=data.opt_text("deck"),
                deal_gap=table.config.deal_gap, t=data.number("started_t"),
                redeal=data.whole("redeal", 0), level=data.opt_whole("level", 1),
                dealer=data.opt_text("dealer"))
    hand.phase = Phase.ENDED
    hand.outcome = data.text("outcome", OUTCOMES)
    return hand


def _read_clock(data: _Object, table: Table) -> tuple[BlindClock | None, list[str]]:
    name = data.text("structure")
    try:
        structure = table.structure_loader(name)
    except ValueError as exc:
        # As a journal replayed whole would do: a clock whose structure cannot be had is
        # refused, and the table goes on without one until the next clock input.
        return None, [f"the blind clock's structure {name!r} cannot be loaded, the table "
                      f"starts without a clock: {exc}"]
    clock = BlindClock(structure, data.number("started_t"))
    clock.elapsed_before = data.number("elapsed_before")
    clock.running_since = data.opt_number("running_since")
    last = len(structure.periods) - 1
    clock.index = data.whole("index", -1)
    clock.warned_index = data.whole("warned_index", -1)
    clock.stopped = data.flag("stopped")
    notes = []
    if clock.index > last or clock.warned_index > last:
        notes.append(f"the blind structure {name!r} has fewer periods than when the snapshot "
                     f"was taken: the clock goes on from its last period")
        clock.index = min(clock.index, last)
        clock.warned_index = min(clock.warned_index, last)
    return clock, notes


def _restore_screen_v1(data: _Object, model: DisplayModel) -> None:
    level = data.data["level"]
    if level is not None:
        try:
            event = from_json(level) if isinstance(level, dict) else None
        except EventDataError as exc:
            raise SnapshotError(f"screen.level: {exc}") from None
        if not isinstance(event, Level):
            raise SnapshotError("screen.level: a level event was expected")
        model.level = event
    model.on_break = data.flag("on_break")
    alert = data.opt_obj("alert", ("title", "lines", "started", "cause"))
    if alert is not None:
        model.alert = Alert.of_lines(
            alert.text("title"), tuple(alert.items("lines", _is_text, "texts")),
            alert.number("started"), model.alert_lines, model.alert_seconds,
            alert.opt_text("cause"))
    shot = data.data["shot"]
    if shot is not None:
        if not isinstance(shot, list) or len(shot) != 3 or not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in shot):
            raise SnapshotError("screen.shot: three finite numbers were expected")
        model.shot = (float(shot[0]), float(shot[1]), float(shot[2]))
    check = data.opt_obj("deck_check", ("deck", "count", "ok", "text"))
    if check is not None:
        model.deck_check = DeckCheckShown(check.text("deck"), check.whole("count", 0),
                                          check.opt_flag("ok"), check.text("text"))
    until = data.opt_number("deck_check_until")
    model.deck_check_until = math.inf if until is None else until
    announcement = data.opt_obj("announcement", ("text", "until"))
    if announcement is not None:
        model.announcement = (announcement.text("text"), announcement.number("until"))
    model.hand_for_hand = data.opt_text("hand_for_hand")
    model.game = data.opt_text("game")
    status = data.obj("status", ("hand", "shoe", "dealer"))
    model.status.hand = status.opt_whole("hand", 1)
    model.status.shoe = ShoeState(status.text("shoe", SHOE_STATES))
    model.status.dealer = status.opt_text("dealer")


# A later format adds its reader here and keeps these: a table upgraded reads the snapshot its
# previous version wrote.
_READERS: dict[int, Callable[[dict[str, Any], Table, DisplayModel],
                             tuple[float, list[str]]]] = {1: _restore_v1, 2: _restore_v2}
