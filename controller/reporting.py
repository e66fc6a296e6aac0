"""What the table tells the venue hub: envelopes, the public/private split, and the validation
of floor commands. Pure: the outbox and the MQTT client are in ``hardware/``.

Every core event becomes one envelope with a ``seq`` that never resets. The ``private`` topic
carries it whole; the ``events`` topic carries its public view, without hole or burn card
identities (SPEC section 4): those are for the recorder and the roles granted it only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from controller.wire import WireError, decode

SCHEMA_VERSION = 1
TOPIC_ROOT = "pkr/v1/{venue}/tables/{table}/"
MAX_COMMAND_BYTES = 4096
_CARD = re.compile(r"\b[AKQJT2-9][shdc]\b")
# Irregularities whose card everyone at the table has seen (face up, shown, on the board).
_PUBLIC_CARD_KINDS = frozenset({"exposed_card", "boxed_card", "joker", "foreign_card",
                                "too_many_board_cards"})
# Rulings whose text names only cards that were shown to the table.
_PUBLIC_TEXT_ACTIONS = frozenset({"replace_exposed", "scrap_and_replace", "redeal_flop",
                                  "scramble_flop", "board_stands"})
_PRIVATE_ONLY = frozenset({"hand.record", "card.ignored"})


def topic(venue: str, table: str, leaf: str) -> str:
    return TOPIC_ROOT.format(venue=venue, table=table) + leaf


def envelope(event: dict[str, Any], *, venue: str, table: str, seq: int, boot: int,
             ts_ms: int, historical: bool = False) -> dict[str, Any]:
    data = {k: v for k, v in event.items() if k not in ("type", "hand", "dealer")}
    return {
        "v": SCHEMA_VERSION,
        "event_id": f"{table}:{seq}",
        "venue": venue,
        "table": table,
        "seq": seq,
        "boot": boot,
        "type": event["type"],
        "ts": ts_ms,
        "hand": event.get("hand"),
        "dealer": event.get("dealer"),
        "historical": historical,
        "data": data,
    }


def event_of(envelope_: dict[str, Any]) -> dict[str, Any]:
    """The event an envelope carries (``envelope`` undone: type, hand and dealer back in)."""
    return {"type": envelope_["type"], "hand": envelope_.get("hand"),
            "dealer": envelope_.get("dealer"), **envelope_.get("data", {})}


def state_snapshot(table_state: dict[str, Any], *, hub_link: str, last_seq: int,
                   ts_ms: int) -> dict[str, Any]:
    """The retained ``state`` message: the core's snapshot, the links and the last seq."""
    return {**table_state, "links": {"hub": hub_link}, "last_seq": last_seq, "ts": ts_ms}


def public_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event as the dashboard may see it, or None if it is private altogether."""
    kind = event["type"]
    if kind in _PRIVATE_ONLY:
        return None
    out = dict(event)
    if kind == "card":
        role = out.get("role")
        hidden = role in ("hole", "burn") and out.get("face") != "up"
        # A card out of play was seen only if it was a premature board card turned up; a
        # duplicate or an extra card may be the twin of someone's hole card.
        hidden = hidden or (role == "out" and not out.get("premature"))
        if hidden:
            out["card"] = None
            out.pop("tag", None)
            out.pop("deck", None)
    elif kind == "hand.ended":
        secret = {c for cards in event.get("hole", {}).values() for c in cards}
        secret.update(event.get("burns", []))
        out.pop("hole", None)
        out.pop("burns", None)
        out["out"] = [c for c in event.get("out", []) if c not in secret]
        out["hole_counts"] = {seat: len(cards) for seat, cards in event.get("hole", {}).items()}
    elif kind == "irregularity":
        if event.get("kind") not in _PUBLIC_CARD_KINDS:
            out.pop("card", None)
            out.pop("tag", None)
    elif kind == "ruling":
        if event.get("action") not in _PUBLIC_TEXT_ACTIONS:
            out["text"] = _CARD.sub("a card", str(event.get("text", "")))
    elif kind == "board.resolved":
        out.pop("burn", None)
    return out


def shown_cards(events: list[dict[str, Any]]) -> set[str]:
    """Cards the whole table saw during a hand: turned up, shown or put back after a
    premature deal (their identities are public even if they end as burns)."""
    shown: set[str] = set()
    for event in events:
        if event["type"] == "card" and (event.get("face") == "up" or event.get("role") in (
                "board", "scrap") or (event.get("role") == "out" and event.get("premature"))):
            shown.add(str(event.get("card")))
        if event["type"] == "ruling":
            shown.update(event.get("candidates", []) + event.get("returned", []))
        if event["type"] == "irregularity" and event.get("kind") == "foreign_card":
            shown.add(str(event.get("card")))  # another deck's card: not anyone's hole card
    return shown


def private_leaks(public_texts: list[str], ended: dict[str, Any], shown: set[str]) -> list[str]:
    """Hole or burn cards of a hand (its ``hand.ended``) that appear in what the dashboard
    received for it, other than cards the table saw anyway (used by the tests)."""
    secret = {c for cards in ended.get("hole", {}).values() for c in cards}
    secret.update(ended.get("burns", []))
    secret -= shown | {"??", "JK"}
    text = "\n".join(public_texts)
    return sorted(card for card in secret if re.search(rf"\b{card}\b", text))


# ---------------------------------------------------------------------------- commands

COMMANDS: dict[str, dict[str, Any]] = {
    # name: {field: (types, required)}
    "seating": {"seats": (list, True)},
    "clock": {"action": (str, True), "structure": (str, False), "elapsed": ((int, float), False),
              "running": (bool, False)},
    "deck-check": {"action": (str, True), "deck": (str, False)},
    "replay": {"from_seq": (int, True)},
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
        return {"type": "seats", "seats": args["seats"]}
    if command.name == "clock":
        return {"type": "clock", **args}
    if command.name == "deck-check":
        return {"type": "deck_check", **args}
    if command.name == "hand-for-hand":
        return {"type": "hand_for_hand", "state": args["state"]}
    return None
