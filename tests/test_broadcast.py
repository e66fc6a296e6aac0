"""The broadcast feed (issue 49): the deal view built from the table's private events (never a
wrong card shown as certain, every correction said)."""

from __future__ import annotations

import json
import random
import zlib

import pytest

from contract.envelope import envelope
from controller.replay import replay
from houses.loaders import builtin_names, load_profile, load_structure
from hub.broadcast import deals, hands
from simulators.dealer_script import session_lines
from tests.conftest import SCENARIOS, run

INC = "ab" * 16


def _stored(events, start_ms=1_000_000, step_ms=1000):
    """The events as the recorder stores them and the feed reads them back: envelopes with
    their incarnation and the hub's time."""
    return [(0, {**envelope(e, venue="v", table="t1", seq=seq, boot=1,
                            ts_ms=start_ms + seq * step_ms, incarnation=INC),
                 "ts": start_ms + seq * step_ms})
            for seq, e in enumerate(events, start=1)]


def _hands(events):
    return hands(deals(_stored(events)), {}, {})


def _scenario(name):
    return run([json.loads(line) for line in (SCENARIOS / f"{name}.jsonl").read_text()
                .splitlines() if line.strip()])


def _seats(hand):
    return {s["seat"]: s for s in hand["seats"]}


def test_a_clean_hand_shows_every_seat_s_cards_as_dealt():
    [hand] = _hands(_scenario("row02_later_exposed"))[:1]
    seats = _seats(hand)
    assert seats[2] == {"seat": 2, "player": None, "cards": ["Ks", "9s"], "status": "dealt",
                        "why": [], "folded": False}
    assert hand["board"] == ["3c", "4c", "5c", "7c", "9c"] and hand["board_status"] == "dealt"


@pytest.mark.parametrize("scenario, seat, status, why", [
    ("row02_later_exposed", 1, "corrected", "Ts was dealt to it face up"),
    ("row04_boxed", 6, "corrected", "Ad boxed"),
    ("row06_joker", 2, "corrected", "a joker scrapped"),
    ("row09_missing_hole_card", 6, "uncertain", "1 card(s) missing"),
    ("row17_unknown_tag", 1, "uncertain", "could not read"),
    ("row18_shoe_fault", 4, "uncertain", "failed mid-hand"),
    ("row16_foreign_card", 2, "void", "another deck's card"),
    ("row15_duplicate_card", 6, "void", "drawn twice"),
])
def test_a_corrected_or_uncertain_seat_says_why(scenario, seat, status, why):
    shown = _seats(_hands(_scenario(scenario))[0])[seat]
    assert shown["status"] == status and any(why in w for w in shown["why"]), shown


def test_an_unreadable_card_is_shown_as_unknown_not_as_a_card():
    shown = _seats(_hands(_scenario("row17_unknown_tag"))[0])[1]
    assert shown["cards"] == ["As", None]


def test_a_redealt_hand_replaces_the_one_a_misdeal_voided():
    [hand] = _hands(_scenario("row01_first_exposed_misdeal"))
    assert hand["redeal"] == 1 and hand["outcome"] == "complete"
    assert _seats(hand)[1]["cards"] == ["Kh", "9h"] and _seats(hand)[1]["status"] == "dealt"
    [voided] = hand["voided"]
    assert voided["outcome"] == "misdeal" and voided["redeal"] == 0
    assert {s["status"] for s in voided["seats"]} == {"void"}
    assert any("As exposed" in w for w in _seats(voided)[1]["why"])
    assert voided["irregularities"][0]["ruling"]["action"] == "misdeal"


def test_a_scrambled_flop_marks_the_board_not_the_seats():
    [hand] = _hands(_scenario("row13_fourth_flop_scrambled"))
    assert hand["board_status"] == "corrected" and hand["board"][:3] == ["3c", "5c", "6c"]
    assert {s["status"] for s in hand["seats"]} == {"dealt"}


@pytest.mark.parametrize("profile", sorted(builtin_names()))
def test_no_seat_is_ever_shown_as_dealt_with_a_card_it_did_not_get(profile):
    """Every prefix of every deal of a long session with many irregularities, as a feed at
    that moment would show it: a seat shown ``dealt`` holds exactly the first cards of what
    the hand's end (the core's last word) gives it, in order; a seat whose cards the hand's
    end changed is never ``dealt``."""
    rng = random.Random(zlib.crc32(profile.encode()))
    lines = [json.dumps(x) for x in session_lines(
        rng, load_profile(profile), hands=30, irregularity_rate=0.7, game="mixed",
        clock="tda-2024")]
    events = [e for e in replay(lines, load_profile(profile), structure_loader=load_structure)]
    stored = _stored(events)
    ends = {}
    for at, (_, item) in enumerate(stored):
        if item["type"] == "hand.started":
            start = at
        if item["type"] == "hand.ended":
            ends[(item["hand"], start)] = item["data"]["hole"]
    checked = 0
    for (_, start), hole in ends.items():
        stop = next(i for i in range(start, len(stored)) if stored[i][1]["type"] == "hand.ended")
        for upto in range(start + 1, stop + 2):
            [(_, deal)] = deals(stored[start:upto])
            for seat in deal.view({}, {})["seats"]:
                final = [None if c == "??" else c for c in hole.get(str(seat["seat"]), [])]
                if seat["status"] == "dealt":
                    assert seat["cards"] == final[:len(seat["cards"])], (profile, seat, final)
                    checked += 1
    assert checked > 1000
