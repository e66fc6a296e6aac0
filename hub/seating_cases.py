"""The floor's use cases of seating and the roster: seats set by hand, bust-outs and their
undo, the roster's entries, re-entries, add-ons and take-backs, late registration, the seat
draws and the final table's draw, and the tournament's end. Each changes the hub's seating
(hub/seating_desk.py) or the roster, is kept and logged, and is sent to the tables. A part of
the floor's use cases (hub/service.py), on its one worker thread."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from hub.floor_part import FloorPart
from hub.refused import StaffError
from hub.roster import Roster, RosterError

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import FloorService
    from hub.updates import Update


class SeatingCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        self.rng = random.SystemRandom()  # a seat draw no one can foresee
        self.saved_players: dict[int, dict[str, Any]] = {}  # the roster as stored
        self.saved_alternates: list[dict[str, Any]] = []

    def save_players(self) -> None:
        """The players the roster changed, and its alternates, to the database (committed)."""
        alternates = [asdict(a) for a in self.floor.roster.alternates]
        if alternates != self.saved_alternates:
            self.db.save_alternates(alternates)
            self.saved_alternates = alternates
        for player in self.floor.roster.players.values():
            row = asdict(player)
            if self.saved_players.get(player.id) != row:  # only who changed
                self.db.save_player(row)
                self.saved_players[player.id] = row
        self.db.commit()

    def set_seats(self, user: User, table: str, seats: list[Any],
                  moves: list[Any] | None = None) -> dict[str, Any]:
        """A table's whole seating set by the floor (a transition of the hub's seating: each
        seat taken out a bust-out); the table is sent it until it deals it. Its seating."""
        self.service.heard(table)
        if any(isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 10
               for s in seats) or len(set(seats)) != len(seats):
            raise StaffError("seats: seat numbers from 1 to 10, each once")
        now = self.now_ms()
        updates = self.floor.seating_desk.set_seats(
            table, list(seats), user.name, now, [m for m in moves or () if isinstance(m, dict)])
        self.log(now, user.name, "seating", {"table": table, "seats": sorted(seats)})
        self._log_busts(updates, now)
        self.service.seating_changed(updates, now)
        return self._seating_of(table)

    def bust(self, user: User, table: str, seat: int) -> dict[str, Any]:
        """The player in ``table``'s ``seat`` is out (hub/floor.py's bust): the bust-out."""
        self.service.heard(table)
        now = self.now_ms()
        updates = self.floor.seating_desk.bust(table, seat, user.name, now)
        for update in updates:  # in the money: the bust-out carries its prize
            if update["kind"] == "bustout":
                bust = self.floor.bustouts[-1]
                bust.prize = self.service.payout_cases.prize_of(bust.place, bust.player_id)
                update["bustout"]["prize"] = bust.prize
        self._log_busts(updates, now)
        busted = next(u["bustout"] for u in updates if u["kind"] == "bustout")
        updates += self._alternate_to(busted["table"], busted["seat"], user, now)
        updates += self._tournament_over(now)
        self.service.seating_changed(updates, now)
        return dict(next(u["bustout"] for u in updates if u["kind"] == "bustout"))

    def undo_bustout(self, user: User, bust_id: str) -> dict[str, Any]:
        """Give a bust-out's seat back: the player is in again and the table is sent its
        seating with the seat; the bust-out, undone."""
        now = self.now_ms()
        updates = self.floor.seating_desk.undo_bustout(bust_id, user.name, now)
        bust = next(u["bustout"] for u in updates if u["kind"] == "bustout")
        self.log(now, user.name, "bust-out undone", {
            k: bust[k] for k in ("table", "seat", "player")})
        updates += self._tournament_over(now)
        self.service.seating_changed(updates, now)
        return dict(bust)

    def _log_busts(self, updates: list[Update], now: int) -> None:
        for bust in (u["bustout"] for u in updates if u["kind"] == "bustout"):
            self.log(now, bust["by"], "bust-out", {
                k: bust[k] for k in ("table", "seat", "player", "place")}
                | ({"prize": bust["prize"]} if bust.get("prize") else {}))

    def _seating_of(self, table: str) -> dict[str, Any]:
        view = self.floor.table(table)
        return {"table": table, "seats": list(view.seats), "seating": view.seating}

    def _tournament_over(self, now: int) -> list[Update]:
        """One player left of two or more: the winner (first place), the venue clock paused
        with "tournament over"; an undo of the last bust-out opens it again."""
        roster = self.floor.roster
        over = roster.winner() is not None
        if over == (self.db.setting("tournament_over") == "1"):
            return []
        self.db.set_setting("tournament_over", "1" if over else "0")
        if over:
            winner = roster.winner()
            assert winner is not None
            self.log(now, "hub", "tournament over", {"winner": winner.name})
            if self.service.clock.known and self.service.clock.running_since is not None:
                self.service.clock.apply("pause")
                self.service.clock_cases.changed()
        else:
            self.log(now, "hub", "tournament open again", {})
        return [self.floor.seating_desk.roster_update()]


    # -- the roster (RosterError: the desk's mistake, said to it)
    def _on_roster(self, user: User, action: str,
                   change: Callable[[Roster, int], dict[str, Any]]) -> dict[str, Any]:
        """A roster change at the desk: saved, logged (``change`` returns the log line's
        detail), on every dashboard."""
        now = self.now_ms()
        detail = change(self.floor.roster, now)
        update = self.floor.seating_desk.roster_update()
        self.service.save_alerts([update])
        self.log(now, user.name, action, detail)
        self.service.broadcast([update, *self.floor.review_balance(now)])
        return dict(update["roster"])

    def roster(self) -> dict[str, Any]:
        self.registration_rules()
        return self.floor.roster.view()

    def registration_rules(self) -> bool:
        """The roster told the re-entries a player may make by the structure that runs (its
        ``max_reentries``; no limit without one), and whether its alternates list is closed
        (late registration is): whether either changed."""
        structure = self.service.clock.structure
        roster = self.floor.roster
        most = None if structure is None else structure.max_reentries
        title = "" if structure is None else structure.title
        closed = self.late_entry_closed()
        if (roster.max_reentries, roster.structure, roster.alternates_closed) == (
                most, title, closed):
            return False
        roster.max_reentries, roster.structure, roster.alternates_closed = most, title, closed
        return True

    def _alternate_to(self, table: str, seat: int, user: User, now: int) -> list[Update]:
        """A seat opened (a bust-out, a no-show) during registration: the first alternate is
        entered and seated there (hub/seating_desk.py), logged."""
        self.registration_rules()
        if self.floor.roster.alternates_closed is not None:
            return []
        player, updates = self.floor.seating_desk.seat_alternate(table, seat, user.name, now)
        if player is not None:
            self.log(now, user.name, "roster/alternate-seated", {
                "name": player.name, "table": table, "seat": seat})
        return updates

    def add_alternate(self, user: User, name: str) -> dict[str, Any]:
        """An alternate, last in the list: only while the field is full (no free seat at the
        tables in play for the players waiting) and registration runs."""
        self.registration_rules()
        free = self.floor.seating_desk.free_seats()
        if free > 0 and self.floor.roster.alternates_closed is None:
            raise RosterError(f"the tables in play have {free} free seat"
                              f"{'s' if free != 1 else ''}: enter the player and draw seats "
                              "(alternates wait only while the field is full)")
        return self._on_roster(user, "roster/alternate", lambda roster, now: {
            "name": roster.add_alternate(name, now).name,
            "position": len(roster.alternates)})

    def drop_alternate(self, user: User, position: int) -> dict[str, Any]:
        return self._on_roster(user, "roster/alternate-dropped", lambda roster, now: {
            "name": roster.drop_alternate(position).name, "position": position})

    def finishing_csv(self) -> str:
        return self.floor.roster.finishing_csv()

    def late_entry_closed(self) -> str | None:
        """Why a new entry or a re-entry is refused now, by the structure that runs (its
        ``late_entry_until_level``, ``late_entry_min_left``; seed 002's latecomers), or None:
        late registration is open. The floor may have closed it (hub/payout_cases.py)."""
        closed = self.service.payout_cases.closed
        if closed is not None:
            return f"registration was closed by {closed['by']}"
        structure = self.service.clock.structure
        if structure is None:
            return None
        until = structure.late_entry_until_level
        if until is not None and structure.level_at(self.service.clock.elapsed()) >= until:
            return (f"late registration closed at the start of level {until} "
                    f"({structure.title})")
        least = structure.late_entry_min_left
        roster = self.floor.roster
        if least is not None and roster.left() < least and any(
                p.out_at is not None for p in roster.players.values()):
            return (f"late registration is closed: {roster.left()} players are left, fewer "
                    f"than {least}, and somebody has gone out ({structure.title})")
        return None

    def registration_closes(self) -> bool:
        """The structure that runs closes late registration at a level (until then no table
        is broken: the latecomers need its seats)."""
        structure = self.service.clock.structure
        return structure is not None and structure.late_entry_until_level is not None

    def _late_entry(self) -> None:
        closed = self.late_entry_closed()
        if closed is not None:
            raise RosterError(closed)

    def add_player(self, user: User, name: str) -> dict[str, Any]:
        self._late_entry()
        return self._on_roster(user, "roster/add", lambda roster, now: {
            "name": roster.add(name, now).name})

    def import_players(self, user: User, text: str) -> dict[str, Any]:
        """Entrants from a CSV; the columns it ignored are said (``ignored_columns``)."""
        self._late_entry()
        ignored = Roster.csv_columns_ignored(text)
        roster = self._on_roster(user, "roster/import", lambda roster, now: {
            "players": len(roster.import_csv(text, now)),
            **({"ignored_columns": ignored} if ignored else {})})
        return {**roster, "ignored_columns": ignored}

    def remove_entrant(self, user: User, player_id: int) -> dict[str, Any]:
        """An entrant entered by mistake removed (their drawn seat freed, no bust-out, the
        first alternate seated there as for a no-show)."""
        now = self.now_ms()
        entered = self.floor.roster.player(player_id)
        table, seat = entered.table, entered.seat
        player, updates = self.floor.seating_desk.remove_entrant(player_id, user.name, now)
        self.db.delete_player(player_id)
        self.saved_players.pop(player_id, None)
        self.log(now, user.name, "roster/remove", {"player": player_id, "name": player.name})
        if table is not None and seat is not None:
            updates += self._alternate_to(table, seat, user, now)
        self.service.seating_changed(updates, now)
        return self.floor.roster.view()

    def refund(self) -> str:
        """What a no-show is refunded: the buy-in of the structure that runs, as said."""
        structure = self.service.clock.structure
        if structure is None or not structure.buy_in:
            return "the buy-in (the structure that runs gives no buy_in)"
        return f"{structure.currency}{structure.buy_in}"

    def no_show(self, user: User, player_id: int) -> dict[str, Any]:
        """An entrant who never came removed, their buy-in refunded and their line kept (a
        drawn seat freed, no bust-out); refused once they have played."""
        now = self.now_ms()
        refund = self.refund()
        player = self.floor.roster.player(player_id)
        table, seat = player.table, player.seat
        player, updates = self.floor.seating_desk.no_show(player_id, refund, user.name, now)
        self.log(now, user.name, "roster/no-show", {"player": player_id, "name": player.name,
                                                    "refund": refund})
        if table is not None and seat is not None:
            updates += self._alternate_to(table, seat, user, now)
        self.service.seating_changed(updates, now)
        return self.floor.roster.view()

    def reentry(self, user: User, player_id: int) -> dict[str, Any]:
        self._late_entry()
        self.registration_rules()
        return self._on_roster(user, "roster/re-entry", lambda roster, now: {
            "player": player_id, "name": roster.reentry(player_id, now).name})

    def add_on(self, user: User, player_id: int) -> dict[str, Any]:
        structure = self.service.clock.structure  # the add-ons it sells, and how many a player
        most = getattr(structure, "add_on_most", None)
        sold = bool(getattr(structure, "add_on_stack", None))
        return self._on_roster(user, "roster/add-on", lambda roster, now: {
            "player": player_id, "name": roster.add_on(player_id, most, sold).name})

    def take_back(self, user: User, player_id: int, what: str) -> dict[str, Any]:
        """A re-entry or an add-on tapped by mistake, taken back."""
        def change(roster: Roster, now: int) -> dict[str, Any]:
            player = (roster.take_back_reentry(player_id) if what == "re-entry"
                      else roster.take_back_add_on(player_id))
            return {"player": player_id, "name": player.name, "what": what}

        return self._on_roster(user, "roster/take-back", change)

    def clear_roster(self, user: User) -> dict[str, Any]:
        """A new tournament: the roster emptied (take the finishing order as CSV first)."""
        def clear(roster: Roster, now: int) -> dict[str, Any]:
            players = len(roster.players)
            roster.players.clear()
            roster.alternates.clear()
            self.saved_players.clear()
            self.saved_alternates = []
            self.db.clear_roster()
            self.service.payout_cases.cleared()
            self.service.chip_cases.cleared()
            return {"players": players}

        return self._on_roster(user, "roster/clear", clear)

    def draw_seats(self, user: User) -> dict[str, Any]:
        """Seats drawn for every player waiting (hub/roster.py's draw) at the tables in play
        or waiting for players (online, not broken); each table's seating takes them at once
        and is sent to it (it seats them at its next hand)."""
        now = self.now_ms()
        plans = self.floor.seating.tables
        taken = {name: set(plan.seats) for name, plan in plans.items()}
        drawn, updates = self.floor.seating_desk.draw_seats(user.name, now, self.rng)
        self.log(now, user.name, "roster/draw", {"seats": {
            table: [f"{p.name} seat {seat}" + (" (sitting there)"
                                               if seat in taken.get(table, ()) else "")
                    for seat, p in sorted(seated)]
            for table, seated in drawn.items()}})
        self.service.seating_changed(updates, now)
        return {"drawn": {table: [{"seat": seat, "player": p.name,
                                   "named": seat in taken.get(table, ())}
                                  for seat, p in sorted(seated)]
                          for table, seated in drawn.items()},
                "roster": self.floor.roster.view()}

    def final_table_draw(self, user: User, final: str) -> dict[str, Any]:
        """The final table: every player left draws a seat at ``final`` (the floor view's
        final_table_draw); each table's seating changes at once and is sent to it."""
        now = self.now_ms()
        updates = self.floor.seating_desk.final_table_draw(final, user.name, now, self.rng)
        seats = {p.seat: p.name for p in self.floor.roster.players.values()
                 if p.playing and p.table == final}
        self.log(now, user.name, "roster/final-draw", {
            "table": final, "seats": [f"{name} seat {seat}"
                                      for seat, name in sorted(seats.items())]})
        self.service.seating_changed(updates, now)
        return {"drawn": {final: [{"seat": seat, "player": name}
                                  for seat, name in sorted(seats.items())]},
                "roster": self.floor.roster.view()}

