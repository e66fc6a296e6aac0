"""What the table tells the venue hub: every core event becomes one envelope with a ``seq`` that
never resets (``docs/asyncapi``: ``Envelope``). Pure: the outbox and the MQTT client are
elsewhere; the retained ``state`` snapshot is ``contract/snapshots.py``'s."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1


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
