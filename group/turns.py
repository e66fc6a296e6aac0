"""``VenueTurns``: what waits for one of the central database's writers, venue by venue, taken
one entry of each venue in turn and a bounded number of events a write.

The writers are shared by table (a hash of venue and table), not by venue: in one list, a
venue with thousands of events waiting would put all of them in the write that another
venue's next event waits for, and each write would be as long as everything that waited.
Here a write takes one message of each venue with something waiting in turn, up to
``most_events`` (at least one entry): another venue's message is in the next write whatever
one venue has waiting, and no write is longer than ``most_events`` and a message.

A venue's entries stay in the order they came: a table's messages (a table is always one
writer's) are written in order, each once. Pure: no lock, no clock; the recorder's worker
alone adds and takes. The turns are ``group.rounds``'s, which the intake shares.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from group.rounds import Rounds

Entry = TypeVar("Entry")


class VenueTurns(Generic[Entry]):
    def __init__(self) -> None:
        self._rounds: Rounds[Hashable, tuple[Entry, int]] = Rounds()  # (entry, its events)
        self.events = 0  # events waiting, every venue's

    def add(self, venue: Hashable, entry: Entry, events: int) -> None:
        """``entry`` (carrying ``events`` events; 0 for an answer alone) after the venue's
        others."""
        self._rounds.add(venue, (entry, events))
        self.events += events

    def take(self, most_events: int) -> list[Entry]:
        """Entries for one write: one of each venue in turn, until they carry ``most_events``
        (at least one entry, whatever it carries). A venue whose entry was taken last goes
        behind the others, in this write and the next."""
        taken: list[Entry] = []
        carried = 0
        while not taken or carried < most_events:
            next_in_turn = self._rounds.take()
            if next_in_turn is None:
                break  # nothing waits
            _venue, (entry, events) = next_in_turn
            taken.append(entry)
            carried += events
        self.events -= carried
        return taken

    def __len__(self) -> int:
        return len(self._rounds)
