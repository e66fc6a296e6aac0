"""What the two retained topics carry, typed: the venue clock's reading (``clock``, schema
``VenueClock``: the hub publishes it, the tables follow it) and a table's state snapshot
(``tables/<table>/state``, schema ``State``: the daemon publishes it, the dashboard shows it).
Each is parsed once where it arrives and written back as the same JSON (``to_json``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, TypedDict

from contract.schema import receive


@dataclass(frozen=True, kw_only=True)
class VenueClockReading:
    structure: str | None  # None: the hub stopped the clock
    elapsed: float  # seconds of the structure played, on the hub's clock
    running: bool
    hand_for_hand: bool
    # For viewers, with a structure (tables compute them): the level (None on a break),
    # whether a break runs, seconds left in it.
    level: int | None = None
    on_break: bool | None = None
    remaining: float | None = None
    at: float | None = None  # when the hub read it (its wall clock, seconds since the epoch)
    # Its version: the clock's incarnation (one per start of the clock's process) and its
    # revision there, counted up at every change; a copy never follows an older one. None
    # from a hub before versions (ordered by ``at`` alone).
    incarnation: str | None = None
    revision: int | None = None

    @classmethod
    def parse(cls, payload: bytes | str) -> VenueClockReading:
        """The reading of a ``clock`` message; ContractError says what is wrong."""
        body = receive("VenueClock", payload)
        return cls(**{f.name: body[f.name] for f in fields(cls) if f.name in body})

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"structure": self.structure, "elapsed": self.elapsed,
                                "running": self.running, "hand_for_hand": self.hand_for_hand}
        if self.on_break is not None:
            data.update(level=self.level, on_break=self.on_break, remaining=self.remaining)
        if self.at is not None:
            data["at"] = self.at
        if self.incarnation is not None and self.revision is not None:
            data.update(incarnation=self.incarnation, revision=self.revision)
        return data

    def older_than(self, other: VenueClockReading | None) -> bool:
        """Whether this reading is a change older than ``other``'s of the same clock: same
        incarnation, a lower revision (a message published before a change, delivered after
        it). Readings of different incarnations, or without a version, are not ordered
        here."""
        return other is not None and self.older_than_version(other.incarnation, other.revision)

    def newer_than(self, other: VenueClockReading | None) -> bool:
        """Whether this reading is a change newer than ``other``'s of the same clock: same
        incarnation, a higher revision (whatever either says of its time). The converse of
        ``older_than``, by the same rule."""
        return other is not None and other.older_than_version(self.incarnation, self.revision)

    def older_than_version(self, incarnation: str | None, revision: int | None) -> bool:
        """Whether this reading is older than the clock's version (``incarnation``,
        ``revision``): the one rule ``older_than`` and ``newer_than`` apply, for a holder of
        the clock itself (the hub's) that has its version without a reading."""
        return (self.incarnation is not None and self.revision is not None
                and revision is not None and self.incarnation == incarnation
                and self.revision < revision)

class ClockShown(TypedDict):
    """A table's blind clock in its snapshot (schema ``State.clock``)."""

    structure: str
    level: int | None  # None on a break
    on_break: bool
    running: bool
    remaining: float  # seconds left in the period at the snapshot's moment (ts)


class DealerStats(TypedDict):
    """The dealer's shift so far, as the table would write its summary now (schema
    ``State.dealer_stats``: a ``dealer.summary`` event's JSON)."""

    type: Literal["dealer.summary"]
    dealer: str | None
    hands: int
    minutes: float
    hands_per_hour: float | None  # None before a minute has passed
    t: float


@dataclass(frozen=True, kw_only=True)
class TableState:
    """A table's retained snapshot: the core's ``Table.state()``, the links, the last seq and
    the moment it describes."""

    hand: int | None
    in_progress: bool
    shoe: str
    clock: ClockShown | None
    hand_for_hand: str
    seats: list[int]
    links: dict[str, str]
    last_seq: int
    ts: int  # UTC ms
    # What the schema lets a table leave out (a table's daemon writes them all).
    street: str | None = None
    phase: str | None = None
    dealer: str | None = None
    profile: str | None = None
    button: int | None = None
    blind_seats: dict[str, int] | None = None
    dealer_stats: DealerStats | None = None  # None: no dealer signed in
    seating: dict[str, int | None] | None = None  # the hub's versions: dealt, held for next

    # The order the snapshot is written in (a table's daemon has written it so since before
    # the fields a table may leave out were told apart from the others).
    WRITTEN: ClassVar[tuple[str, ...]] = (
        "hand", "in_progress", "street", "phase", "dealer", "shoe", "clock", "profile",
        "hand_for_hand", "seats", "seating", "button", "blind_seats", "dealer_stats", "links",
        "last_seq", "ts")

    @classmethod
    def parse(cls, payload: bytes | str) -> TableState:
        """The snapshot of a ``state`` message; ContractError says what is wrong."""
        body = receive("State", payload)
        return cls(**{name: body[name] for name in cls.WRITTEN if name in body})

    @classmethod
    def of(cls, table_state: dict[str, Any], *, hub_link: str, last_seq: int,
           ts_ms: int) -> TableState:
        """The snapshot of the core's state (``Table.state()``) with the hub link's state."""
        return cls(**table_state, links={"hub": hub_link}, last_seq=last_seq, ts=ts_ms)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.WRITTEN}

    def shown(self) -> tuple[Any, ...]:
        """What a viewer sees change: the snapshot but for its moment, its last seq, the
        clock's time left (it runs: refreshed every few seconds) and the dealer's figures
        other than the hands dealt."""
        clock = None if self.clock is None else {**self.clock, "remaining": None}
        rest = [(name, getattr(self, name)) for name in self.WRITTEN
                if name not in ("ts", "last_seq", "clock", "dealer_stats")]
        hands = None if self.dealer_stats is None else self.dealer_stats["hands"]
        return (*rest, ("clock", clock), ("hands", hands))
