"""Floor commands, one class each, shaped as the contract's schema of the same name says
(``contract/asyncapi.json``): a table's ``cmd/<name>`` (``SeatingCommand``, ``ClockCommand``,
``DeckCheckCommand``, ``ReplayCommand``, ``StatusCommand``, ``HandForHandCommand``) and the
venue clock's ``hub/cmd/clock`` (``HubClockCommand``).

Each is parsed once where it arrives: a table's link from the MQTT payload
(``parse_command``), the venue clock from its own (``parse_clock_command``), the hub from the
dashboard's body, the fields without a transaction (``command_from_fields``). The schema
checks the shape (the fields, their types, nothing unknown); what the values mean, the table's
core checks when it takes the command (``tablectl/command_to_core.py``), the venue clock when
it applies it. The hub builds the commands it sends as objects too (a new transaction each).

A closed field (a command's ``action``, hand-for-hand's ``state``) is a ``StrEnum``, the
schema's ``enum`` in Python: a table's are the core's own words (``controller/events.py``), the
venue clock's are here (``VenueClockAction``). A parsed command holds the members; each is
written as its string, so what goes on the wire is the same.
"""

from __future__ import annotations

import dataclasses
import typing
import uuid
from collections.abc import Container
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

from contract.schema import document, problems
from contract.wire import WireError, decode, encode
from controller.events import ClockAction, DeckCheckAction, HandForHandOrder

MAX_COMMAND_BYTES = 4096


def new_transaction() -> str:
    return uuid.uuid4().hex


class CommandError(ValueError):
    """A floor command that must be refused; ``transaction`` is echoed when it was readable."""

    def __init__(self, message: str, transaction: str | None = None) -> None:
        self.transaction = transaction
        super().__init__(message)


@dataclass(frozen=True, kw_only=True)
class _Command:
    """What every command carries: the transaction its answer echoes."""

    name: ClassVar[str]
    transaction: str = field(default_factory=new_transaction)

    def fields(self) -> dict[str, Any]:
        """The command's fields as sent, without its transaction (an optional one not given
        is left out)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "transaction" and getattr(self, f.name) is not None}

    def to_json(self) -> dict[str, Any]:
        return {"transaction": self.transaction, **self.fields()}

    def payload(self) -> bytes:
        """The command as published; CommandError when it is over what a table takes (it
        would refuse it unread, its transaction unknown, and the floor wait for an answer
        that never comes)."""
        encoded = encode(self.to_json()).encode()
        if len(encoded) > MAX_COMMAND_BYTES:
            raise CommandError(f"the command is {len(encoded)} bytes, over the "
                               f"{MAX_COMMAND_BYTES}-byte limit a table takes", self.transaction)
        return encoded


@dataclass(frozen=True, kw_only=True)
class SeatingCommand(_Command):
    name: ClassVar[str] = "seating"
    seats: list[Any]  # seat numbers (the core checks them: 1 to 10, each once)
    moves: list[Any] | None = None  # players moved between tables (the core checks them)
    version: int | None = None  # the hub's version of the table's seating (hub/seating.py)


@dataclass(frozen=True, kw_only=True)
class ClockCommand(_Command):
    name: ClassVar[str] = "clock"
    action: ClockAction
    structure: str | None = None
    elapsed: int | float | None = None
    running: bool | None = None


@dataclass(frozen=True, kw_only=True)
class DeckCheckCommand(_Command):
    name: ClassVar[str] = "deck-check"
    action: DeckCheckAction
    deck: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplayCommand(_Command):
    name: ClassVar[str] = "replay"
    from_seq: int
    to_seq: int | None = None
    incarnation: str | None = None  # whose events (None: the table's current incarnation's)


@dataclass(frozen=True, kw_only=True)
class StatusCommand(_Command):
    name: ClassVar[str] = "status"


@dataclass(frozen=True, kw_only=True)
class HandForHandCommand(_Command):
    name: ClassVar[str] = "hand-for-hand"
    state: HandForHandOrder


class VenueClockAction(StrEnum):
    """What the floor tells the venue clock (``HubClockCommand``'s action; ``hub/venue_clock.py``
    says what each does with its value)."""

    START = "start"
    PAUSE = "pause"
    RESUME = "resume"
    ADD = "add"
    LEVEL = "level"
    BREAK = "break"
    STOP = "stop"
    HAND_FOR_HAND = "hand-for-hand"


@dataclass(frozen=True, kw_only=True)
class HubClockCommand(_Command):
    """A floor command to the venue clock (``hub/cmd/clock``, and the dashboard's clock)."""

    name: ClassVar[str] = "clock"
    action: VenueClockAction
    value: str | int | float | None = None


# A table's floor command: what its link parses and its daemon applies.
Command = (SeatingCommand | ClockCommand | DeckCheckCommand | ReplayCommand | StatusCommand
           | HandForHandCommand)
COMMANDS: dict[str, type[Command]] = {kind.name: kind for kind in (
    SeatingCommand, ClockCommand, DeckCheckCommand, ReplayCommand, StatusCommand,
    HandForHandCommand)}
AnyCommand = TypeVar("AnyCommand", bound=_Command)


def command_kind(name: str, transaction: str | None = None) -> type[Command]:
    """The class of a table's command ``cmd/<name>``; CommandError for a name not known."""
    kind = COMMANDS.get(name)
    if kind is None:
        raise CommandError(f"unknown command {name!r} (known: {', '.join(COMMANDS)})",
                           transaction)
    return kind


def parse_command(name: str, payload: bytes, seen: Container[str] = ()) -> Command:
    """A table's command from ``cmd/<name>``; CommandError says what is wrong (a transaction
    in ``seen`` was handled already)."""
    obj, transaction = _decoded(payload)
    kind = command_kind(name, transaction)
    _not_seen(transaction, seen)
    return _built(kind, obj, transaction)


def parse_clock_command(payload: bytes, seen: Container[str] = ()) -> HubClockCommand:
    """A command to the venue clock from ``hub/cmd/clock``; CommandError says what is wrong."""
    obj, transaction = _decoded(payload)
    _not_seen(transaction, seen)
    return _built(HubClockCommand, obj, transaction)


def command_from_fields(kind: type[AnyCommand], fields: object) -> AnyCommand:
    """A command from the dashboard's body (its fields, a JSON object without a transaction),
    with a new transaction; CommandError says what is wrong."""
    if not isinstance(fields, dict) or "transaction" in fields:
        raise CommandError("the command's fields are a JSON object (without a transaction)")
    command = _built(kind, {"transaction": new_transaction(), **fields}, None)
    command.payload()  # refused here, at the page, if a table would refuse it unread
    return command


def fields_schema(kind: type[_Command]) -> dict[str, Any]:
    """The JSON schema of a command's fields without its transaction (the dashboard's body):
    the contract's own, less the transaction."""
    schema = dict(document()["components"]["schemas"][kind.__name__])
    schema["properties"] = {k: v for k, v in schema["properties"].items()
                            if k != "transaction"}
    schema["required"] = [k for k in schema.get("required", ()) if k != "transaction"]
    # The MQTT message's description speaks of its answer on cmd-resp; a web body's answer is
    # the HTTP status.
    schema["description"] = (f"The fields of the contract's {kind.__name__} (the hub adds "
                             "the transaction); a command refused is a 400 saying why.")
    return schema


def _decoded(payload: bytes) -> tuple[dict[str, Any], str]:
    if len(payload) > MAX_COMMAND_BYTES:
        raise CommandError(f"command of {len(payload)} bytes is over the {MAX_COMMAND_BYTES}-byte "
                           "limit")
    try:
        obj = decode(payload, max_bytes=MAX_COMMAND_BYTES)
    except WireError as exc:
        raise CommandError(f"not a JSON object: {exc}") from None
    if not isinstance(obj, dict):
        raise CommandError("a command is a JSON object")
    transaction = obj.get("transaction")
    if not isinstance(transaction, str) or not 0 < len(transaction) <= 64:
        raise CommandError("transaction: every command carries a transaction id (a string of "
                           "1 to 64 characters)")
    return obj, transaction


def _not_seen(transaction: str, seen: Container[str]) -> None:
    if transaction in seen:
        raise CommandError(f"transaction {transaction!r} was already handled: a replayed "
                           "command changes nothing", transaction)


_WHOLE_NUMBERS: dict[type[_Command], tuple[str, ...]] = {}
_VOCABULARIES: dict[type[_Command], dict[str, type[StrEnum]]] = {}


def _whole_numbers(kind: type[_Command]) -> tuple[str, ...]:
    """The fields a class types as whole numbers (``int``, or ``int | None``)."""
    if kind not in _WHOLE_NUMBERS:
        _WHOLE_NUMBERS[kind] = tuple(name for name, hint in typing.get_type_hints(kind).items()
                                     if hint is int or hint == int | None)
    return _WHOLE_NUMBERS[kind]


def vocabularies(kind: type[_Command]) -> dict[str, type[StrEnum]]:
    """The fields a class closes to a ``StrEnum`` (alone or with None), each with its enum."""
    if kind not in _VOCABULARIES:
        found: dict[str, type[StrEnum]] = {}
        for name, hint in typing.get_type_hints(kind).items():
            for part in (hint, *typing.get_args(hint)):
                if isinstance(part, type) and issubclass(part, StrEnum):
                    found[name] = part
        _VOCABULARIES[kind] = found
    return _VOCABULARIES[kind]


def _built(kind: type[AnyCommand], obj: dict[str, Any],
           transaction: str | None) -> AnyCommand:
    found = problems(kind.__name__, obj)
    # JSON Schema's "integer" takes 3.0: a field typed int gets an int, or the command is
    # refused (what a class says of its fields holds for whoever reads them).
    found += [f"{name}: {obj[name]!r} is not a whole number written as one"
              for name in _whole_numbers(kind)
              if isinstance(obj.get(name), float)]
    # The schema's enum is the class's (tests/test_contract.py): a word it let through is a
    # member; the command holds the member.
    found += [f"{name}: {obj[name]!r} is not one of {', '.join(vocabulary)}"
              for name, vocabulary in vocabularies(kind).items()
              if obj.get(name) is not None and obj[name] not in tuple(vocabulary)]
    if found:
        raise CommandError("; ".join(found[:5]), transaction)
    closed = {name: vocabulary(obj[name]) for name, vocabulary in vocabularies(kind).items()
              if obj.get(name) is not None}
    return kind(**{**obj, **closed})
