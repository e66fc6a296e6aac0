"""The table core's edges: card spelling, re-reads, time, gestures, games and hand records
(that the core does no I/O is an import-linter contract: ``tests/test_architecture.py``)."""

from __future__ import annotations

import pytest

from controller.cards import CardError, parse_card, parse_ndef_text
from controller.events import HandEnded
from controller.record import hand_name, hand_record
from tests.conftest import of_type, run

SETUP = {"type": "setup", "game": "holdem", "seats": [1, 2, 4, 6], "button": 6}
HOLE = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s"]


def _deal(cards, t=1.0, step=0.4, **extra):
    lines = []
    for card in cards:
        lines.append({"type": "card", "card": card, "t": round(t, 2), **extra})
        t += step
    return lines


def test_card_spelling():
    assert parse_card("as") == "As"
    assert parse_card("10h") == "Th"
    assert parse_card("jk") == "JK"
    for bad in ("1s", "Ax", "A", "Asd", ""):
        with pytest.raises(CardError):
            parse_card(bad)
    tagged = parse_ndef_text("B2:Td")
    assert (tagged.deck, tagged.card) == ("B2", "Td")
    with pytest.raises(CardError):
        parse_ndef_text("B2-Td")


def test_a_card_read_twice_as_it_passes_is_one_card():
    lines = [SETUP, {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "card", "card": "As", "t": 1.0}, {"type": "card", "card": "As", "t": 1.1},
             {"type": "card", "card": "Ks", "t": 1.5}]
    cards = of_type(run(lines), "card")
    assert [(c["card"], c["seat"]) for c in cards] == [("As", 1), ("Ks", 2)]
    assert not of_type(run(lines), "irregularity")


def test_the_same_card_later_is_a_duplicate():
    lines = [SETUP, {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "card", "card": "As", "t": 1.0}, {"type": "card", "card": "As", "t": 2.0}]
    assert of_type(run(lines), "irregularity")[0]["kind"] == "duplicate_card"


def test_cards_resolved_from_ndef_and_enrolled_tags():
    lines = [{**SETUP, "tags": {"04:a1:b2:c3": "R1:Ks"}},
             {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "card", "ndef": "R1:As", "t": 1.0},
             {"type": "card", "tag": "04A1B2C3", "t": 1.4}]
    cards = of_type(run(lines), "card")
    assert [(c["card"], c.get("tag")) for c in cards] == [("As", None), ("Ks", "04A1B2C3")]


def test_without_times_everything_happens_at_once():
    lines = [SETUP, {"type": "deck_in", "deck": "R1"}] + [
        {"type": "card", "card": c} for c in HOLE] + [{"type": "card", "card": "2c"}]
    kinds = [e["kind"] for e in of_type(run(lines), "irregularity")]
    assert kinds == ["extra_card"]  # no pause could be seen: the card is within the deal


def test_deal_gap_separates_extra_from_premature():
    base = [SETUP, {"type": "deck_in", "deck": "R1", "t": 0}, *_deal(HOLE)]
    extra = run([*base, {"type": "card", "card": "2c", "t": 5.0}], deal_gap=3.0)
    premature = run([*base, {"type": "card", "card": "2c", "t": 7.0}], deal_gap=3.0)
    assert of_type(extra, "irregularity")[0]["kind"] == "extra_card"
    assert of_type(premature, "irregularity")[0]["kind"] == "premature_card"
    wide = run([*base, {"type": "card", "card": "2c", "t": 7.0}], deal_gap=5.0)
    assert of_type(wide, "irregularity")[0]["kind"] == "extra_card"


def test_cards_with_no_hand_are_ignored_not_lost():
    events = run([SETUP, {"type": "card", "card": "As", "t": 1}])
    assert of_type(events, "card.ignored")[0]["card"] == "As"


def test_next_deck_ends_the_hand_and_a_reshuffle_reinsertion_does_not():
    lines = [SETUP, {"type": "deck_in", "deck": "R1", "t": 0}, *_deal(HOLE),
             {"type": "deck_in", "deck": "R1", "t": 100}]
    ended = of_type(run(lines), "hand.ended")
    assert ended[0]["ended_by"] == "next_deck" and ended[0]["outcome"] == "complete"


def test_omaha_deals_four_cards_and_records_high_and_low():
    seats = {"type": "setup", "game": "omaha8", "seats": [3, 7], "button": 7}
    hole = ["Ah", "Kd", "2h", "Qd", "3c", "Qs", "4s", "Js"]
    lines = [seats, {"type": "deck_in", "deck": "R1", "t": 0}, *_deal(hole),
             {"type": "button", "gesture": "tap", "t": 30},
             *_deal(["9d", "5h", "8c", "Td"], t=31),
             {"type": "button", "gesture": "tap", "t": 60}, *_deal(["9c", "7d"], t=61),
             {"type": "button", "gesture": "tap", "t": 90}, *_deal(["9h", "Kh"], t=91),
             {"type": "button", "gesture": "double_tap", "t": 120}]
    events = run(lines)
    assert not of_type(events, "irregularity")
    record = of_type(events, "hand.record")[0]
    assert record["hole"] == {"3": ["Ah", "2h", "3c", "4s"], "7": ["Kd", "Qd", "Qs", "Js"]}
    assert record["board"] == ["5h", "8c", "Td", "7d", "Kh"]
    best = record["best"]
    assert best["3"]["low"].startswith("8-7-5-2-A low")
    assert best["7"]["low"] is None
    assert best["7"]["high"] == "One pair (KdQd8cTdKh)"  # exactly two hole cards in Omaha
    # In words, cards as a floor reads them; seat 3's ace-high hand loses high, wins low.
    assert best["7"]["high_name"] == "pair of kings"
    assert best["7"]["high_cards"] == ["Kd", "Kh", "Qd", "Td", "8c"]
    assert best["3"]["high_name"] == "ace high" and best["3"]["low_name"] == "8-7-5-2-A low"
    assert record["best_hand"] == {"high": [7], "low": [3]}


@pytest.mark.parametrize(("label", "cards", "said"), [
    ("High card", ["Kd", "9c", "7h", "4s", "2d"], "king high"),
    ("One pair", ["6d", "6h", "Ks", "9c", "2d"], "pair of sixes"),
    ("Two pair", ["6d", "6h", "Ks", "Kc", "8d"], "two pair, kings and sixes"),
    ("Three of a kind", ["Qd", "Qh", "Qs", "9c", "2d"], "three queens"),
    ("Straight", ["Ad", "2h", "3s", "4c", "5d"], "straight, five high"),
    ("Straight", ["Ad", "Kh", "Qs", "Jc", "Td"], "straight, ace high"),
    ("Flush", ["Ah", "9h", "7h", "4h", "2h"], "flush, ace high"),
    ("Full house", ["8d", "8h", "8s", "Kc", "Kd"], "full house, eights full of kings"),
    ("Four of a kind", ["9d", "9h", "9s", "9c", "2d"], "four nines"),
    ("Straight flush", ["9s", "8s", "7s", "6s", "5s"], "straight flush, nine high"),
    ("Straight flush", ["As", "Ks", "Qs", "Js", "Ts"], "royal flush"),
])
def test_a_made_hand_is_named_as_a_floor_says_it(label, cards, said):
    assert hand_name(label, cards) == said


def test_the_best_hand_is_every_seat_that_ties_for_it():
    record = hand_record(
        HandEnded(hand=1, outcome="complete", hole={"1": ["Ad", "Tc"], "2": ["Ah", "Td"],
                                                    "3": ["Kd", "Kc"]},
                  board=["Ks", "Qs", "Js", "9h", "2c"], burns=[], scrap=[], out=[], level=None,
                  button=1, draws=13, t=1.0),
        "holdem", [1, 2, 3], 1, flop_resolved=True).to_json()
    assert record["best_hand"] == {"high": [1, 2]}  # two ace-high straights split
    assert record["best"]["3"]["high_name"] == "three kings"


def test_hand_record_is_computed_only_at_hand_end():
    lines = [SETUP, {"type": "deck_in", "deck": "R1", "t": 0}, *_deal(HOLE)]
    assert not of_type(run(lines), "hand.record")


def test_gestures_are_configurable():
    lines = [SETUP, {"type": "button", "gesture": "long_hold", "t": 5}]
    assert of_type(run(lines), "floor.called")
    assert not of_type(run(lines, gestures={"long_hold": "ignore"}), "floor.called")


def test_dealer_sign_in_is_carried_into_hands():
    lines = [SETUP, {"type": "dealer", "dealer": "D17", "t": 0},
             {"type": "deck_in", "deck": "R1", "t": 1}]
    assert of_type(run(lines), "hand.started")[0]["dealer"] == "D17"


def test_shoe_link_lost_between_hands_is_not_an_irregularity():
    lines = [SETUP, {"type": "shoe", "state": "lost", "t": 1}, {"type": "shoe", "state": "ok",
                                                                 "t": 2}]
    events = run(lines)
    assert not of_type(events, "irregularity")
    assert [e["state"] for e in of_type(events, "shoe")] == ["lost", "ok"]
