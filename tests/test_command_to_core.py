"""The floor's typed commands straight into the core's inputs (tablectl/command_to_core.py):
each through the typed builder that a journal line's goes through too, so a value is refused
at the same boundaries, in the same words, and a good one makes the same input."""

from __future__ import annotations

from enum import StrEnum

import pytest

from contract.commands import (
    COMMANDS,
    ClockCommand,
    CommandError,
    DeckCheckCommand,
    HandForHandCommand,
    HubClockCommand,
    SeatingCommand,
    VenueClockAction,
    command_from_fields,
    parse_clock_command,
    parse_command,
    vocabularies,
)
from contract.schema import document
from contract.snapshots import VenueClockReading
from contract.wire import decode, encode
from controller.events import ClockAction, DeckCheckAction, HandForHandOrder
from controller.inputs import InputError, input_to_dict, parse_input
from hub.venue_clock import ACTIONS
from tablectl.command_to_core import command_input, venue_clock_input

LINE_TYPE = {SeatingCommand: "seats", ClockCommand: "clock", DeckCheckCommand: "deck_check",
             HandForHandCommand: "hand_for_hand"}


def _as_line(command, t: float) -> dict:
    """The replay line the command once became on its way to the core."""
    return {"type": LINE_TYPE[type(command)], **command.fields(), "t": t}


def test_the_closed_fields_of_the_commands_are_strenums_with_the_schemas_enums():
    """Each command field the schema closes is a StrEnum in Python, with the same words in the
    same order, and no StrEnum field is open in the schema (tests/test_events.py holds the
    events the same way)."""
    schemas = document()["components"]["schemas"]
    closed = {}
    for kind in (*COMMANDS.values(), HubClockCommand):
        properties = schemas[kind.__name__]["properties"]
        enums = {name for name, schema in properties.items() if "enum" in schema}
        assert enums == set(vocabularies(kind)), kind.__name__
        for name, vocabulary in vocabularies(kind).items():
            assert properties[name]["enum"] == list(vocabulary), (kind.__name__, name)
            closed[kind.__name__, name] = vocabulary
    assert closed == {("ClockCommand", "action"): ClockAction,
                      ("DeckCheckCommand", "action"): DeckCheckAction,
                      ("HandForHandCommand", "state"): HandForHandOrder,
                      ("HubClockCommand", "action"): VenueClockAction}
    assert tuple(VenueClockAction) == ACTIONS  # the venue clock acts on the contract's words


@pytest.mark.parametrize(("name", "payload"), [
    ("clock", '{"transaction":"a1","action":"sync","structure":"tda-2024","elapsed":61.5,'
              '"running":false}'),
    ("clock", '{"transaction":"a2","action":"pause"}'),
    ("deck-check", '{"transaction":"a3","action":"start","deck":"R1"}'),
    ("hand-for-hand", '{"transaction":"a4","state":"release"}'),
    ("seating", '{"transaction":"a5","seats":[1,4,9],"version":7}'),
])
def test_a_parsed_command_holds_the_members_and_goes_out_byte_for_byte(name, payload):
    command = parse_command(name, payload.encode())
    for field, vocabulary in vocabularies(type(command)).items():
        assert type(getattr(command, field)) is vocabulary, field
    assert command.payload() == payload.encode()
    fields = {k: v for k, v in decode(payload.encode()).items() if k != "transaction"}
    again = command_from_fields(type(command), fields)  # the dashboard's way in
    assert encode(again.fields()) == encode(command.fields())


def test_a_venue_clock_command_holds_its_action_as_a_member():
    command = parse_clock_command(b'{"transaction":"v1","action":"hand-for-hand","value":"on"}')
    assert command.action is VenueClockAction.HAND_FOR_HAND
    assert command.payload() == b'{"transaction":"v1","action":"hand-for-hand","value":"on"}'
    with pytest.raises(CommandError, match="action"):
        parse_clock_command(b'{"transaction":"v2","action":"rewind"}')


# Commands as the contract lets them through, each with the input the core makes of it.
GOOD = [
    SeatingCommand(seats=[9, 1, 4]),
    SeatingCommand(seats=[1, 2, 3], version=4, moves=[
        {"seat": 3, "from_table": "t2", "from_seat": 5, "player": "Ann"},
        {"seat": 7, "to_table": "t9", "to_seat": 1}]),
    ClockCommand(action=ClockAction.START, structure="tda-2024"),
    ClockCommand(action=ClockAction.SYNC, structure="tda-2024", elapsed=61, running=False),
    ClockCommand(action=ClockAction.SYNC, structure="tda-2024", elapsed=0.5),
    ClockCommand(action=ClockAction.STOP),
    DeckCheckCommand(action=DeckCheckAction.START, deck="R1"),
    DeckCheckCommand(action=DeckCheckAction.FINISH),
    HandForHandCommand(state=HandForHandOrder.ON),
    HandForHandCommand(state=HandForHandOrder.RELEASE),
]

# Commands a tool could build that the core refuses (the contract's schema refuses most of
# these at the gate already; the core refuses them again, whoever built them).
BAD = [
    SeatingCommand(seats=[3, 3]),
    SeatingCommand(seats=[0, 11]),
    SeatingCommand(seats="1,2"),
    SeatingCommand(seats=[1, 2], version=0),
    SeatingCommand(seats=[1, 2], version=True, moves=[{"seat": 5, "to_table": "t2"}]),
    SeatingCommand(seats=[1, 2], moves=[{"seat": 2, "to_table": "t2", "to_seat": 4}]),
    SeatingCommand(seats=[1, 2], moves="all"),
    ClockCommand(action="sideways"),
    ClockCommand(action=ClockAction.START),
    ClockCommand(action=ClockAction.START, structure="../../etc/passwd"),
    ClockCommand(action=ClockAction.SYNC, structure="tda-2024", elapsed=1e300),
    ClockCommand(action=ClockAction.SYNC, structure="tda-2024", elapsed=True, running="yes"),
    ClockCommand(action=ClockAction.SYNC, structure=5),
    DeckCheckCommand(action="shuffle", deck="R1"),
    DeckCheckCommand(action=DeckCheckAction.START),
    DeckCheckCommand(action=DeckCheckAction.START, deck="no such deck!"),
    DeckCheckCommand(action=DeckCheckAction.CANCEL, deck=7),
    HandForHandCommand(state="maybe"),
    HandForHandCommand(state="\u0000"),
]


@pytest.mark.parametrize("command", GOOD, ids=lambda c: type(c).__name__)
def test_a_command_makes_the_input_its_line_makes(command):
    item = command_input(command, 12.0)
    assert item == parse_input(_as_line(command, 12.0))
    assert input_to_dict(item) == input_to_dict(parse_input(_as_line(command, 12.0)))
    for field in ("action", "state"):  # the core's words, written as plain strings
        if hasattr(item, field):
            assert isinstance(getattr(item, field), StrEnum)
            assert type(input_to_dict(item)[field]) is str


@pytest.mark.parametrize("command", BAD, ids=lambda c: type(c).__name__)
def test_a_command_the_core_refuses_is_refused_in_its_lines_words(command):
    with pytest.raises(InputError) as line_refused:
        parse_input(_as_line(command, 3.0))
    with pytest.raises(InputError) as refused:
        command_input(command, 3.0)
    assert refused.value.problems == line_refused.value.problems
    assert str(refused.value) == str(line_refused.value)


@pytest.mark.parametrize(("structure", "elapsed", "running", "age"), [
    ("tda-2024", 600.0, True, 2.5),
    ("tda-2024", 600.0, False, 2.5),
    ("/etc/passwd", 5.0, True, 0.0),
    ("tda-2024", 2_592_000.0, True, 10.0),
    ("tda-2024", -1.0, False, 0.0),
])
def test_the_venue_clock_is_a_sync_as_its_line_would_be(structure, elapsed, running, age):
    reading = VenueClockReading(structure=structure, elapsed=elapsed, running=running,
                                hand_for_hand=False)
    line = {"type": "clock", "action": "sync", "structure": structure,
            "elapsed": elapsed + (age if running else 0.0), "running": running, "t": 7.0}
    try:
        expected = parse_input(line)
    except InputError as exc:
        with pytest.raises(InputError) as refused:
            venue_clock_input(reading, age, 7.0)
        assert refused.value.problems == exc.problems
    else:
        item = venue_clock_input(reading, age, 7.0)
        assert item == expected and item.action is ClockAction.SYNC


def test_a_journal_line_still_takes_what_it_took():
    """The replay line's own conveniences are the line's, not the builders': a clock line
    naming only a structure starts it; an explicit null is refused where absence is not."""
    started = parse_input({"type": "clock", "structure": "tda-2024"})
    assert started.action is ClockAction.START
    assert parse_input({"type": "seats", "seats": [2, 1]}).seats == (1, 2)
    with pytest.raises(InputError, match=r"^moves: must be a list"):
        parse_input({"type": "seats", "seats": [1, 2], "moves": None})
    with pytest.raises(InputError, match=r"^running: must be true or false, not None$"):
        parse_input({"type": "clock", "action": "pause", "running": None})
    with pytest.raises(InputError) as refused:  # every problem, the line's first
        parse_input({"type": "clock", "action": "up", "speed": 2})
    assert [p.split(":")[0] for p in refused.value.problems] == ["speed", "action"]
