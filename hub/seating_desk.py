"""The floor view's seating and roster: bust-outs and their undo, seats set by hand, the seat
draws and the final table's draw, an entrant removed, the moves of a balancing or a break, and
the seating reconciled with the tables. Each is a transition of the hub's seating
(hub/seating.py) and of the roster (hub/roster.py); pure like the floor view that composes it
(hub/floor.py): decisions and time (UTC milliseconds) in, updates out.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from controller.balancing import ProposalKind
from hub.refused import StaffError
from hub.roster import display_name
from hub.seating import PlannedMove, SeatingRefused
from hub.states import TableStatus
from hub.updates import BustoutUpdate, RosterUpdate, Update

if TYPE_CHECKING:
    from contract.commands import SeatingCommand
    from controller.balancing import Proposal
    from hub.floor import FloorView

UNDO_BUSTOUT_MS = 120_000  # a bust-out can be undone this long after the table applied it


@dataclass
class BustOut:
    """A player the floor put out (their seat leaves the hub's seating at once; the table
    deals without it from its next hand). Its undo lives here, at the hub: every dashboard
    shows it, after a refresh too, for its window."""

    table: str
    seat: int
    hand: int | None  # the table's hand when it happened
    ts: int
    by: str
    undone_by: str | None = None  # the seat was given back
    undone_at: int | None = None
    player: str | None = None  # who sat there, by the roster (None: no roster)
    place: int | None = None  # their finishing place when it happened (the roster's is live)
    player_id: int | None = None
    prize: int | None = None  # what the place paid when it happened (in the money only)
    id: str = field(init=False, default="")
    undo_until: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.id = f"{self.table}:{self.seat}:{self.ts}"
        self.undo_until = self.ts + UNDO_BUSTOUT_MS


class SeatingDesk:
    """The floor view's seating and roster changes (its ``seating``, ``roster`` and
    ``bustouts``), each with the updates of the tables' lines and the roster it changed."""

    def __init__(self, floor: FloorView) -> None:
        self.floor = floor

    def roster_update(self) -> RosterUpdate:
        return RosterUpdate(kind="roster", roster=self.floor.roster.view())

    def final_table_draw(self, final: str, by: str, now: int,
                         rng: random.Random) -> list[Update]:
        """Every player left draws a seat at the final table (seed 002: "Before the start of
        any final table players seating positions are to be decided by use of the Ace - 8
        card system"; seed 001: "all players, including those already seated at the table,
        draw for their seat"). The final table's own players change seats at its next hand;
        the others leave theirs after their hand there and are seated at the final table
        once they have (hub/seating.py). StaffError says why not."""
        roster = self.floor.roster
        players = [p for p in roster.players.values() if p.playing]
        if not players:
            raise StaffError("no roster: the final table's draw is among the players entered")
        if final not in self.floor.tables:
            raise StaffError(f"no table {final!r} has been heard at this venue")
        size = self.floor.table_size(final)
        if len(players) > size:
            raise StaffError(f"{len(players)} players are left and table {final} seats {size}:"
                             " break down to the final table first")
        plans = self.floor.seating.tables
        on_their_way = [a for plan in plans.values() for a in plan.arriving]
        if on_their_way:
            a = on_their_way[0]
            raise StaffError(f"a player is on their way from table {a.from_table} seat "
                             f"{a.from_seat}: draw the final table once they are seated")
        for name, plan in sorted(plans.items()):
            unnamed = [s for s in plan.seats if roster.at(name, s) is None]
            if unnamed:
                raise StaffError(f"table {name} seat {unnamed[0]} has no one on the roster: "
                                 "enter them first")
        waiting = [p for p in players if p.table is None]
        if waiting:
            raise StaffError(f"{waiting[0].name} waits for a seat: draw seats first")
        new_seats = rng.sample(range(1, size + 1), len(players))
        rng.shuffle(players)
        drawn = list(zip(players, new_seats, strict=True))
        staying = [(p, seat) for p, seat in drawn if p.table == final]
        coming = [(p, seat) for p, seat in drawn if p.table != final]
        try:
            self.floor.seating.set_seats(final, [seat for _, seat in staying], by, now, [
                {"seat": seat, "from_table": final, "from_seat": p.seat,
                 "player": display_name(p.name)}
                for p, seat in staying if p.seat != seat])
            emptied = tuple(sorted({str(p.table) for p, _ in coming}))
            self.floor.seating.move([PlannedMove(str(p.table), int(p.seat or 0), final, seat,
                                           display_name(p.name)) for p, seat in coming],
                              by, now, breaking=emptied)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        for player, seat in drawn:
            player.table, player.seat, player.seated_hand = final, seat, None
        self.floor.balance_stale = True
        return [*self.seating_updates(), self.roster_update()]

    def draw_seats(self, by: str, now: int,
                   rng: random.Random) -> tuple[dict[str, list[tuple[int, Any]]], list[Update]]:
        """Seats drawn for every player waiting (hub/roster.py's draw) at the tables in play
        or waiting for players: online, not broken. Each table that gets a new seat taken
        has it in its seating at once (the table seats them at its next hand)."""
        unnamed: dict[str, list[int]] = {}
        free: dict[str, list[int]] = {}
        occupied: dict[str, int] = {}
        for name, view in sorted(self.floor.tables.items()):
            plan = self.floor.seating.plan(name)
            if view.status != TableStatus.ONLINE or plan.broken:
                continue
            unnamed[name] = [s for s in plan.seats if self.floor.roster.at(name, s) is None]
            free[name] = [s for s in range(1, self.floor.table_size(name) + 1)
                          if s not in plan.occupied]
            occupied[name] = len(plan.occupied)
        drawn = self.floor.roster.draw(unnamed, free, occupied, rng)
        for table, seated in drawn.items():  # dealt in from the table's next hand
            for _, player in seated:
                player.seated_hand = self.floor.tables[table].hand or 0
        for table, seated in sorted(drawn.items()):
            plan = self.floor.seating.plan(table)
            new = {seat for seat, _ in seated} - set(plan.seats)
            if new:
                self.floor.seating.set_seats(table, sorted({*plan.seats, *new}), by, now)
        self.floor.balance_stale = True
        return drawn, [*self.seating_updates(), self.roster_update()]

    # ------------------------------------------------------------------ the floor's seating
    def bust(self, table: str, seat: int, by: str, now: int) -> list[Update]:
        """The player in ``table``'s ``seat`` is out: the seat leaves the hub's seating at
        once (a second bust in the same hand leaves it too: the table gets both), the
        roster places them, and the bust-out can be undone for its window."""
        view = self.floor.table(table)
        size = self.floor.table_size(table)
        if not 1 <= seat <= size:
            raise StaffError(f"table {table} seats {size}: there is no seat {seat}")
        try:
            at_table, at_seat = self.floor.seating.bust(table, seat, by, now)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        player = self.floor.roster.went_out(at_table, at_seat, now, view.hand)
        bust = BustOut(at_table, at_seat, view.hand, now, by,
                       player=player.name if player else None,
                       place=self.floor.roster.places().get(player.id) if player else None,
                       player_id=player.id if player else None)
        self.floor.bustouts.append(bust)
        del self.floor.bustouts[:max(0, len(self.floor.bustouts) - self.floor.MAX_BUSTOUTS)]
        self.floor.balance_stale = True
        return [*self.seating_updates(), BustoutUpdate(kind="bustout", bustout=asdict(bust)),
                *([self.roster_update()] if player is not None else [])]

    def undo_bustout(self, bust_id: str, by: str, now: int) -> list[Update]:
        """A bust-out's seat given back (StaffError says why not: no such bust-out, undone
        already, its window closed, the seat taken since)."""
        bust = next((b for b in self.floor.bustouts if b.id == bust_id), None)
        if bust is None:
            raise StaffError(f"no bust-out {bust_id!r} at this venue")
        if bust.undone_by is not None:
            raise StaffError(f"already undone by {bust.undone_by}: table {bust.table} seat "
                             f"{bust.seat} is back in the game")
        if now > bust.undo_until:
            raise StaffError(f"too late to undo table {bust.table} seat {bust.seat}'s bust-out: "
                             f"an undo is for {UNDO_BUSTOUT_MS // 60_000} minutes; seat the "
                             "player again from the table's panel")
        try:
            self.floor.seating.give_back(bust.table, bust.seat, by, now)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        bust.undone_by, bust.undone_at = by, now
        back = self.floor.roster.back_in(bust.table, bust.seat, bust.ts, bust.player_id) is not None
        self.floor.balance_stale = True
        return [*self.seating_updates(), BustoutUpdate(kind="bustout", bustout=asdict(bust)),
                *([self.roster_update()] if back else [])]

    def set_seats(self, table: str, seats: list[int], by: str, now: int,
                  moves: list[dict[str, Any]] | None = None) -> list[Update]:
        """The floor sets a table's whole seating by hand: each seat taken out is a bust-out
        (its player out, as a bust), each new one an unnamed player (named by the draw)."""
        self.floor.table(table)
        size = self.floor.table_size(table)
        past = sorted(s for s in seats if s > size)
        if past:
            raise StaffError(f"table {table} seats {size} (the house's table size"
                             f"{', a short table' if size < self.floor.house_size else ''}"
                             f"): no seat past {size}")
        updates: list[Update] = []
        gone = sorted(set(self.floor.seating.plan(table).seats) - set(seats))
        moved = {m.get("seat") for m in moves or () if isinstance(m, dict)}
        for seat in gone:
            if seat not in moved:
                updates += self.bust(table, seat, by, now)
        try:
            self.floor.seating.set_seats(table, seats, by, now, moves)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        self.floor.balance_stale = True
        return [*updates, *self.seating_updates()]

    def remove_entrant(self, player_id: int, by: str, now: int) -> tuple[Any, list[Update]]:
        """An entrant entered by mistake gone from the roster (hub/roster.py ``remove``); a
        seat drawn for them leaves the seating, as no bust-out (they never played)."""
        player = self.floor.roster.player(player_id)
        if player.table is not None and player.seat is not None and player.playing:
            self.floor.roster.remove(player_id)  # its refusals first, before the seating changes
            # (A seat not in the seating was never the hub's: drawn, then set by hand.)
            with contextlib.suppress(SeatingRefused):
                self.floor.seating.bust(player.table, player.seat, by, now)
        else:
            self.floor.roster.remove(player_id)
        self.floor.balance_stale = True
        return player, [*self.seating_updates(), self.roster_update()]

    def no_show(self, player_id: int, refund: str, by: str,
                now: int) -> tuple[Any, list[Update]]:
        """An entrant who never came, removed with their buy-in refunded (hub/roster.py
        ``no_show``: refused once they have played); a seat drawn for them leaves the
        seating, as no bust-out."""
        roster = self.floor.roster
        player = roster.player(player_id)
        table, seat = player.table, player.seat
        hand = self.floor.tables[table].hand if table in self.floor.tables else None
        roster.no_show(player_id, now, refund, hand)  # its refusals before the seating changes
        if table is not None and seat is not None:
            with contextlib.suppress(SeatingRefused):  # (a seat set by hand since the draw)
                self.floor.seating.bust(table, seat, by, now)
        self.floor.balance_stale = True
        return player, [*self.seating_updates(), self.roster_update()]

    def free_seats(self) -> int:
        """The seats a draw could give now (at tables online and not broken), less the players
        waiting for one: above 0, the field is not full."""
        free = 0
        for name, view in self.floor.tables.items():
            plan = self.floor.seating.plan(name)
            if view.status == TableStatus.ONLINE and not plan.broken:
                free += max(0, self.floor.table_size(name) - len(plan.occupied))
        return free - len(self.floor.roster.waiting())

    def seat_alternate(self, table: str, seat: int, by: str,
                       now: int) -> tuple[Any, list[Update]]:
        """The first alternate entered and seated in ``table``'s ``seat``, just opened (a
        bust-out, a no-show), as a late entry drawn there: the seat in the table's seating at
        once, the table seating them at its next hand. (None, []) when nobody waits or the
        seat cannot take them (a table not online or broken, the seat taken again)."""
        view = self.floor.tables.get(table)
        plan = self.floor.seating.plan(table)
        if (not self.floor.roster.alternates or view is None or plan.broken
                or view.status != TableStatus.ONLINE or seat in plan.occupied):
            return None, []
        player = self.floor.roster.enter_alternate(now)
        assert player is not None  # (alternates wait)
        self.floor.seating.set_seats(table, sorted({*plan.seats, seat}), by, now)
        player.table, player.seat, player.seated_hand = table, seat, view.hand or 0
        self.floor.balance_stale = True
        return player, [*self.seating_updates(), self.roster_update()]

    def make_moves(self, proposal: Proposal, by: str, now: int) -> list[Update]:
        """A balancing move or a table break the floor confirmed, made now: each player
        leaves after their hand and is seated at the other table once they have."""
        moves = []
        for m in proposal.moves:
            player = self.floor.roster.at(m.from_table, m.from_seat)
            moves.append(PlannedMove(m.from_table, m.from_seat, m.to_table, m.to_seat,
                                     display_name(player.name) if player else None))
        breaking = (proposal.tables[0],) if proposal.kind == ProposalKind.BREAK else ()
        try:
            self.floor.seating.move(moves, by, now, breaking)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        for m in proposal.moves:
            self.floor.roster.moved(m.from_table, m.from_seat, m.to_table, m.to_seat)
        self.floor.balance_stale = True
        return [*self.seating_updates(), self.roster_update()]

    def reconcile(self, now: int) -> tuple[list[tuple[str, SeatingCommand]], list[Update]]:
        """Between messages: seats held for players who have left their table given to the
        table they go to, and each seating a table does not deal yet to send (again)."""
        statuses = {name: view.status for name, view in self.floor.tables.items()}
        released = self.floor.seating.release(statuses, now)
        online = {name for name, status in statuses.items() if status == TableStatus.ONLINE}
        due = self.floor.seating.due(online, now)
        updates: list[Update] = [self.floor.table_update(self.floor.table(name))
                                 for name in sorted({*released, *(name for name, _ in due)})]
        if released:
            self.floor.balance_stale = True
        return due, updates

    def seating_updates(self) -> list[Update]:
        """The line of every table whose seating changed (its new version)."""
        return [self.floor.table_update(self.floor.table(name))
                for name, plan in sorted(self.floor.seating.tables.items())
                if (self.floor.tables.get(name) is None
                    or (self.floor.tables[name].seating or {}).get("version") != plan.version
                    or self.floor.tables[name].seats != plan.occupied)]

