"""Every row of the SPEC's irregularity table, as replay files, under every profile.

The files are transcripts of what a dealer's shoe and button send; ``expected.toml`` says which
irregularities, rulings, outcomes and final hand record each profile must produce.
"""

from __future__ import annotations

import tomllib

import pytest

from houses.loaders import builtin_names
from tests.conftest import SCENARIOS, of_type, run

EXPECTED = tomllib.loads((SCENARIOS / "expected.toml").read_text())["scenario"]
CASES = [(s, p) for s in EXPECTED for p in s["profiles"]]


@pytest.mark.parametrize("scenario,profile", CASES,
                         ids=[f"{s['file']}-{p}" for s, p in CASES])
def test_scenario(scenario, profile):
    lines = (SCENARIOS / f"{scenario['file']}.jsonl").read_text().splitlines()
    events = run(lines, profile)
    irregularities = of_type(events, "irregularity")
    rulings = of_type(events, "ruling")
    assert len(irregularities) == len(rulings)
    got = [[i["kind"], r["action"], r.get("reason", "")]
           for i, r in zip(irregularities, rulings, strict=True)]
    assert got == scenario["rulings"]
    assert [e["outcome"] for e in of_type(events, "hand.ended")] == scenario["outcomes"]
    last = of_type(events, "hand.ended")[-1]
    for key, value in scenario["final"].items():
        assert last[key] == value, key
    for ruling in rulings:
        assert ruling["text"] and ruling["text"].isascii()  # a character LCD shows it as is
        assert ruling["profile"] == profile


def test_every_row_and_every_profile_is_covered():
    rows = {s["row"] for s in EXPECTED}
    assert rows == set(range(1, 19))
    for row in rows:
        covered = {p for s in EXPECTED if s["row"] == row for p in s["profiles"]}
        assert covered == set(builtin_names()), f"row {row} misses {set(builtin_names()) - covered}"


def test_rulings_cite_the_profile_source():
    lines = (SCENARIOS / "row14_missing_burn.jsonl").read_text().splitlines()
    ruling = of_type(run(lines, "corner-pocket"), "ruling")[0]
    assert ruling["action"] == "board_stands"
    assert ruling["source"] == "seed 000, Dealing rule D"


def test_misdeal_keeps_hand_number_and_button():
    lines = (SCENARIOS / "row03_two_exposed.jsonl").read_text().splitlines()
    events = run(lines, "tda-2024")
    started = of_type(events, "hand.started")
    assert [(s["hand"], s["redeal"], s["button"]) for s in started] == [(1, 0, 6), (1, 1, 6)]


def test_returned_cards_can_be_drawn_again():
    # Row 10: 3c went back into the stub with the premature flop and came out in the new flop.
    lines = (SCENARIOS / "row10_premature_flop.jsonl").read_text().splitlines()
    events = run(lines)
    assert not [e for e in of_type(events, "irregularity") if e["kind"] == "duplicate_card"]
    reinserted = [e for e in of_type(events, "deck") if e["state"] == "reinserted"]
    assert len(reinserted) == 1
