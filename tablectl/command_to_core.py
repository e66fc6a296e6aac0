"""What the hub tells a table, as the core's inputs: a floor command (contract/commands.py)
and a venue clock reading (contract/snapshots.py) each become one input here, and nowhere
else. Each goes through the core's own check, the typed builder a journal line's goes through
too (``controller/inputs.py``: ``seats_change``, ``clock_command``, ``deck_check_command``,
``hand_for_hand``): the contract checks a command's shape, the core what its values mean
(seats, a structure's name, a clock's bounds), in the same words either way."""

from __future__ import annotations

from contract.commands import (
    ClockCommand,
    Command,
    DeckCheckCommand,
    HandForHandCommand,
    SeatingCommand,
)
from contract.snapshots import VenueClockReading
from controller.events import ClockAction
from controller.inputs import (
    Input,
    clock_command,
    deck_check_command,
    hand_for_hand,
    seats_change,
)


def command_input(command: Command, t: float) -> Input | None:
    """The input ``command`` is at ``t``; None for one the link answers itself (replay,
    status). ``InputError`` (a ValueError) says why the core refuses it."""
    t = float(t)  # as a journal line's: a time is seconds, written as a float
    match command:
        case SeatingCommand(seats=seats, moves=moves, version=version):
            return seats_change(seats, moves if moves is not None else (), version, t=t)
        case ClockCommand(action=action, structure=structure, elapsed=elapsed,
                          running=running):
            return clock_command(action, structure, elapsed=elapsed,
                                 running=running if running is not None else True, t=t)
        case DeckCheckCommand(action=action, deck=deck):
            return deck_check_command(action, deck, t=t)
        case HandForHandCommand(state=state):
            return hand_for_hand(state, t=t)
        case _:
            return None


def venue_clock_input(reading: VenueClockReading, age: float, t: float) -> Input:
    """The venue clock, ``age`` seconds after the hub read it, as a sync of the table's clock
    at ``t`` (a reading with a structure); ``InputError`` for one the core cannot follow."""
    elapsed = reading.elapsed + (age if reading.running else 0.0)
    return clock_command(ClockAction.SYNC, reading.structure, elapsed=elapsed,
                         running=reading.running, t=float(t))
