"""The floor's use cases of the venue clock and the room's TV: clock actions (the dashboard's
and ``hub/cmd/clock``'s), the clock kept and published for the tables, held for a floor call,
hand-for-hand told to the tables and released, the room clock's page and its viewer link. A
part of the floor's use cases (hub/service.py), on its one worker thread; the clock itself is
hub/venue_clock.py's."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from contract.commands import CommandError, HandForHandCommand, HubClockCommand
from controller.clock import Structure, StructureError
from controller.events import HandForHandOrder
from houses.loaders import house_structure, structure_names
from hub.floor import room_clock_view
from hub.floor_part import FloorPart
from hub.refused import StaffError
from hub.revocable_links import GenerationLink, RevocableLinks, StaleGeneration
from hub.roster import Roster
from hub.states import TableStatus
from hub.venue_clock import clock_answer, refusal

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import FloorService

CLOCK_INTERVAL = 5.0  # seconds between the venue clock's publications when nothing changes
# Withdrawn TV links remembered (kept in storage), for a TV still showing one to be told so.
TV_KEYS_WITHDRAWN_KEPT = 16


class NotTheRoomKey(PermissionError):
    """A room clock page asking with a key that is not its viewer link's."""


class TvLinkWithdrawn(NotTheRoomKey):
    """A room clock page asking with a viewer link the floor withdrew."""


class TvLinkChanged(Exception):
    """A withdrawal of a TV link that is no longer the current one (withdrawn already, by
    another tablet or from another tab): refused, so that the link made in its place stays
    on the TVs. ``current``: the link now (``FloorService.tv_link``)."""

    def __init__(self, message: str, current: dict[str, Any]) -> None:
        super().__init__(message)
        self.current = current


def tournament_figures(roster: Roster, structure: Structure | None) -> dict[str, Any]:
    """What players look for on the TV, from the roster and the structure that runs:
    entrants, players left and the average stack (the starting stack for each entry and the
    add-ons' chips, over the players left). Nothing without a roster. The prize money is the
    tournament's payout table's (hub/payout_cases.py: ``room_prizes``)."""
    if not roster.players:
        return {}
    counts = roster.counts()
    # A no-show's buy-in was refunded: not an entry of the prize pool, nor chips in play.
    figures: dict[str, Any] = {"entrants": counts["entrants"], "entries": counts["paid_entries"],
                               "add_ons": counts["add_ons"], "players_left": counts["left"]}
    winner = roster.winner()
    if winner is not None:
        figures["winner"] = winner.name
    if structure is None:
        return figures
    if structure.starting_stack and counts["left"]:
        chips = (structure.starting_stack * counts["paid_entries"]
                 + (structure.add_on_stack or 0) * counts["add_ons"])
        figures["average_stack"] = round(chips / counts["left"])
        figures["average_from"] = "starting stacks"
    return figures


def counted_figures(chips: dict[str, Any]) -> dict[str, Any]:
    """The chip counts' figures for the TV (hub/chip_cases.py ``figures``): the counted
    players' average in place of the starting stacks', said as such (``counted`` of the
    players left), and the chip leader with the count; nothing without a count."""
    if not chips:
        return {}
    leader = chips["chip_leader"]
    return {"average_stack": chips["average_stack"], "average_from": "counts",
            "counted": chips["counted"], "counted_at": chips["counted_at"],
            "chip_leader": {"name": leader["name"], "chips": leader["chips"]}}


def room_prizes(figures: dict[str, Any]) -> dict[str, Any]:
    """The prize money as the TV shows it, from the payout figures (hub/payout_cases.py):
    the pool, each place's prize, places paid, the next pay jump, "in the money" and the last
    bust-out paid; nothing when there is no prize pool."""
    if "prize_pool" not in figures:
        return {}
    return {"prize_pool": figures["prize_pool"], "currency": figures["currency"],
            "payouts": figures["prizes"], "places_paid": figures["places_paid"],
            "in_the_money": figures["in_the_money"],
            "next_pay_jump": figures["next_pay_jump"], "last_paid": figures["last_paid"],
            "payouts_frozen": figures["frozen"] is not None,
            "deal": figures["deal"] is not None}


def structure_choices(structures: str | None) -> list[dict[str, Any]]:
    """The structures the venue clock can start (the built-in ones and the house's own
    directory), each with its title, level count and first level (for the floor's list); one
    that does not load says why instead. Files only: no floor state."""
    listed: list[dict[str, Any]] = []
    for name in structure_names(structures):
        try:
            structure = house_structure(name, structures)
        except StructureError as exc:
            listed.append({"name": name, "problem": str(exc)[:300]})
            continue
        levels = [p for p in structure.periods if not p.is_break]
        first = levels[0] if levels else None
        listed.append({"name": name, "title": structure.title, "levels": len(levels),
                       "first": f"{first.sb}/{first.bb}" if first else None,
                       "minutes": round(first.seconds / 60) if first else None})
    return listed



class ClockCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        # The room clock page's key (its viewer link), its generation and the keys withdrawn,
        # as the settings tv_key, tv_generation and tv_keys_withdrawn keep them (open).
        self.tv = GenerationLink(RevocableLinks(), 0)
        self._clock_seen: OrderedDict[str, None] = OrderedDict()  # hub/cmd/clock transactions
        self.due = 0.0  # when the clock is published again (time.monotonic)
        # Hand-for-hand as the hub last told the tables (at a change of its clock, never at
        # its echo); service.open sets it to the clock resumed.
        self.told_hand_for_hand = False

    def open(self) -> None:
        """The TV link as the floor left it (made once, at the first start)."""
        self.tv = GenerationLink.from_settings("tv", self.db.setting, TV_KEYS_WITHDRAWN_KEPT)
        for name, value in self.tv.settings("tv").items():
            if value:  # (no empty list of withdrawn keys written before the first withdrawal)
                self.db.set_setting(name, value)

    @property
    def tv_key(self) -> str:
        return self.tv.key

    def on_clock_command(self, command: HubClockCommand | CommandError) -> None:
        """A command on ``hub/cmd/clock`` (or why it is not one), answered on ``cmd-resp``;
        one the clock took goes in the floor log, as the dashboard's do."""
        if isinstance(command, CommandError):
            self.service.link.answer_clock(refusal(command.transaction, command))
            return
        answer, changed = clock_answer(self.service.clock, command, self._clock_seen)
        if changed:
            self.changed()
            self.log(self.now_ms(), "floor (MQTT)", f"clock/{command.action}",
                     {"value": command.value, "transaction": command.transaction})
        self.service.link.answer_clock(answer)

    def hold_for(self, table: str, now: int) -> None:
        """A table whose house stops the clock for disputes called the floor: pause the venue
        clock the tables follow (until the floor resumes it), and log who asked."""
        clock = self.service.clock
        if not clock.known or clock.structure is None or clock.running_since is None:
            return
        clock.apply("pause")
        self.changed()
        self.log(now, f"table {table}", "clock/pause", {"reason": "floor call"})

    def hand_for_hand_everywhere(self, state: HandForHandOrder, user: str) -> list[str]:
        """Hand-for-hand ``state`` to every table online (a command each); their names."""
        sent = []
        for table, view in sorted(self.floor.tables.items()):
            if view.status == TableStatus.ONLINE:
                self.service.send(table, HandForHandCommand(state=state), user)
                sent.append(table)
        return sent

    def changed(self) -> None:
        """The venue clock changed: kept (a restart resumes it) and published; a change of
        hand-for-hand told to every table online, from the clock itself (the truth), not from
        the reading the broker gives back later (a copy, which a late or redelivered message
        can leave behind the truth)."""
        clock = self.service.clock
        self.db.save_clock(clock.saved(), self.now_ms())
        self.db.commit()
        self.publish()
        if clock.hand_for_hand != self.told_hand_for_hand:
            self.told_hand_for_hand = clock.hand_for_hand
            self.hand_for_hand_everywhere(
                HandForHandOrder.ON if clock.hand_for_hand else HandForHandOrder.OFF,
                "venue clock")

    def publish(self) -> None:
        self.due = time.monotonic() + CLOCK_INTERVAL
        if not self.service.connected or not self.service.clock.known:
            return  # nothing the tables should follow: they keep their own count
        self.service.link.publish_clock(self.service.clock.reading(self.service.wall()))

    def clock_action(self, user: User, command: HubClockCommand) -> dict[str, Any]:
        """A floor member's clock action (the same checks as ``hub/cmd/clock``), logged."""
        state = self.set_clock(command.action, command.value)
        self.log(self.now_ms(), user.name, f"clock/{command.action}",
                 {"value": command.value})
        return state

    def set_clock(self, action: str, value: Any = None) -> dict[str, Any]:
        """A clock action not logged (``tablectl hub --start``, a simulator): its state."""
        self.service.clock.apply(action, value)
        self.changed()
        return self.service.clock.state()

    def release_hand(self, user: User) -> list[str]:
        """Hand-for-hand: every table has finished; deal the next hand everywhere."""
        panel = self.floor.hand_for_hand_panel()
        if not self.service.clock.hand_for_hand:  # the truth; the panel shows its echo
            raise StaffError("hand-for-hand is off")
        if panel["playing"]:
            raise StaffError("still playing their hand: " + ", ".join(panel["playing"]))
        if not panel["finished"]:
            raise StaffError("no table is waiting for the next hand")
        return self.hand_for_hand_everywhere(HandForHandOrder.RELEASE, user.name)

    def clock_reading(self) -> tuple[Structure | None, float, bool]:
        """The structure, the clock's elapsed seconds and whether it runs."""
        clock = self.service.clock
        return clock.structure, clock.elapsed(), clock.running_since is not None

    def room_clock(self, key: str) -> dict[str, Any]:
        """What the room's TV shows; NotTheRoomKey for a key that is not the viewer link's."""
        if not self.tv.opens(key):
            if self.tv.was_withdrawn(key):
                raise TvLinkWithdrawn("this TV link was withdrawn: ask the floor for the new "
                                      "one")
            raise NotTheRoomKey("this is not the room clock's link: ask a supervisor")
        in_play = self.floor.tables_in_play()
        reading = self.clock_reading()
        return {"venue": self.service.venue, "now": self.now_ms(), **room_clock_view(*reading),
                "tables": len(in_play), "players": sum(len(t.seats) for t in in_play),
                **tournament_figures(self.floor.roster, reading[0]),
                **counted_figures(self.service.chip_cases.figures()),
                **room_prizes(self.service.payout_cases.figures())}

    def tv_link(self) -> dict[str, Any]:
        """The room clock page's link: its path, the key in the fragment (never in a server's
        logs), and its generation (a withdrawal names it; a dashboard shows the highest it
        has seen)."""
        return {"path": f"/tv#{self.tv.key}", "generation": self.tv.generation}

    def withdraw_tv_link(self, user: User, generation: int) -> dict[str, Any]:
        """The TV link of ``generation`` withdrawn (one leaked, or a TV taken away) and a
        new one made, both kept for restarts and logged: a TV showing the old one is refused
        from its next question (every few seconds), told so (TvLinkWithdrawn). The new link.
        TvLinkChanged when ``generation`` is not the current one: a second tablet
        withdrawing what the first already did would withdraw the first's new link, which
        the TVs were given.

        The database first: the hub serves the new key only once it is committed, so a
        failed write (the worker then rolls back) leaves the old link working, as the
        database holds it, and never one a restart would bring back."""
        try:
            renewed = self.tv.renewed(generation)
        except StaleGeneration as stale:
            said = (f"the TV link of generation {generation} was already withdrawn"
                    if stale.withdrawn_already else
                    f"there is no TV link of generation {generation}")
            raise TvLinkChanged(f"{said}; the current link is generation "
                                f"{stale.current}, left as it is (withdraw that one if "
                                "it must go too)", self.tv_link()) from None
        now = self.now_ms()
        for name, value in renewed.settings("tv").items():
            self.db.set_setting(name, value)
        self.db.log(now, user.name, "tv-link/withdraw", {})
        self.db.commit()
        self.tv = renewed
        self.service.log_book.show(now, user.name, "tv-link/withdraw", {})
        return self.tv_link()

