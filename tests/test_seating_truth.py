"""One seating truth (hub/seating.py): the hub holds each table's seating with a version, every
change of the floor is a transition on it, and each table is brought into line with it, at its
own next hand. Sequences the floor lives through, with each table a real core
(controller/table.py) taking the hub's seating commands as its daemon would: two bust-outs in
one hand, a bust-out at a lost table, a break while every table deals, a hub restored from
an older copy, and the tournament's end."""

from __future__ import annotations

import random

import pytest

from contract.commands import HubClockCommand, SeatingCommand
from controller.inputs import parse_input
from controller.table import Table, TableUsageError
from houses.loaders import load_profile
from hub import auth
from hub.balance_desk import BalanceDesk
from hub.floor import FloorView
from hub.refused import StaffError
from hub.roster import RosterError
from hub.seating import SeatingPlan
from hub.service import FloorService
from hub.settings import HubSettings
from tablectl.command_to_core import command_input
from tests.conftest import table_state

PROFILE = "tda-2024"
DECK = [rank + suit for suit in "cdhs" for rank in "23456789TJQKA"]


class CoreTable:
    """A table's core, fed as its daemon feeds it: setup, hands, the hub's seating commands."""

    def __init__(self, name: str, seats: list[int]) -> None:
        self.name = name
        self.core = Table(load_profile(PROFILE))
        self.t = 0.0
        self.hands = 0
        self.feed({"type": "setup", "game": "holdem", "seats": seats, "button": seats[0]})

    def feed(self, line: dict) -> list:
        self.t += 1.0
        return self.core.handle(parse_input({**line, "t": self.t}))

    def start_hand(self) -> None:
        self.hands += 1
        self.feed({"type": "deck_in", "deck": "R1" if self.hands % 2 else "B2"})

    def end_hand(self) -> None:
        """The hole cards dealt, then the dealer's double tap: the hand is over."""
        hand = self.core.hand
        assert hand is not None and self.core.hand_in_progress
        for card in DECK[:2 * len(hand.positions.seats)]:
            self.feed({"type": "card", "card": card})
        self.t += 60
        self.feed({"type": "button", "gesture": "double_tap"})
        assert not self.core.hand_in_progress

    def take(self, command: SeatingCommand) -> str | None:
        """The command as the daemon applies it: None, or why it is refused."""
        item = command_input(command, self.t)
        try:
            self.core.handle(item)  # type: ignore[arg-type]
        except TableUsageError as exc:
            return str(exc)
        return None

    def state(self):
        s = self.core.state()
        return table_state(hand=s["hand"], in_progress=s["in_progress"], seats=s["seats"],
                           seating=s["seating"], button=s["button"],
                           blind_seats=s["blind_seats"])


class Room:
    """A floor view and its tables, the hub's loop run by hand: what it sends, each table
    takes; what each table says, the floor hears."""

    def __init__(self, tables: dict[str, list[int]], *, balance: bool = False) -> None:
        self.floor = FloorView("venue", balance=BalanceDesk.of(load_profile(PROFILE), 7)
                               if balance else None)
        self.tables = {name: CoreTable(name, seats) for name, seats in tables.items()}
        self.now = 1000
        self.replies: list[tuple[str, int | None, str | None]] = []
        for name in tables:
            self.floor.on_status(name, {"state": "online", "boot": 1, "ts": 1}, self.now)
            self.heard(name)

    def heard(self, name: str) -> None:
        self.floor.on_state(name, self.tables[name].state(), self.now)

    def turn(self, seconds: int = 1) -> None:
        """The hub's turn: what is due sent, taken (or refused), and the tables heard."""
        self.now += seconds * 1000
        self.hear_all()  # the tables' states first, as the hub reconciles after each
        due, _ = self.floor.seating_desk.reconcile(self.now)
        for name, command in due:
            table = self.tables[name]
            error = table.take(command)
            self.floor.command_sent(command.transaction, name, "seating", command.fields(),
                                    "hub", self.now)
            self.floor.on_command_response(name, {"transaction": command.transaction,
                                                  "ok": error is None, "error": error},
                                           self.now)
            self.replies.append((name, command.version, error))
        self.hear_all()

    def hear_all(self) -> None:
        for name in self.tables:
            if self.floor.tables[name].status == "online":
                self.heard(name)

    def settle(self) -> None:
        for _ in range(5):
            self.turn(11)  # past RESEND_MS

    def check(self) -> None:
        """What must hold after every step: every player in seated once, within the table's
        size; nobody out seated; each online table that deals the hub's version deals its
        seats."""
        roster = self.floor.roster
        places = [(p.table, p.seat) for p in roster.players.values()
                  if p.playing and p.table is not None]
        assert len(places) == len(set(places))
        for table, seat in places:
            assert seat in self.floor.seating.seats(table), (table, seat)
            assert 1 <= seat <= self.floor.table_size(table)
        for name, plan in self.floor.seating.tables.items():
            if plan.dealing and name in self.tables:
                assert sorted(self.tables[name].core.seats or ()) == plan.seats, name

    def seat_roster(self) -> None:
        for name, table in sorted(self.tables.items()):
            for seat in table.core.seats or ():
                player = self.floor.roster.add(f"{name}-{seat}", self.now)
                player.table, player.seat = name, seat


def test_the_core_takes_the_newest_seating_version_and_never_an_older_one():
    table = CoreTable("t1", [1, 2, 3, 4])
    assert table.take(SeatingCommand(seats=[1, 2, 3], version=2)) is None
    assert table.core.state()["seating"] == {"version": 2, "pending": None}
    assert "version 1 is older than version 2" in table.take(
        SeatingCommand(seats=[1, 2], version=1))
    assert table.take(SeatingCommand(seats=[3, 2, 1], version=2)) is None  # sent again
    assert "held already with other seats" in table.take(SeatingCommand(seats=[1], version=2))
    table.start_hand()
    assert table.take(SeatingCommand(seats=[1, 2], version=3)) is None
    assert table.take(SeatingCommand(seats=[1], version=4)) is None  # replaces 3, mid-hand
    assert table.core.state()["seating"] == {"version": 2, "pending": 4}
    assert table.core.seats == (1, 2, 3)
    table.end_hand()
    assert table.core.seats == (1,) and table.core.state()["seating"] == {
        "version": 4, "pending": None}
    # A seating from elsewhere (a tool) is not the hub's: its version goes, the hub resends.
    assert table.take(SeatingCommand(seats=[1, 5])) is None
    assert table.core.state()["seating"]["version"] == 0


def test_two_bust_outs_in_one_hand_both_stay_out():
    room = Room({"t1": [1, 2, 3, 4, 5, 6]})
    room.seat_roster()
    table = room.tables["t1"]
    table.start_hand()
    room.turn()
    room.floor.seating_desk.bust("t1", 2, "maria", room.now)
    room.turn()
    room.floor.seating_desk.bust("t1", 3, "sam", room.now)  # another tablet, the same hand
    room.turn()
    room.check()
    assert room.floor.tables["t1"].seating["state"] == "next_hand"
    assert table.core.seats == (1, 2, 3, 4, 5, 6)  # the hand goes on as dealt
    table.end_hand()
    room.turn()
    room.check()
    assert table.core.seats == (1, 4, 5, 6)
    assert room.floor.tables["t1"].seating["state"] == "dealt"
    places = room.floor.roster.places()
    out = {p.name: places[p.id] for p in room.floor.roster.players.values() if not p.playing}
    assert out == {"t1-2": 6, "t1-3": 5}  # the first busted finishes below the second
    # The first bust-out is undone: only its seat comes back.
    first = room.floor.bustouts[0]
    room.floor.seating_desk.undo_bustout(first.id, "maria", room.now)
    room.settle()
    room.check()
    assert table.core.seats == (1, 2, 4, 5, 6)


def test_a_bust_out_at_a_lost_table_is_applied_when_it_is_back():
    room = Room({"t1": [1, 2, 3], "t2": [1, 2, 3, 4]})
    room.floor.on_status("t2", {"state": "lost", "boot": 1, "ts": 1}, room.now)
    room.floor.seating_desk.bust("t2", 4, "maria", room.now)
    room.settle()
    assert room.floor.tables["t2"].seating["state"] == "unreachable"
    assert room.floor.tables["t2"].seats == [1, 2, 3]  # the counts follow the floor's decision
    assert room.tables["t2"].core.seats == (1, 2, 3, 4)
    room.floor.on_status("t2", {"state": "online", "boot": 1, "ts": 2}, room.now)
    room.turn()
    room.check()
    assert room.tables["t2"].core.seats == (1, 2, 3)
    assert room.floor.tables["t2"].seating["state"] == "dealt"


def test_a_break_while_every_table_deals_moves_each_player_after_their_hand():
    room = Room({"t1": [1, 2, 3, 4, 5, 6, 7], "t2": [1, 2, 3, 4, 5, 6, 7],
                 "t3": [2, 5, 8]}, balance=True)
    room.seat_roster()
    for table in room.tables.values():
        table.start_hand()
    room.turn()
    room.floor.review_balance(room.now)
    proposal = room.floor.balance.proposal
    assert proposal is not None and proposal.kind == "break" and proposal.tables[0] == "t3"
    room.floor.seating_desk.make_moves(proposal, "maria", room.now)
    room.turn()
    room.check()
    plans = room.floor.seating.tables
    assert plans["t3"].seats == [] and plans["t3"].broken
    held = {a.from_seat: (name, a.seat) for name, plan in plans.items() for a in plan.arriving}
    assert sorted(held) == [2, 5, 8]
    awaited = {name: [a.seat for a in plan.arriving] for name, plan in plans.items()}
    # t1 finishes its hand first: the players it awaits are still playing at t3, so its next
    # hand is dealt without them (their seats held).
    room.tables["t1"].end_hand()
    room.tables["t1"].start_hand()
    room.turn()
    assert {name: [a.seat for a in plan.arriving] for name, plan in plans.items()} == awaited
    assert not set(awaited["t1"]) & set(room.tables["t1"].core.seats or ())
    assert room.tables["t3"].core.seats == (2, 5, 8)
    # t3's hand ends: its players leave, and only then are they seated where they go.
    room.tables["t3"].end_hand()
    room.turn()
    assert room.tables["t3"].core.seats == ()
    assert not any(plan.arriving for plan in plans.values())
    for name in ("t1", "t2"):
        room.tables[name].end_hand()
    room.settle()
    room.check()
    assert len(room.tables["t1"].core.seats) + len(room.tables["t2"].core.seats) == 17
    # A late entry is drawn to a table in play, never to the broken one.
    room.floor.roster.add("late", room.now)
    drawn, _ = room.floor.seating_desk.draw_seats("maria", room.now, random.Random(3))
    assert "t3" not in drawn and sum(map(len, drawn.values())) == 1
    room.settle()
    room.check()


def test_a_player_moved_who_busts_in_their_last_hand_there_goes_out_not_on():
    room = Room({"t1": [1, 2, 3, 4, 5, 6, 7], "t2": [1, 2, 3, 4, 5, 6, 7],
                 "t3": [2, 5, 8]}, balance=True)
    room.seat_roster()
    room.tables["t3"].start_hand()
    room.turn()
    room.floor.review_balance(room.now)
    room.floor.seating_desk.make_moves(room.floor.balance.proposal, "maria", room.now)
    room.turn()
    # They lost the hand they were dealt there.
    room.floor.seating_desk.bust("t3", 5, "maria", room.now)
    assert room.floor.roster.at("t3", 5) is None
    assert sum(len(p.arriving) for p in room.floor.seating.tables.values()) == 2
    room.tables["t3"].end_hand()
    room.settle()
    room.check()
    assert sum(1 for p in room.floor.roster.players.values() if not p.playing) == 1


def test_a_hub_restored_from_an_older_copy_brings_the_tables_back_to_its_seating():
    room = Room({"t1": [1, 2, 3, 4]})
    room.floor.seating_desk.bust("t1", 4, "maria", room.now)
    kept = room.floor.seating.to_json()  # the backup
    room.floor.seating_desk.bust("t1", 3, "maria", room.now)
    room.floor.seating_desk.bust("t1", 2, "maria", room.now)
    room.settle()
    assert room.tables["t1"].core.seating_version == 3
    room.floor.seating = SeatingPlan.from_json(kept)  # the hub restored: version 1, [1, 2, 3]
    room.heard("t1")
    room.settle()
    plan = room.floor.seating.tables["t1"]
    assert plan.version > 3 and room.tables["t1"].core.seats == (1, 2, 3)
    assert not [r for r in room.replies if r[2]][1:]  # at most the one refusal, then in line


def test_a_table_claiming_the_largest_version_never_numbers_the_plan_past_the_contract():
    """A hostile or corrupt state (tests/test_hostile.py found it): the plan's next version
    stays a number JSON holds exactly."""
    plan = SeatingPlan()
    plan.heard("t1", [1, 2, 3], None, 0)
    plan.set_seats("t1", [1, 2], "maria", 1)
    plan.heard("t1", [1, 2], {"version": 2**53 - 1, "pending": None}, 2)
    assert plan.tables["t1"].version == 2**53 - 1
    plan.bust("t1", 2, "maria", 3)
    assert plan.tables["t1"].version == 2**53 - 1


def test_a_kept_seating_is_read_strictly_and_a_damaged_one_does_not_stop_the_floor(tmp_path):
    from hub.storage import open_storage

    plan = SeatingPlan()
    plan.heard("t1", [1, 2, 3], None, 0)
    plan.set_seats("t1", [1, 2], "maria", 1)
    kept = plan.to_json()
    assert SeatingPlan.from_json(kept).tables["t1"].seats == [1, 2]
    for damage in ({"seats": [1, 1]}, {"seats": [11]}, {"version": 2.5},
                   {"version": True}, {"seats": ["1"]}):
        with pytest.raises(ValueError):
            SeatingPlan.from_json([{**kept[0], **damage}])
    db = str(tmp_path / "hub.db")
    storage = open_storage(db)
    storage.set_setting("seating", '[{"table": "t1", "seats": [1, 1]}]')
    storage.commit()
    storage.close()
    service = FloorService(HubSettings(venue="venue", db=db), _Link())
    service.open()  # said in the log; the floor starts, the tables' own seats taken
    try:
        assert service.floor.seating.tables == {}
    finally:
        service.close()


def test_the_seating_refuses_what_does_not_hold_against_it():
    room = Room({"t1": [1, 2, 3], "t2": [1, 2]})
    with pytest.raises(StaffError, match="seat 7 is empty"):
        room.floor.seating_desk.bust("t1", 7, "maria", room.now)
    with pytest.raises(StaffError, match="no seat 11"):
        room.floor.seating_desk.bust("t1", 11, "maria", room.now)
    with pytest.raises(StaffError, match="no seat past 10"):
        room.floor.seating_desk.set_seats("t2", [1, 11], "maria", room.now)
    bust = room.floor.seating_desk.bust("t1", 3, "maria", room.now)
    # Seat 3 taken again by hand.
    room.floor.seating_desk.set_seats("t1", [1, 2, 3], "sam", room.now)
    with pytest.raises(StaffError, match="seat 3 is taken again"):
        room.floor.seating_desk.undo_bustout(
            next(u for u in bust if u["kind"] == "bustout")["bustout"]["id"], "maria", room.now)


class _Link:
    def __init__(self) -> None:
        self.commands: list = []

    def send_command(self, table, command) -> None:
        self.commands.append((table, command))

    def publish_clock(self, reading) -> None:
        pass

    def answer_clock(self, answer) -> None:
        pass


MARIA = auth.User("maria", "floor", "")


def floor_service(settings: HubSettings, *online: str) -> FloorService:
    """The hub's floor service on ``settings``, its broker up and ``online`` tables' links
    up, as the hub's worker wires it (a fixed wall clock, commands kept by a ``_Link``)."""
    service = FloorService(settings, _Link(), wall=lambda: 1_800_000_000.0)
    service.open()
    service.on_broker(True)
    for name in online:
        service.on_status(name, {"state": "online", "boot": 1, "table": name, "ts": 1})
    return service


def test_the_tournament_ends_with_its_winner_placed_first_and_the_clock_held(tmp_path):

    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db")), "t1")
    try:
        service.on_state("t1", table_state(seats=[]))
        for name in ("Anna", "Bob", "Carl"):
            service.add_player(MARIA, name)
        service.draw_seats(MARIA)
        service.clock_action(MARIA, HubClockCommand(action="start", value="tda-2024"))
        seated = {p.name: p.seat for p in service.floor.roster.players.values()}
        service.bust(MARIA, "t1", seated["Carl"])
        assert service.roster()["winner"] is None and service.clock.running_since is not None
        last = service.bust(MARIA, "t1", seated["Bob"])
        assert service.roster()["winner"] == "Anna"
        assert service.clock.running_since is None  # held: "tournament over"
        rows = service.finishing_csv().splitlines()[1:]
        assert [row.replace('"', "").split(",")[:2] for row in rows] == [
            ["1", "Anna"], ["2", "Bob"], ["3", "Carl"]]
        actions = [line["action"] for line in service.floor_log()]
        assert "tournament over" in actions
        service.undo_bustout(MARIA, last["id"])  # Bob's bust was a mistake: play on
        assert service.roster()["winner"] is None
        assert "tournament open again" in [line["action"] for line in service.floor_log()]
    finally:
        service.close()


def test_late_registration_closes_as_the_structure_says_and_no_table_breaks_before(tmp_path):
    """Seed 002 (lppl): latecomers join "anytime before the start of the 3rd Blind Level but
    providing that there is at least 17 players remaining ... OR ... no-one has actually been
    knocked out"; while registration runs, no table is broken (they need its seats)."""

    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db"),
                                        profile="lppl"))
    try:
        service.clock_action(MARIA, HubClockCommand(action="start", value="lppl"))
        service.import_players(MARIA, "name\n" + "\n".join(f"P{n}" for n in range(1, 17)))
        assert service.seating_cases.late_entry_closed() is None  # 16 signed up, nobody out yet
        for name, seats in (("t1", [1, 2, 3, 4, 5, 6, 7, 8]), ("t2", [1, 2, 3, 4]),
                            ("t3", [1, 2, 3, 4])):
            service.on_status(name, {"state": "online", "boot": 1, "table": name, "ts": 1})
            service.on_state(name, table_state(seats=seats))
        service.turn()  # the desk learns that registration runs
        assert service.floor.balance.proposal is None or \
            service.floor.balance.proposal.kind != "break"
        assert service.floor.balance.panel(service.floor.tables)["registering"]
        service.draw_seats(MARIA)
        seated = next(p for p in service.floor.roster.players.values() if p.table)
        service.bust(MARIA, seated.table, seated.seat)
        with pytest.raises(RosterError, match="15 players are left, fewer than 17"):
            service.add_player(MARIA, "Late")
        with pytest.raises(RosterError, match="fewer than 17"):
            service.reentry(MARIA, seated.id)
        service.undo_bustout(MARIA, service.floor.bustouts[-1].id)
        service.add_player(MARIA, "Late")  # nobody out again: the latecomer joins
        service.clock_action(MARIA, HubClockCommand(action="level", value=3))
        with pytest.raises(RosterError, match="closed at the start of level 3"):
            service.add_player(MARIA, "Later")
        service.turn()  # registration over: the break the counts call for is proposed
        assert not service.floor.balance.panel(service.floor.tables)["registering"]
        assert service.floor.balance.proposal is not None
        assert service.floor.balance.proposal.kind == "break"
    finally:
        service.close()


def test_the_structure_that_runs_limits_the_re_entries_at_the_desk(tmp_path):
    """A structure's ``max_reentries``: the desk is told the re-entries each player has left,
    and one past the limit is refused, naming it."""

    (tmp_path / "one-more.toml").write_text(
        'title = "One re-entry"\nmax_reentries = 1\n'
        '[[schedule]]\nlevel = 1\nsb = 1\nbb = 2\nminutes = 10\n')
    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db"),
                                        structures=str(tmp_path)), "t1")
    try:
        service.on_state("t1", table_state(seats=[]))
        for name in ("Anna", "Bob", "Carl"):
            service.add_player(MARIA, name)
        service.draw_seats(MARIA)
        assert service.roster()["max_reentries"] is None
        service.clock_action(MARIA, HubClockCommand(action="start", value="one-more"))
        service.turn()
        assert service.roster()["max_reentries"] == 1
        bob = next(p for p in service.floor.roster.players.values() if p.name == "Bob")
        service.bust(MARIA, "t1", bob.seat)
        view = service.reentry(MARIA, bob.id)
        assert next(p for p in view["players"] if p["name"] == "Bob")["reentries_left"] == 0
        service.draw_seats(MARIA)
        service.bust(MARIA, "t1", bob.seat)
        with pytest.raises(RosterError, match=r"allows 1 re-entry a player"):
            service.reentry(MARIA, bob.id)
    finally:
        service.close()


def test_a_no_show_is_refunded_the_buy_in_logged_and_kept_across_a_restart(tmp_path):
    """Seed 004's buy-in ($50) refunded to an entrant who never came; the line outlives a hub
    restart; the entries the prize pool counts leave it out."""

    settings = HubSettings(venue="venue", db=str(tmp_path / "hub.db"))
    service = floor_service(settings, "t1")
    try:
        service.on_state("t1", table_state(seats=[], hand=3))
        service.clock_action(MARIA, HubClockCommand(action="start", value="dealers-choice"))
        for name in ("Anna", "Bob", "Carl"):
            service.add_player(MARIA, name)
        service.draw_seats(MARIA)
        carl = next(p for p in service.floor.roster.players.values() if p.name == "Carl")
        seat = carl.seat
        view = service.no_show(MARIA, carl.id)
        line = next(p for p in view["players"] if p["name"] == "Carl")
        assert (line["refund"], line["table"], line["place"]) == ("$50", None, None)
        assert (view["entries"], view["paid_entries"], view["no_shows"]) == (3, 2, 1)
        assert seat not in service.floor.seating.tables["t1"].seats
        [logged] = [x for x in service.floor_log() if x["action"] == "roster/no-show"]
        assert logged["detail"] == {"player": carl.id, "name": "Carl", "refund": "$50"}
    finally:
        service.close()
    service = floor_service(settings)  # the hub restarted
    try:
        again = next(p for p in service.roster()["players"] if p["name"] == "Carl")
        assert (again["no_show_at"] is not None, again["refund"]) == (True, "$50")
        assert service.roster()["paid_entries"] == 2
    finally:
        service.close()


def test_alternates_take_the_seats_that_open_until_registration_closes(tmp_path):
    """While the field is full the desk lists alternates in order; a bust-out's, a
    no-show's or a mistaken entrant's seat goes to the first, drawn there, logged; the list
    outlives a restart and is closed, saying so, with late registration."""

    (tmp_path / "late.toml").write_text(
        'title = "Late until level 2"\nlate_entry_until_level = 2\nbuy_in = 40\n'
        'currency = "$"\n[[schedule]]\nlevel = 1\nsb = 1\nbb = 2\nminutes = 10\n'
        '[[schedule]]\nlevel = 2\nsb = 2\nbb = 4\nminutes = 10\n')
    settings = HubSettings(venue="venue", db=str(tmp_path / "hub.db"), structures=str(tmp_path))
    service = floor_service(settings, "t1")
    try:
        service.clock_action(MARIA, HubClockCommand(action="start", value="late"))
        size = service.floor.table_size("t1")
        service.on_state("t1", table_state(seats=list(range(1, size)), hand=2))
        service.import_players(MARIA, "name\n" + "\n".join(f"P{n}" for n in range(1, size)))
        service.draw_seats(MARIA)
        with pytest.raises(RosterError, match="the tables in play have 1 free seat: enter"):
            service.add_alternate(MARIA, "Alma")
        service.add_player(MARIA, "Last In")
        service.draw_seats(MARIA)  # the field is full
        for name in ("Alma", "Bert", "Cleo"):
            service.add_alternate(MARIA, name)
        assert [a["name"] for a in service.roster()["alternates"]] == ["Alma", "Bert", "Cleo"]
        gone = service.floor.roster.players[3]
        service.bust(MARIA, "t1", gone.seat)
        alma = next(p for p in service.floor.roster.players.values() if p.name == "Alma")
        assert (alma.table, alma.seat) == ("t1", gone.seat)
        assert gone.seat in service.floor.seating.tables["t1"].seats
        [logged] = [x for x in service.floor_log() if x["action"] == "roster/alternate-seated"]
        assert logged["detail"] == {"name": "Alma", "table": "t1", "seat": gone.seat}
        never = service.floor.roster.players[5]  # never came: Bert takes the seat
        seat = never.seat
        service.no_show(MARIA, never.id)
        bert = next(p for p in service.floor.roster.players.values() if p.name == "Bert")
        assert (bert.table, bert.seat) == ("t1", seat)
        service.add_alternate(MARIA, "Dora")
        mistake = service.floor.roster.players[6]  # entered twice: removed, Cleo seated
        seat = mistake.seat
        service.remove_entrant(MARIA, mistake.id)
        cleo = next(p for p in service.floor.roster.players.values() if p.name == "Cleo")
        assert (cleo.table, cleo.seat) == ("t1", seat)
    finally:
        service.close()
    service = floor_service(settings, "t1")  # the hub restarted
    try:
        assert [a["name"] for a in service.roster()["alternates"]] == ["Dora"]
        service.clock_action(MARIA, HubClockCommand(action="level", value=2))
        service.turn()
        closed = service.roster()["alternates_closed"]
        assert closed == "late registration closed at the start of level 2 (Late until level 2)"
        with pytest.raises(RosterError, match="the alternates list is closed: late registr"):
            service.add_alternate(MARIA, "Dina")
        seated = service.floor.roster.players[4]
        service.bust(MARIA, "t1", seated.seat)
        assert [a.name for a in service.floor.roster.alternates] == ["Dora"]  # not seated
    finally:
        service.close()


def test_a_table_that_joins_is_told_hand_for_hand_from_the_hubs_clock_not_its_echo(tmp_path):
    """The venue clock is the hub's (``service.clock``); the reading the broker gives back
    (``floor.clock``) is a copy that lags it, or is left stale. A table that comes online is
    told hand-for-hand from the truth: on when the hub's clock has it on, whatever the echo,
    and off, never on, from an echo the hub's clock has moved past."""
    from contract.commands import HandForHandCommand, HandForHandOrder

    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db")))
    try:
        link = service.link
        service.clock_action(MARIA, HubClockCommand(action="start", value="tda-2024"))
        stale = service.clock.reading(service.wall())  # hand-for-hand off
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="on"))
        on = service.clock.reading(service.wall())
        service.on_venue_clock(on)  # the echo catches up: every table told already
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="off"))
        service.on_venue_clock(on)  # a late echo

        def told(table: str) -> list[str]:
            return [c.state for t, c in link.commands
                    if t == table and isinstance(c, HandForHandCommand)]

        service.on_status("t1", {"state": "online", "boot": 1, "table": "t1", "ts": 1})
        assert told("t1") == [HandForHandOrder.OFF]  # the hub's clock has it off: the echo on
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="on"))
        service.on_venue_clock(stale)  # an echo from before it was on
        service.on_status("t2", {"state": "online", "boot": 1, "table": "t2", "ts": 1})
        assert told("t2") == [HandForHandOrder.ON]
    finally:
        service.close()


def test_an_old_echo_of_the_clock_changes_neither_the_tables_nor_the_floor_s_view(tmp_path):
    """Hand-for-hand is told to the tables when the hub's clock changes (the truth), at
    once, and never from the reading the broker gives back (a copy): an echo published before
    the latest change and delivered after it (a broker's redelivery, a retained message sent
    at a resubscription) is older than the truth by its revision, and is dropped, on the
    dashboards too. Before, the echo was the cause: a late 'on' told every table to wait."""
    from contract.commands import HandForHandCommand, HandForHandOrder

    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db")), "t1")
    try:
        link = service.link

        def told() -> list[str]:
            return [c.state for t, c in link.commands
                    if t == "t1" and isinstance(c, HandForHandCommand)]

        assert told() == [HandForHandOrder.OFF]  # at its join, as every table
        link.commands.clear()
        service.clock_action(MARIA, HubClockCommand(action="start", value="tda-2024"))
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="on"))
        assert told() == [HandForHandOrder.ON]  # at the change, not at its echo
        on = service.clock.reading(service.wall())
        service.on_venue_clock(on)
        assert service.floor.hand_for_hand and told() == [HandForHandOrder.ON]  # said once
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="off"))
        service.clock_action(MARIA, HubClockCommand(action="level", value=5))
        assert told() == [HandForHandOrder.ON, HandForHandOrder.OFF]
        assert on.revision is not None and service.clock.reading(0).revision == on.revision + 2
        service.on_venue_clock(on)  # the old 'on' again, before its successors' echoes
        assert told() == [HandForHandOrder.ON, HandForHandOrder.OFF]
        assert (service.floor.clock or {}).get("revision") == on.revision  # nothing older shown
        newest = service.clock.reading(service.wall())
        service.on_venue_clock(newest)
        assert not service.floor.hand_for_hand and service.floor.clock["level"] == 5
        service.on_venue_clock(on)  # and after them: the floor's view stays the newest
        assert not service.floor.hand_for_hand and service.floor.clock["level"] == 5
        assert told() == [HandForHandOrder.ON, HandForHandOrder.OFF]
        with pytest.raises(StaffError, match="hand-for-hand is off"):
            service.release_hand(MARIA)
    finally:
        service.close()


def test_a_table_away_when_hand_for_hand_ended_is_told_so_when_it_comes_back(tmp_path):
    """A table's session is not kept: one that was away when the floor turned hand-for-hand
    off never got the order, and comes back still waiting for a release. The hub's clock is
    the truth, and a command carries it whole: every table that is online again is told
    'off', whatever its last state said (a table off already takes it silently: the
    daemon's test)."""
    from contract.commands import HandForHandCommand, HandForHandOrder

    service = floor_service(HubSettings(venue="venue", db=str(tmp_path / "hub.db")),
                            "t1", "t2")
    try:
        link = service.link

        def told(table: str) -> list[str]:
            return [c.state for t, c in link.commands
                    if t == table and isinstance(c, HandForHandCommand)]

        on, off = HandForHandOrder.ON, HandForHandOrder.OFF
        assert told("t1") == told("t2") == [off]  # at their joins
        service.clock_action(MARIA, HubClockCommand(action="start", value="tda-2024"))
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="on"))
        service.on_state("t1", table_state(hand_for_hand="waiting"))
        service.on_status("t1", {"state": "lost", "boot": 1, "table": "t1", "ts": 2})
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="off"))
        assert told("t1") == [off, on] and told("t2") == [off, on, off]
        service.on_status("t1", {"state": "online", "boot": 2, "table": "t1", "ts": 3})
        assert told("t1") == [off, on, off]
        service.on_state("t1", table_state(hand_for_hand="off"))
        service.on_status("t1", {"state": "online", "boot": 3, "table": "t1", "ts": 4})
        service.on_status("t3", {"state": "online", "boot": 1, "table": "t3", "ts": 4})
        assert told("t1") == [off, on, off, off] and told("t3") == [off]
    finally:
        service.close()


def test_a_restarted_hub_tells_a_table_hand_for_hand_is_off_before_it_says_its_state(
        tmp_path):
    """The floor turned hand-for-hand off while a table was away, waiting for a release; the
    hub then restarted (the clock restored, off; the table's last state not known yet). The
    table comes back and says it is online before its state message: it is told 'off' from
    the clock, not left waiting because the hub had no copy of its state to go by."""
    from contract.commands import HandForHandCommand, HandForHandOrder

    settings = HubSettings(venue="venue", db=str(tmp_path / "hub.db"))
    service = floor_service(settings, "t1")
    try:
        service.clock_action(MARIA, HubClockCommand(action="start", value="tda-2024"))
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="on"))
        service.on_state("t1", table_state(hand_for_hand="waiting"))
        service.on_status("t1", {"state": "lost", "boot": 1, "table": "t1", "ts": 2})
        service.clock_action(MARIA, HubClockCommand(action="hand-for-hand", value="off"))
    finally:
        service.close()
    restarted = floor_service(settings)
    try:
        assert restarted.clock.known and not restarted.clock.hand_for_hand
        restarted.on_status("t1", {"state": "online", "boot": 2, "table": "t1", "ts": 3})
        assert [c.state for t, c in restarted.link.commands
                if t == "t1" and isinstance(c, HandForHandCommand)] == [HandForHandOrder.OFF]
    finally:
        restarted.close()
