"""The tournament's roster (hub/roster.py): entrants, drawn seats, finishing places, and the
floor view keeping it to what the tables applied; the TV's figures from it."""

from __future__ import annotations

import csv
import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.clock import structure_from_data
from houses.loaders import load_structure
from hub import lookalikes
from hub import roster as roster_module
from hub.clock_cases import tournament_figures
from hub.floor import FloorView
from hub.roster import Roster, RosterError, display_name
from tests.conftest import table_state

VENUE = "v"


def test_players_enter_once_by_name_and_a_csv_is_taken_whole_or_not_at_all():
    roster = Roster()
    anna = roster.add("  Anna   Berg ", 1)
    assert anna.name == "Anna Berg" and anna.entries == 1
    with pytest.raises(RosterError, match="has entered already: a second buy-in is a re-entry"):
        roster.add("anna berg", 2)
    bad = "name,entries,chips\nBob,1,\n,2,\nCarl,x,\nbob,1,\nAnna Berg,1,\n"
    with pytest.raises(RosterError) as refused:
        roster.import_csv(bad, 3)
    said = str(refused.value)
    assert "chips" not in said  # a column the roster does not read is no problem
    for needle in ("line 3: a player's name has 1 to 40",
                   "line 4: entries 'x'", "line 5: bob is on line 2 too",
                   "line 6: Anna Berg has entered already"):
        assert needle in said, said
    assert len(roster.players) == 1  # none of it taken
    registration = "Name,add_ons,Email,Phone\nBob,1,bob@example.org,\nZoë,0,,555\n"
    assert Roster.csv_columns_ignored(registration) == ["Email", "Phone"]
    added = roster.import_csv(registration, 4)
    assert [(p.name, p.add_ons) for p in added] == [("Bob", 1), ("Zoë", 0)]
    with pytest.raises(RosterError, match="a header line with a 'name' column"):
        roster.import_csv("player\nDan\n", 5)
    assert display_name("Zoë Ångström-Łukasz") == "Zoe Angstrom-Luk"  # the LCD's ASCII
    assert display_name("Julia Weiß") == "Julia Weiss"
    with pytest.raises(RosterError, match="line 2: more values than the header has columns"):
        roster.import_csv("name\nEve,1\n", 6)


def test_places_follow_the_bust_outs_and_an_undo_or_a_re_entry_gives_them_back():
    roster = Roster()
    for seat, name in enumerate(("Anna", "Bob", "Carl", "Dora"), start=1):
        player = roster.add(name, 0)
        player.table, player.seat = "t1", seat
    roster.went_out("t1", 2, 100, 7)  # Bob first: 4th
    roster.went_out("t1", 4, 200, 9)  # Dora next: 3rd
    assert [(place, p.name) for place, p in roster.finishing()] == [(3, "Dora"), (4, "Bob")]
    assert roster.back_in("t1", 4, 200).name == "Dora"  # the bust undone
    assert [(place, p.name) for place, p in roster.finishing()] == [(4, "Bob")]
    bob = roster.players[2]
    with pytest.raises(RosterError, match="still in the game"):
        roster.reentry(roster.players[1].id, 300)
    roster.reentry(bob.id, 300)
    assert bob.entries == 2 and bob.playing and bob.table is None  # waits for a seat
    assert roster.finishing() == []
    roster.take_back_reentry(bob.id)  # tapped by mistake: out again, in his place
    assert bob.entries == 1 and not bob.playing
    assert [(place, p.name) for place, p in roster.finishing()] == [(4, "Bob")]
    with pytest.raises(RosterError, match="no re-entry to take back"):
        roster.take_back_reentry(bob.id)
    roster.reentry(bob.id, 310)
    roster.add_on(1, most=1)
    with pytest.raises(RosterError, match="the house allows 1"):
        roster.add_on(1, most=1)
    roster.take_back_add_on(1)
    assert roster.players[1].add_ons == 0
    with pytest.raises(RosterError, match="sells no add-ons"):
        roster.add_on(1, sold=False)
    rows = list(csv.reader(io.StringIO(Roster().finishing_csv())))
    assert rows == [["place", "name", "entries", "add_ons", "out_utc", "out_at_ms", "table",
                     "seat", "hand", "refunded"]]


def test_a_name_that_a_spreadsheet_would_run_is_written_as_text():
    roster = Roster()
    player = roster.add("=HYPERLINK(\"x\")", 0)
    player.table, player.seat = "t1", 1
    roster.went_out("t1", 1, 5, 1)
    [_, row] = list(csv.reader(io.StringIO(roster.finishing_csv())))
    assert row[1].startswith("'=")


def test_look_alike_lines_of_one_import_are_each_reported_and_nothing_is_entered():
    roster = Roster()
    roster.add("Alice", 0)
    csv_text = "name\nIan\nlan\n\u0406an\nBob\nB\u041eb\n\u0410lice\n"  # І, О, А
    with pytest.raises(RosterError) as refused:
        roster.import_csv(csv_text, 1)
    said = str(refused.value)
    for needle in ("line 3: 'lan' looks like 'Ian', on line 2",
                   "line 4: '\u0406an' looks like 'Ian', on line 2",
                   "line 6: 'B\u041eb' looks like 'Bob', on line 5",
                   "line 7: '\u0410lice' looks like 'Alice', who has entered already"):
        assert needle in said, said
    assert [p.name for p in roster.players.values()] == ["Alice"]


def test_each_name_is_checked_once_and_its_skeletons_computed_once(monkeypatch):
    """Each entry recomputed every entrant's skeletons, and an import checked each line twice:
    1,990 names took 6 s to import. Counted here, not timed."""
    skeletons, alphabets = [], []
    skeleton, mixed_scripts = lookalikes.skeleton, roster_module.mixed_scripts
    monkeypatch.setattr(lookalikes, "skeleton",
                        lambda text: skeletons.append(text) or skeleton(text))
    monkeypatch.setattr(roster_module, "mixed_scripts",
                        lambda name: alphabets.append(name) or mixed_scripts(name))
    names = [f"Quill Once {number}" for number in range(300)]
    roster = Roster()
    roster.import_csv("name\n" + "\n".join(names) + "\n", 0)
    roster.add("Quill Once more", 1)  # against 300 entrants
    assert len(alphabets) == len(names) + 1  # one check each
    assert len(skeletons) <= 2 * (len(names) + 1)  # as typed and case-folded, once each


def test_the_display_keeps_a_mark_that_is_sounded_and_drops_an_accent():
    """Indic vowel signs are combining marks: skipping every mark showed 'मुकेश कुमार' as
    'mks kmar'."""
    assert display_name("\u092e\u0941\u0915\u0947\u0936 \u0915\u0941\u092e\u093e\u0930") \
        == "mukes kumar"
    assert display_name("Ma\u0331ria Bo\u20dd") == "Maria Bo"  # a macron below, a circle


@settings(max_examples=60, deadline=None)
@given(tables=st.lists(st.tuples(st.integers(0, 6), st.integers(6, 10)), min_size=1,
                       max_size=6),
       waiting=st.integers(0, 40), seed=st.integers(0, 2**32))
def test_a_draw_seats_everyone_waiting_once_and_keeps_the_tables_even(tables, waiting, seed):
    roster = Roster()
    free, occupied = {}, {}
    for index, (seated, size) in enumerate(tables):
        name = f"t{index + 1}"
        free[name] = list(range(seated + 1, size + 1))
        occupied[name] = seated
    for number in range(waiting):
        roster.add(f"p{number}", 0)
    room = sum(len(s) for s in free.values())
    if waiting > room:
        with pytest.raises(RosterError, match="open a table first"):
            roster.draw({}, free, occupied, random.Random(seed))
        return
    drawn = roster.draw({}, free, occupied, random.Random(seed))
    seats = [(table, seat) for table, pairs in drawn.items() for seat, _ in pairs]
    assert len(seats) == len(set(seats)) == waiting
    assert all(seat in free[table] for table, seat in seats)
    assert not roster.waiting()
    after = {name: occupied[name] + len(drawn.get(name, [])) for name in free}
    # Even: a table that got a player ends at most one above any table left with a free seat
    # (each player went to a table with the fewest).
    for name, count in after.items():
        if len(drawn.get(name, [])) < len(free[name]):  # a seat still free here
            for other, more in after.items():
                if drawn.get(other):
                    assert more <= count + 1, (after, drawn)


def test_a_draw_names_the_seats_a_table_set_up_before_the_roster_first():
    roster = Roster()
    for name in ("Anna", "Bob", "Carl"):
        roster.add(name, 0)
    drawn = roster.draw({"t1": [1, 4]}, {"t1": [2, 3], "t2": [1, 2]}, {"t1": 2, "t2": 0},
                        random.Random(1))
    named = sorted((table, seat) for table, pairs in drawn.items() for seat, _ in pairs)
    assert ("t1", 1) in named and ("t1", 4) in named  # the players already sitting there
    assert len(named) == 3


def _seated_floor(tables: dict[str, dict[int, str]]) -> FloorView:
    """A floor whose online tables seat these players, each on the roster in their seat."""
    floor = FloorView(VENUE)
    for table, seats in tables.items():
        floor.on_status(table, {"state": "online", "boot": 1, "ts": 1}, 1)
        floor.on_state(table, table_state(seats=sorted(seats)), 1)
        for seat, name in seats.items():
            player = floor.roster.add(name, 0)
            player.table, player.seat = table, seat
    return floor


def test_the_floor_view_keeps_the_roster_to_the_hubs_seating():
    from controller.balancing import Move, Proposal

    floor = _seated_floor({"t1": {1: "Anna", 2: "Bob", 3: "Carl"}, "t2": {1: "Dora", 2: "Emil"}})
    # A bust-out names the player and their place, at once.
    updates = floor.seating_desk.bust("t1", 2, "maria", 20)
    [bust] = [u["bustout"] for u in updates if u["kind"] == "bustout"]
    assert (bust["player"], bust["place"]) == ("Bob", 5)
    assert any(u["kind"] == "roster" for u in updates)
    # A move: Carl is the other table's at once, his seat there held until he has left t1.
    floor.seating_desk.make_moves(
        Proposal("balance", ("t1", "t2"), (Move("t1", 3, "t2", 5),), "", ()),
                     "maria", 30)
    carl = next(p for p in floor.roster.players.values() if p.name == "Carl")
    assert (carl.table, carl.seat) == ("t2", 5)
    assert floor.seating.tables["t2"].arriving[0].player == "Carl"
    assert not any(b.player == "Carl" for b in floor.bustouts)  # a move is no bust-out


def test_the_tv_figures_come_from_the_roster_and_the_structure_that_runs():
    assert tournament_figures(Roster(), load_structure("dealers-choice")) == {}
    roster = Roster()
    for number in range(10):
        roster.add(f"p{number}", 0)
    roster.players[1].entries = 2  # a re-entry
    roster.players[2].add_ons = roster.players[3].add_ons = 1
    for player_id in (4, 5):
        roster.players[player_id].out_at = 100
    # Seed 004: $50 buys 4,000 chips, a $25 add-on 2,000.
    figures = tournament_figures(roster, load_structure("dealers-choice"))
    assert figures == {"entrants": 10, "entries": 11, "add_ons": 2, "players_left": 8,
                       "average_stack": (4000 * 11 + 2000 * 2) // 8,
                       "average_from": "starting stacks"}
    # The prize money is the payout table's (tests/test_hub_payouts.py): a structure's old
    # flat list of percentages is refused, saying where the shares went.
    with pytest.raises(ValueError, match="payouts: a structure no longer gives the prize "
                                         "shares: they are the tournament's payout table's"):
        structure_from_data({"schedule": [{"level": 1, "sb": 1, "bb": 2, "minutes": 10}],
                             "buy_in": 100, "payouts": [50, 30, 20]}, "house")


def test_the_final_table_draw_seats_everyone_left_there_and_breaks_the_others():
    from hub.refused import StaffError

    floor = _seated_floor({"t1": {2: "Anna", 5: "Bob", 7: "Carl"}, "t2": {1: "Dora", 4: "Emil"}})
    floor.tables["t2"].in_progress = True  # a hand at t2 does not stop the draw
    floor.seating_desk.set_seats("t2", [1, 4, 6], "maria", 2)  # someone nobody entered
    with pytest.raises(StaffError, match="t2 seat 6 has no one on the roster"):
        floor.seating_desk.final_table_draw("t1", "maria", 3, random.Random(3))
    floor.seating_desk.bust("t2", 6, "maria", 4)
    floor.seating_desk.final_table_draw("t1", "maria", 5, random.Random(3))
    plans = floor.seating.tables
    players = list(floor.roster.players.values())
    assert {p.table for p in players} == {"t1"}
    assert plans["t2"].seats == [] and plans["t2"].broken
    # Anna, Bob and Carl change seats at t1's next hand; Dora and Emil's seats are held
    # until they have left t2, named as the displays show them.
    assert sorted([*plans["t1"].seats, *(a.seat for a in plans["t1"].arriving)]) == sorted(
        p.seat for p in players)
    assert {a.player: (a.from_table, a.from_seat) for a in plans["t1"].arriving} == {
        "Dora": ("t2", 1), "Emil": ("t2", 4)}
    leaving = {m["player"]: m for m in plans["t2"].moves}
    assert set(leaving) == {"Dora", "Emil"}
    for name, move in leaving.items():
        seat = next(p.seat for p in players if p.name == name)
        assert move["to_table"] == "t1" and move["to_seat"] == seat
    assert not floor.bustouts[1:]  # the draw is no bust-out
    with pytest.raises(StaffError, match="on their way from table t2"):
        floor.seating_desk.final_table_draw("t1", "maria", 6, random.Random(4))
    with pytest.raises(StaffError, match="5 players are left and table t2 seats 4"):
        floor.table_size = lambda name: 4  # type: ignore[method-assign]
        floor.seating_desk.final_table_draw("t2", "maria", 7, random.Random(3))


def test_a_balancing_move_names_its_player_on_both_tables_displays():
    from contract.commands import parse_command
    from controller.balancing import Move, Proposal
    from tablectl.command_to_core import command_input

    floor = _seated_floor({"t1": {1: "Anna", 4: "Zoë Weiß"}, "t2": {2: "Bob"}})
    proposal = Proposal("balance", ("t1", "t2"), (Move("t1", 4, "t2", 5),), "", ())
    floor.seating_desk.make_moves(proposal, "maria", 10)
    assert floor.seating.tables["t1"].moves == [
        {"seat": 4, "to_table": "t2", "to_seat": 5, "player": "Zoe Weiss"}]
    # t1 deals without Zoë: she is seated at t2, named on its display.
    floor.on_state("t1", table_state(seats=[1], seating={"version": 1, "pending": None}), 11)
    due, _ = floor.seating_desk.reconcile(12)
    commands = dict(due)
    assert commands["t2"].moves == [{"seat": 5, "from_table": "t1", "from_seat": 4,
                                     "player": "Zoe Weiss"}]
    assert commands["t2"].seats == [2, 5]
    for command in commands.values():  # each one the table takes
        command_input(parse_command("seating", command.payload()), 1.0)


def test_an_entrant_entered_by_mistake_is_removed_before_they_play():
    floor = _seated_floor({"t1": {1: "Anna", 2: "Bob", 3: "Carl"}})
    typo = floor.roster.add("Anan", 5)
    typo.table, typo.seat = "t1", 4
    floor.seating_desk.set_seats("t1", [1, 2, 3, 4], "maria", 6)  # drawn: the seat is the hub's
    _, updates = floor.seating_desk.remove_entrant(typo.id, "maria", 7)
    assert typo.id not in floor.roster.players
    assert floor.seating.tables["t1"].seats == [1, 2, 3] and not floor.bustouts
    assert any(u["kind"] == "roster" for u in updates)
    bob = next(p for p in floor.roster.players.values() if p.name == "Bob")
    floor.seating_desk.bust("t1", 2, "maria", 8)
    with pytest.raises(RosterError, match="Bob has played"):
        floor.seating_desk.remove_entrant(bob.id, "maria", 9)
    floor.roster.reentry(bob.id, 10)
    with pytest.raises(RosterError, match="has played"):
        floor.seating_desk.remove_entrant(bob.id, "maria", 11)
    waiting = floor.roster.add("Dora", 12)
    floor.seating_desk.remove_entrant(waiting.id, "maria", 13)
    assert waiting.id not in floor.roster.players


def test_a_structure_limits_the_re_entries_a_player_may_make():
    level = [{"level": 1, "sb": 1, "bb": 2, "minutes": 10}]
    assert structure_from_data({"schedule": level}, "house").max_reentries is None
    assert structure_from_data({"schedule": level, "max_reentries": 0},
                               "house").max_reentries == 0  # a freezeout
    for wrong in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="max_reentries: must be a whole number"):
            structure_from_data({"schedule": level, "max_reentries": wrong}, "house")
    roster = Roster()
    anna = roster.add("Anna", 0)
    assert roster.view()["players"][0]["reentries_left"] is None  # no limit: as now
    roster.max_reentries, roster.structure = 1, "Single re-entry"
    assert roster.view()["max_reentries"] == 1
    assert roster.view()["players"][0]["reentries_left"] == 1
    anna.out_at = 10
    roster.reentry(anna.id, 11)
    assert roster.view()["players"][0]["reentries_left"] == 0
    anna.out_at = 20
    with pytest.raises(RosterError, match=r"Anna has re-entered 1 time: the structure that "
                       r"runs \(Single re-entry\) allows 1 re-entry a player"):
        roster.reentry(anna.id, 21)
    assert anna.entries == 2 and not anna.playing  # refused: nothing changed
    roster.max_reentries = None
    roster.reentry(anna.id, 22)  # no limit
    assert anna.entries == 3


def test_a_no_show_is_removed_with_a_refund_until_a_hand_is_dealt_at_their_seat():
    floor = _seated_floor({"t1": {1: "Anna", 2: "Bob"}})
    floor.on_state("t1", table_state(seats=[1, 2], hand=7), 2)
    late = floor.roster.add("Dora", 3)
    early = floor.roster.add("Emil", 3)
    floor.seating_desk.draw_seats("maria", 4, random.Random(1))
    assert (late.seated_hand, early.seated_hand) == (7, 7)
    assert len(floor.seating.tables["t1"].seats) == 4
    # Dora never came: hand 7 still runs, no hand has been dealt to her seat.
    _, updates = floor.seating_desk.no_show(late.id, "$50", "maria", 5)
    assert (late.no_show_at, late.refund, late.table, late.seat) == (5, "$50", None, None)
    assert not late.playing and len(floor.seating.tables["t1"].seats) == 3
    assert not floor.bustouts  # no bust-out: she never played
    [roster] = [u["roster"] for u in updates if u["kind"] == "roster"]
    assert (roster["entrants"], roster["entries"], roster["paid_entries"],
            roster["no_shows"], roster["left"]) == (4, 4, 3, 1, 3)
    assert late.id not in floor.roster.places()  # no place: a line "no-show"
    rows = list(csv.reader(io.StringIO(floor.roster.finishing_csv())))
    assert rows[-1][:2] == ["no-show", "Dora"] and rows[-1][-1] == "$50"
    with pytest.raises(RosterError, match="Dora is a no-show already"):
        floor.seating_desk.no_show(late.id, "$50", "maria", 6)
    with pytest.raises(RosterError, match="Dora was removed as a no-show"):
        floor.roster.reentry(late.id, 6)
    # Hand 8 starts at Emil's table: he was dealt in, he has played.
    floor.on_state("t1", table_state(seats=[1, 2, early.seat], hand=8), 7)
    with pytest.raises(RosterError, match=r"Emil has played \(table t1 has started hand 8"):
        floor.seating_desk.no_show(early.id, "$50", "maria", 8)
    anna = next(p for p in floor.roster.players.values() if p.name == "Anna")
    with pytest.raises(RosterError, match=r"Anna has played \(they were seated"):
        floor.seating_desk.no_show(anna.id, "$50", "maria", 9)  # seated before hands counted
    waiting = floor.roster.add("Finn", 10)  # never drawn: never dealt in
    floor.seating_desk.no_show(waiting.id, "$50", "maria", 11)
    floor.seating_desk.bust("t1", 2, "maria", 12)
    floor.seating_desk.bust("t1", early.seat, "maria", 13)
    assert floor.roster.winner() is anna  # the no-shows are no players left


def test_alternates_wait_in_order_and_the_first_takes_a_seat_that_opens():
    floor = _seated_floor({"t1": {1: "Anna", 2: "Bob"}})
    floor.on_state("t1", table_state(seats=[1, 2], hand=4), 2)
    roster = floor.roster
    roster.add_alternate("Xena", 3)
    roster.add_alternate("Yuri", 4)
    with pytest.raises(RosterError, match="Xena is alternate 1"):
        roster.add_alternate("xena", 5)
    with pytest.raises(RosterError, match="Yuri is alternate 2: they are entered when a seat"):
        roster.add("Yuri", 5)  # not entered twice
    with pytest.raises(RosterError, match="Anna has entered already"):
        roster.add_alternate("Anna", 5)
    assert [a["name"] for a in roster.view()["alternates"]] == ["Xena", "Yuri"]
    floor.seating_desk.bust("t1", 2, "maria", 6)
    xena, updates = floor.seating_desk.seat_alternate("t1", 2, "maria", 7)
    assert (xena.name, xena.table, xena.seat, xena.seated_hand) == ("Xena", "t1", 2, 4)
    assert floor.seating.tables["t1"].seats == [1, 2]  # the table seats her at its next hand
    assert [a.name for a in roster.alternates] == ["Yuri"]
    assert any(u["kind"] == "roster" for u in updates)
    # A seat taken again, or at a table not online: nobody is moved up.
    assert floor.seating_desk.seat_alternate("t1", 2, "maria", 8) == (None, [])
    assert roster.drop_alternate(1).name == "Yuri" and not roster.alternates
    assert floor.seating_desk.seat_alternate("t1", 3, "maria", 9) == (None, [])
    with pytest.raises(RosterError, match="no alternate 1: the list has 0"):
        roster.drop_alternate(1)
    roster.alternates_closed = "late registration closed at the start of level 3"
    with pytest.raises(RosterError, match="the alternates list is closed: late registration"):
        roster.add_alternate("Zoe", 10)


def test_an_import_names_the_alternate_a_line_repeats():
    roster = Roster()
    roster.add_alternate("Xena", 1)
    with pytest.raises(RosterError, match="line 2: Xena is alternate 1: they are entered when"):
        roster.import_csv("name\nxena\n", 2)
