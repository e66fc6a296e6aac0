"""The hand's phases are a state machine (``controller.hand.Phase`` and ``TRANSITIONS``): every
move the core makes is in the table, and a move outside it is a usage error, not a silent
change."""

from __future__ import annotations

import random

import pytest

from controller.hand import SHOWN_AS, TRANSITIONS, Drawn, Hand, HandStateError, Phase
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


def _dealt(hand: Hand, cards: list[str], t: float, step: float = 0.2, **read) -> float:
    for card in cards:
        hand.draw(Drawn(card, "R1", **read), t)
        t += step
    return t - step


def test_a_seat_owed_a_card_for_an_exposed_one_is_a_phase_of_the_deal():
    hand = _hand()  # three seats, two cards each: the sixth card is the deal's last
    t = _dealt(hand, ["As", "Ks", "Qs", "Js", "Ts"], 1.0)
    hand.draw(Drawn("9s", "R1", face="up"), t + 0.2)  # TDA 35: replaced after the deal
    assert (hand.phase, hand.shown_phase) == (Phase.REPLACING, Phase.HOLE)
    hand.draw(Drawn("8s", "R1"), t + 0.4)
    assert hand.phase is Phase.BETTING and hand.hole[hand.slots[-1]] == ["Qs", "8s"]


def test_cards_dealt_early_are_a_phase_of_the_betting_round_until_it_closes():
    hand = _hand()
    t = _dealt(hand, ["As", "Ks", "Qs", "Js", "Ts", "9s"], 1.0)
    hand.draw(Drawn("8s", "R1"), t + 5.0)  # after the deal's rhythm: a premature flop
    assert (hand.phase, hand.shown_phase) == (Phase.PREMATURE, Phase.BETTING)
    hand.draw(Drawn("7s", "R1"), t + 5.2)  # the same dealing action
    assert [e.type for e in hand.events] == ["card"]  # one ruling covers both
    hand.tap(t + 20.0)
    assert hand.phase is Phase.STREET and hand.premature is None


def test_a_flop_of_too_many_is_a_phase_while_its_rhythm_lasts():
    hand = _hand()  # TDA: four flop cards are scrambled for the burn
    t = _dealt(hand, ["As", "Ks", "Qs", "Js", "Ts", "9s"], 1.0)
    hand.tap(t + 5.0)
    t = _dealt(hand, ["8s", "7s", "6s", "5s", "4s"], t + 6.0)  # the burn and four
    assert (hand.phase, hand.shown_phase) == (Phase.FOUR_CARD_FLOP, Phase.BETTING)
    hand.draw(Drawn("3s", "R1"), t + 0.2)  # a fifth: too many to scramble, redealt
    assert (hand.phase, hand.shown_phase) == (Phase.OVERDEALT_FLOP, Phase.STREET)
    hand.draw(Drawn("2s", "R1"), t + 0.4)  # still the old flop's
    assert hand.phase is Phase.OVERDEALT_FLOP and hand.board["flop"] == []
    hand.draw(Drawn("Ad", "R1"), t + 10.0)  # after its rhythm: the new flop's first card
    assert hand.phase is Phase.STREET and hand.board["flop"] == ["Ad"]


def test_the_table_shows_a_sub_phase_as_the_phase_it_refines():
    assert {SHOWN_AS[phase] for phase in Phase} == {
        Phase.HOLE, Phase.BETTING, Phase.STREET, Phase.SHOWDOWN, Phase.ENDED}
    assert all(SHOWN_AS[SHOWN_AS[phase]] is SHOWN_AS[phase] for phase in Phase)
