"""The small machines beside ``Table``: each owns one concern's state and answers with events.

- ``ShotClockTimer``: a player's shot clock, called by the dealer's hold (seconds, then aloud).
- ``HandForHandState``: the floor's hand-for-hand: a table waits after each hand for the release.
- ``DealersChoice``: seed 004's dealer's choice: taps cycle the games, the deck fixes one.
- ``DealerShift``: the dealer signed in, and the hands of their shift (SPEC 1.3).

Pure like the rest of the core: time comes in with each call.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.events import (
    DealerSignedIn,
    DealerSummary,
    Event,
    GameDeclared,
    HandForHandChanged,
    HandForHandOrder,
    ShotClock,
)

# Seed 004's games, in the order a tap cycles them; the first is the default.
DECLARABLE_GAMES: tuple[tuple[str, str, str], ...] = (
    ("holdem", "limit", "HOLD'EM LIMIT"),
    ("holdem", "pot_limit", "HOLD'EM POT LIMIT"),
    ("holdem", "no_limit", "HOLD'EM NO LIMIT"),
    ("omaha", "limit", "OMAHA HI LIMIT"),
    ("omaha", "pot_limit", "OMAHA HI POT LIMIT"),
    ("omaha8", "limit", "OMAHA HI/LO LIMIT"),
    ("omaha8", "pot_limit", "OMAHA H/L POT LIMIT"),
)


def next_game(index: int | None) -> int:
    """A dealer's tap: the next of DECLARABLE_GAMES (the first when none is declared yet)."""
    return 0 if index is None else (index + 1) % len(DECLARABLE_GAMES)


@dataclass
class RunningShot:
    """A shot clock running: since when, its quiet seconds, its countdown, whether said."""

    started: float
    seconds: float
    countdown: float
    countdown_sent: bool = False


class ShotClockTimer:
    """Started by the dealer's hold, cancelled by another hold, a tap or the hand's end; it
    counts ``seconds`` quietly, then ``countdown`` seconds aloud, then expires."""

    def __init__(self) -> None:
        self.running: RunningShot | None = None

    def start(self, seconds: float, countdown: float, hand: int | None,
              t: float) -> list[Event]:
        self.running = RunningShot(t, seconds, countdown)
        return [ShotClock(state="started", seconds=seconds, countdown=countdown,
                               hand=hand, t=t)]

    def cancel(self, why: str, hand: int | None, t: float) -> list[Event]:
        if self.running is None:
            return []
        self.running = None
        return [ShotClock(state="cancelled", reason=why, hand=hand, t=t)]

    def advance(self, hand: int | None, t: float) -> list[Event]:
        shot = self.running
        if shot is None:
            return []
        events: list[Event] = []
        countdown_at = shot.started + shot.seconds
        if not shot.countdown_sent and t >= countdown_at:
            shot.countdown_sent = True
            events.append(ShotClock(state="countdown", seconds=shot.countdown, hand=hand,
                                         t=countdown_at))
        if t >= countdown_at + shot.countdown:
            self.running = None
            events.append(ShotClock(state="expired", hand=hand,
                                         t=countdown_at + shot.countdown))
        return events


class HandForHandState:
    """``off``; ``playing`` (a hand may run); ``waiting`` (this table's hand is over: the
    next waits for the floor's release)."""

    def __init__(self) -> None:
        self.state = "off"

    def holds(self, order: HandForHandOrder) -> bool:
        """Whether this table already is as ``order`` asks: ``off`` to a table off, ``on`` to
        a table on (waiting, or released and playing). The hub tells every table that joins
        whether hand-for-hand is on, so such an order comes at every reconnect: it changes
        nothing (a released table that heard "on" again went back to waiting, for a release
        the floor had already given)."""
        return (order == HandForHandOrder.OFF and self.state == "off") or \
            (order == HandForHandOrder.ON and self.state != "off")

    def command(self, order: HandForHandOrder, hand_in_progress: bool,
                t: float) -> list[Event]:
        """The floor's ``on``, ``off`` or ``release``."""
        if self.holds(order):
            return []
        if order == HandForHandOrder.ON:
            self.state = "playing" if hand_in_progress else "waiting"
        elif order == HandForHandOrder.OFF:
            self.state = "off"
        elif self.state == "waiting":  # release
            self.state = "playing"
            return [HandForHandChanged(state="released", t=t)]
        else:
            return []
        return [HandForHandChanged(state=self.state, t=t)]

    def deck_in(self, t: float) -> list[Event]:
        """The next deck went in: a table still waiting dealt before its release."""
        if self.state != "waiting":
            return []
        self.state = "playing"
        return [HandForHandChanged(
            state="dealt_early", text="HAND FOR HAND: dealt before the floor released the table",
            t=t)]

    def hand_over(self, outcome: str, hand: int, t: float) -> list[Event]:
        """A hand ended; a misdeal is dealt again at once, anything else waits."""
        if self.state != "playing" or outcome == "misdeal":
            return []
        self.state = "waiting"
        return [HandForHandChanged(state="waiting", hand=hand, t=t)]


class DealersChoice:
    """The game a dealer declares by tapping (seed 004): between hands each tap moves to the
    next game; the deck fixes the declared game for its hand (the first game when nobody
    declared); with the deck in and no card dealt, taps still change this hand's game."""

    def __init__(self) -> None:
        self.declared: int | None = None  # the index the next hand will be dealt
        self.hand_declared: int | None = None  # the index of the hand in progress

    def tap_between_hands(self, t: float) -> list[Event]:
        self.declared = next_game(self.declared)
        game, betting, label = DECLARABLE_GAMES[self.declared]
        return [GameDeclared(game=game, betting=betting, label=label, default=False, t=t)]

    def tap_before_first_card(self, hand: int, t: float) -> tuple[str, str, str, list[Event]]:
        """The game, betting and label the hand in progress is now, and the event."""
        self.hand_declared = next_game(self.hand_declared)
        game, betting, label = DECLARABLE_GAMES[self.hand_declared]
        return game, betting, label, [GameDeclared(game=game, betting=betting, label=label,
                                                   default=False, hand=hand, t=t)]

    def deck_in(self, t: float) -> tuple[str, str, list[Event]]:
        """A new hand (not a misdeal's redeal): its game and betting, and the default's
        announcement when nobody declared; the next dealer declares again."""
        choice = self.declared if self.declared is not None else 0
        self.hand_declared = self.declared
        game, betting, label = DECLARABLE_GAMES[choice]
        events: list[Event] = []
        if self.declared is None:
            events.append(GameDeclared(game=game, betting=betting, label=label, default=True,
                                       t=t))
        self.declared = None
        return game, betting, events

    @staticmethod
    def label(game: str, betting: str | None) -> str | None:
        return next((label for g, b, label in DECLARABLE_GAMES
                     if g == game and b == betting), None)


class DealerShift:
    """The dealer signed in (a badge), since when, and the complete hands they dealt: a new
    sign-in closes the last shift with a summary."""

    def __init__(self) -> None:
        self.dealer: str | None = None
        self.since: float | None = None
        self.hands = 0

    def sign_in(self, dealer: str | None, t: float) -> list[Event]:
        events: list[Event] = []
        if self.dealer is not None and self.since is not None:
            events.append(self.summary(t))
        self.dealer, self.since, self.hands = dealer, t, 0
        events.append(DealerSignedIn(dealer=dealer, t=t))
        return events

    def hand_over(self, outcome: str) -> None:
        if outcome == "complete":
            self.hands += 1

    def summary(self, t: float) -> DealerSummary:
        since = t if self.since is None else self.since
        minutes = max(0.0, t - since) / 60.0
        rate = round(self.hands / (minutes / 60.0), 1) if minutes >= 1 else None
        return DealerSummary(dealer=self.dealer, hands=self.hands, minutes=round(minutes, 1),
                             hands_per_hour=rate, t=t)
