"""The room's seating as the floor decided it: one truth, at the hub.

Pure like the floor view it belongs to: decisions, table states and time (UTC milliseconds)
in; the commands to send and what the dashboards show out.

Each table's seating (the seats taken) is held here with a version. Every change the floor
makes (a bust-out, its undo, a draw, a move, a break, the final table's draw, seats set by
hand) is a transition on it, checked against it, and gives the table's seating the next
version: two bust-outs in one hand make two versions, the second holding both. The table is
sent its whole seating with the version (``cmd/seating``); its state says which version it
deals and which it holds for its next hand, and the hub sends it again, every
``RESEND_MS`` and whenever the table comes back, until it deals it. A table's seats never
change the plan, but once: a table the hub has no plan for (heard for the first time) is
taken as it is. A table that deals a version newer than the plan's (the hub restored from
an older backup) is sent the plan again under a newer version still: the hub's seating is
the truth, the copy follows it.

A player who moves between tables (balancing, a broken table, the final table's draw) leaves
their table at its next hand; the seat they go to is held for them (``Arrival``), and the
table they go to is sent it only once the table they leave deals a seating without them (or
is not online to say so): a table never deals a hand to a seat whose player is still
playing at another. The counts for balancing and draws include the seats held.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from contract.commands import SeatingCommand
from hub.states import COUNTED, SeatingState

RESEND_MS = 10_000  # a seating the table has not taken is sent again after this
MAX_VERSION = 2**53 - 1  # the contract's (JSON's exact integers): a version never passes it
MAX_MOVES_SHOWN = 10  # moves a seating command carries (the core's limit)


class SeatingRefused(Exception):
    """A seating change that does not hold against the plan: the message says why."""


@dataclass
class Arrival:
    """A seat held for a player on their way from another table."""

    seat: int
    from_table: str
    from_seat: int
    after: int  # the version of ``from_table``'s seating the player has left by
    player: str | None = None  # as a table's display shows them (None: no roster)


@dataclass
class TablePlan:
    """A table's seating as the floor decided it, and what the table says it deals."""

    table: str
    seats: list[int]  # the seating the table is sent (without the seats held)
    version: int = 0  # 0: taken from the table as it was, never sent
    changed_at: int = 0
    changed_by: str = ""
    moves: list[dict[str, Any]] = field(default_factory=list)  # shown with this version
    arriving: list[Arrival] = field(default_factory=list)
    broken: bool = False  # the floor broke it: no draw seats anyone here
    # What the table said last (its state; not kept: the retained state says it again).
    dealt: int | None = None  # the version it deals (None: not heard since the hub started)
    pending: int | None = None  # the version it holds for its next hand
    sent_at: int | None = None  # when this version was last sent
    refused: str | None = None  # the table's answer refusing this version

    @property
    def occupied(self) -> list[int]:
        """The seats taken or held: what balancing and draws count."""
        return sorted({*self.seats, *(a.seat for a in self.arriving)})

    @property
    def dealing(self) -> bool:
        """The table deals this plan's seating (nothing to send)."""
        return self.version == 0 or self.dealt == self.version

    def view(self, online: bool) -> dict[str, Any]:
        """What a dashboard shows of it: the seats, the held ones, and whether the table
        deals them ("dealt"), holds them for its next hand ("next_hand"), or has not taken
        them yet ("waiting", since ``since``; "unreachable": the table is not online)."""
        if self.dealing:
            state = SeatingState.DEALT
        elif self.pending == self.version:
            state = SeatingState.NEXT_HAND
        else:
            state = SeatingState.WAITING if online else SeatingState.UNREACHABLE
        return {"version": self.version, "seats": list(self.seats),
                "arriving": [asdict(a) for a in self.arriving], "broken": self.broken,
                "state": state, "since": self.changed_at, "by": self.changed_by,
                "dealt": self.dealt, "refused": self.refused}

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "seats": list(self.seats), "version": self.version,
                "changed_at": self.changed_at, "changed_by": self.changed_by,
                "moves": [dict(m) for m in self.moves],
                "arriving": [asdict(a) for a in self.arriving],
                "broken": self.broken}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TablePlan:
        """A plan as ``to_json`` kept it; ValueError (or KeyError, TypeError) for anything
        else: seats 1 to 10 each once, a version within the contract's."""
        seats = [_whole(s, 1, 10, "a seat") for s in data["seats"]]
        if len(set(seats)) != len(seats):
            raise ValueError(f"table {data['table']!r}: a seat twice")
        return cls(table=str(data["table"]), seats=sorted(seats),
                   version=_whole(data["version"], 0, MAX_VERSION, "a version"),
                   changed_at=_whole(data["changed_at"], 0, MAX_VERSION, "a time"),
                   changed_by=str(data["changed_by"]), moves=list(data["moves"]),
                   arriving=[Arrival(**a) for a in data["arriving"]],
                   broken=bool(data["broken"]))


def _whole(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} is a whole number from {low} to {high}, not {value!r}")
    return value


@dataclass(frozen=True)
class PlannedMove:
    """A player to move: from a seat at one table to a seat at another."""

    from_table: str
    from_seat: int
    to_table: str
    to_seat: int
    player: str | None = None  # as the displays show them


@dataclass
class SeatingPlan:
    """Every table's seating as the floor decided it."""

    tables: dict[str, TablePlan] = field(default_factory=dict)
    dirty: bool = False  # changed since the hub last kept it (``to_json``)

    # ------------------------------------------------------------------ from the tables
    def heard(self, table: str, seats: list[int], seating: dict[str, Any] | None,
              now: int) -> bool:
        """A table's state: its seats and the hub's versions it deals and holds. A table
        without a plan is taken as it is. True when what the dashboards show changed."""
        dealt = int((seating or {}).get("version") or 0)
        pending_raw = (seating or {}).get("pending")
        pending = int(pending_raw) if isinstance(pending_raw, int) else None
        plan = self.tables.get(table)
        if plan is None:
            self.tables[table] = TablePlan(table, sorted(seats), dealt, now, "table",
                                           dealt=dealt, pending=pending)
            self.dirty = True
            return True
        before = (plan.dealt, plan.pending, plan.seats)
        plan.dealt, plan.pending = dealt, pending
        if plan.version == 0 and not plan.arriving:
            # The floor has not seated this table yet: the plan is the table's own seats.
            if plan.seats != sorted(seats):
                plan.seats, self.dirty = sorted(seats), True
        elif max(dealt, pending or 0) > plan.version:
            # The table holds a version the plan never reached: the hub was restored from an
            # older copy. The plan stands, numbered past the table's.
            # (Never past the contract's largest: a table claiming it is refused the next.)
            plan.version = min(max(dealt, pending or 0), MAX_VERSION - 1)
            self._changed(plan, "hub", now, [])
        elif dealt == plan.version and sorted(seats) != sorted(plan.seats) and dealt:
            # Seats set at the table since (a tool, a journal edited): the plan stands.
            self._changed(plan, "hub", now, [])
        if plan.dealing:
            plan.refused = None
        return (plan.dealt, plan.pending, plan.seats) != before

    def refused(self, table: str, version: int | None, why: str) -> bool:
        """A table refused the seating ``version``: shown until a version is dealt."""
        plan = self.tables.get(table)
        if plan is None or version != plan.version:
            return False
        plan.refused = why[:300]
        return True

    def back(self, table: str) -> None:
        """The table is online again: what it has not taken is sent at once."""
        plan = self.tables.get(table)
        if plan is not None:
            plan.sent_at = plan.refused = None

    # ------------------------------------------------------------------ the floor's changes
    def plan(self, table: str) -> TablePlan:
        """A table's plan (a table never heard starts empty)."""
        if table not in self.tables:
            self.tables[table] = TablePlan(table, [])
        return self.tables[table]

    def set_seats(self, table: str, seats: list[int], by: str, now: int,
                  moves: list[dict[str, Any]] | None = None) -> TablePlan:
        """The table's whole seating set (a draw, seats typed by the floor): a new version. A
        seat held for a player on their way cannot be given (SeatingRefused)."""
        plan = self.plan(table)
        held = sorted({a.seat for a in plan.arriving} & set(seats))
        if held:
            raise SeatingRefused(f"table {table} seat {held[0]} is held for a player on their "
                                 "way from another table")
        plan.seats = sorted(set(seats))
        if plan.seats:
            plan.broken = False  # seated again: the table is in play
        self._changed(plan, by, now, list(moves or ()))
        return plan

    def bust(self, table: str, seat: int, by: str, now: int) -> tuple[str, int]:
        """The player in ``table``'s ``seat`` out: the seat leaves the seating (a new
        version). A player moved from that seat and still on their way (they went out in
        their last hand there), or one awaited in it, loses the seat held for them. Where
        the plan had the player: their table and seat."""
        plan = self.plan(table)
        if seat in plan.seats:
            plan.seats.remove(seat)
            self._changed(plan, by, now, [])
            return table, seat
        for other in self.tables.values():
            for arrival in other.arriving:
                if (other.table, arrival.seat) == (table, seat) or \
                        (arrival.from_table, arrival.from_seat) == (table, seat):
                    other.arriving.remove(arrival)
                    self.dirty = True
                    return other.table, arrival.seat
        raise SeatingRefused(f"table {table} seat {seat} is empty in the seating: nobody "
                             "to bust there")

    def give_back(self, table: str, seat: int, by: str, now: int) -> TablePlan:
        plan = self.plan(table)
        if seat in plan.occupied:
            raise SeatingRefused(f"table {table} seat {seat} is taken again: nothing to undo")
        plan.seats = sorted([*plan.seats, seat])
        plan.broken = False
        self._changed(plan, by, now, [])
        return plan

    def move(self, moves: list[PlannedMove], by: str, now: int,
             breaking: tuple[str, ...] = ()) -> None:
        """Players moved: each leaves its seat (a new version of its table) and a seat is
        held for it at the other (sent once it has left); the ``breaking`` tables are
        marked broken. SeatingRefused when a move does not hold (nobody in the seat it
        leaves, the seat it goes to taken), and then nothing changes."""
        leaving: dict[str, set[int]] = {}
        taking: dict[str, set[int]] = {}
        for m in moves:
            if m.from_table == m.to_table:
                raise SeatingRefused(f"table {m.from_table}: a seat changed at the same table "
                                     "is a seating set, not a move")
            source, target = self.plan(m.from_table), self.plan(m.to_table)
            if m.from_seat not in source.seats or m.from_seat in leaving.get(m.from_table, ()):
                raise SeatingRefused(f"table {m.from_table} seat {m.from_seat} is empty in the "
                                     "seating: nobody to move from there")
            freed = leaving.get(m.to_table, set())
            if (m.to_seat in target.occupied and m.to_seat not in freed) or \
                    m.to_seat in taking.get(m.to_table, ()):
                raise SeatingRefused(f"table {m.to_table} seat {m.to_seat} is taken")
            leaving.setdefault(m.from_table, set()).add(m.from_seat)
            taking.setdefault(m.to_table, set()).add(m.to_seat)
        for table, seats in sorted(leaving.items()):
            plan = self.tables[table]
            plan.seats = [s for s in plan.seats if s not in seats]
            self._changed(plan, by, now, [
                {"seat": m.from_seat, "to_table": m.to_table, "to_seat": m.to_seat,
                 **({"player": m.player} if m.player else {})}
                for m in moves if m.from_table == table])
        for table in breaking:
            self.plan(table).broken = True
        self.dirty = True
        for m in moves:
            target = self.tables[m.to_table]
            target.arriving.append(Arrival(m.to_seat, m.from_table, m.from_seat,
                                           self.tables[m.from_table].version, m.player))

    def release(self, statuses: dict[str, str], now: int) -> list[str]:
        """Seats held for players who have left their table (it deals a seating without
        them, or is stopped and deals nothing) given to the table they go to: the tables
        whose seating changed. A lost table may deal on unheard: its players wait."""
        changed = []
        for plan in self.tables.values():
            ready = [a for a in plan.arriving if self._left(a, statuses)]
            if not ready:
                continue
            plan.arriving = [a for a in plan.arriving if a not in ready]
            plan.seats = sorted({*plan.seats, *(a.seat for a in ready)})
            plan.broken = False
            self._changed(plan, "hub", now, [
                {"seat": a.seat, "from_table": a.from_table, "from_seat": a.from_seat,
                 **({"player": a.player} if a.player else {})} for a in ready])
            changed.append(plan.table)
        return changed

    def _left(self, arrival: Arrival, statuses: dict[str, str]) -> bool:
        source = self.tables.get(arrival.from_table)
        status = statuses.get(arrival.from_table)
        if source is None or status not in COUNTED:
            return True  # stopped (or never heard): it deals nobody a hand
        return (source.dealt or 0) >= arrival.after

    # ------------------------------------------------------------------ to the tables
    def due(self, online: set[str], now: int) -> list[tuple[str, SeatingCommand]]:
        """The seatings to send now: each online table's that it neither deals nor holds,
        not sent in the last ``RESEND_MS``, nor refused (sent again once the table is back
        or the seating changes)."""
        out = []
        for name, plan in sorted(self.tables.items()):
            if (plan.dealing or plan.pending == plan.version or name not in online
                    or plan.refused is not None  # until it is back, or a new version
                    or (plan.sent_at is not None and now - plan.sent_at < RESEND_MS)):
                continue
            plan.sent_at = now
            out.append((name, SeatingCommand(seats=list(plan.seats), version=plan.version,
                                             moves=list(plan.moves) or None)))
        return out

    # ------------------------------------------------------------------ views and storage
    def seats(self, table: str) -> list[int]:
        plan = self.tables.get(table)
        return plan.occupied if plan is not None else []

    def view(self, online: set[str]) -> dict[str, dict[str, Any]]:
        return {name: plan.view(name in online) for name, plan in sorted(self.tables.items())}

    def to_json(self) -> list[dict[str, Any]]:
        return [plan.to_json() for _, plan in sorted(self.tables.items())]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]]) -> SeatingPlan:
        return cls({plan.table: plan for plan in map(TablePlan.from_json, data)})

    def _changed(self, plan: TablePlan, by: str, now: int,
                 moves: list[dict[str, Any]]) -> None:
        """A new version of ``plan``'s seating. The moves its display shows: this change's,
        and those of the versions the table has not dealt yet that still hold."""
        carried = [] if plan.dealing else [
            m for m in plan.moves if ("to_table" in m) != (m["seat"] in plan.seats)]
        shown: dict[int, dict[str, Any]] = {m["seat"]: m for m in [*carried, *moves]}
        plan.moves = list(shown.values())[-MAX_MOVES_SHOWN:]
        plan.version = min(plan.version + 1, MAX_VERSION)
        plan.changed_at, plan.changed_by = now, by
        plan.sent_at = plan.refused = None
        self.dirty = True
