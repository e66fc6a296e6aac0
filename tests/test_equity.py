"""The equities (controller/equity.py): its evaluator against pokerkit's on generated hands, and
known equities: counted by hand, enumerated with pokerkit, and AA against KK pre-flop."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import STANDARD_DECK
from controller.equity import (
    MAX_SAMPLES,
    default_samples,
    equities,
    high_value,
    omaha_high_value,
    omaha_low_value,
)
from controller.events import Street

DECKS = st.permutations(STANDARD_DECK)
# Ace to eight and a few high cards: most Omaha hands dealt from it make a low, many tie.
LOW_DECKS = st.permutations([c for c in STANDARD_DECK if c[0] in "A2345678K"])


def _sign(x: object, y: object) -> int:
    return (x > y) - (x < y)  # type: ignore[operator]


def _text(cards: list[str]) -> str:
    return "".join(cards)


@settings(max_examples=300)
@given(DECKS)
def test_seven_cards_order_as_pokerkit_orders_them(deck):
    """Two random seven-card hands (from one deck), ordered by this evaluator and by pokerkit."""
    import pokerkit

    a, b = deck[:7], deck[7:14]
    ours = _sign(high_value(a), high_value(b))
    theirs = _sign(pokerkit.StandardHighHand.from_game(_text(a)),
                   pokerkit.StandardHighHand.from_game(_text(b)))
    assert ours == theirs, (a, b)


def _river_result(game, holes, board):
    """Who wins the river by ``equities``' own path (the tables it enumerates with)."""
    result = equities(game, {1: holes[0], 2: holes[1]}, board)
    assert result.exact and result.runouts == 1 and result.street is Street.RIVER
    return result


@settings(max_examples=300)
@given(DECKS)
def test_holdem_river_winner_as_pokerkit_says(deck):
    """Two seats sharing a board (ties come up): the enumeration's winner is pokerkit's."""
    import pokerkit

    holes, board = (deck[:2], deck[2:4]), deck[4:9]
    one, two = (pokerkit.StandardHighHand.from_game(_text(h), _text(board)) for h in holes)
    result = _river_result("holdem", holes, board)
    assert (result.seats[0].win, result.seats[1].win, result.seats[0].tie) == (
        float(one > two), float(two > one), float(one == two))
    assert _sign(high_value([*holes[0], *board]), high_value([*holes[1], *board])) == \
        _sign(one, two)


@settings(max_examples=200)
@given(DECKS)
def test_omaha_high_uses_two_hole_and_three_board_as_pokerkit(deck):
    import pokerkit

    holes, board = (deck[:4], deck[4:8]), deck[8:13]
    one, two = (pokerkit.OmahaHoldemHand.from_game(_text(h), _text(board)) for h in holes)
    assert _sign(omaha_high_value(holes[0], board), omaha_high_value(holes[1], board)) == \
        _sign(one, two)
    result = _river_result("omaha", holes, board)
    assert (result.seats[0].win, result.seats[1].win, result.seats[0].tie) == (
        float(one > two), float(two > one), float(one == two))


def _pokerkit_low(hole, board):
    import pokerkit

    return pokerkit.OmahaEightOrBetterLowHand.from_game_or_none(_text(hole), _text(board))


@settings(max_examples=300)
@given(st.one_of(DECKS, LOW_DECKS))
def test_omaha_low_eight_or_better_as_pokerkit(deck):
    """The low: none when pokerkit finds none, else ordered as pokerkit orders it (a smaller
    mask is the better low: pokerkit's greater hand)."""
    holes, board = (deck[:4], deck[4:8]), deck[8:13]
    theirs = [_pokerkit_low(h, board) for h in holes]
    ours = [omaha_low_value(h, board) for h in holes]
    assert [x is None for x in ours] == [x is None for x in theirs]
    if None not in theirs:
        assert _sign(ours[1], ours[0]) == _sign(theirs[0], theirs[1])
    result = _river_result("omaha8", holes, board)
    one, two = result.seats
    if theirs == [None, None]:
        assert result.no_low == 1 and one.low_win == two.low_win == one.low_tie == 0
    else:
        best = max(x for x in theirs if x is not None)
        winners = [i for i, x in enumerate(theirs) if x is not None and x == best]
        assert (one.low_win, two.low_win) == tuple(float(winners == [i]) for i in (0, 1))
        assert one.low_tie == float(len(winners) == 2)
    assert one.equity + two.equity == pytest.approx(1.0)


def test_a_turn_counted_by_hand():
    """Aces against deuces, a rainbow board with no straight: the deuces win with one of the two
    deuces left, of 44 cards."""
    result = equities("holdem", {3: ["As", "Ah"], 7: ["2c", "2d"]}, ["Ks", "7d", "4c", "9h"])
    aces, deuces = result.seats
    assert (result.street, result.exact, result.runouts, result.std_error) == (
        Street.TURN, True, 44, 0.0)
    assert (aces.seat, deuces.seat) == (3, 7)
    assert deuces.win == deuces.equity == pytest.approx(2 / 44)
    assert aces.win == pytest.approx(42 / 44) and aces.tie == 0


def _pokerkit_flop(hole, board, dead=()):
    """Every runout of a Hold'em flop evaluated by pokerkit: each seat's win, tie and equity."""
    import pokerkit

    used = {c for cards in hole.values() for c in cards} | set(board) | set(dead)
    deck = [c for c in STANDARD_DECK if c not in used]
    seats = sorted(hole)
    win = dict.fromkeys(seats, 0.0)
    tie = dict.fromkeys(seats, 0.0)
    share = dict.fromkeys(seats, 0.0)
    runouts = list(combinations(deck, 2))
    for runout in runouts:
        full = _text([*board, *runout])
        hands = {s: pokerkit.StandardHighHand.from_game(_text(hole[s]), full) for s in seats}
        best = max(hands.values())
        winners = [s for s in seats if hands[s] == best]
        for s in winners:
            (win if len(winners) == 1 else tie)[s] += 1
            share[s] += 1 / len(winners)
    n = len(runouts)
    return {s: (win[s] / n, tie[s] / n, share[s] / n) for s in seats}


def test_a_flop_exactly_as_pokerkit_enumerates_it():
    """A flush draw and overcards against a pair, a third seat folded (its cards dead): every
    runout, the same shares as pokerkit's evaluation of each."""
    hole = {1: ["Ah", "Kh"], 2: ["Jc", "Js"]}
    board, dead = ["Qh", "7h", "2c"], ["9d", "9s"]
    result = equities("holdem", hole, board, dead=dead)
    assert result.exact and result.runouts == 903  # C(43, 2)
    expected = _pokerkit_flop(hole, board, dead)
    for seat in result.seats:
        assert (seat.win, seat.tie, seat.equity) == pytest.approx(expected[seat.seat])


def test_aces_against_kings_pre_flop():
    """AA against KK with no suit shared is 81.26 % (every board, 1,712,304 of them, enumerated
    once with this module's evaluator; 82.64 % when they share both suits): the sample is
    within four standard errors of it and states the error a sample of its size has."""
    result = equities("holdem", {1: ["As", "Ah"], 2: ["Kd", "Kc"]}, rng=random.Random(49))
    aces, kings = result.seats
    assert not result.exact and result.street is Street.PREFLOP
    assert result.runouts == default_samples("holdem", 2)
    assert abs(aces.equity - 0.8126) < 4 * aces.std_error
    assert 0.003 < result.std_error < 0.005
    assert aces.equity + kings.equity == pytest.approx(1.0)
    again = equities("holdem", {1: ["As", "Ah"], 2: ["Kd", "Kc"]}, rng=random.Random(49))
    assert again == result  # the seed decides


def test_omaha_hi_lo_split_counted_by_hand():
    """The river: quad kings take the high half, the wheel the low; then a board with no low
    (the high hand scoops)."""
    split = equities("omaha8", {1: ["As", "5c", "9h", "9d"], 2: ["Kh", "Kc", "Qs", "Js"]},
                     ["2c", "3d", "4h", "Ks", "Kd"])
    wheel, quads = split.seats
    assert (quads.win, quads.low_win, quads.scoop, quads.equity) == (1, 0, 0, 0.5)
    assert (wheel.win, wheel.low_win, wheel.scoop, wheel.equity) == (0, 1, 0, 0.5)
    assert split.no_low == 0
    no_low = equities("omaha8", {1: ["As", "5c", "9h", "9d"], 2: ["Kh", "Kc", "Qs", "Js"]},
                      ["2c", "Qd", "Jh", "Ks", "Td"])
    assert no_low.no_low == 1
    assert (no_low.seats[1].win, no_low.seats[1].scoop, no_low.seats[1].equity) == (1, 1, 1)


def test_within_the_budget_of_work_pre_flop():
    assert default_samples("holdem", 9) == 6060
    assert default_samples("omaha", 6) == 1000
    assert default_samples("holdem", 1) <= MAX_SAMPLES
    result = equities("omaha8", {1: ["As", "2s", "3d", "Kd"], 2: ["8c", "8d", "Th", "Js"]},
                      rng=random.Random(1), samples=200)
    assert result.runouts == 200 and 0 < result.std_error < 0.05
    assert sum(s.equity for s in result.seats) == pytest.approx(1.0)
    assert 0 <= result.no_low < 1


@pytest.mark.parametrize(("game", "hole", "board", "dead", "message"), [
    ("stud", {1: ["As", "Ad"]}, [], [], "unknown game"),
    ("holdem", {}, [], [], "no live seat"),
    ("holdem", {1: ["As", "Ad"], 2: ["As", "Kd"]}, [], [], "given twice"),
    ("holdem", {1: ["As", "Ad", "Kd", "Kc"]}, [], [], "deals 2"),
    ("omaha", {1: ["As", "Ad"]}, [], [], "deals 4"),
    ("holdem", {1: ["As", "Ad"]}, ["Kd", "Kc"], [], "a board of 2"),
    ("holdem", {1: ["As", "JK"]}, [], [], "no card of a standard deck"),
    ("holdem", {1: ["As", "??"]}, [], [], "unknown card"),
    ("holdem", {1: ["As", "Ad"]}, [], [], "seeded random.Random"),
])
def test_refused(game, hole, board, dead, message):
    with pytest.raises(ValueError, match=message):
        equities(game, hole, board, dead)


def test_the_bench_command_measures_every_street_against_pokerkit():
    """``python -m tests.bench.equity`` at its smallest: every deal, every street, a baseline."""
    from tests.bench.equity import DEALS, STREETS, report, run

    figures = run(repeats=1, baseline_runouts=2, seed=1)
    assert set(figures["deals"]) == {f"{game}-{seats}" for game, seats in DEALS}
    for streets in figures["deals"].values():
        assert list(streets) == [name for name, _ in STREETS]
        assert streets["preflop"]["exact"] is False and streets["river"]["runouts"] == 1
        assert all(s["pokerkit_us_per_runout"] > 0 for s in streets.values())
    assert "slowest call" in report(figures)
