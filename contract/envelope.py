"""What the table tells the venue hub: every core event becomes one envelope with a ``seq`` that
never resets (``docs/asyncapi``: ``Envelope``), and the retained ``state`` snapshot. Pure: the
outbox and the MQTT client are elsewhere."""

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


def state_snapshot(table_state: dict[str, Any], *, hub_link: str, last_seq: int,
                   ts_ms: int) -> dict[str, Any]:
    """The retained ``state`` message: the core's snapshot, the links and the last seq."""
    return {**table_state, "links": {"hub": hub_link}, "last_seq": last_seq, "ts": ts_ms}
