"""Every event the core emits, one frozen dataclass per kind.

The core, the display and sound models and the daemon pass these objects and dispatch on them
with ``match``; JSON exists only at the edges (``to_json``: the replay output, the outbox and
the envelope, whose ``data`` schemas in ``contract/asyncapi.json`` a test compares with these
classes). ``to_json`` writes the keys in field order, as the replay contract always had them:
a field made with ``opt()`` is left out when it is None, any other field is always written.

``dealer``: the table stamps the dealer signed in on every event that does not carry one of its
own (SPEC 1.3), as the last key (``Table._stamped``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

_JSON_NAME = {"break_": "break"}  # a Python keyword as a field name


def opt(*, written_with: str | None = None) -> Any:
    """A field written only when it is not None (or, ``written_with``, whenever that other
    field is written: null then says something)."""
    return field(default=None, metadata={"omit_none": True, "written_with": written_with})


# (field name, JSON key, omitted when None, written with) per class, in field order
_Layout = tuple[tuple[str, str, bool, str | None], ...]
_LAYOUTS: dict[type, _Layout] = {}


def _layout(cls: type) -> _Layout:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = tuple(
            (f.name, _JSON_NAME.get(f.name, f.name), bool(f.metadata.get("omit_none")),
             f.metadata.get("written_with")) for f in dataclasses.fields(cls))
    return layout


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    TYPE: ClassVar[str] = ""

    @property
    def type(self) -> str:
        return self.TYPE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        for name, key, omit_none, written_with in _layout(type(self)):
            value = getattr(self, name)
            if value is None and omit_none and (
                    written_with is None or getattr(self, written_with) is None):
                continue
            out[key] = value
        return out

    def stamped(self, dealer: str) -> Event:
        """This event with the table's dealer, if it has none of its own (an event whose
        ``dealer`` is its subject, a sign-in or a hand's start, keeps its own)."""
        for name, _, omit_none, _ in _layout(type(self)):
            if name == "dealer":
                if omit_none and getattr(self, name) is None:
                    return dataclasses.replace(self, dealer=dealer)  # type: ignore[call-arg]
                break
        return self


# ---------------------------------------------------------------------------- a hand

@dataclass(frozen=True, slots=True, kw_only=True)
class HandStarted(Event):
    TYPE: ClassVar[str] = "hand.started"
    hand: int
    game: str
    button: int
    seats: list[int]
    level: int | None
    small_blind: int | None  # None: no small blind posted (dead small blind)
    big_blind: int
    dead_button: bool
    deck: str | None  # None: the deck went in without an id; its first card names it
    redeal: int
    dealer: str | None
    t: float
    waiting: list[int] | None = opt()  # newcomers dealt around until the button passes
    waiting_rule: str | None = opt()
    betting: str | None = opt()  # dealer's choice: the betting declared with the game
    blinds: dict[str, int] | None = opt()  # the level's amounts: sb, bb, ante (with a clock)


@dataclass(frozen=True, slots=True, kw_only=True)
class Card(Event):
    TYPE: ClassVar[str] = "card"
    hand: int
    n: int  # the draw's number within the hand
    card: str
    deck: str | None
    role: str  # hole, burn, board, scrap, out
    street: str
    seat: int | None = opt()
    face: str | None = opt()  # "up" when the shoe saw its face
    boxed: bool | None = opt()
    tag: str | None = opt()
    dealt_to: int | None = opt()  # an exposed hole card turned burn: the seat it was dealt to
    replacement: bool | None = opt()
    premature: bool | None = opt()
    overdealt: bool | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Irregularity(Event):
    TYPE: ClassVar[str] = "irregularity"
    hand: int
    kind: str
    card: str | None = opt()
    tag: str | None = opt()
    n: int | None = opt()
    seat: int | None = opt()
    exposed: int | None = opt()
    street: str | None = opt()
    extra: int | None = opt()
    declared: str | None = opt()
    missing: dict[str, int] | int | None = opt()  # per seat (hole cards) or a count (a street)
    betting: str | None = opt()
    flop_cards: int | None = opt()
    in_play_deck: str | None = opt()
    state: str | None = opt()
    part: str | None = opt()
    lost: int | None = opt()
    cards: int | None = opt()
    detail: str | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Ruling(Event):
    TYPE: ClassVar[str] = "ruling"
    hand: int
    action: str
    reason: str | None = opt()
    text: str
    profile: str
    rule: str | None = opt()
    source: str | None = opt()
    seat: int | None = opt()
    declared: str | None = opt()
    street: str | None = opt()
    returned: list[str] | None = opt()
    candidates: list[str] | None = opt()
    reassigned: dict[str, str] | None = opt()
    part: str | None = opt()
    lost: int | None = opt()
    cards: int | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardResolved(Event):
    """The floor picked the burn from a scrambled four-card flop."""

    TYPE: ClassVar[str] = "board.resolved"
    hand: int
    street: str
    burn: str
    board: list[str]
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEnded(Event):
    TYPE: ClassVar[str] = "hand.ended"
    hand: int
    outcome: str  # complete, misdeal, void
    hole: dict[str, list[str]]
    board: list[str]
    burns: list[str]
    scrap: list[str]
    out: list[str]
    level: int | None
    button: int
    draws: int
    flop_unresolved: list[str] | None = opt()
    ended_by: str | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class HandRecord(Event):
    TYPE: ClassVar[str] = "hand.record"
    hand: int
    game: str
    outcome: str
    seats: list[int]
    button: int
    hole: dict[str, list[str]]
    board: list[str]
    burns: list[str]
    scrap: list[str]
    out: list[str]
    level: int | None
    best: dict[str, Any] | None
    t: float
    dealer: str | None = opt()
    best_hand: dict[str, list[int]] | None = opt()  # the seats holding the best high (low)


@dataclass(frozen=True, slots=True, kw_only=True)
class HandLevel(Event):
    """The level changed before the hand's first card (houses that change it then)."""

    TYPE: ClassVar[str] = "hand.level"
    hand: int
    level: int | None
    t: float
    dealer: str | None = opt()
    blinds: dict[str, int] | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class CardIgnored(Event):
    TYPE: ClassVar[str] = "card.ignored"
    card: str
    deck: str | None
    reason: str
    hand: int | None
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- the table

@dataclass(frozen=True, slots=True, kw_only=True)
class TableSetup(Event):
    TYPE: ClassVar[str] = "table.setup"
    effective: str  # now, next_hand
    game: str
    seats: list[int] | None
    button: int | None
    profile: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Seating(Event):
    TYPE: ClassVar[str] = "seating"
    seats: list[int]
    effective: str
    t: float
    moves: list[dict[str, Any]] | None = opt()  # players moved between tables
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckChanged(Event):
    TYPE: ClassVar[str] = "deck"
    state: str  # removed, reinserted
    deck: str | None
    hand: int | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeChanged(Event):
    TYPE: ClassVar[str] = "shoe"
    state: str  # ok, lost, fault
    hand: int | None
    t: float
    detail: str | None = opt()
    resumed: bool | None = opt()
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeReadsLost(Event):
    TYPE: ClassVar[str] = "shoe"
    state: str = "reads_lost"
    lost: int | None
    cards: int | None  # None: the shoe does not say how many were card reads
    hand: int | None
    t: float
    detail: str | None = opt()
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class GameDeclared(Event):
    TYPE: ClassVar[str] = "game.declared"
    game: str
    betting: str
    label: str
    default: bool
    hand: int | None = opt()  # declared for the hand whose deck is in
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerSignedIn(Event):
    TYPE: ClassVar[str] = "dealer"
    dealer: str | None
    t: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerSummary(Event):
    TYPE: ClassVar[str] = "dealer.summary"
    dealer: str | None
    hands: int
    minutes: float
    hands_per_hour: float | None  # None before a minute has passed
    t: float


@dataclass(frozen=True, slots=True, kw_only=True)
class HandForHandChanged(Event):
    TYPE: ClassVar[str] = "hand_for_hand"
    state: str  # playing, waiting, off, released, dealt_early
    hand: int | None = opt()
    text: str | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShotClock(Event):
    TYPE: ClassVar[str] = "shot_clock"
    state: str  # started, countdown, expired, cancelled
    seconds: float | None = opt()
    countdown: float | None = opt()
    reason: str | None = opt()
    hand: int | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class FloorCalled(Event):
    TYPE: ClassVar[str] = "floor.called"
    hand: int | None
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- deck checks

@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckStarted(Event):
    TYPE: ClassVar[str] = "deck_check.started"
    deck: str
    text: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckCard(Event):
    TYPE: ClassVar[str] = "deck_check.card"
    deck: str
    card: str
    card_deck: str | None
    count: int
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckCancelled(Event):
    TYPE: ClassVar[str] = "deck_check.cancelled"
    deck: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckResult(Event):
    TYPE: ClassVar[str] = "deck_check.result"
    deck: str
    ok: bool
    count: int
    missing: list[str]
    duplicates: list[str]
    foreign: list[str]
    unknown: list[str]
    jokers: int
    text: str
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- the clock

@dataclass(frozen=True, slots=True, kw_only=True)
class ClockChanged(Event):
    TYPE: ClassVar[str] = "clock"
    state: str  # running, paused, stopped, synced
    structure: str
    elapsed: float
    drift: float | None = opt()  # synced: how far the table's count was from the venue's
    running: bool | None = opt()  # synced: whether the venue clock runs
    t: float
    reason: str | None = opt()  # paused for a floor call
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockHold(Event):
    """The table asks the hub to pause the venue clock (a floor call, where the house says)."""

    TYPE: ClassVar[str] = "clock.hold"
    reason: str
    hand: int | None
    rule: str
    source: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Level(Event):
    TYPE: ClassVar[str] = "level"
    level: int
    sb: int
    bb: int
    ante: int
    minutes: float
    note: str | None = opt()
    # The level after this one; null when a break comes first; neither key in the last level.
    next: dict[str, int] | None = opt(written_with="break_next")
    break_next: bool | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakStarted(Event):
    TYPE: ClassVar[str] = "break"
    state: str = "started"
    minutes: float
    note: str | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakEnded(Event):
    TYPE: ClassVar[str] = "break"
    state: str = "ended"
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Announcement(Event):
    TYPE: ClassVar[str] = "announcement"
    text: str
    level: int | None  # None: announced with a break
    break_: bool
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockWarning(Event):
    TYPE: ClassVar[str] = "clock.warning"
    seconds_left: float
    level: int | None  # None: a break is ending
    break_: bool
    t: float
    dealer: str | None = opt()


EVENT_CLASSES: tuple[type[Event], ...] = (
    HandStarted, Card, Irregularity, Ruling, BoardResolved, HandEnded, HandRecord, HandLevel,
    CardIgnored, TableSetup, Seating, DeckChanged, ShoeChanged, ShoeReadsLost, GameDeclared,
    DealerSignedIn, DealerSummary, HandForHandChanged, ShotClock, FloorCalled, DeckCheckStarted,
    DeckCheckCard, DeckCheckCancelled, DeckCheckResult, ClockChanged, ClockHold, Level,
    BreakStarted, BreakEnded, Announcement, ClockWarning,
)

# Two classes share a type where the shape differs with the state.
_BY_TYPE_AND_STATE: dict[tuple[str, str | None], type[Event]] = {
    ("shoe", "reads_lost"): ShoeReadsLost, ("break", "started"): BreakStarted,
    ("break", "ended"): BreakEnded}
_BY_TYPE: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in EVENT_CLASSES if cls not in (ShoeReadsLost, BreakStarted,
                                                          BreakEnded)}
_FIELD_NAME = {key: name for name, key in _JSON_NAME.items()}


class EventDataError(ValueError):
    """A JSON object that is not one of the core's events."""


def from_json(data: dict[str, Any]) -> Event:
    """The typed event a JSON object written by ``to_json`` stands for (the outbox, a recorded
    replay): ``EventDataError`` if it is none."""
    kind = data.get("type")
    cls = _BY_TYPE_AND_STATE.get((str(kind), data.get("state"))) or _BY_TYPE.get(str(kind))
    if cls is None:
        raise EventDataError(f"no event of type {kind!r}")
    try:
        return cls(**{_FIELD_NAME.get(k, k): v for k, v in data.items() if k != "type"})
    except TypeError as exc:
        raise EventDataError(f"not a {kind} event: {exc}") from None
