"""The dashboard's read-only reports from what the recorder stored: a table's last hands,
statistics over a period, the period's hands as CSV.

Each report opens a storage connection of its own, on the web request's thread, instead of
going through the floor's worker (hub/service.py) as everything that touches the floor's
state does: a report only reads what the recorder committed (a reader never blocks the writer,
SQLite's WAL and PostgreSQL alike), and a month's statistics or a CSV streamed for as long as
the client reads it must not hold up the floor's live messages behind it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from contract.envelope import event_of
from contract.views import public_event
from hub.auth import User
from hub.broadcast_feed import overview, table_feed
from hub.refused import StaffError
from hub.stats import STATS_TYPES, hands_csv_rows, statistics
from hub.storage import open_storage

STATS_DEFAULT_MS = 12 * 3600 * 1000  # statistics: a session, unless a period is asked for
STATS_MAX_MS = 31 * 86_400_000
STATS_TAIL_MS = 3600 * 1000  # read past the period's end: the last hands' ends


class FeedReader:
    """A broadcast feed stream's own storage connection, for as long as it is open (its look
    at the feed every second, on whichever of the server's threads is free).

    A stream that ends (its client gone, the hub stopping) closes it while a look may still
    run on another thread: the lock makes the close wait for the look, as a connection closed
    under a running query crashed the process (SQLite: a segmentation fault, seen in make
    test); a look after the close is refused."""

    def __init__(self, db: str, wall: Callable[[], float]) -> None:
        self.storage = open_storage(db, passed_between_threads=True)
        self.wall = wall
        self._lock = threading.Lock()
        self._closed = False

    def table(self, table: str, hands: int = 1) -> dict[str, Any]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the broadcast feed's stream has ended: its reader is closed")
            try:
                return table_feed(self.storage, table, int(self.wall() * 1000), None, hands)
            except Exception:
                self.storage.rollback()  # a PostgreSQL transaction that failed is not reused
                raise

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self.storage.close()


class Reports:
    def __init__(self, db: str, *, wall: Callable[[], float] = time.time) -> None:
        self.db = db
        self.wall = wall

    def hand_history(self, user: User, table: str, hands: int = 20) -> list[dict[str, Any]]:
        """The table's last hands: public data for every role, hole and burn cards and hand
        records only for a role allowed private data."""
        storage = open_storage(self.db)
        try:
            envelopes = storage.hand_history(table, max(1, min(hands, 200)))
        finally:
            storage.close()
        private = user.may("private")
        # A hand is its number within its journal (a re-installed table counts from 1 again).
        grouped: dict[tuple[int, int], dict[str, Any]] = {}
        for epoch, stored in envelopes:
            event = event_of(stored)
            shown = event if private else public_event(event)
            if shown is None:
                continue
            number = int(stored["hand"])
            entry = grouped.setdefault((epoch, number), {"hand": number, "events": [],
                                                         "dealer": stored.get("dealer")})
            entry["events"].append({**shown, "seq": stored["seq"], "ts": stored["ts"]})
        return [grouped[key] for key in sorted(grouped)]

    def broadcast_overview(self) -> dict[str, Any]:
        """The broadcast feed's delay, its time now and the tables it shows (the broadcast
        role's: hub/broadcast_feed.py)."""
        storage = open_storage(self.db)
        try:
            found = overview(storage, int(self.wall() * 1000))
            storage.commit()
            return found
        finally:
            storage.close()

    def broadcast_table(self, table: str, at_ms: int | None, hands: int) -> dict[str, Any]:
        """A featured table's hands on the broadcast feed, as of its time now or ``at_ms``
        if earlier: the delay is the hub's, whatever the client asks."""
        storage = open_storage(self.db)
        try:
            return table_feed(storage, table, int(self.wall() * 1000), at_ms,
                              max(1, min(hands, 50)))
        finally:
            storage.close()

    def feed_reader(self) -> FeedReader:
        return FeedReader(self.db, self.wall)

    def _period(self, start_ms: int | None, end_ms: int | None) -> tuple[int, int]:
        end = int(self.wall() * 1000) if end_ms is None else end_ms
        start = end - STATS_DEFAULT_MS if start_ms is None else start_ms
        if start > end:
            raise StaffError("the period's start is after its end")
        if end - start > STATS_MAX_MS:
            raise StaffError(f"a period of at most {STATS_MAX_MS // 86_400_000} days")
        return start, end

    def statistics(self, start_ms: int | None = None,
                   end_ms: int | None = None) -> dict[str, Any]:
        """Hands per hour per table and dealer, irregularities, hand durations: the last
        twelve hours unless a period is given (UTC ms). The events are streamed from the
        database and summed as they go by, never all in memory."""
        start, end = self._period(start_ms, end_ms)
        storage = open_storage(self.db)
        try:  # a hand started in the period may end (and the next start) after it
            return statistics(storage.stream_events(start, STATS_TYPES, end + STATS_TAIL_MS),
                              start, end)
        finally:
            storage.close()

    def hands_csv_stream(self, start_ms: int | None = None,
                         end_ms: int | None = None) -> Iterator[str]:
        """The period's hands as CSV, a table at a time (the period checked at once)."""
        start, end = self._period(start_ms, end_ms)

        def pieces() -> Iterator[str]:
            # Starlette asks for each piece on whichever of its threads is free.
            storage = open_storage(self.db, passed_between_threads=True)
            try:
                names = storage.dealer_names()
                yield from hands_csv_rows(
                    storage.stream_events(start, STATS_TYPES, end + STATS_TAIL_MS), start, end,
                    names)
            finally:
                storage.close()

        return pieces()
