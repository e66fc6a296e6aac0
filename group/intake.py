"""``FairIntake``: what the central recorder has received and not yet taken, venue by venue,
each venue's share bounded, served in turn.

The group's venues share one central recorder. One venue's uplink gone wrong (or a venue's
stolen credentials) may send far faster than the centre stores: in one queue the others'
messages would wait behind all of it, and the queue would grow with whatever it sent. Here
each venue has a queue of its own, bounded in messages and bytes; the recorder takes one
message of each venue in turn; what comes while a venue's queue is full is not taken, so it is
not answered, and its uplink sends it again later, slower each time (its answer timeout doubles
at each expiry): back-pressure that costs the other venues nothing.

Thread-safe: nats-py's loop offers, the recorder's worker takes. The lock is here; the turns
are ``group.rounds``'s (pure), which the writers' ``group.turns`` share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from group.rounds import Rounds

Item = TypeVar("Item")


@dataclass
class _Share:
    size: int = 0  # bytes waiting
    refused: int = 0  # offers not taken (its queue full) since the last ``refusals``


class FairIntake(Generic[Item]):
    def __init__(self, *, max_messages: int, max_bytes: int) -> None:
        self.max_messages = max_messages  # a venue's queue, each
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._shares: dict[Hashable, _Share] = {}
        self._rounds: Rounds[Hashable, tuple[Item, int]] = Rounds()  # (item, its size)

    def offer(self, venue: Hashable, item: Item, size: int) -> bool:
        """Take ``item`` (of ``size`` bytes) into ``venue``'s queue; False if it is full (the
        item is dropped: not answered, it comes again). A venue with nothing waiting always
        gets one in, whatever its size (the cluster bounds a message's)."""
        with self._lock:
            share = self._shares.get(venue)
            if share is None:
                share = self._shares[venue] = _Share()
            waiting = self._rounds.waiting(venue)
            if waiting and (waiting >= self.max_messages or share.size + size > self.max_bytes):
                share.refused += 1
                return False
            self._rounds.add(venue, (item, size))
            share.size += size
            return True

    def take(self, most: int,
             admit: Callable[[Hashable], bool] = lambda venue: True) -> list[Item]:
        """Up to ``most`` items, one of each venue in turn (a venue with many waits its turn
        behind every other venue with something waiting), of the venues ``admit`` lets in: a
        venue it pauses keeps what waits (its queue full, its uplink's next messages are
        refused and come again later) and its turn comes again once it is let in."""
        taken: list[Item] = []
        with self._lock:
            while len(taken) < most:
                next_in_turn = self._rounds.take(admit)
                if next_in_turn is None:
                    break  # nothing waits, or every venue waiting is paused
                venue, (item, size) = next_in_turn
                self._shares[venue].size -= size
                taken.append(item)
        return taken

    def __len__(self) -> int:
        with self._lock:
            return len(self._rounds)

    def refusals(self) -> dict[Hashable, int]:
        """Venue by venue, the offers refused since the last call (then forgotten)."""
        with self._lock:
            found = {venue: share.refused for venue, share in self._shares.items()
                     if share.refused}
            for venue in found:
                self._shares[venue].refused = 0
            return found
