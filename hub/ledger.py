"""What the venue's recorder holds of each table, and what it acknowledges and asks for again.
No I/O: fed the seqs it stored, the tables it heard and the time, it says which counts to
commit, which acknowledgements to send and which replays to ask for (``hub.recorder`` is the
MQTT and database shell around it), so that its rules can be driven through loss,
duplication, reordering and restarts in milliseconds (``tests/test_ledger.py``).

The rules: a table's count (``upto``) is the end of the run of seqs held from 1 (or from where
the table said it starts keeping, after it dropped what the recorder missed); it moves only
once the rows are committed, and only the count is acknowledged, so a table never drops from
its outbox what the recorder could still lose. A gap that stays open ``reorder_timeout``
seconds is asked for again (from the count to the first seq held beyond it), at most once per
``reorder_timeout``. Without its session (a first start, or one expired) the recorder missed
what was sent before: a table whose first event is above its count is asked at once, and an
online table that stays quiet for ``reorder_timeout`` is asked for what follows its count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from contract.envelope import Stream

# What the ledger counts: a table's incarnation at the recorder, a bare name in the tests.
K = TypeVar("K", str, Stream)


@dataclass(frozen=True, slots=True)
class Replay(Generic[K]):
    """Ask ``stream``'s table for its events from ``from_seq`` (to ``to_seq``, or to its
    last)."""

    stream: K
    from_seq: int
    to_seq: int | None = None


class RecorderLedger(Generic[K]):
    def __init__(self, reorder_timeout: float = 2.0) -> None:
        self.reorder_timeout = reorder_timeout
        self.upto: dict[K, int] = {}  # committed: whoever reads it finds those rows stored
        self.gaps: dict[K, int] = {}  # replays asked for a gap, table by table
        self._above: dict[K, set[int]] = {}  # seqs stored beyond each table's count
        self._skip_to: dict[K, int] = {}  # a table no longer keeps what is below this
        self._gap_since: dict[K, float] = {}
        self._quiet_since: dict[K, float] = {}  # online tables not heard since subscribing
        self._last_request: dict[K, float] = {}
        self._ack_due: set[K] = set()
        self._fresh_session = False
        self._heard: set[K] = set()  # tables heard since a session began without history
        self._behind: set[K] = set()  # acknowledged further than the database holds

    def load(self, uptos: Mapping[K, int]) -> None:
        """The counts the database holds, at start."""
        self.upto.update(uptos)

    def session(self, kept: bool) -> None:
        """Connected; ``kept``: the broker kept the recorder's session (nothing was missed)."""
        self._fresh_session, self._heard = not kept, set()

    def online(self, table: K, now: float) -> None:
        """A table's retained online status, through a new subscription: if it stays quiet
        (it is not resending after a reconnect of its own), ask it for what follows."""
        self._quiet_since.setdefault(table, now)

    def heard(self, table: K) -> None:
        """A message from the table: it is not quiet."""
        self._quiet_since.pop(table, None)

    def stored(self, table: K, seq: int) -> None:
        """The table's event ``seq`` is in the database: inserted now, or found there already
        (either way it is held)."""
        if self._fresh_session and table not in self._heard:
            self._heard.add(table)
            # One publisher's QoS 1 messages arrive in order: a first event above the count
            # means events were lost with the session, not late: asked at the next flush.
            if (seq - 1 > self.upto.get(table, 0) and seq - 1 not in self._above.get(table, ())
                    and table not in self._gap_since):
                self._gap_since[table] = float("-inf")
        # Found stored already counts too: after a restart the ledger no longer knows the
        # rows committed beyond a gap, and the replay brings them again as duplicates (counted
        # only when new, the table's count stayed below them for good: asked every timeout).
        if seq > self.upto.get(table, 0):
            self._above.setdefault(table, set()).add(seq)
        self._ack_due.add(table)

    def acknowledged_before(self, table: K, acked_upto: int) -> bool:
        """The table says the recorder acknowledged it up to ``acked_upto``: a count below
        that means the database lost rows it had acknowledged (restored from a backup), so the
        table is asked at once from the count. True when it is."""
        held = max(self.upto.get(table, 0), self._skip_to.get(table, 0))
        if acked_upto <= held or table in self._behind:
            return False
        self._behind.add(table)
        return True

    def replay_refused(self, table: K, oldest: int) -> None:
        """The table no longer keeps what the recorder misses: count from where it starts."""
        self._skip_to[table] = max(self._skip_to.get(table, 0), oldest - 1)
        self._ack_due.add(table)

    def counts(self, now: float) -> dict[K, int]:
        """The counts to commit with the rows stored since the last flush (tables due an
        acknowledgement, sorted); ``committed`` once they are."""
        counted: dict[K, int] = {}
        for table in sorted(self._ack_due):
            upto = max(self.upto.get(table, 0), self._skip_to.pop(table, 0))
            above = self._above.setdefault(table, set())
            while upto + 1 in above:
                upto += 1
                above.discard(upto)
            above.difference_update([s for s in above if s <= upto])
            counted[table] = upto
            if above:
                self._gap_since.setdefault(table, now)
            else:
                self._gap_since.pop(table, None)
        self._ack_due.clear()
        return counted

    def committed(self, counted: Mapping[K, int], now: float) -> list[Replay[K]]:
        """The counts are committed (acknowledge each of them now); the replays to ask for."""
        self.upto.update(counted)
        replays: list[Replay[K]] = []
        for table in sorted(self._behind):
            replays.append(self._replay(table, now))
        self._behind.clear()
        for table, since in list(self._quiet_since.items()):
            if now - since >= self.reorder_timeout:
                del self._quiet_since[table]
                replays.append(self._replay(table, now))
        for table, since in list(self._gap_since.items()):
            if now - since < self.reorder_timeout:
                continue
            if now - self._last_request.get(table, float("-inf")) < self.reorder_timeout:
                continue
            self.gaps[table] = self.gaps.get(table, 0) + 1
            replays.append(self._replay(table, now))
            self._gap_since[table] = now
        return replays

    def _replay(self, table: K, now: float) -> Replay[K]:
        """From what is stored on, to the first seq held beyond a gap (a table sends only the
        gap again, not what is already here)."""
        self._last_request[table] = now
        above = self._above.get(table)
        return Replay(table, self.upto.get(table, 0) + 1, min(above) - 1 if above else None)
