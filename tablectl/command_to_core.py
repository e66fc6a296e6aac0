"""What the hub tells a table, as the core's inputs: a floor command (contract/commands.py)
and a venue clock reading (contract/snapshots.py) each become one input here, and nowhere
else. Each goes through the core's own check (``parse_input``, as a journal line does): the
contract checks a command's shape, the core what its values mean (seats, a structure's name,
a clock's bounds)."""

from __future__ import annotations

from typing import Any

from contract.commands import (
    ClockCommand,
    Command,
    DeckCheckCommand,
    HandForHandCommand,
    SeatingCommand,
)
from contract.snapshots import VenueClockReading
from controller.inputs import Input, parse_input


def command_input(command: Command, t: float) -> Input | None:
    """The input ``command`` is at ``t``; None for one the link answers itself (replay,
    status). ``InputError`` (a ValueError) says why the core refuses it."""
    line: dict[str, Any]
    match command:
        case SeatingCommand():
            line = {"type": "seats", **command.fields()}
        case ClockCommand():
            line = {"type": "clock", **command.fields()}
        case DeckCheckCommand():
            line = {"type": "deck_check", **command.fields()}
        case HandForHandCommand():
            line = {"type": "hand_for_hand", **command.fields()}
        case _:
            return None
    return parse_input({**line, "t": t})


def venue_clock_input(reading: VenueClockReading, age: float, t: float) -> Input:
    """The venue clock, ``age`` seconds after the hub read it, as a sync of the table's clock
    at ``t`` (a reading with a structure); ``InputError`` for one the core cannot follow."""
    elapsed = reading.elapsed + (age if reading.running else 0.0)
    return parse_input({"type": "clock", "action": "sync", "structure": reading.structure,
                        "elapsed": elapsed, "running": reading.running, "t": t})
