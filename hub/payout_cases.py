"""The floor's use cases of the prize money: the tournament's payout table (the house's default,
``houses.DEFAULT_PAYOUT_TABLE``, or one a supervisor chose or edited), the prize pool, places
paid, each place's prize, the next pay jump and "in the money" as the roster's entries,
re-entries and add-ons come (controller/payouts.py computes them), the figures frozen when the
structure that runs closes late registration, and a deal at the final table. A part of the
floor's use cases (hub/service.py), on its one worker thread; what it keeps is in the hub's
settings (``payout_table``, ``payouts_frozen``, ``payout_deal``), each change in the floor log.

Frozen figures stay as they were stored: an entry, re-entry or add-on after them does not move
a prize (late registration is closed; an add-on sold later is the supervisor's to bring in, by
choosing the table again with ``refreeze`` before anyone has finished in the money).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from controller.payouts import (
    PayoutError,
    Payouts,
    PayoutTable,
    PayoutTableError,
    deal,
    payout_table_from_data,
    prize_pool,
)
from houses import DEFAULT_PAYOUT_TABLE
from houses.loaders import builtin_payout_tables, load_payout_table
from hub.floor_part import FloorPart
from hub.refused import StaffError
from hub.spreadsheet import cells, csv_writer
from hub.updates import PayoutsUpdate

if TYPE_CHECKING:
    from controller.clock import Structure
    from hub.auth import User
    from hub.service import FloorService

log = logging.getLogger("tablectl.hub")


class PayoutsFrozen(StaffError):
    """A change of the payout table refused: the figures are frozen (answered 409)."""


def table_data(table: PayoutTable) -> dict[str, Any]:
    """A payout table as the data it was read from (the TOML's keys, percentages by place):
    what a supervisor edits and sends back."""
    return {"title": table.title, "source": table.source, "quote": table.quote,
            "note": table.note, "unit": table.unit,
            "fee": {"per_entry": table.fee_per_entry, "per_add_on": table.fee_per_add_on,
                    "percent": table.fee_percent / 100},
            "paid": [{"from_entries": row.from_entries,
                      "shares": [s / 100 if s % 100 else s // 100 for s in row.shares]}
                     for row in table.rows]}


class PayoutCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        self.table: PayoutTable = load_payout_table(DEFAULT_PAYOUT_TABLE)
        self.edited = False  # the table is a supervisor's edit (kept whole), not a file's
        self.frozen: dict[str, Any] | None = None  # the figures stored at the freeze
        self.accepted: dict[str, Any] | None = None  # the deal recorded
        self.closed: dict[str, Any] | None = None  # registration closed by the floor: by, at
        self.shown: dict[str, Any] | None = None  # the figures the dashboards were sent last

    def open(self) -> None:
        """The tournament's payout table, frozen figures and deal as the floor left them."""
        kept = self.db.setting("payout_table")
        if kept:
            try:
                chosen = json.loads(kept)
                if chosen.get("data") is not None:
                    self.table = payout_table_from_data(chosen["data"], chosen["name"])
                    self.edited = True
                else:
                    self.table = load_payout_table(chosen["name"])
            except (PayoutTableError, ValueError, KeyError, AttributeError) as exc:
                # A built-in table gone since, or an edited database: the default, said loudly.
                log.error("the payout table kept in the hub's database cannot be used (%s): "
                          "the tournament takes %s; a supervisor chooses again on the "
                          "dashboard", exc, DEFAULT_PAYOUT_TABLE)
        self.frozen = self._kept("payouts_frozen")
        self.accepted = self._kept("payout_deal")
        self.closed = self._kept("registration_closed")

    def _kept(self, name: str) -> dict[str, Any] | None:
        """A JSON object kept in the hub's settings ("" or none: None)."""
        kept = self.db.setting(name)
        if not kept:
            return None
        value = json.loads(kept)
        if not isinstance(value, dict):
            raise ValueError(f"the hub's setting {name} is not an object: {kept[:80]!r}")
        return value

    # ------------------------------------------------------------------ the figures
    def _structure(self) -> Structure | None:
        return self.service.clock.structure

    def payouts(self, table: PayoutTable | None = None) -> Payouts | None:
        """The prize pool and the prizes: the frozen figures once stored, else from the
        roster's counts (a no-show's refunded buy-in left out) and the structure that runs
        (None without a roster, or without a structure that sets a buy-in). ``table``: worked
        out with that one, frozen or not."""
        if self.frozen is not None and table is None:
            f = self.frozen
            return Payouts(f["entries"], f["add_ons"], f["gross"], f["fee"], f["pool"],
                           tuple(f["prizes"]))
        structure = self._structure()
        roster = self.floor.roster
        if structure is None or not structure.buy_in or not roster.players:
            return None
        counts = roster.counts()
        return prize_pool(table or self.table, buy_in=structure.buy_in,
                          add_on_price=structure.add_on_price or 0,
                          entries=counts["paid_entries"], add_ons=counts["add_ons"])

    def _currency(self) -> str:
        if self.frozen is not None:
            return str(self.frozen.get("currency", ""))
        structure = self._structure()
        return structure.currency if structure is not None else ""

    def prize_of(self, place: int | None, player: int | None = None) -> int | None:
        """What finishing in ``place`` pays now, or what an accepted deal gave ``player``
        (None: not in the money, or no figures)."""
        for share in (self.accepted or {}).get("shares", []):
            if player is not None and share["player"] == player:
                return int(share["amount"]) or None
        try:
            payouts = self.payouts()
        except PayoutError:
            return None
        if payouts is None or place is None or not payouts.prize(place):
            return None
        return payouts.prize(place)

    def figures(self) -> dict[str, Any]:
        """What the dashboard's and the TV's prize lines show: the table, the pool, the places
        paid and each prize, the players left, "in the money", the next pay jump, the freeze
        and the deal. Only the table's name without figures (no roster, or no buy-in)."""
        shown: dict[str, Any] = {"table": self.table.name, "title": self.table.title,
                                 "edited": self.edited, "registration_closed": self.closed,
                                 "frozen": None if self.frozen is None else {
                                     "at": self.frozen["at"], "why": self.frozen["why"]},
                                 "deal": self.accepted}
        try:
            payouts = self.payouts()
        except PayoutError as exc:  # a fee over the structure's buy-in: the house's to fix
            return {**shown, "problem": f"payout table {self.table.name}: {exc}"}
        if payouts is None:
            return shown
        left = self.floor.roster.left()
        jump = payouts.next_pay_jump(left)
        last = next((b for b in reversed(self.floor.bustouts)
                     if b.undone_by is None and b.prize), None)
        return {**shown, "currency": self._currency(), "entries": payouts.entries,
                "add_ons": payouts.add_ons, "gross": payouts.gross, "fee": payouts.fee,
                "prize_pool": payouts.pool, "prizes": list(payouts.prizes),
                "places_paid": payouts.places_paid, "players_left": left,
                "in_the_money": payouts.in_the_money(left),
                "next_pay_jump": None if jump is None else {"players_left": jump.players_left,
                                                            "prize": jump.prize},
                "last_paid": None if last is None else {"player": last.player,
                                                        "place": last.place,
                                                        "prize": last.prize}}

    def changed(self) -> list[PayoutsUpdate]:
        """The figures as an update for the dashboards when they differ from those sent."""
        figures = self.figures()
        if figures == self.shown:
            return []
        self.shown = figures
        return [PayoutsUpdate(kind="payouts", payouts=figures)]

    # ------------------------------------------------------------------ the freeze
    def turn(self) -> None:
        """Late registration closed by the structure that runs: the figures frozen, once."""
        if self.frozen is not None or not self.floor.roster.players:
            return
        why = self.service.seating_cases.late_entry_closed()
        if why is not None:
            self.freeze(why, "hub")

    def freeze(self, why: str, by: str) -> bool:
        """The figures now stored, so that later changes of the roster do not move them."""
        try:
            payouts = self.payouts()
        except PayoutError:
            return False
        if payouts is None:
            return False
        now = self.now_ms()
        self.frozen = {"entries": payouts.entries, "add_ons": payouts.add_ons,
                       "gross": payouts.gross, "fee": payouts.fee, "pool": payouts.pool,
                       "prizes": list(payouts.prizes), "currency": self._currency(),
                       "table": self.table.name, "at": now, "why": why}
        self.db.set_setting("payouts_frozen", json.dumps(self.frozen))
        self.log(now, by, "payouts/frozen", {
            "why": why, "prize_pool": payouts.pool, "places_paid": payouts.places_paid,
            "prizes": list(payouts.prizes)})
        self.service.broadcast(self.changed())
        return True

    def cleared(self) -> None:
        """A new tournament (the roster cleared): registration open, nothing frozen, no deal;
        the table stays."""
        self.frozen = self.accepted = self.closed = None
        for name in ("payouts_frozen", "payout_deal", "registration_closed"):
            self.db.set_setting(name, "")

    def close_registration(self, user: User) -> dict[str, Any]:
        """The floor closes registration (a structure that says nothing of late registration
        leaves it to the floor): no new entry or re-entry from now on (SeatingCases'
        late_entry_closed), and the figures frozen as they are. For this tournament: clearing
        the roster opens it again. The figures."""
        if not self.floor.roster.players:
            raise StaffError("no roster: enter the players first")
        if self.closed is not None:
            raise StaffError(f"registration was closed already by {self.closed['by']}")
        why = self.service.seating_cases.late_entry_closed()
        if why is not None:
            raise StaffError(why)
        now = self.now_ms()
        self.closed = {"by": user.name, "at": now}
        self.db.set_setting("registration_closed", json.dumps(self.closed))
        self.log(now, user.name, "payouts/registration-closed", {
            "entries": self.floor.roster.counts()["paid_entries"]})
        if self.frozen is None:
            self.freeze(f"registration closed by {user.name}", user.name)
        self.service.broadcast(self.changed())
        return self.figures()

    # ------------------------------------------------------------------ the table
    def choices(self) -> dict[str, Any]:
        """The built-in payout tables by name, and the tournament's table as data."""
        return {"builtin": builtin_payout_tables(), "table": self.table.name,
                "edited": self.edited, "data": table_data(self.table),
                "figures": self.figures()}

    def set_table(self, user: User, name: str | None, data: Mapping[str, Any] | None,
                  refreeze: bool) -> dict[str, Any]:
        """A supervisor chooses a built-in table (``name``) or sends one edited (``data``,
        named ``name`` or "edited"): every problem listed (PayoutTableError). Once the figures
        are frozen, refused (PayoutsFrozen) unless ``refreeze`` and nobody has finished in the
        money yet and no deal is recorded: then the figures are worked out again from the
        roster as it is now and frozen again."""
        if data is not None:
            table = payout_table_from_data(data, name or "edited")
        elif name is not None:
            if name not in builtin_payout_tables():
                raise PayoutTableError(name, [
                    f"no payout table named {name!r} (built-in: "
                    f"{', '.join(builtin_payout_tables())}; or send the table's data)"])
            table = load_payout_table(name)
        else:
            raise StaffError("name a built-in payout table or send one's data")
        if self.frozen is not None:
            if not refreeze:
                raise PayoutsFrozen(
                    f"the payouts were frozen ({self.frozen['why']}): send refreeze to work "
                    "them out again from the roster as it is now, before anyone finishes in "
                    "the money")
            paid = [place for place, _ in self.floor.roster.finishing()
                    if place <= len(self.frozen["prizes"])]
            if paid or self.accepted is not None:
                raise PayoutsFrozen(
                    "the payouts are frozen and "
                    + ("a deal is recorded" if self.accepted is not None
                       else f"place {max(paid)} has been paid already")
                    + ": the prizes can no longer change")
        was_frozen = self.frozen
        try:  # a fee over the structure's buy-in: refused, the table left as it was
            self.payouts(table)
        except PayoutError as exc:
            raise StaffError(f"payout table {table.name}: {exc}") from None
        self.table, self.edited = table, data is not None
        self.db.set_setting("payout_table", json.dumps(
            {"name": table.name, "data": dict(data) if data is not None else None}))
        now = self.now_ms()
        self.log(now, user.name, "payouts/table", {
            "table": table.name, "edited": data is not None,
            **({"refrozen": True} if was_frozen is not None else {})})
        if was_frozen is not None:
            self.frozen = None
            self.freeze(f"{was_frozen['why']}; worked out again by {user.name}", user.name)
        self.service.broadcast(self.changed())
        return self.choices()

    # ------------------------------------------------------------------ the results
    def results(self) -> dict[str, Any]:
        """Every place with its player and what they win, first place up (the winner once
        there is one), and the players of an accepted deal still in the game: a deal's
        players win what the deal gave them, whatever their place."""
        payouts = None
        with contextlib.suppress(PayoutError):
            payouts = self.payouts()
        dealt = {int(s["player"]): s for s in (self.accepted or {}).get("shares", [])}
        rows = []
        for place, player in self.floor.roster.finishing():
            share = dealt.pop(player.id, None)
            rows.append({"place": place, "name": player.name, "player": player.id,
                         "prize": share["amount"] if share else (
                             payouts.prize(place) if payouts else 0),
                         "dealt": share is not None})
        for share in dealt.values():  # in the deal, still playing for the title
            rows.append({"place": None, "name": share["name"], "player": share["player"],
                         "prize": share["amount"], "dealt": True})
        return {"venue": self.service.venue, "currency": self._currency(),
                "prize_pool": payouts.pool if payouts else None,
                "places_paid": payouts.places_paid if payouts else None,
                "winner": next((r["name"] for r in rows if r["place"] == 1), None),
                "deal": self.accepted, "frozen": self.frozen is not None, "places": rows}

    def results_csv(self) -> str:
        """The results for a spreadsheet in any locale (hub/spreadsheet.py): place, name,
        prize and whether it was dealt."""
        import io

        results = self.results()
        out = io.StringIO()
        writer = csv_writer(out)
        writer.writerow(cells(("place", "name", "prize", "currency", "dealt")))
        for row in results["places"]:
            writer.writerow(cells((row["place"], row["name"], row["prize"],
                                   results["currency"], "yes" if row["dealt"] else "")))
        return out.getvalue()

    # ------------------------------------------------------------------ a deal
    def _deal(self, stacks: list[tuple[int, int]]) -> tuple[dict[str, Any], Any]:
        roster = self.floor.roster
        playing = {p.id: p for p in roster.players.values() if p.playing}
        problems = []
        for player_id, _ in stacks:
            if player_id not in playing:
                problems.append(f"player {player_id} is not in the game"
                                if player_id in roster.players else
                                f"no player {player_id} on the roster")
        missing = sorted(set(playing) - {player_id for player_id, _ in stacks})
        if missing:
            problems.append("a deal is among every player left: no stack for "
                            + ", ".join(playing[i].name for i in missing))
        if problems:
            raise StaffError("; ".join(problems))
        if self.accepted is not None:
            raise StaffError("a deal is recorded already (clear the roster for a new "
                             "tournament)")
        payouts = self.payouts()
        if payouts is None:
            raise StaffError("no prize pool: the structure that runs sets no buy-in")
        prizes = payouts.prizes_left(len(stacks))
        worked = deal([(str(player_id), chips) for player_id, chips in stacks], prizes)
        shares = [{"player": int(s.player), "name": playing[int(s.player)].name,
                   "stack": s.stack, "chip_chop": s.chip_chop, "icm": s.icm}
                  for s in worked.shares]
        return {"prizes": list(prizes), "total": worked.total, "currency": self._currency(),
                "shares": shares}, worked

    def preview_deal(self, stacks: list[tuple[int, int]]) -> dict[str, Any]:
        """A deal among every player left by their entered stacks: chip chop and ICM side by
        side, nothing recorded."""
        try:
            return self._deal(stacks)[0]
        except PayoutError as exc:
            raise StaffError(str(exc)) from None

    def accept_deal(self, user: User, stacks: list[tuple[int, int]],
                    method: str) -> dict[str, Any]:
        """The deal the players accepted (``method``: chip-chop or icm), recorded: the floor
        log, and the results show each player's dealt amount."""
        try:
            shown, _ = self._deal(stacks)
        except PayoutError as exc:
            raise StaffError(str(exc)) from None
        key = "icm" if method == "icm" else "chip_chop"
        now = self.now_ms()
        self.accepted = {"method": method, "at": now, "by": user.name,
                         "total": shown["total"], "currency": shown["currency"],
                         "shares": [{"player": s["player"], "name": s["name"],
                                     "stack": s["stack"], "amount": s[key]}
                                    for s in shown["shares"]]}
        self.db.set_setting("payout_deal", json.dumps(self.accepted))
        self.log(now, user.name, "payouts/deal", {
            "method": method, "shares": {s["name"]: s["amount"]
                                         for s in self.accepted["shares"]},
            "stacks": {s["name"]: s["stack"] for s in self.accepted["shares"]}})
        self.service.broadcast(self.changed())
        return self.results()
