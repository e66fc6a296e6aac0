"""Deck registry, enrollment of tag UIDs, and the deck check, in the core, the CLI and live
through the simulated shoe."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.cards import STANDARD_DECK, TaggedCard
from controller.decks import (
    ENROLL_ORDER,
    DeckCheck,
    DeckRegistry,
    Enrollment,
    EnrollmentError,
    RegistryError,
    registry_from_data,
)
from simulators.shoe import SimulatedShoe
from tablectl.cli import main
from tests.conftest import of_type, run, wait_for


def uid(n: int) -> str:
    return f"04{n:012X}"


def test_enrollment_order_is_spades_hearts_diamonds_clubs_ace_to_king():
    assert ENROLL_ORDER[:3] == ("As", "2s", "3s") and ENROLL_ORDER[12] == "Ks"
    assert ENROLL_ORDER[13] == "Ah" and ENROLL_ORDER[-1] == "Kc"
    assert sorted(ENROLL_ORDER) == sorted(STANDARD_DECK)


def test_enrollment_folds_rereads_and_refuses_a_tag_twice():
    e = Enrollment("R1")
    assert e.read(uid(1), ms=0) == "As"
    assert e.read(uid(1), ms=100) is None  # the same pass over the antenna
    assert e.read(uid(2), ms=500) == "2s"
    with pytest.raises(EnrollmentError, match="already enrolled as As"):
        e.read(uid(1), ms=2000)
    with pytest.raises(EnrollmentError, match="only 2 of 52"):
        e.apply()


def test_a_tag_of_the_other_deck_is_refused():
    registry = DeckRegistry()
    registry.enroll("B2", {uid(1): "As"})
    with pytest.raises(EnrollmentError, match="deck B2"):
        Enrollment("R1", registry).read(uid(1))


def test_registry_errors_are_all_listed():
    with pytest.raises(RegistryError) as info:
        registry_from_data({"decks": {"R1": {"back": "red", "tags": {"01": "Xx", "02": "As"}},
                                      "B2": {"colour": "blue", "tags": {"02": "Ks"}},
                                      "bad id!": {}}, "x": 1}, "decks.json")
    text = "\n".join(info.value.problems)
    for needle in ("x: unknown", "R1.tags.01", "B2.colour", "B2.tags.02", "bad id!"):
        assert needle in text


def _full_check(cards):
    check = DeckCheck("R1")
    for card in cards:
        check.add(card)
    return check.result()


def test_deck_check_names_every_problem():
    good = [TaggedCard("R1", c) for c in STANDARD_DECK]
    assert _full_check(good).ok
    bad = [c for c in good if c.card not in ("As", "7d")]
    bad += [TaggedCard("R1", "Kc"), TaggedCard("B2", "Qh"), TaggedCard("R1", "JK")]
    check = DeckCheck("R1")
    for card in bad:
        check.add(card)
    check.add(None, uid(99))
    result = check.result()
    assert not result.ok
    assert result.missing == ["As", "7d"] and result.duplicates == ["Kc"]
    assert result.foreign == ["B2:Qh"] and result.unknown == [uid(99)] and result.jokers == 1
    assert result.text() == ("DECK R1 BAD: missing As 7d; twice Kc; foreign B2:Qh; "
                             "1 unknown tag(s)")


def test_deck_check_in_the_core_and_reads_twice_count_once():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
             {"type": "deck_check", "action": "start", "deck": "R1", "t": 0}]
    t = 1.0
    for card in STANDARD_DECK:
        lines.append({"type": "card", "card": card, "deck": "R1", "t": t})
        lines.append({"type": "card", "card": card, "deck": "R1", "t": t + 0.05})
        t += 0.3
    lines.append({"type": "deck_check", "action": "finish", "t": t + 1})
    result = of_type(run(lines), "deck_check.result")[0]
    assert result["ok"] and result["count"] == 52 and result["text"] == "DECK R1 OK: 52 cards"


def test_no_deck_check_during_a_hand():
    from controller.replay import ReplayError

    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
             {"type": "deck_in", "deck": "R1", "t": 0},
             {"type": "deck_check", "action": "start", "deck": "B2", "t": 1}]
    with pytest.raises(ReplayError, match="line 3: a deck check cannot start"):
        run(lines)


def _reads_file(path, uids, texts=None):
    with path.open("w") as f:
        for i, u in enumerate(uids):
            line = {"type": "card", "tag": u, "t": i * 0.5}
            if texts:
                line["ndef"] = texts[i]
            f.write(json.dumps(line) + "\n")


def _tablectl(*args):
    return subprocess.run([sys.executable, "-m", "tablectl.cli", *args], capture_output=True,
                          text=True, timeout=60)


def test_enroll_then_check_from_recorded_reads(tmp_path):
    registry = tmp_path / "decks.json"
    enroll_file = tmp_path / "enroll.jsonl"
    _reads_file(enroll_file, [uid(i) for i in range(52)])
    result = _tablectl("deck", "enroll", "--deck", "R1", "--back", "red", "--registry",
                       str(registry), str(enroll_file))
    assert result.returncode == 0, result.stderr
    data = json.loads(registry.read_text())
    assert data["decks"]["R1"]["back"] == "red"
    assert data["decks"]["R1"]["tags"][uid(0)] == "As"
    check_file = tmp_path / "check.jsonl"
    _reads_file(check_file, [uid(i) for i in reversed(range(52))])
    result = _tablectl("deck", "check", "--deck", "R1", "--registry", str(registry),
                       str(check_file))
    assert result.returncode == 0 and result.stdout.strip() == "DECK R1 OK: 52 cards"
    _reads_file(check_file, [uid(i) for i in range(50)] + [uid(3), uid(77)])
    result = _tablectl("deck", "check", "--deck", "R1", "--registry", str(registry), "--json",
                       str(check_file))
    assert result.returncode == 1
    verdict = json.loads(result.stdout)
    assert verdict["missing"] == ["Kc", "Qc"]  # the deck's order: ranks A..2, suits s h d c
    assert verdict["duplicates"] == ["4s"] and verdict["unknown"] == [uid(77)]


SAMPLES = Path(__file__).resolve().parents[1] / "docs" / "samples"


def test_the_shipped_sample_reads_check_as_the_readme_says(tmp_path):
    registry = tmp_path / "none.json"  # no registry: the reads name their cards
    good = _tablectl("deck", "check", "--deck", "R1", "--registry", str(registry),
                     str(SAMPLES / "deck-R1-reads.jsonl"))
    assert (good.returncode, good.stdout.strip()) == (0, "DECK R1 OK: 52 cards"), good.stderr
    bad = _tablectl("deck", "check", "--deck", "R1", "--registry", str(registry),
                    str(SAMPLES / "deck-R1-bad-reads.jsonl"))
    assert bad.returncode == 1
    assert bad.stdout.strip() == "DECK R1 BAD: missing 2c; 3 times Ks; foreign B2:Qh"


def test_a_card_read_again_and_again_is_counted_exactly(tmp_path):
    reads = tmp_path / "reads.jsonl"
    cards = list(STANDARD_DECK) + ["Ks"] * 3 + ["Qh"]  # Ks four times, Qh twice
    reads.write_text("".join(json.dumps({"type": "card", "card": c, "t": i * 0.6}) + "\n"
                             for i, c in enumerate(cards)))
    result = _tablectl("deck", "check", "--deck", "R1", "--registry",
                       str(tmp_path / "none.json"), str(reads))
    assert result.stdout.strip() == "DECK R1 BAD: twice Qh; 4 times Ks"


def test_deck_commands_report_user_errors(tmp_path):
    bad = tmp_path / "decks.json"
    bad.write_text('{"decks": {"R1": {"tags": {"01": "Zz"}}}}')
    result = _tablectl("deck", "check", "--deck", "R1", "--registry", str(bad), "-")
    assert result.returncode == 2 and "R1.tags.01" in result.stderr
    assert "Traceback" not in result.stderr


def test_live_deck_check_through_the_simulated_shoe(tmp_path, capsys):
    shoe = SimulatedShoe(tmp_path / "shoe").start()
    try:
        def dealer():
            # The dealer runs the deck once the shoe shows deck-check mode (the command set it).
            wait_for(lambda: shoe.protocol.mode == 1, 30, 0.01)
            for card in STANDARD_DECK:
                if card != "9h":
                    shoe.draw(f"R1:{card}", reads=2)
                    time.sleep(0.01)
            shoe.draw("B2:As")

        threading.Thread(target=dealer, daemon=True).start()
        # The default idle end (3 s without a card): a crowded machine once held the dealer's
        # thread for more than a second mid-deck, and a 1 s idle ended the check there.
        code = main(["deck", "check", "--deck", "R1", "--registry", str(tmp_path / "d.json"),
                     "--port", str(tmp_path / "shoe"), "--idle", "3.0", "--json"])
    finally:
        shoe.stop()
    verdict = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1
    assert verdict["missing"] == ["9h"] and verdict["foreign"] == ["B2:As"]
    assert verdict["count"] == 52 and verdict["duplicates"] == []
