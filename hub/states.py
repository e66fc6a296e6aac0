"""The closed vocabularies the hub's floor matches on, each defined once (``StrEnum``s, written
as their strings: the dashboard's JSON and the database hold the same words as before)."""

from __future__ import annotations

from enum import StrEnum


class TableStatus(StrEnum):
    """A table's link as its retained ``status`` says (``unknown`` until the hub hears it)."""

    ONLINE = "online"
    LOST = "lost"  # its connection dropped without a clean stop (the broker's Last Will)
    OFFLINE = "offline"  # stopped cleanly
    UNKNOWN = "unknown"


# The statuses whose seats count (balancing, the room's counts): a lost table's players did
# not leave; a table stopped cleanly is out of the counts.
COUNTED = (TableStatus.ONLINE, TableStatus.LOST)


class SeatingState(StrEnum):
    """Where a table is with the hub's seating for it (hub/seating.py)."""

    DEALT = "dealt"  # it deals this version
    NEXT_HAND = "next_hand"  # it holds it for its next hand
    WAITING = "waiting"  # not taken yet: sent again until it is
    UNREACHABLE = "unreachable"  # not taken, and the table is not online


class Severity(StrEnum):
    """How urgently the floor must come, most urgent first (hub/alerts.py)."""

    URGENT = "urgent"  # the game at that table waits for the floor
    ATTENTION = "attention"  # the dealer has ruled and the game goes on: the floor checks
    NOTICE = "notice"  # for the record
