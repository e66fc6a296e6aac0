"""Property tests: random legal deals, and the same deals with one irregularity injected.

The scripted dealer (``simulators.dealer_script``) deals with a human rhythm and keeps its own
account of every card; the core's hand records must agree with it card for card.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.replay import replay
from controller.table import TableConfig
from houses.loaders import builtin_names, load_profile, load_structure
from simulators.dealer_script import INJECTIONS, expected_ruling, session

PROFILES = {name: load_profile(name) for name in builtin_names()}
GAMES = ("holdem", "omaha", "omaha8")


def _play(seed, profile_name, game, seat_count, hands, rate, injections=INJECTIONS):
    rng = random.Random(seed)
    seats = tuple(sorted(rng.sample(range(1, 11), seat_count)))
    profile = PROFILES[profile_name]
    lines, expected = session(rng, profile, hands=hands, game=game, irregularity_rate=rate,
                              seats=seats, injections=injections)
    events = list(replay((json.dumps(x) for x in lines), profile, TableConfig(evaluate=False),
                         structure_loader=load_structure))
    return events, expected


def _final_records(events):
    final = {}
    for e in events:
        if e["type"] == "hand.ended":
            final[e["hand"]] = e
    return final


def _check_accounting(record):
    cards = [c for cs in record["hole"].values() for c in cs if c != "??"]
    cards += record["board"] + record["burns"] + [c for c in record["scrap"] if c != "JK"]
    cards += record.get("flop_unresolved", [])
    # every card exactly once: nothing counted twice (a duplicate-card hand keeps its
    # duplicate in "out", so "out" is checked separately)
    assert len(cards) == len(set(cards)), record


def _check_against_dealer(record, exp):
    assert record["outcome"] == exp.outcome
    hole = {int(s): c for s, c in record["hole"].items()}
    assert hole == exp.hole
    assert record["board"] == exp.board
    assert sorted(record["burns"]) == sorted(exp.burns)


settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@settings(max_examples=200)
@given(seed=st.integers(0, 2**32), profile=st.sampled_from(sorted(PROFILES)),
       game=st.sampled_from(GAMES), seat_count=st.integers(2, 10), hands=st.integers(1, 6))
def test_legal_deals_raise_nothing_and_account_for_every_card(seed, profile, game, seat_count,
                                                              hands):
    events, expected = _play(seed, profile, game, seat_count, hands, rate=0.0)
    assert [e for e in events if e["type"] in ("irregularity", "ruling")] == []
    final = _final_records(events)
    assert sorted(final) == [x.number for x in expected]
    for exp in expected:
        record = final[exp.number]
        _check_accounting(record)
        assert record["out"] == [] and record["scrap"] == []
        _check_against_dealer(record, exp)


@settings(max_examples=400)
@given(seed=st.integers(0, 2**32), profile=st.sampled_from(sorted(PROFILES)),
       game=st.sampled_from(GAMES), seat_count=st.integers(2, 10),
       injection=st.sampled_from(INJECTIONS))
def test_injected_irregularity_is_caught_with_the_profiles_ruling(seed, profile, game,
                                                                  seat_count, injection):
    events, expected = _play(seed, profile, game, seat_count, 3, rate=1.0,
                             injections=(injection,))
    by_hand = defaultdict(list)
    pending = {}
    for e in events:
        if e["type"] == "irregularity":
            pending[e["hand"]] = e["kind"]
        elif e["type"] == "ruling":
            by_hand[e["hand"]].append((pending.pop(e["hand"]), e["action"]))
    final = _final_records(events)
    for exp in expected:
        assert by_hand[exp.number] == exp.rulings, (injection, exp.number)
        record = final[exp.number]
        _check_accounting(record)
        _check_against_dealer(record, exp)


def test_every_injection_under_every_profile_gets_its_ruling():
    """Not left to hypothesis's draw: each (irregularity, profile) pair, once."""
    for injection in INJECTIONS:
        for name in PROFILES:
            events, _ = _play(1234, name, "holdem", 6, 1, 1.0, (injection,))
            kinds = [e["kind"] for e in events if e["type"] == "irregularity"]
            actions = [e["action"] for e in events if e["type"] == "ruling"]
            assert (kinds[0], actions[0]) == expected_ruling(PROFILES[name], injection), (
                injection, name)
