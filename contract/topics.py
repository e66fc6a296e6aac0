"""Every MQTT topic of the project, built here and nowhere else (tables, hub, recorder, venue
clock, tools): ``docs/asyncapi`` (``contract/asyncapi.json``) describes each."""

from __future__ import annotations

from dataclasses import dataclass

# How long whoever asks the hub waits for its answer (a web request for the floor's worker,
# `tablectl clock` for the venue clock's answer on cmd-resp): then it says the hub is busy.
# One figure: a hub that a web request may wait for is waited for as long on MQTT.
HUB_ANSWER_SECONDS = 10.0

ROOT = "pkr/v1"


def table(venue: str, table_id: str, leaf: str) -> str:
    """A table's topic: ``leaf`` is events, private, status, state, ack, cmd/<name>,
    cmd-resp, or a wildcard (``+``) where a subscriber wants every table or command."""
    return f"{ROOT}/{venue}/tables/{table_id}/{leaf}"


def every_table(venue: str, leaf: str) -> str:
    return table(venue, "+", leaf)


def venue_clock(venue: str) -> str:
    """The venue clock, retained: what every table following the venue clock shows."""
    return f"{ROOT}/{venue}/clock"


def hub(venue: str, leaf: str) -> str:
    """The hub's own topics: status, cmd/<name>, cmd-resp."""
    return f"{ROOT}/{venue}/hub/{leaf}"


def uplink_counts(venue: str) -> str:
    """A venue's uplink to the group's central recorder: what the recorder answered."""
    return f"{ROOT}/{venue}/uplink/sent"


def group_resend(venue: str) -> str:
    """The group's central recorder to a venue's uplink: tables to send again."""
    return f"{ROOT}/{venue}/group/resend"


@dataclass(frozen=True, slots=True)
class Topic:
    """What a topic names: its venue; ``table`` for a table's topics; ``leaf`` the rest
    (``events``, ``cmd/seating``; ``clock`` for the venue clock; for the hub, ``hub/status``;
    ``uplink/sent``, ``group/resend``)."""

    venue: str
    leaf: str
    table: str | None = None


def parse(topic: str) -> Topic | None:
    """The inverse of the builders above: a topic of this project, its venue and table names
    checked as the contract allows them; None for anything else (a subscriber refuses it)."""
    from contract.schema import is_name  # lazily: the schema module is the heavier one

    parts = topic.split("/")
    if len(parts) < 4 or "/".join(parts[:2]) != ROOT or not is_name(parts[2]):
        return None
    venue, rest = parts[2], parts[3:]
    if rest[0] == "tables":
        if len(rest) < 3 or not is_name(rest[1]) or not all(rest[2:]):
            return None
        return Topic(venue, "/".join(rest[2:]), rest[1])
    if rest == ["clock"] or rest in (["uplink", "sent"], ["group", "resend"]) or (
            rest[0] == "hub" and len(rest) >= 2 and all(rest[1:])):
        return Topic(venue, "/".join(rest))
    return None
