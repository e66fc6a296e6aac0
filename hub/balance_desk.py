"""The floor's balancing desk: what the house's rule proposes now, who confirmed it, and when
the players move. Pure like the floor view it belongs to: tables in, updates and due moves out.

The proposal is worked out again at every change of the tables (``controller/balancing.py``):
who moves depends on where the blinds are, so the move is decided at the moment it is made.
The floor confirms a *need* (balance t1 into t2, break t3), not a list of seats; the hub sends
the seating changes to every table involved as soon as none of them is playing a hand (the
players move between hands), and until then the dashboard says which hand it waits for.
Tables that were just sent a move sit out of the next proposals until their state shows the
new seats (or ``MOVE_SETTLE_MS`` passes): a stale state must not propose the same move again.
A table whose link is lost keeps its last known seats in the counts (its players did not
leave; counting them out proposed breaks that were wrong): a proposal that needs it waits for
it to come back. A table stopped cleanly (offline) is out of the counts.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.balancing import RULE_KEYS as BALANCE_RULES
from controller.balancing import BalanceRules, Proposal, TableSeats, propose
from controller.seating import SEAT_MIN

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.profiles import Profile

MOVE_SETTLE_MS = 120_000
COUNTED = ("online", "lost")  # the statuses whose seats count: see the module's text
MAX_RECENT_MOVES = 50


class BalanceRefused(Exception):
    """A confirmation that no longer matches what the tables call for: the message says why."""


@dataclass
class Confirmation:
    need: tuple[str, tuple[str, ...]]
    by: str
    at: int


@dataclass
class BalanceDesk:
    profile: str
    rules: BalanceRules
    citations: list[dict[str, Any]]  # the house's balancing rules, each with its source
    salt: int = 0  # a hub's own draws: two hubs do not draw alike
    short_tables: dict[str, int] = field(default_factory=dict)  # table: its seats, if fewer
    proposal: Proposal | None = None
    confirmed: Confirmation | None = None
    moving: dict[str, tuple[list[int], int]] = field(default_factory=dict)  # table: seats, until
    recent: list[dict[str, Any]] = field(default_factory=list)  # moves sent, newest last
    generation: int = 0  # moves sent so far: each new need draws afresh
    _shown: dict[str, Any] | None = None

    @classmethod
    def of(cls, profile: Profile, salt: int = 0,
           short_tables: Mapping[str, int] | None = None) -> BalanceDesk:
        rules = [profile.rules[key] for key in BALANCE_RULES]
        citations = [{"key": r.key, "value": r.value, "source": r.source, "quote": r.quote,
                      "note": r.note} for r in rules]
        return cls(profile.name, BalanceRules.of(profile), citations, salt,
                   short_tables=dict(short_tables or {}))

    def table_size(self, table: str) -> int:
        """The seats a table has: the house's table size, or fewer at a short table."""
        return self.rules.size_of(TableSeats(table, (), size=self.short_tables.get(table)))

    # ------------------------------------------------------------------ from the floor view
    def review(self, tables: Mapping[str, Any], now: int) -> list[dict[str, Any]]:
        """Work the proposal out again; an update for the dashboards when what they show
        changes. ``tables`` are the floor's TableViews by name."""
        for name, (seats, until) in list(self.moving.items()):
            view = tables.get(name)
            if now >= until or (view is not None and sorted(view.seats) == seats):
                del self.moving[name]
        seated = [TableSeats(name, tuple(sorted(view.seats)), view.button,
                             (view.blind_seats or {}).get("big"),
                             (view.blind_seats or {}).get("small"), self.short_tables.get(name))
                  for name, view in sorted(tables.items())
                  if view.status in COUNTED and name not in self.moving]
        proposal = propose(seated, self.rules, self._seed(seated))
        self.proposal = proposal
        if self.confirmed is not None and (proposal is None
                                           or proposal.need != self.confirmed.need):
            self.confirmed = None  # the counts changed: the floor decides again
        panel = self.panel(tables)
        if panel == self._shown:
            return []
        self._shown = panel
        return [{"kind": "balance", "balance": panel}]

    def _seed(self, seated: list[TableSeats]) -> int:
        """The same draw while the same need stands (the dashboard shows what will be done)."""
        counts = ",".join(f"{t.table}:{len(t.seats)}" for t in seated)
        return zlib.crc32(f"{self.generation}|{counts}".encode()) ^ self.salt

    def waiting_for(self, tables: Mapping[str, Any]) -> list[str]:
        """The tables of the proposal still playing a hand (or not online)."""
        if self.proposal is None:
            return []
        return [name for name in self.proposal.tables
                if name not in tables or tables[name].status != "online"
                or tables[name].in_progress]

    def panel(self, tables: Mapping[str, Any]) -> dict[str, Any]:
        proposal = self.proposal
        return {
            "profile": self.profile, "rules": self.citations,
            "proposal": proposal.to_json() if proposal else None,
            "waiting_for": self.waiting_for(tables),
            "confirmed": {"by": self.confirmed.by, "at": self.confirmed.at}
            if self.confirmed else None,
            "moving": sorted(self.moving),
            "recent": self.recent[-10:],
            "table_size": self.rules.table_size,
            "short_tables": dict(sorted(self.short_tables.items())),
        }

    # ------------------------------------------------------------------ from staff
    def confirm(self, kind: str, tables: list[str], by: str, now: int) -> None:
        proposal = self.proposal
        if proposal is None:
            raise BalanceRefused("the tables are balanced: nothing to confirm")
        if (kind, tuple(tables)) != proposal.need:
            raise BalanceRefused(
                f"the tables now call for: {proposal.reason}; look again and confirm that")
        self.confirmed = Confirmation(proposal.need, by, now)

    def cancel(self) -> None:
        if self.confirmed is None:
            raise BalanceRefused("no move is waiting to be made")
        self.confirmed = None

    def due(self, tables: Mapping[str, Any]) -> Proposal | None:
        """The confirmed proposal, once no table of it is playing a hand."""
        if self.confirmed is None or self.proposal is None or self.waiting_for(tables):
            return None
        return self.proposal

    def sent(self, proposal: Proposal, seats_after: dict[str, list[int]], by: str,
             now: int) -> None:
        """The seating changes went out: those tables wait for their new seats."""
        for name, seats in seats_after.items():
            self.moving[name] = (seats, now + MOVE_SETTLE_MS)
        for move in proposal.moves:
            self.recent.append({**move.to_json(), "kind": proposal.kind, "by": by, "ts": now})
        del self.recent[:max(0, len(self.recent) - MAX_RECENT_MOVES)]
        self.confirmed = None
        self.generation += 1


def short_table_problems(short_tables: Mapping[str, int], house_size: int) -> list[str]:
    """Every fault of a venue's short tables (table id: its seats), at once."""
    return [f"{table}={seats}: a short table seats {SEAT_MIN + 1} to {house_size} players "
            f"(the house's table size)" for table, seats in sorted(short_tables.items())
            if isinstance(seats, bool) or not isinstance(seats, int)
            or not SEAT_MIN + 1 <= seats <= house_size]


def seating_commands(proposal: Proposal,
                     seats_now: Mapping[str, list[int]]) -> dict[str, dict[str, Any]]:
    """The seating command each table of a proposal gets: its seats after the moves, and the
    moves its display shows."""
    seats = {name: set(seats_now[name]) for name in proposal.tables}
    moves: dict[str, list[dict[str, Any]]] = {name: [] for name in proposal.tables}
    for move in proposal.moves:
        seats[move.from_table].discard(move.from_seat)
        seats[move.to_table].add(move.to_seat)
        moves[move.from_table].append({"seat": move.from_seat, "to_table": move.to_table,
                                       "to_seat": move.to_seat})
        moves[move.to_table].append({"seat": move.to_seat, "from_table": move.from_table,
                                     "from_seat": move.from_seat})
    return {name: {"seats": sorted(seats[name]), "moves": moves[name]}
            for name in proposal.tables}
