"""The floor's use cases of balancing: a proposal of the house's rule confirmed, its moves
made in the hub's seating, logged and sent to the tables. A part of the floor's use cases
(hub/service.py), on its one worker thread; the proposals are hub/balance_desk.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.balancing import ProposalKind
from hub.floor_part import FloorPart

if TYPE_CHECKING:
    from hub.auth import User


class BalanceCases(FloorPart):
    def confirm_balance(self, user: User, kind: str, tables: list[str],
                        moves: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The floor confirms what the house's rule proposes (``kind``, ``tables`` and, when
        given, the ``moves`` as the dashboard showed them; BalanceRefused when the tables
        call for something else now): the moves are made at once in the hub's seating, each
        player leaving after their hand and seated at the other table once they have."""
        desk = self.floor.balance
        assert desk is not None
        now = self.now_ms()
        self.floor.review_balance(now)
        proposal = desk.confirm(kind, tables, moves)
        roster = self.floor.roster
        players = {(m.from_table, m.from_seat): player.name for m in proposal.moves
                   if (player := roster.at(m.from_table, m.from_seat)) is not None}
        updates = self.floor.seating_desk.make_moves(proposal, user.name, now)
        desk.made(proposal, user.name, now, players)
        self.log(now, user.name, "break table" if kind == ProposalKind.BREAK else "balance tables",
                 {"reason": proposal.reason, "moves": [
                     {**m.to_json(), **({"player": players[m.from_table, m.from_seat]}
                                        if (m.from_table, m.from_seat) in players else {})}
                     for m in proposal.moves]})
        self.service.seating_changed(updates, now)
        return desk.panel(self.floor.tables)

