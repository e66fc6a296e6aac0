"""What the table tells the venue hub: every core event becomes one envelope with a ``seq`` that
never resets (``docs/asyncapi``: ``Envelope``). Pure: the outbox and the MQTT client are
elsewhere; the retained ``state`` snapshot is ``contract/snapshots.py``'s."""

from __future__ import annotations

from typing import Any, NamedTuple

SCHEMA_VERSION = 1

# The incarnation of the events a table made before incarnations existed (an outbox, or a
# hub's database, from an earlier release): an envelope without one belongs to it.
LEGACY_INCARNATION = "0" * 32


class Stream(NamedTuple):
    """One incarnation of a table: its events' seqs count from where it started, without a
    gap (``hardware/outbox.py``). What the venue's recorder, a venue's uplink and the group's
    centre each count."""

    table: str
    incarnation: str


def envelope(event: dict[str, Any], *, venue: str, table: str, seq: int, boot: int,
             ts_ms: int, historical: bool = False,
             incarnation: str = LEGACY_INCARNATION) -> dict[str, Any]:
    """``incarnation``: the start of the table's journal that made the event (``seq`` counts
    within the journal): ``(table, incarnation, seq)`` names an event, whatever happened to
    the table's card since (``docs/failure.md``, "A re-installed or restored table")."""
    data = {k: v for k, v in event.items() if k not in ("type", "hand", "dealer")}
    return {
        "v": SCHEMA_VERSION,
        "event_id": event_id(table, incarnation, seq),
        "venue": venue,
        "table": table,
        "incarnation": incarnation,
        "seq": seq,
        "boot": boot,
        "type": event["type"],
        "ts": ts_ms,
        "hand": event.get("hand"),
        "dealer": event.get("dealer"),
        "historical": historical,
        "data": data,
    }


def event_id(table: str, incarnation: str, seq: int) -> str:
    """An event's name; a legacy event keeps the name it had before incarnations."""
    if incarnation == LEGACY_INCARNATION:
        return f"{table}:{seq}"
    return f"{table}:{incarnation}:{seq}"


def incarnation_of(envelope_: dict[str, Any]) -> str:
    return str(envelope_.get("incarnation", LEGACY_INCARNATION))


def event_of(envelope_: dict[str, Any]) -> dict[str, Any]:
    """The event an envelope carries (``envelope`` undone: type, hand and dealer back in)."""
    return {"type": envelope_["type"], "hand": envelope_.get("hand"),
            "dealer": envelope_.get("dealer"), **envelope_.get("data", {})}
