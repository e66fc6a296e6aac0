"""Balancing and breaking tables by each house's rule (controller/balancing.py), on tables laid
out so that every house picks a different player or seat."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.schema import ContractError
from contract.snapshots import TableState
from contract.wire import encode
from controller.balancing import (
    BalanceRules,
    Move,
    TableSeats,
    propose,
    seats_to_button,
    turns_to_big_blind,
)
from houses.loaders import builtin_names, load_profile
from tests.conftest import table_state

# Nine players, button 3, blinds 4 and 5: seat 6 is due the big blind next.
FULL = TableSeats("t1", (1, 2, 3, 4, 5, 6, 7, 8, 9), button=3, small_blind=4, big_blind=5)
# Seven players, button 1, blinds 2 and 3; open seats 5, 9 and 10.
SHORT = TableSeats("t2", (1, 2, 3, 4, 6, 7, 8), button=1, small_blind=2, big_blind=3)


def rules(house: str) -> BalanceRules:
    return BalanceRules.of(load_profile(house))


def test_turns_to_the_big_blind_and_places_from_the_button():
    assert [turns_to_big_blind(FULL.seats, 5, s) for s in (6, 7, 9, 1, 4, 5)] == [1, 2, 4, 5,
                                                                                  8, 9]
    # Open seats at the short table: 5 posts after seat 4; 9 and 10 after 4, 6, 7 and 8.
    assert [turns_to_big_blind(SHORT.seats, 3, s) for s in (5, 9, 10)] == [2, 5, 5]
    assert seats_to_button(FULL.seats, 3, 3) == 0
    assert seats_to_button(FULL.seats, 3, 2) == 1  # the cut-off
    assert seats_to_button(SHORT.seats, 1, 5) == 4


def test_tda_moves_the_player_due_the_big_blind_to_the_worst_position():
    proposal = propose([FULL, SHORT], rules("tda-2024"))
    assert proposal is not None and proposal.kind == "balance"
    assert proposal.moves == (Move("t1", 6, "t2", 5),)
    assert proposal.tables == ("t1", "t2")
    assert "t1 has 9 players and t2 7" in proposal.reason


def test_seed_000_moves_the_player_who_will_not_lose_position():
    # The worst open seat (5) posts the big blind in two hands: seat 7 (two hands away at
    # t1) keeps its place; seat 6 would gain a hand, seat 8 lose one.
    proposal = propose([FULL, SHORT], rules("corner-pocket"))
    assert proposal is not None and proposal.moves == (Move("t1", 7, "t2", 5),)


def test_seed_001_moves_the_player_in_the_same_place_relative_to_the_button():
    # Open seat 5 at t2 is four seats before its button; at t1 that is seat 8.
    proposal = propose([FULL, SHORT], rules("scpc-2010"))
    assert proposal is not None and proposal.moves == (Move("t1", 8, "t2", 5),)


def test_seed_002_moves_several_clockwise_from_the_big_blind_in_the_same_order():
    short = TableSeats("t2", (1, 2, 3, 7, 8), button=1, small_blind=2, big_blind=3)
    proposal = propose([FULL, short], rules("lppl"))
    assert proposal is not None
    # Nine against five: two move, 6 then 7, to the seats left of the big blind, in order.
    assert proposal.moves == (Move("t1", 6, "t2", 4), Move("t1", 7, "t2", 5))


def test_seed_002_seats_a_newcomer_in_the_big_blinds_own_seat_when_it_is_open():
    # The big blind (seat 3) busted: the house seats the new player there first.
    short = TableSeats("t2", (1, 2, 4, 6, 7, 8, 9), button=1, small_blind=2, big_blind=3)
    lppl = propose([FULL, short], rules("lppl"))
    tda = propose([FULL, short], rules("tda-2024"))
    assert lppl is not None and lppl.moves == (Move("t1", 6, "t2", 3),)
    assert tda is not None and tda.moves == (Move("t1", 6, "t2", 5),)


def test_seed_003_waits_until_tables_are_more_than_two_apart_and_keeps_the_place():
    assert propose([FULL, SHORT], rules("mikes-poker-tables")) is None  # 9 and 7
    six = TableSeats("t2", (1, 2, 3, 6, 7, 8), button=1, small_blind=2, big_blind=3)
    proposal = propose([FULL, six], rules("mikes-poker-tables"))
    # Seat 6 is due the big blind next (one hand); at t2 seat 4 posts it next hand too.
    assert proposal is not None and proposal.moves == (Move("t1", 6, "t2", 4),)


def test_seed_004_draws_the_seat_and_combines_two_tables_at_eight_players():
    drawn = {propose([FULL, SHORT], rules("dealers-choice"), seed).moves[0].to_seat
             for seed in range(30)}
    assert drawn == {5, 9, 10}  # every open seat can be drawn
    assert propose([FULL, SHORT], rules("dealers-choice"), 7) == propose(
        [FULL, SHORT], rules("dealers-choice"), 7)  # the same seed, the same draw
    five = TableSeats("t1", (1, 3, 5, 7, 9), button=1)
    three = TableSeats("t2", (2, 4, 6), button=2)
    combine = propose([five, three], rules("dealers-choice"))
    assert combine is not None and combine.kind == "break"
    assert {m.from_seat for m in combine.moves} == {2, 4, 6}
    assert {m.to_table for m in combine.moves} == {"t1"}
    assert {m.to_seat for m in combine.moves} <= {2, 4, 6, 8, 10}
    # Nine players: the house keeps two tables; TDA breaks one as soon as all fit at the
    # other (ten seats).
    four = TableSeats("t2", (2, 4, 6, 8), button=2)
    assert propose([five, four], rules("dealers-choice")) is None
    tda = propose([five, four], rules("tda-2024"))
    assert tda is not None and tda.kind == "break"


def test_a_broken_tables_players_draw_seats_that_keep_the_rest_balanced():
    tables = [TableSeats("t1", (1, 2, 3, 4, 5, 6, 7)),
              TableSeats("t2", (1, 2, 3, 4, 5, 6)),
              TableSeats("t3", (2, 4, 6, 8, 9, 10))]
    proposal = propose(tables, rules("tda-2024"), seed=3)
    assert proposal is not None and proposal.kind == "break"
    assert proposal.tables[0] == "t3"  # the fewest players; of equals, the last by name
    assert sorted(m.from_seat for m in proposal.moves) == [2, 4, 6, 8, 9, 10]
    after = _apply(tables, proposal.moves)
    assert sorted(len(s) for s in after.values()) == [0, 9, 10]
    assert "19 players fit at 2 tables of at most 10" in proposal.reason


def test_each_house_seats_its_own_number_a_table():
    """Seed 003 seats nine a table, seed 002 eight: nineteen players at Mike's were told to
    fit at two tables, nine LPPL players at one, and moves went to seat 10."""
    assert rules("mikes-poker-tables").table_size == 9
    assert rules("lppl").table_size == 8 and rules("tda-2024").table_size == 10
    nineteen = [TableSeats("t1", (1, 2, 3, 4, 5, 6, 7)), TableSeats("t2", (1, 2, 3, 4, 5, 6)),
                TableSeats("t3", (2, 4, 6, 8, 9, 7))]
    assert propose(nineteen, rules("tda-2024")).kind == "break"  # two tables of ten
    mikes = propose(nineteen, rules("mikes-poker-tables"))
    assert mikes is None or mikes.kind != "break"
    eighteen = [*nineteen[:2], TableSeats("t3", (2, 4, 6, 8, 9))]
    broken = propose(eighteen, rules("mikes-poker-tables"), seed=5)
    assert broken is not None and broken.kind == "break"
    assert "18 players fit at 2 tables of at most 9" in broken.reason
    assert max(m.to_seat for m in broken.moves) <= 9
    assert sorted(len(s) for s in _apply(eighteen, broken.moves).values()) == [0, 9, 9]
    nine = [TableSeats("t1", (1, 2, 3, 4, 5)), TableSeats("t2", (1, 2, 3, 4))]
    assert propose(nine, rules("lppl")) is None
    assert propose(nine, rules("tda-2024")).kind == "break"
    # A move into a table with open seats 9 and 10 at Mike's: seat 9, never 10.
    eight = TableSeats("t2", (1, 2, 3, 4, 5, 6, 7, 8), button=1, small_blind=2, big_blind=3)
    five = TableSeats("t3", (1, 2, 3, 4, 5), button=1, small_blind=2, big_blind=3)
    for seed in range(20):
        for house in builtin_names():
            proposal = propose([eight, five], rules(house), seed)
            size = rules(house).table_size
            assert proposal is None or max(m.to_seat for m in proposal.moves) <= size


def test_a_short_table_takes_no_one_past_its_seats():
    """A house may run short tables (``TableSeats.size``): six seats, full, takes nobody; a
    break counts six seats there."""
    full_six = TableSeats("t2", (1, 2, 3, 4, 5, 6), size=6)
    nine = TableSeats("t1", (1, 2, 3, 4, 5, 6, 7, 8, 9), button=1)
    assert propose([nine, full_six], rules("tda-2024")) is None
    four_of_six = TableSeats("t2", (1, 2, 3, 4), size=6)
    proposal = propose([nine, four_of_six], rules("tda-2024"))
    assert proposal is not None and proposal.kind == "balance"
    assert all(m.to_seat <= 6 for m in proposal.moves)
    three_of_six = TableSeats("t2", (1, 2, 3), size=6)
    broken = propose([three_of_six, TableSeats("t3", (1, 2))], rules("tda-2024"))
    assert broken is not None and broken.tables == ("t3", "t2")
    assert all(m.to_seat in (4, 5, 6) for m in broken.moves)
    seven = propose([TableSeats("t2", (1, 2, 3, 4, 5), size=6), TableSeats("t3", (1, 2))],
                    rules("tda-2024"))
    assert seven is not None and seven.kind == "balance"  # seven do not fit at six seats


def test_balanced_tables_and_a_single_table_call_for_nothing():
    assert propose([FULL], rules("tda-2024")) is None
    eight = TableSeats("t2", (1, 2, 3, 4, 5, 6, 7, 8), button=1)
    assert propose([FULL, eight], rules("tda-2024")) is None


def _apply(tables, moves):
    seats = {t.table: set(t.seats) for t in tables}
    for move in moves:
        assert move.from_seat in seats[move.from_table], move
        assert move.to_seat not in seats[move.to_table], move
        seats[move.from_table].remove(move.from_seat)
    for move in moves:
        assert move.to_seat not in seats[move.to_table], move
        seats[move.to_table].add(move.to_seat)
    return seats


@st.composite
def rooms(draw, size=10):
    count = draw(st.integers(2, 6))
    tables = []
    for index in range(count):
        seats = tuple(sorted(draw(st.sets(st.integers(1, size), min_size=0, max_size=size))))
        button = draw(st.sampled_from(seats)) if seats and draw(st.booleans()) else None
        big = draw(st.integers(1, size)) if seats and draw(st.booleans()) else None
        tables.append(TableSeats(f"t{index + 1}", seats, button=button, big_blind=big))
    return tables


@st.composite
def houses_and_rooms(draw):
    house = draw(st.sampled_from(builtin_names()))
    return house, draw(rooms(rules(house).table_size))


@settings(max_examples=300, deadline=None)
@given(houses_and_rooms(), st.integers(0, 2**32))
def test_every_proposal_moves_seated_players_to_open_seats_and_narrows_the_gap(
        house_and_tables, seed):
    house, tables = house_and_tables
    house_rules = rules(house)
    proposal = propose(tables, house_rules, seed)
    live = [t for t in tables if t.seats]
    if proposal is None:
        if len(live) > 1:
            counts = [len(t.seats) for t in live]
            assert max(counts) - min(counts) <= house_rules.difference
        return
    after = _apply(tables, proposal.moves)
    assert all(m.to_seat <= house_rules.table_size for m in proposal.moves), proposal
    assert all(len(seats) <= house_rules.table_size for seats in after.values())
    if proposal.kind == "break":
        assert after[proposal.tables[0]] == set()
    else:
        source, target = proposal.tables
        before = len(dict((t.table, t.seats) for t in tables)[source]) - len(
            dict((t.table, t.seats) for t in tables)[target])
        assert 0 <= len(after[source]) - len(after[target]) < before


def test_the_desk_makes_the_confirmed_move_at_once_and_each_table_takes_it_at_its_hand():
    from hub.balance_desk import BalanceDesk, BalanceRefused
    from hub.floor import FloorView

    floor = FloorView("v", balance=BalanceDesk.of(load_profile("tda-2024")))
    desk = floor.balance
    for table in (FULL, SHORT):
        floor.on_status(table.table, {"state": "online", "boot": 1, "ts": 1}, 0)
    floor.on_state("t1", table_state(seats=list(FULL.seats), button=3, in_progress=True,
                                     blind_seats={"small": 4, "big": 5}), 0)
    floor.on_state("t2", table_state(seats=list(SHORT.seats), button=1,
                                     blind_seats={"small": 2, "big": 3}), 0)
    (update,) = floor.review_balance(0)
    shown = [{"from_table": "t1", "from_seat": 6, "to_table": "t2", "to_seat": 5}]
    assert update["balance"]["proposal"]["moves"] == shown
    assert floor.review_balance(1) == []  # nothing changed: nothing to say
    revision = update["balance"]["revision"]  # a page keeps the highest it has seen
    with pytest.raises(BalanceRefused, match="t1 has 9 players and t2 7"):
        desk.confirm("balance", ["t2", "t1"])  # not the move proposed
    with pytest.raises(BalanceRefused, match="the seats changed since the dialog"):
        desk.confirm("balance", ["t1", "t2"], [{**shown[0], "from_seat": 7}])
    proposal = desk.confirm("balance", ["t1", "t2"], shown)
    floor.seating_desk.make_moves(proposal, "maria", 3)  # t1 plays its hand: made all the same
    desk.made(proposal, "maria", 3, {("t1", 6): "Anna"})
    assert desk.recent[-1]["by"] == "maria" and desk.recent[-1]["player"] == "Anna"
    # Counted as decided at once: eight and eight, balanced (no second move proposed while
    # t1 still deals its hand with seat 6 in it).
    (after,) = floor.review_balance(4)
    assert desk.proposal is None and after["balance"]["revision"] > revision
    assert desk.panel(floor.tables)["revision"] == after["balance"]["revision"]
    assert floor.tables["t1"].seats == [1, 2, 3, 4, 5, 7, 8, 9]
    assert floor.tables["t2"].seats == [1, 2, 3, 4, 5, 6, 7, 8]  # seat 5 held for the player
    assert floor.tables["t2"].seating["arriving"][0]["from_seat"] == 6
    due, _ = floor.seating_desk.reconcile(5)
    assert [(name, c.seats) for name, c in due] == [("t1", [1, 2, 3, 4, 5, 7, 8, 9])]


def test_a_break_sends_every_player_to_a_seat_the_tables_accept_and_empties_the_table():
    from contract.commands import parse_command
    from controller.inputs import SeatsChange, parse_input
    from controller.screens import DisplayModel
    from controller.table import Table
    from hub.balance_desk import BalanceDesk
    from hub.floor import FloorView
    from tablectl.command_to_core import command_input

    tables = [TableSeats("t1", (1, 2, 3, 4, 5, 6, 7), button=2, big_blind=4),
              TableSeats("t2", (1, 3, 5, 7, 9), button=9, big_blind=3),
              TableSeats("t3", (2, 5, 8), button=5, big_blind=2)]
    proposal = propose(tables, rules("scpc-2010"), seed=11)
    assert proposal is not None and proposal.kind == "break" and proposal.tables[0] == "t3"
    floor = FloorView("v", balance=BalanceDesk.of(load_profile("scpc-2010")))
    for table in tables:
        floor.on_status(table.table, {"state": "online", "boot": 1, "ts": 1}, 0)
        floor.on_state(table.table, table_state(seats=list(table.seats)), 0)
    floor.seating_desk.make_moves(proposal, "maria", 1)
    sent = dict(floor.seating_desk.reconcile(2)[0])
    assert list(sent) == ["t3"] and sent["t3"].seats == []
    # t3 deals without them: the others are sent their new players.
    floor.on_state("t3", table_state(seats=[], seating={"version": 1, "pending": None}), 3)
    sent.update(floor.seating_desk.reconcile(4)[0])
    after = {t.table: len(floor.seating.tables[t.table].seats) for t in tables}
    assert after["t3"] == 0 and sorted(after.values()) == [0, 7, 8]  # 15 players, balanced
    for name, command in sent.items():
        # What the hub sends is a command the table takes, as its input line.
        change = command_input(parse_command("seating", command.payload()), 0.0)
        assert isinstance(change, SeatsChange) and list(change.seats) == command.seats
        table, display = Table(load_profile("scpc-2010")), DisplayModel()
        table.handle(parse_input({"type": "setup", "game": "holdem", "seats": [1, 2],
                                  "button": 1}))
        for event in table.handle(change):
            display.update(event)
        assert display.alert is not None
        assert display.alert.title == ("TABLE BREAKS" if name == "t3" else "NEW PLAYER"
                                       if len(command.moves or ()) == 1 else "NEW PLAYERS")


def _room(profile="tda-2024", short_tables=None):
    from hub.balance_desk import BalanceDesk
    from hub.floor import FloorView

    floor = FloorView("v", balance=BalanceDesk.of(load_profile(profile),
                                                  short_tables=short_tables))
    for name, seats in (("t1", [1, 2, 3, 4, 5, 6, 7, 8]), ("t2", [1, 2, 3, 4, 5, 6, 7]),
                        ("t3", [1, 2, 3, 4, 5, 6, 7])):
        floor.on_status(name, {"state": "online", "boot": 1, "ts": 1}, 1)
        floor.on_state(name, table_state(seats=seats, button=1, in_progress=False, ts=1), 1)
    return floor


def test_a_broken_table_counts_nobody_and_is_not_broken_again():
    """After t2 broke, its state says no seats: the floor kept its old ones (49 players
    instead of 44 in a trial) and proposed breaking it again."""
    floor = _room()
    assert sum(len(t.seats) for t in floor.tables_in_play()) == 22
    floor.on_state("t2", table_state(seats=[], in_progress=False, button=1, ts=2), 2)
    floor.on_state("t1", table_state(seats=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], button=1, ts=2), 2)
    floor.on_state("t3", table_state(seats=list(range(1, 11)), button=1, ts=2), 2)
    assert floor.tables["t2"].seats == []
    assert [t.name for t in floor.tables_in_play()] == ["t1", "t3"]
    assert sum(len(t.seats) for t in floor.tables_in_play()) == 20
    floor.review_balance(3)
    assert floor.balance.proposal is None  # two full tables of ten: nothing to break
    # A state that does not give the seats is no state: refused where it arrives, before
    # the floor view could take it for an empty table.
    with pytest.raises(ContractError, match="seats"):
        TableState.parse(encode({**table_state(ts=4).to_json(), "seats": None}))


def test_a_lost_table_keeps_its_players_in_the_counts_and_in_balancing():
    """A table that drops off the network: its players did not leave. Counted out, the TV
    read wrong and the hub proposed a break ("14 players fit at 2 tables")."""
    floor = _room()
    floor.on_state("t1", table_state(seats=[1, 2, 3, 4, 5, 6, 7], button=1, ts=2), 2)  # 7, 7, 7
    floor.on_status("t3", {"state": "lost", "boot": 1, "ts": 3}, 3)
    assert sum(len(t.seats) for t in floor.tables_in_play()) == 21
    floor.review_balance(4)
    assert floor.balance.proposal is None  # 21 do not fit at two tables of ten
    # Counts that call for a move involving the lost table: proposed all the same (made, it
    # goes into the hub's seating; the lost table is sent its part once it is back).
    floor.on_state("t1", table_state(seats=[1, 2, 3, 4, 5, 6, 7, 8, 9], button=1, ts=5), 5)
    floor.on_state("t3", table_state(seats=[1, 2, 3, 4, 5, 6], button=1, ts=5), 5)  # as it said
    floor.balance_stale = True
    floor.review_balance(6)
    proposal = floor.balance.proposal
    assert proposal is not None and proposal.tables == ("t1", "t3")
    # A table stopped cleanly is closed: out of the counts.
    floor.on_status("t3", {"state": "offline", "boot": 1, "ts": 7}, 7)
    assert [t.name for t in floor.tables_in_play()] == ["t1", "t2"]


def test_a_short_table_is_never_given_a_seat_past_its_own():
    floor = _room(short_tables={"t3": 7})
    assert floor.table_size("t3") == 7 and floor.table_size("t1") == 10
    floor.on_state("t1", table_state(seats=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], button=1, ts=2), 2)
    floor.on_state("t2", table_state(seats=[1, 2, 3, 4, 5, 6], button=1, ts=2), 2)
    floor.review_balance(3)
    proposal = floor.balance.proposal
    assert proposal is not None and proposal.tables == ("t1", "t2")  # t3 is full at 7
    assert floor.balance.panel(floor.tables)["short_tables"] == {"t3": 7}
