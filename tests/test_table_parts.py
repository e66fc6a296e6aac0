"""The small machines beside ``Table`` (``controller/table_parts.py``), each on its own."""

from __future__ import annotations

from controller.events import DealerSignedIn, DealerSummary, GameDeclared, ShotClock
from controller.table_parts import (
    DECLARABLE_GAMES,
    DealersChoice,
    DealerShift,
    HandForHandState,
    ShotClockTimer,
)


def test_the_shot_clock_counts_quietly_then_aloud_then_expires_once():
    shot = ShotClockTimer()
    assert [e.state for e in shot.start(25.0, 5.0, 3, 100.0)] == ["started"]
    assert shot.advance(3, 124.9) == []
    countdown = shot.advance(3, 125.0)
    assert countdown == [ShotClock(state="countdown", seconds=5.0, hand=3, t=125.0)]
    assert [(e.state, e.t) for e in shot.advance(3, 200.0)] == [("expired", 130.0)]
    assert shot.advance(3, 300.0) == [] and shot.cancel("late", 3, 300.0) == []


def test_a_cancelled_shot_clock_says_why_and_stops():
    shot = ShotClockTimer()
    shot.start(25.0, 5.0, None, 0.0)
    assert [(e.state, e.reason) for e in shot.cancel("round closed", None, 1.0)] == [
        ("cancelled", "round closed")]
    assert shot.advance(None, 100.0) == []


def test_hand_for_hand_waits_after_each_hand_until_released():
    h4h = HandForHandState()
    assert [e.state for e in h4h.command("on", True, 0.0)] == ["playing"]
    assert h4h.hand_over("misdeal", 5, 1.0) == []  # a misdeal is dealt again at once
    assert [(e.state, e.hand) for e in h4h.hand_over("complete", 5, 2.0)] == [("waiting", 5)]
    assert [e.state for e in h4h.command("release", False, 3.0)] == ["released"]
    assert h4h.command("release", False, 4.0) == []  # nothing waits: nothing to release
    h4h.hand_over("complete", 6, 5.0)
    assert [e.state for e in h4h.deck_in(6.0)] == ["dealt_early"]
    assert [e.state for e in h4h.command("off", False, 7.0)] == ["off"]
    assert h4h.command("off", False, 8.0) == []  # off already: nothing to say (hub's joins)


def test_hand_for_hand_on_again_keeps_a_table_s_place_in_the_round():
    """The hub tells every table that joins "on" while hand-for-hand is on: a table released
    (its next deck not yet in) that reconnects stays released, a waiting one stays waiting."""
    h4h = HandForHandState()
    h4h.command("on", False, 0.0)
    assert h4h.command("on", False, 1.0) == [] and h4h.state == "waiting"
    assert [e.state for e in h4h.command("release", False, 2.0)] == ["released"]
    assert h4h.command("on", False, 3.0) == [] and h4h.state == "playing"
    assert h4h.deck_in(4.0) == []  # dealt after its release: nothing early about it
    assert h4h.command("on", True, 5.0) == [] and h4h.state == "playing"


def test_dealers_choice_cycles_and_the_deck_fixes_the_game():
    choice = DealersChoice()
    game, betting, events = choice.deck_in(0.0)  # nobody declared: the first game, said so
    assert (game, betting) == DECLARABLE_GAMES[0][:2]
    assert [e.default for e in events if isinstance(e, GameDeclared)] == [True]
    taps = len(DECLARABLE_GAMES) + 1  # round the cycle, and one more
    labels = [choice.tap_between_hands(1.0)[0].label for _ in range(taps)]
    assert labels == [label for *_, label in DECLARABLE_GAMES + DECLARABLE_GAMES[:1]]
    game, betting, events = choice.deck_in(2.0)
    assert (game, betting, events) == (*DECLARABLE_GAMES[0][:2], [])  # declared: no default
    # the deck is in, no card dealt: a tap changes this hand's game, on from the declared one
    game, _, label, events = choice.tap_before_first_card(7, 3.0)
    assert label == DECLARABLE_GAMES[1][2] and events[0].hand == 7
    assert choice.deck_in(4.0)[:2] == DECLARABLE_GAMES[0][:2]  # the next dealer declares anew
    assert choice.label(*DECLARABLE_GAMES[3][:2]) == DECLARABLE_GAMES[3][2]


def test_a_dealer_shift_counts_complete_hands_and_the_next_sign_in_sums_it_up():
    shift = DealerShift()
    assert shift.sign_in("D1", 0.0) == [DealerSignedIn(dealer="D1", t=0.0)]
    for outcome in ("complete", "misdeal", "complete"):
        shift.hand_over(outcome)
    assert shift.summary(30.0).hands_per_hour is None  # under a minute: no rate yet
    events = shift.sign_in("D2", 1800.0)
    assert events[0] == DealerSummary(dealer="D1", hands=2, minutes=30.0, hands_per_hour=4.0,
                                      t=1800.0)
    assert (shift.dealer, shift.hands) == ("D2", 0)
