"""The hand's phases are a state machine (``controller.hand.Phase`` and ``TRANSITIONS``): every
move the core makes is in the table, and a move outside it is a usage error, not a silent
change."""

from __future__ import annotations

import random

import pytest

from controller.hand import TRANSITIONS, Drawn, Hand, HandStateError, Phase
from controller.seating import initial_positions
from houses.loaders import builtin_names, load_profile
from simulators.dealer_script import session_lines
from tests.conftest import run


def _hand() -> Hand:
    return Hand(number=1, game="holdem", positions=initial_positions((1, 2, 3), 1),
                profile=load_profile("tda-2024"), deck="R1", deal_gap=2.0, t=0.0)


def test_every_phase_has_its_moves_and_an_ended_hand_has_none():
    assert set(TRANSITIONS) == set(Phase)
    assert TRANSITIONS[Phase.ENDED] == frozenset()
    assert all(Phase.ENDED in moves for phase, moves in TRANSITIONS.items()
               if phase is not Phase.ENDED)


def test_a_move_outside_the_table_is_refused():
    hand = _hand()
    hand.phase = Phase.SHOWDOWN
    with pytest.raises(HandStateError, match="from showdown to betting"):
        hand._enter(Phase.BETTING)
    assert hand.phase is Phase.SHOWDOWN


def test_an_ended_hand_takes_no_card_and_no_tap():
    hand = _hand()
    hand.finish(1.0, "double_tap")
    assert hand.phase is Phase.ENDED
    with pytest.raises(HandStateError):
        hand.draw(Drawn("As", "R1"), 2.0)
    with pytest.raises(HandStateError):
        hand.tap(2.0)


@pytest.mark.parametrize("profile", builtin_names())
def test_whole_sessions_only_make_moves_in_the_table(profile, monkeypatch):
    moves: set[tuple[Phase, Phase]] = set()
    enter = Hand._enter

    def recording(self: Hand, phase: Phase) -> None:
        moves.add((self.phase, phase))
        enter(self, phase)

    monkeypatch.setattr(Hand, "_enter", recording)
    lines = session_lines(random.Random(7), load_profile(profile), hands=60, game="mixed",
                          irregularity_rate=0.4)
    events = run(lines, profile)
    assert any(e["type"] == "hand.ended" for e in events)
    assert all(after in TRANSITIONS[before] for before, after in moves)
    # the usual ones were all made
    assert {(Phase.HOLE, Phase.BETTING), (Phase.BETTING, Phase.STREET),
            (Phase.STREET, Phase.BETTING), (Phase.BETTING, Phase.ENDED)} <= moves
