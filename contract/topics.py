"""Every MQTT topic of the project, built here and nowhere else (tables, hub, recorder, venue
clock, tools): ``docs/asyncapi`` (``contract/asyncapi.json``) describes each."""

from __future__ import annotations

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
    """A venue's uplink to the group's central recorder: what the cluster acknowledged."""
    return f"{ROOT}/{venue}/uplink/sent"


def group_resend(venue: str) -> str:
    """The group's central recorder to a venue's uplink: tables to send again."""
    return f"{ROOT}/{venue}/group/resend"
