"""What dealers actually do: a tap before the first card, a flop of five cards, a player who
sits down between the button and the small blind, a floor call under a house that stops the
clock for disputes."""

from __future__ import annotations

import pytest

from houses.loaders import builtin_names
from tests.conftest import of_type, run

SETUP = {"type": "setup", "game": "holdem", "seats": [1, 2, 4, 6], "button": 6}
HOLE = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s"]


def _deal(t0: float, hole=HOLE, streets=(["2c", "3c", "4c", "5c"], ["6c", "7c"], ["8c", "9c"])):
    lines = [{"type": "deck_in", "deck": "R1", "t": t0}]
    t = t0 + 1
    for card in hole:
        lines.append({"type": "card", "card": card, "t": t})
        t += 0.4
    for street in streets:
        t += 25
        lines.append({"type": "button", "gesture": "tap", "t": t})
        for card in street:
            t += 0.4
            lines.append({"type": "card", "card": card, "t": t})
    lines.append({"type": "button", "gesture": "tap", "t": t + 25})
    lines.append({"type": "button", "gesture": "double_tap", "t": t + 45})
    return lines


def _records(events):
    return [{k: e[k] for k in ("hand", "outcome", "hole", "board", "burns")}
            for e in of_type(events, "hand.ended")]


@pytest.mark.parametrize("profile", builtin_names())
def test_a_tap_before_the_first_hole_card_is_ignored_under_every_profile(profile):
    clean = run([SETUP, *_deal(0)], profile)
    lines = _deal(0)
    lines.insert(1, {"type": "button", "gesture": "tap", "t": 0.5})
    stray = run([SETUP, *lines], profile)
    assert of_type(stray, "irregularity") == of_type(clean, "irregularity") == []
    assert _records(stray) == _records(clean)


@pytest.mark.parametrize("profile", builtin_names())
def test_a_double_tap_after_the_next_deck_went_in_early_does_not_touch_the_new_hand(profile):
    first = _deal(0)[:-1]  # the dealer has not double-tapped when the next deck goes in
    second = _deal(200)
    early = [*second[:1], {"type": "button", "gesture": "tap", "t": 200.3},
             {"type": "button", "gesture": "double_tap", "t": 200.5}, *second[1:]]
    events = run([SETUP, *first, *early], profile)
    assert of_type(events, "irregularity") == []
    assert [e["outcome"] for e in of_type(events, "hand.ended")] == ["complete", "complete"]
    assert of_type(events, "hand.ended")[1]["draws"] == 8 + 4 + 2 + 2


def test_dealers_choice_taps_after_the_deck_went_in_still_declare_this_hands_game():
    omaha = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "5s", "4s", "3s", "2s",
             "Ah", "Kh", "Qh"]
    lines = _deal(0, hole=omaha, streets=(["2c", "3c", "4c", "5c"], ["6c", "7c"],
                                          ["8c", "9c"]))
    taps = [{"type": "button", "gesture": "tap", "t": 0.2 + 0.1 * i} for i in range(4)]
    events = run([SETUP, lines[0], *taps, *lines[1:]], "dealers-choice")
    declared = of_type(events, "game.declared")
    assert [(d["label"], d.get("hand")) for d in declared] == [
        ("HOLD'EM LIMIT", None), ("HOLD'EM LIMIT", 1), ("HOLD'EM POT LIMIT", 1),
        ("HOLD'EM NO LIMIT", 1), ("OMAHA HI LIMIT", 1)]
    assert of_type(events, "irregularity") == []
    ended = of_type(events, "hand.ended")[0]
    assert all(len(cards) == 4 for cards in ended["hole"].values())
    assert of_type(events, "hand.record")[0]["game"] == "omaha"


def _five_card_flop(extra=("Kc",)):
    lines = _deal(0, streets=())[:-2]
    t = lines[-1]["t"] + 25
    lines.append({"type": "button", "gesture": "tap", "t": t})
    for card in ["2c", "3c", "4c", "5c", "6c", *extra]:
        t += 0.4
        lines.append({"type": "card", "card": card, "t": t})
    # The floor's ruling: the flop goes back, reshuffle, a new flop of three without a burn.
    t += 10
    lines += [{"type": "deck_out", "t": t}, {"type": "deck_in", "deck": "R1", "t": t + 10}]
    t += 12
    for card in ["4c", "Tc", "Jc"]:
        lines.append({"type": "card", "card": card, "t": t})
        t += 0.4
    for street in (["7c", "8c"], ["9c", "Qc"]):
        t += 25
        lines.append({"type": "button", "gesture": "tap", "t": t})
        for card in street:
            t += 0.4
            lines.append({"type": "card", "card": card, "t": t})
    lines += [{"type": "button", "gesture": "tap", "t": t + 25},
              {"type": "button", "gesture": "double_tap", "t": t + 45}]
    return [SETUP, *lines]


@pytest.mark.parametrize("profile", ["roberts-rules", "corner-pocket", "mikes-poker-tables",
                                     "dealers-choice"])
@pytest.mark.parametrize("extra", [("Kc",), ("Kc", "Ac")], ids=["five", "six"])
def test_a_flop_of_five_or_more_is_one_ruling_then_turn_and_river_are_right(profile, extra):
    events = run(_five_card_flop(extra), profile)
    rulings = [(r["action"], r.get("reason")) for r in of_type(events, "ruling")]
    assert rulings == [("redeal_flop", "too_many_board_cards")]
    ended = of_type(events, "hand.ended")[0]
    assert ended["outcome"] == "complete"
    assert ended["board"] == ["4c", "Tc", "Jc", "8c", "Qc"]
    assert ended["burns"] == ["2c", "7c", "9c"]
    overdealt = [e for e in of_type(events, "card") if e.get("overdealt")]
    assert [e["card"] for e in overdealt] == list(extra)


@pytest.mark.parametrize("profile", ["tda-2024", "scpc-2010", "lppl"])
def test_a_five_card_flop_cannot_be_scrambled_so_it_is_redealt(profile):
    events = run(_five_card_flop(), profile)
    rulings = [(r["action"], r.get("rule")) for r in of_type(events, "ruling")]
    # The four-card scramble (TDA 39) first; the fifth card makes it a redeal, said once.
    assert rulings == [("scramble_flop", "too_many_flop_cards"), ("redeal_flop", None)]
    assert of_type(events, "ruling")[1]["returned"] == ["3c", "4c", "5c", "6c", "Kc"]
    ended = of_type(events, "hand.ended")[0]
    assert ended["board"] == ["4c", "Tc", "Jc", "8c", "Qc"]
    assert ended["burns"] == ["2c", "7c", "9c"]
    assert "flop_unresolved" not in ended


# -- a player who sits down between the button and the small blind ---------------------------

WAITS = {"tda-2024": True, "roberts-rules": True, "corner-pocket": True, "scpc-2010": True,
         "lppl": True, "dealers-choice": True, "mikes-poker-tables": False}


def _short_deal(t0, hole):
    """A hand of hole cards only, ended by the double tap."""
    lines = [{"type": "deck_in", "deck": "R1", "t": t0}]
    lines += [{"type": "card", "card": card, "t": t0 + 1 + 0.4 * i} for i, card in enumerate(hole)]
    lines.append({"type": "button", "gesture": "double_tap", "t": t0 + 60})
    return lines


@pytest.mark.parametrize("profile", sorted(WAITS))
def test_a_new_player_between_the_button_and_the_small_blind_waits_where_the_house_says(profile):
    # Hand 1: button 1, small blind 3, big blind 5. A player sits down in seat 4, which in
    # hand 2 (button 3, small blind 5, big blind 7) lies between the button and the blind.
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 3, 5, 7], "button": 1},
             *_short_deal(0, HOLE), {"type": "seats", "seats": [1, 3, 4, 5, 7], "t": 70},
             *_short_deal(100, HOLE if WAITS[profile] else [*HOLE, "6s", "5s"]),
             *_short_deal(200, [*HOLE, "6s", "5s"])]
    events = run(lines, profile)
    assert of_type(events, "irregularity") == []
    started = of_type(events, "hand.started")
    assert [(s["button"], s["small_blind"], s["big_blind"]) for s in started] == [
        (1, 3, 5), (3, 5, 7), (5, 7, 1)]
    ended = of_type(events, "hand.ended")
    if WAITS[profile]:
        assert started[1]["waiting"] == [4] and started[1]["seats"] == [1, 3, 5, 7]
        assert started[1]["waiting_rule"].startswith(("TDA", "Robert's", "seed"))
        # Dealt around seat 4: the cards go to the seats that play, none shifted.
        assert ended[1]["hole"] == {"5": ["As", "Ts"], "7": ["Ks", "9s"], "1": ["Qs", "8s"],
                                    "3": ["Js", "7s"]}
    else:  # seed 003: dealt in at once, taking over the position's obligations
        assert "waiting" not in started[1] and started[1]["seats"] == [1, 3, 4, 5, 7]
        assert ended[1]["hole"]["4"] == ["As", "9s"]  # first to the left of the button
    # By hand 3 the button has passed seat 4: dealt in everywhere.
    assert "waiting" not in started[2] and "4" in ended[2]["hole"]


def test_where_each_house_forbids_coming_in():
    from controller.seating import Positions, must_wait

    # Button 3, small blind 6, big blind 8 (seats 4 and 5 empty at the last hand).
    positions = Positions(3, 6, 8, (1, 3, 4, 5, 6, 8))
    zone = {rule: [seat for seat in range(1, 11) if must_wait(rule, positions, seat)]
            for rule in ("wait_between_sb_and_button", "wait_between_button_and_big_blind",
                         "wait_on_button_or_small_blind", "deal_in_immediately")}
    assert zone == {"wait_between_sb_and_button": [4, 5],
                    "wait_between_button_and_big_blind": [4, 5, 6, 7],
                    "wait_on_button_or_small_blind": [3, 4, 5, 6],
                    "deal_in_immediately": []}
    # Heads-up the button is the small blind: nobody is "between" them.
    assert not must_wait("wait_between_sb_and_button", Positions(2, 2, 7, (2, 7)), 1)


def test_a_waiting_player_still_waits_on_the_redeal_after_a_misdeal():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 3, 5, 7], "button": 1},
             *_short_deal(0, HOLE), {"type": "seats", "seats": [1, 3, 4, 5, 7], "t": 70},
             {"type": "deck_in", "deck": "R1", "t": 100},
             {"type": "card", "card": "As", "face": "up", "t": 101},  # misdeal
             *_short_deal(200, HOLE)]
    events = run(lines, "tda-2024")
    started = of_type(events, "hand.started")
    assert [(s["hand"], s["button"], s.get("waiting")) for s in started] == [
        (1, 1, None), (2, 3, [4]), (2, 3, [4])]
    assert of_type(events, "hand.ended")[-1]["outcome"] == "complete"


# -- seed 003: the timer is stopped during disputes that need the tournament director --------

def _floor_call_lines(clock_line):
    return [SETUP, clock_line, *_deal(10)[:5],
            {"type": "button", "gesture": "long_hold", "t": 20},
            {"type": "clock", "action": "resume", "t": 320}]


def test_under_mikes_a_floor_call_pauses_the_tables_clock_until_the_floor_resumes_it():
    events = run(_floor_call_lines({"type": "clock", "structure": "tda-2024", "t": 0}),
                 "mikes-poker-tables")
    states = [(e["state"], e.get("reason"), e["t"]) for e in of_type(events, "clock")]
    assert states == [("running", None, 0), ("paused", "floor_call", 20),
                      ("running", None, 320)]
    assert of_type(events, "clock")[1]["elapsed"] == 20.0  # the dispute's 300 s not counted
    assert not of_type(events, "clock.hold")  # the table's own clock: nothing to ask the hub


def test_under_mikes_a_ruling_that_calls_the_floor_pauses_the_clock_too():
    lines = [SETUP, {"type": "clock", "structure": "tda-2024", "t": 0}, *_deal(10)[:5],
             {"type": "button", "gesture": "tap", "t": 40}]  # hole cards missing: call_floor
    events = run(lines, "mikes-poker-tables")
    assert [r["action"] for r in of_type(events, "ruling")] == ["call_floor"]
    assert [(e["state"], e.get("reason")) for e in of_type(events, "clock")][-1] == (
        "paused", "floor_call")


def test_elsewhere_the_clock_runs_through_a_floor_call():
    events = run(_floor_call_lines({"type": "clock", "structure": "tda-2024", "t": 0}),
                 "tda-2024")
    assert [e["state"] for e in of_type(events, "clock")] == ["running"]


def test_when_the_venue_clock_rules_the_table_asks_the_hub_to_pause_it():
    sync = {"type": "clock", "action": "sync", "structure": "tda-2024", "elapsed": 100.0,
            "running": True, "t": 0}
    events = run(_floor_call_lines(sync)[:-1], "mikes-poker-tables")
    (hold,) = of_type(events, "clock.hold")
    assert (hold["reason"], hold["hand"], hold["t"]) == ("floor_call", 1, 20)
    assert hold["source"] == "seed 003, Timer use and breaks"
    assert of_type(events, "clock")[-1]["state"] == "paused"
