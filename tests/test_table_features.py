"""Announcements, hand-for-hand, dealer's choice, dealer statistics, the venue clock."""

from __future__ import annotations

from tests.conftest import of_type, run

SETUP = {"type": "setup", "game": "holdem", "seats": [1, 2, 3], "button": 1}


def _hand(t, cards=("As", "Ks", "Qs", "Js", "Ts", "9s"), end=True):
    lines = [{"type": "deck_in", "deck": "R1", "t": t}]
    for i, card in enumerate(cards):
        lines.append({"type": "card", "card": card, "t": t + 1 + i * 0.4})
    if end:
        lines.append({"type": "button", "gesture": "double_tap", "t": t + 30})
    return lines


def test_structures_announce_colour_ups_late_registration_and_add_ons():
    for structure, level, text in (("lppl", 3, "Latecomers can no longer join"),
                                   ("lppl", 6, "Chip-up: all 25 and 50"),
                                   ("dealers-choice", 5, "Add-ons are closed"),
                                   ("corner-pocket", 2, "Colour up: red (50) out")):
        events = run([SETUP, {"type": "clock", "structure": structure, "t": 0},
                      {"type": "clock", "action": "pause", "t": 100000}])
        announcements = [e for e in of_type(events, "announcement") if e["level"] == level]
        assert any(e["text"].startswith(text) for e in announcements), (structure, level)


def test_hand_for_hand_waits_between_hands_until_released():
    lines = [SETUP, *_hand(0, end=False), {"type": "hand_for_hand", "state": "on", "t": 5},
             {"type": "button", "gesture": "double_tap", "t": 40},
             {"type": "hand_for_hand", "state": "release", "t": 60}, *_hand(70),
             *_hand(200)]
    states = [e["state"] for e in of_type(run(lines), "hand_for_hand")]
    assert states == ["playing", "waiting", "released", "waiting", "dealt_early", "waiting"]


def test_dealers_choice_tap_cycles_the_game_for_the_next_hand():
    omaha = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "5s", "4s", "3s"]
    lines = [SETUP, {"type": "button", "gesture": "tap", "t": 1}] + [
        {"type": "button", "gesture": "tap", "t": 2 + i} for i in range(3)] + _hand(10, omaha)
    events = run(lines, "dealers-choice")
    declared = of_type(events, "game.declared")
    assert [d["label"] for d in declared] == ["HOLD'EM LIMIT", "HOLD'EM POT LIMIT",
                                              "HOLD'EM NO LIMIT", "OMAHA HI LIMIT"]
    started = of_type(events, "hand.started")[0]
    assert (started["game"], started["betting"]) == ("omaha", "limit")
    assert not of_type(events, "irregularity")
    # No declaration for the next hand: Hold'em Limit, as seed 004 says.
    events = run(lines + _hand(100), "dealers-choice")
    assert of_type(events, "game.declared")[-1] == {
        "type": "game.declared", "game": "holdem", "betting": "limit",
        "label": "HOLD'EM LIMIT", "default": True, "t": 100}
    assert of_type(events, "hand.started")[-1]["game"] == "holdem"


def test_dealers_choice_flags_a_deal_that_contradicts_the_declared_game():
    lines = [SETUP] + [{"type": "button", "gesture": "tap", "t": 1 + i} for i in range(4)]
    lines += [*_hand(10, end=False), {"type": "button", "gesture": "tap", "t": 40}]
    irregularity = of_type(run(lines, "dealers-choice"), "irregularity")[0]
    assert irregularity["kind"] == "wrong_game"
    assert irregularity["declared"] == "OMAHA HI LIMIT"


def test_taps_between_hands_do_nothing_where_the_game_is_fixed():
    events = run([SETUP, {"type": "button", "gesture": "tap", "t": 1}], "tda-2024")
    assert not of_type(events, "game.declared")


def test_hands_per_hour_per_dealer():
    lines = [SETUP, {"type": "dealer", "dealer": "D17", "t": 0}]
    for i in range(6):
        lines += _hand(10 + i * 120)
    lines.append({"type": "dealer", "dealer": "D03", "t": 900})
    events = run(lines)
    summary = of_type(events, "dealer.summary")[0]
    assert summary["dealer"] == "D17" and summary["hands"] == 6
    assert summary["hands_per_hour"] == 24.0  # 6 hands in 15 minutes
    assert all(e["dealer"] == "D17" for e in of_type(events, "hand.ended"))
    cards = of_type(events, "card")
    assert cards and all(e["dealer"] == "D17" for e in cards)  # in every event, not just some
    assert not any("dealer" in e for e in of_type(run(lines[:1] + lines[2:12]), "card"))


def test_the_table_follows_the_venue_clock():
    lines = [SETUP, {"type": "clock", "structure": "corner-pocket", "t": 0},
             # The hub says the venue clock is 40 minutes in (level 3), 5 s into our run.
             {"type": "clock", "action": "sync", "structure": "corner-pocket", "elapsed": 2400,
              "t": 5},
             *_hand(10)]
    events = run(lines)
    synced = of_type(events, "clock")[-1]
    assert synced["state"] == "synced" and synced["drift"] == 2395.0
    assert [e["level"] for e in of_type(events, "level")] == [1, 3]
    assert of_type(events, "hand.started")[0]["level"] == 3


def test_a_sync_starts_the_clock_when_none_runs_and_can_pause_it():
    lines = [SETUP, {"type": "clock", "action": "sync", "structure": "lppl", "elapsed": 100,
                     "running": False, "t": 0}, *_hand(5000)]
    events = run(lines)
    assert of_type(events, "level")[0]["level"] == 1
    assert of_type(events, "hand.started")[0]["level"] == 1  # paused: still level 1
