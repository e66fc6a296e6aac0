"""Floor commands a table takes on ``cmd/<name>``: validated before anything acts on them, and
what each becomes for the core."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.wire import WireError, decode

MAX_COMMAND_BYTES = 4096

COMMANDS: dict[str, dict[str, Any]] = {
    # name: {field: (types, required)}
    "seating": {"seats": (list, True), "moves": (list, False)},
    "clock": {"action": (str, True), "structure": (str, False), "elapsed": ((int, float), False),
              "running": (bool, False)},
    "deck-check": {"action": (str, True), "deck": (str, False)},
    "replay": {"from_seq": (int, True), "to_seq": (int, False)},
    "status": {},
    "hand-for-hand": {"state": (str, True)},
}


@dataclass(frozen=True)
class Command:
    name: str
    transaction: str
    args: dict[str, Any]


class CommandError(ValueError):
    """A floor command that must be refused; ``transaction`` is echoed when it was readable."""

    def __init__(self, message: str, transaction: str | None = None) -> None:
        self.transaction = transaction
        super().__init__(message)


def parse_command(name: str, payload: bytes, seen: set[str] | None = None) -> Command:
    """Validate a command from ``cmd/<name>``; raise CommandError saying what is wrong."""
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
    if name not in COMMANDS:
        raise CommandError(f"unknown command {name!r} (known: {', '.join(COMMANDS)})",
                           transaction)
    if seen is not None and transaction in seen:
        raise CommandError(f"transaction {transaction!r} was already handled: a replayed "
                           "command changes nothing", transaction)
    spec = COMMANDS[name]
    problems = []
    for key in obj:
        if key != "transaction" and key not in spec:
            problems.append(f"{key}: unknown field for {name}")
    for key, (types, required) in spec.items():
        if key not in obj:
            if required:
                problems.append(f"{key}: missing")
            continue
        value = obj[key]
        if isinstance(value, bool) and types is not bool:
            problems.append(f"{key}: wrong type bool")
        elif not isinstance(value, types):
            problems.append(f"{key}: wrong type {type(value).__name__}")
    if problems:
        raise CommandError("; ".join(problems), transaction)
    args = {k: v for k, v in obj.items() if k != "transaction"}
    return Command(name, transaction, args)


def command_input(command: Command) -> dict[str, Any] | None:
    """The core input line a command becomes (None: handled by the link, e.g. replay)."""
    args = command.args
    if command.name == "seating":
        line = {"type": "seats", "seats": args["seats"]}
        if "moves" in args:
            line["moves"] = args["moves"]
        return line
    if command.name == "clock":
        return {"type": "clock", **args}
    if command.name == "deck-check":
        return {"type": "deck_check", **args}
    if command.name == "hand-for-hand":
        return {"type": "hand_for_hand", "state": args["state"]}
    return None
