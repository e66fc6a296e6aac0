"""The floor's balancing desk: what the house's rule proposes now, and the moves made. Pure
like the floor view it belongs to: tables in, updates out.

The proposal is worked out again at every change of the hub's seating (``controller/
balancing.py``), from the seats the floor decided (hub/seating.py), never from what a table
last reported: a table told of a move but still dealing its hand is counted as it will be.
The floor confirms the proposal the dashboard showed (its need, and its moves when the page
sends them); the moves are then made at once in the hub's seating, and each table takes them
at its own next hand: a break does not wait for every table to be between hands at the same
moment. Who moves depends on where the blinds are when the floor confirms (the dialog shows
who). A table whose link is lost keeps its seats in the counts (its players did not leave);
a table stopped cleanly (offline) is out of the counts.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.balancing import RULE_KEYS as BALANCE_RULES
from controller.balancing import BalanceRules, Proposal, ProposalKind, TableSeats, propose
from controller.seating import SEAT_MIN
from hub.states import COUNTED
from hub.updates import BalanceUpdate, Update

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.profiles import Profile

MAX_RECENT_MOVES = 50


class BalanceRefused(Exception):
    """A confirmation that no longer matches what the tables call for: the message says why."""


@dataclass
class BalanceDesk:
    profile: str
    rules: BalanceRules
    citations: list[dict[str, Any]]  # the house's balancing rules, each with its source
    salt: int = 0  # a hub's own draws: two hubs do not draw alike
    short_tables: dict[str, int] = field(default_factory=dict)  # table: its seats, if fewer
    proposal: Proposal | None = None
    recent: list[dict[str, Any]] = field(default_factory=list)  # moves made, newest last
    generation: int = 0  # moves sent so far: each new need draws afresh
    revision: int = 0  # one more at each panel the dashboards are sent: a page keeps the newest
    arriving: list[str] = field(default_factory=list)  # tables awaiting players on their way
    registering: bool = False  # late registration runs: breaks are withheld
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
    def review(self, tables: Mapping[str, Any], now: int,
               registration_open: bool = False) -> list[Update]:
        """Work the proposal out again; an update for the dashboards when what they show
        changes. ``tables`` are the floor's TableViews by name (their seats: the hub's)."""
        seated = [TableSeats(name, tuple(sorted(view.seats)), view.button,
                             (view.blind_seats or {}).get("big"),
                             (view.blind_seats or {}).get("small"), self.short_tables.get(name))
                  for name, view in sorted(tables.items())
                  if view.status in COUNTED]
        # Players on their way to a seat held for them (a break, a move): nothing more is
        # proposed until they sit (a move would pick a seat whose player is walking).
        self.arriving = sorted(name for name, view in tables.items()
                               if (getattr(view, "seating", None) or {}).get("arriving"))
        self.proposal = None if self.arriving else propose(seated, self.rules,
                                                           self._seed(seated))
        # While late registration runs, no table is broken: the latecomers are drawn to the
        # tables in play, and a broken table takes nobody (seed 002's latecomers join until
        # level 3; no house's rule here breaks a table during registration).
        self.registering = registration_open
        proposal = self.proposal
        if registration_open and proposal is not None and proposal.kind == ProposalKind.BREAK:
            self.proposal = None
        panel = self.panel(tables)
        if {**panel, "revision": 0} == self._shown:
            return []
        self._shown = {**panel, "revision": 0}
        self.revision += 1
        return [BalanceUpdate(kind="balance", balance=self.panel(tables))]

    def _seed(self, seated: list[TableSeats]) -> int:
        """The same draw while the same need stands (the dashboard shows what will be done)."""
        counts = ",".join(f"{t.table}:{len(t.seats)}" for t in seated)
        return zlib.crc32(f"{self.generation}|{counts}".encode()) ^ self.salt

    def panel(self, tables: Mapping[str, Any]) -> dict[str, Any]:
        proposal = self.proposal
        return {
            "profile": self.profile, "rules": self.citations,
            "proposal": proposal.to_json() if proposal else None,
            "arriving": list(self.arriving),  # no proposal until these tables' players sit
            "registering": self.registering,  # late registration runs: no break proposed
            "recent": self.recent[-10:],
            "table_size": self.rules.table_size,
            "short_tables": dict(sorted(self.short_tables.items())),
            # A confirmation's answer and the stream's updates arrive in either order: the
            # page keeps the highest revision (it showed the superseded proposal).
            "revision": self.revision,
        }

    # ------------------------------------------------------------------ from staff
    def confirm(self, kind: str, tables: list[str],
                moves: list[dict[str, Any]] | None = None) -> Proposal:
        """The proposal the floor confirms, as the dashboard showed it; BalanceRefused when
        the tables call for something else now, or (``moves`` given) other moves."""
        proposal = self.proposal
        if proposal is None:
            raise BalanceRefused("the tables are balanced: nothing to confirm")
        if (kind, tuple(tables)) != proposal.need:
            raise BalanceRefused(
                f"the tables now call for: {proposal.reason}; look again and confirm that")
        if moves is not None and moves != [m.to_json() for m in proposal.moves]:
            raise BalanceRefused("the seats changed since the dialog was shown (a bust-out, "
                                 "a draw, a hand's blinds): look at the moves again and "
                                 "confirm those")
        return proposal

    def made(self, proposal: Proposal, by: str, now: int,
             players: Mapping[tuple[str, int], str] | None = None) -> None:
        """The moves were made in the hub's seating: the next need draws afresh. Each is kept
        with the name of the player it moved (``players``: by table and seat, as the roster
        had them), so that the list names them after they go out too."""
        for move in proposal.moves:
            name = (players or {}).get((move.from_table, move.from_seat))
            self.recent.append({**move.to_json(), "kind": proposal.kind, "by": by, "ts": now,
                                **({"player": name} if name else {})})
        del self.recent[:max(0, len(self.recent) - MAX_RECENT_MOVES)]
        self.generation += 1


def short_table_problems(short_tables: Mapping[str, int], house_size: int) -> list[str]:
    """Every fault of a venue's short tables (table id: its seats), at once."""
    return [f"{table}={seats}: a short table seats {SEAT_MIN + 1} to {house_size} players "
            f"(the house's table size)" for table, seats in sorted(short_tables.items())
            if isinstance(seats, bool) or not isinstance(seats, int)
            or not SEAT_MIN + 1 <= seats <= house_size]
