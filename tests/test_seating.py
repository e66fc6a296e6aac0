"""Seats, the button and the blinds between hands (TDA 32 and the seeds' dead-button rules)."""

from __future__ import annotations

import pytest

from controller.inputs import InputError, input_to_dict, parse_input
from controller.seating import (
    Positions,
    SeatingError,
    initial_positions,
    next_occupied,
    next_positions,
)
from tests.conftest import of_type, run


def test_left_of_wraps_after_ten():
    assert next_occupied((1, 4, 9), 9) == 1
    assert next_occupied((1, 4, 9), 4) == 9
    assert next_occupied((2, 10), 10) == 2


def test_deal_starts_left_of_the_button():
    p = initial_positions((1, 2, 4, 6), 6)
    assert (p.small_blind, p.big_blind) == (1, 2)
    assert p.deal_order() == [1, 2, 4, 6]


def test_heads_up_button_posts_small_blind_and_other_is_dealt_first():
    p = initial_positions((3, 8), 8)
    assert (p.button, p.small_blind, p.big_blind) == (8, 8, 3)
    assert p.deal_order() == [3, 8]


def test_moving_button_goes_to_next_player():
    p = initial_positions((1, 3, 5, 7), 1)
    q = next_positions(p, (1, 5, 7), "moving_button")  # seat 3 (the small blind) busted
    assert (q.button, q.small_blind, q.big_blind) == (5, 7, 1)


def test_dead_button_after_big_blind_busts():
    # Corner Pocket Blinds D: the next hand no small blind; then the button on the empty seat.
    p = initial_positions((1, 3, 5, 7), 1)  # button 1, SB 3, BB 5
    q = next_positions(p, (1, 3, 7), "dead_button")  # BB (seat 5) busted
    assert (q.button, q.big_blind) == (3, 7)
    assert not q.small_blind_posted and q.small_blind == 5
    r = next_positions(q, (1, 3, 7), "dead_button")
    assert r.button == 5 and r.dead_button
    assert (r.small_blind, r.big_blind) == (7, 1)
    assert r.deal_order() == [7, 1, 3]


def test_dead_button_after_small_blind_busts():
    # Corner Pocket Blinds E: the button moves into the eliminated small blind's seat.
    p = initial_positions((1, 3, 5, 7), 1)  # button 1, SB 3, BB 5
    q = next_positions(p, (1, 5, 7), "dead_button")
    assert q.button == 3 and q.dead_button
    assert (q.small_blind, q.big_blind) == (5, 7)


def test_dead_button_after_both_blinds_bust():
    # Corner Pocket Blinds F: button to the former small blind's seat, no small blind; then to
    # the former big blind's seat.
    p = initial_positions((1, 3, 5, 7, 9), 1)  # button 1, SB 3, BB 5
    q = next_positions(p, (1, 7, 9), "dead_button")
    assert q.button == 3 and not q.small_blind_posted and q.big_blind == 7
    r = next_positions(q, (1, 7, 9), "dead_button")
    assert r.button == 5 and (r.small_blind, r.big_blind) == (7, 9)


def test_mikes_button_stays_when_small_blind_busts():
    # Seed 003: "When the small blind busts out ... the button does not move."
    p = initial_positions((1, 3, 5, 7), 1)
    q = next_positions(p, (1, 5, 7), "dead_button_button_stays_on_sb_bust")
    assert (q.button, q.small_blind, q.big_blind) == (1, 5, 7)
    # ...but a big blind's bust still leads to a dead button the hand after.
    q = next_positions(p, (1, 3, 7), "dead_button_button_stays_on_sb_bust")
    r = next_positions(q, (1, 3, 7), "dead_button_button_stays_on_sb_bust")
    assert r.button == 5 and r.dead_button


def test_going_heads_up_the_player_due_the_big_blind_gets_it():
    p = initial_positions((2, 5, 8), 2)  # button 2, SB 5, BB 8
    q = next_positions(p, (2, 8), "dead_button")  # seat 5 busted
    assert q.big_blind == 2 and q.button == q.small_blind == 8


def test_bad_seating():
    with pytest.raises(SeatingError):
        initial_positions((1,), 1)
    with pytest.raises(SeatingError):
        initial_positions((1, 2), 3)
    with pytest.raises(SeatingError):
        initial_positions((1, 11), 1)
    with pytest.raises(SeatingError):
        initial_positions((1, 1, 2), 1)
    assert isinstance(initial_positions((1, 2), 1), Positions)


def _hand(t, deck="R1"):
    return [{"type": "deck_in", "deck": deck, "t": t},
            {"type": "button", "gesture": "double_tap", "t": t + 60}]


def test_table_moves_the_button_and_defers_seat_changes_to_the_next_hand():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 3, 5, 7], "button": 1},
             {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "seats", "seats": [1, 3, 7], "t": 10},  # seat 5 (big blind) busts
             {"type": "button", "gesture": "double_tap", "t": 60},
             *_hand(100, "B2"), *_hand(200)]
    events = run(lines, "tda-2024")
    seating = of_type(events, "seating")
    assert seating[0]["effective"] == "next_hand"
    started = of_type(events, "hand.started")
    assert [(s["hand"], s["button"], s["small_blind"], s["big_blind"], s["dead_button"])
            for s in started] == [(1, 1, 3, 5, False), (2, 3, None, 7, False),
                                  (3, 5, 7, 1, True)]


def test_void_hand_keeps_the_button():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2, 3], "button": 1},
             {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "card", "card": "As", "t": 1}, {"type": "card", "card": "As", "t": 1.5},
             *_hand(100, "B2")]
    events = run(lines)
    assert of_type(events, "hand.ended")[0]["outcome"] == "void"
    assert [s["button"] for s in of_type(events, "hand.started")] == [1, 1]
    assert [s["hand"] for s in of_type(events, "hand.started")] == [1, 2]


def test_a_seating_change_says_who_moves_between_tables_and_refuses_a_wrong_move():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 3, 5, 7], "button": 1},
             {"type": "seats", "seats": [1, 3, 7, 8], "t": 5,
              "moves": [{"seat": 5, "to_table": "t2", "to_seat": 4},
                        {"seat": 8, "from_table": "t3", "from_seat": 2}]}]
    (seating,) = of_type(run(lines), "seating")
    assert seating["effective"] == "now" and seating["moves"] == lines[1]["moves"]
    with pytest.raises(InputError) as refused:
        parse_input({"type": "seats", "seats": [1, 3, 5],
                     "moves": [{"seat": 5, "to_table": "t2", "to_seat": 4},  # still seated
                               {"seat": 9, "from_table": "t3", "from_seat": 2},  # not seated
                               {"seat": 3, "to_table": "../x", "to_seat": 1},
                               {"seat": 11, "to_table": "t2", "to_seat": 1},
                               {"seat": 1, "to_table": "t2"}]})
    assert [p.split(":")[0] for p in refused.value.problems] == [
        f"moves[{i}]" for i in range(5)]
    assert "gives up the seat" in refused.value.problems[0]
    assert "takes a seat" in refused.value.problems[1]
    # No move: the seating change as before, with no moves written.
    plain = parse_input({"type": "seats", "seats": [1, 2]})
    assert input_to_dict(plain) == {"type": "seats", "seats": [1, 2]}


def test_roberts_tournament_rule_seats_a_newcomer_at_once_except_on_the_button_or_small_blind():
    """Robert's Rules' tournament section (not its cash-game "Button and Blind Use"): new
    players are dealt in at once unless they sit down in the small blind or on the button;
    seed 004 defers to Robert's, seed 003 rewrote the sentence to deal them in at once."""
    from controller.seating import Positions, must_wait
    from houses.loaders import load_profile

    rule = load_profile("roberts-rules").choice("new_player")
    assert rule == "wait_on_button_or_small_blind"
    assert load_profile("dealers-choice").choice("new_player") == rule
    assert load_profile("mikes-poker-tables").choice("new_player") == "deal_in_immediately"
    assert "Tournaments" in load_profile("roberts-rules").rules["new_player"].source
    # Button 3, small blind 5 (seat 4 empty before), big blind 6: a newcomer on the button or
    # in the small blind waits, one in the big blind or elsewhere is dealt in.
    positions = Positions(button=3, small_blind=5, big_blind=6, seats=(1, 2, 3, 5, 6, 8))
    assert [seat for seat in (3, 4, 5, 6, 8) if must_wait(rule, positions, seat)] == [3, 4, 5]
