"""Seats, the button and the blinds. Pure.

Seats are numbered 1-10 clockwise; "left of" a seat is the next occupied seat with a higher number,
wrapping after 10. Positions between hands follow the profile's ``button_movement`` rule:

- ``moving_button``: the button always moves to the next player; blinds follow it.
- ``dead_button`` (TDA 32, Robert's Rules button rule 1(b)): the big blind moves to the next player
  every hand; the small blind goes where the big blind was and the button where the small blind
  was, even when that seat is now empty (a dead small blind, a dead button).
- ``dead_button_button_stays_on_sb_bust`` (seed 003): as ``dead_button``, except that when the
  player who posted the small blind is gone the button does not move.

Heads-up the button posts the small blind and the other player is dealt first; going to two
players, whoever was due the big blind gets it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

SEAT_MIN, SEAT_MAX = 1, 10


class ButtonMovement(StrEnum):
    """The profile's ``button_movement`` rule (the module's docstring says each)."""

    DEAD_BUTTON = "dead_button"
    DEAD_BUTTON_BUTTON_STAYS_ON_SB_BUST = "dead_button_button_stays_on_sb_bust"
    MOVING_BUTTON = "moving_button"


class NewPlayer(StrEnum):
    """The profile's ``new_player`` rule: dealt in at once, or waiting where the house forbids
    coming in until the button passes."""

    DEAL_IN_IMMEDIATELY = "deal_in_immediately"
    WAIT_BETWEEN_SB_AND_BUTTON = "wait_between_sb_and_button"
    WAIT_BETWEEN_BUTTON_AND_BIG_BLIND = "wait_between_button_and_big_blind"
    WAIT_ON_BUTTON_OR_SMALL_BLIND = "wait_on_button_or_small_blind"


class SeatingError(ValueError):
    """Seating that cannot be played (a caller's mistake: fix the setup or seats input)."""


def normalise_seats(seats: Iterable[int]) -> tuple[int, ...]:
    result = []
    for seat in seats:
        if isinstance(seat, bool) or not isinstance(seat, int) or not SEAT_MIN <= seat <= SEAT_MAX:
            raise SeatingError(f"seat {seat!r} is not a seat number from {SEAT_MIN} to {SEAT_MAX}")
        result.append(seat)
    if len(set(result)) != len(result):
        raise SeatingError(f"seats {list(result)} name a seat twice")
    return tuple(sorted(result))


def next_occupied(seats: Sequence[int], after: int) -> int:
    """The next occupied seat clockwise (higher number, wrapping after 10) after ``after``."""
    for seat in seats:
        if seat > after:
            return seat
    return seats[0]


@dataclass(frozen=True, slots=True)
class Positions:
    """Where the button and blinds are for one hand. A position may be an empty seat (dead)."""

    button: int
    small_blind: int
    big_blind: int
    seats: tuple[int, ...]

    @property
    def dead_button(self) -> bool:
        return self.button not in self.seats

    @property
    def small_blind_posted(self) -> bool:
        return self.small_blind in self.seats and self.small_blind != self.big_blind

    def deal_order(self) -> list[int]:
        """Occupied seats in dealing order: starting left of the button, clockwise."""
        first = next_occupied(self.seats, self.button)
        start = self.seats.index(first)
        return list(self.seats[start:] + self.seats[:start])


def initial_positions(seats: Sequence[int], button: int) -> Positions:
    seats = normalise_seats(seats)
    if len(seats) < 2:
        raise SeatingError(f"a hand needs at least two seated players, seats are {list(seats)}")
    if button not in seats:
        raise SeatingError(
            f"the button seat {button} is not one of the occupied seats {list(seats)}")
    if len(seats) == 2:
        other = next_occupied(seats, button)
        return Positions(button, button, other, seats)
    small = next_occupied(seats, button)
    return Positions(button, small, next_occupied(seats, small), seats)


def next_positions(previous: Positions, seats: Sequence[int],
                   rule: ButtonMovement) -> Positions:
    """Positions for the next hand, given who is seated now."""
    seats = normalise_seats(seats)
    if len(seats) < 2:
        raise SeatingError(f"a hand needs at least two seated players, seats are {list(seats)}")
    if rule == ButtonMovement.MOVING_BUTTON:
        return initial_positions(seats, next_occupied(seats, previous.button))
    if rule not in (ButtonMovement.DEAD_BUTTON, ButtonMovement.DEAD_BUTTON_BUTTON_STAYS_ON_SB_BUST):
        raise SeatingError(f"unknown button movement rule {rule!r}")
    big = next_occupied(seats, previous.big_blind)
    if len(seats) == 2:
        # Heads-up: the player due the big blind gets it; the other has the button and small blind.
        other = next_occupied(seats, big)
        return Positions(other, other, big, seats)
    small = previous.big_blind
    button = previous.small_blind
    if (
        rule == ButtonMovement.DEAD_BUTTON_BUTTON_STAYS_ON_SB_BUST
        and previous.small_blind_posted
        and previous.small_blind not in seats
    ):
        button = previous.button
    result = Positions(button, small, big, seats)
    if len({result.button, result.small_blind, result.big_blind}) < 3:
        # Seating changed so much that the dead-button order cannot hold: fall back to the
        # plain order from the new big blind so that no one posts twice.
        small = _previous_occupied(seats, big)
        return Positions(_previous_occupied(seats, small), small, big, seats)
    return result


def _previous_occupied(seats: Sequence[int], before: int) -> int:
    for seat in reversed(seats):
        if seat < before:
            return seat
    return seats[-1]


def _clockwise_between(first: int, last: int, seat: int) -> bool:
    """Whether ``seat`` lies strictly after ``first`` and strictly before ``last``, clockwise
    (seats 1-10, higher numbers to the left)."""
    return 0 < (seat - first) % 10 < (last - first) % 10


def must_wait(rule: NewPlayer, positions: Positions, seat: int) -> bool:
    """Whether a player new to the table in ``seat`` sits out the hand played at
    ``positions`` under the profile's ``new_player`` rule."""
    button, small = positions.button, positions.small_blind
    if rule == NewPlayer.WAIT_BETWEEN_SB_AND_BUTTON:
        return _clockwise_between(button, small, seat)
    if rule == NewPlayer.WAIT_BETWEEN_BUTTON_AND_BIG_BLIND:
        return _clockwise_between(button, positions.big_blind, seat)
    if rule == NewPlayer.WAIT_ON_BUTTON_OR_SMALL_BLIND:
        return seat in (button, small) or _clockwise_between(button, small, seat)
    return False


def seat_newcomers(positions_among: Callable[[tuple[int, ...]], Positions],
                   seats: tuple[int, ...], previous: Positions | None,
                   rule: NewPlayer) -> tuple[Positions, tuple[int, ...]]:
    """The next hand's positions and the seats that wait. Players who sat down since the last
    hand (or still wait) sit the hand out where the house forbids coming in, and are dealt
    around until the button passes them. ``positions_among(seats)`` places the button and
    blinds among the seats that play."""
    positions = positions_among(seats)
    if previous is None or rule == NewPlayer.DEAL_IN_IMMEDIATELY:
        return positions, ()
    newcomers = [seat for seat in seats if seat not in previous.seats]
    waiting: list[int] = []
    while True:
        blocked = [seat for seat in newcomers
                   if seat not in waiting and must_wait(rule, positions, seat)]
        playing = tuple(seat for seat in seats if seat not in waiting + blocked)
        if not blocked or len(playing) < 2:
            return positions, tuple(sorted(waiting))
        waiting += blocked
        positions = positions_among(playing)
