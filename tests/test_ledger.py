"""The venue recorder's rules without a broker (``hub/ledger.py``): tables, a broker that
reorders and redelivers, a database that loses what a crash left uncommitted and a recorder
that restarts with or without its session, all simulated in memory and driven by hypothesis:
every run must end with every event stored and acknowledged (the database's key stores each
once), and no acknowledgement may ever cover an event the database could still lose. (It found
a count stuck for good below rows committed beyond a gap before a restart: replayed, they came
as duplicates, and only new rows were counted.)"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.ledger import RecorderLedger, Replay

TIMEOUT = 2.0  # the recorder's reorder timeout, in the simulation's seconds
TABLES = ("t1", "t2")


@dataclass
class Table:
    """A table's outbox and link: every event kept until acknowledged; on a (re)connection
    everything above the acknowledgement is sent again (``TableLink._on_connect``)."""

    made: int = 0
    acked: int = 0


@dataclass
class Venue:
    ledger: RecorderLedger = field(default_factory=lambda: RecorderLedger(TIMEOUT))
    tables: dict[str, Table] = field(default_factory=lambda: {t: Table() for t in TABLES})
    queue: list[tuple[str, int]] = field(default_factory=list)  # at the broker, for the recorder
    committed: dict[str, set[int]] = field(default_factory=lambda: {t: set() for t in TABLES})
    pending: dict[str, set[int]] = field(default_factory=lambda: {t: set() for t in TABLES})
    counts: dict[str, int] = field(default_factory=dict)  # the database's count column
    now: float = 0.0

    def send(self, table: str, first: int, last: int) -> None:
        self.queue += [(table, seq) for seq in range(first, last + 1)]

    def deliver(self, index: int) -> None:
        """One message reaches the recorder (any of those waiting: the broker's order is not
        kept across a replay and the live stream)."""
        if not self.queue:
            return
        table, seq = self.queue.pop(index % len(self.queue))
        new = seq not in self.committed[table] and seq not in self.pending[table]
        if new:
            self.pending[table].add(seq)
        self.ledger.heard(table)
        self.ledger.stored(table, seq)

    def flush(self, seconds: float = 0.05) -> None:
        self.now += seconds
        counted = self.ledger.counts(self.now)
        self.counts.update(counted)
        for table in TABLES:  # the commit: rows and counts together
            self.committed[table] |= self.pending[table]
            self.pending[table].clear()
        replays = self.ledger.committed(counted, self.now)
        for table, upto in counted.items():
            held = self.committed[table]
            assert all(seq in held for seq in range(1, upto + 1)), (
                f"{table}: acknowledged up to {upto} with {sorted(held)} committed")
            self.tables[table].acked = max(self.tables[table].acked, upto)
        for replay in replays:
            self.replay(replay)

    def replay(self, replay: Replay) -> None:
        table = self.tables[replay.stream]
        last = table.made if replay.to_seq is None else min(replay.to_seq, table.made)
        self.send(replay.stream, replay.from_seq, last)

    def crash(self, session_kept: bool) -> None:
        """The recorder dies: what it had not committed is gone; it starts again from the
        database. Without its session the broker dropped what waited for it, and the tables'
        retained online statuses come with the new subscription."""
        for table in TABLES:
            self.pending[table].clear()
        if not session_kept:
            self.queue.clear()
        self.ledger = RecorderLedger(TIMEOUT)
        self.ledger.load(self.counts)
        self.ledger.session(session_kept)
        if not session_kept:
            for table in TABLES:
                self.ledger.online(table, self.now)


operations = st.one_of(
    st.tuples(st.just("make"), st.sampled_from(TABLES), st.integers(1, 5)),
    st.tuples(st.just("deliver"), st.integers(0, 50)),
    st.tuples(st.just("deliver_all"), st.just(0)),
    st.tuples(st.just("redeliver"), st.integers(0, 50)),
    st.tuples(st.just("flush"), st.floats(0.01, 3.0)),
    st.tuples(st.just("crash"), st.booleans()),
    st.tuples(st.just("reconnect"), st.sampled_from(TABLES)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(operations, max_size=80))
def test_every_event_is_stored_and_acknowledged_only_once_committed(steps):
    venue = Venue()
    for step in steps:
        match step:
            case ("make", table, count):
                made = venue.tables[table].made
                venue.tables[table].made += count
                venue.send(table, made + 1, made + count)
            case ("deliver", index):
                venue.deliver(index)
            case ("deliver_all", _):
                while venue.queue:
                    venue.deliver(0)
            case ("redeliver", index):  # QoS 1: the broker sends one again
                if venue.queue:
                    venue.queue.append(venue.queue[index % len(venue.queue)])
            case ("flush", seconds):
                venue.flush(seconds)
            case ("crash", kept):
                venue.crash(kept)
            case ("reconnect", table):
                link = venue.tables[table]
                venue.send(table, link.acked + 1, link.made)
    # The room plays on: each table deals one more card, and time passes; whatever was lost is
    # asked for again within a few reorder timeouts.
    for table in TABLES:
        made = venue.tables[table].made = venue.tables[table].made + 1
        venue.send(table, made, made)
    for _ in range(6):
        while venue.queue:
            venue.deliver(0)
        venue.flush(TIMEOUT)
    for table in TABLES:
        made = venue.tables[table].made
        assert venue.committed[table] == set(range(1, made + 1)), table
        assert venue.ledger.upto[table] == made and venue.tables[table].acked == made, table


def test_a_gap_is_asked_for_once_per_timeout_from_the_count_to_what_is_held():
    ledger = RecorderLedger(TIMEOUT)
    ledger.session(kept=True)
    for seq in (1, 2, 5, 6):
        ledger.stored("t1", seq)
    assert ledger.committed(ledger.counts(10.0), 10.0) == []  # the gap is new: wait
    assert ledger.upto["t1"] == 2
    assert ledger.committed(ledger.counts(11.0), 11.0) == []
    assert ledger.committed(ledger.counts(12.0), 12.0) == [Replay("t1", 3, 4)]
    assert ledger.committed(ledger.counts(13.0), 13.0) == []  # asked a second ago
    assert ledger.committed(ledger.counts(14.0), 14.0) == [Replay("t1", 3, 4)]
    assert ledger.gaps == {"t1": 2}


def test_without_its_session_the_recorder_asks_at_once_and_asks_a_quiet_table():
    ledger = RecorderLedger(TIMEOUT)
    ledger.load({"t1": 10, "t2": 4})
    ledger.session(kept=False)
    ledger.online("t2", 0.0)  # t2's retained status: online, and then nothing from it
    ledger.stored("t1", 15)  # t1's first event after the count: 11-14 went with the session
    assert ledger.committed(ledger.counts(0.05), 0.05) == [Replay("t1", 11, 14)]
    assert ledger.committed(ledger.counts(2.0), 2.0) == [Replay("t2", 5)]
    # A table that no longer keeps what is missing: counted from where it starts keeping.
    ledger.replay_refused("t1", 15)
    counted = ledger.counts(2.1)
    assert counted == {"t1": 15}
    assert ledger.committed(counted, 2.1) == []


def test_a_database_behind_what_it_acknowledged_asks_the_table_at_once_from_its_count():
    """A database restored from a backup: a table says the recorder acknowledged it up to 40
    while the count is 10 (and rows 31-33 came since): asked at once for 11-30, once."""
    ledger = RecorderLedger(TIMEOUT)
    ledger.load({"t1": 10})
    ledger.session(kept=True)
    assert not ledger.acknowledged_before("t1", 10)  # nothing lost
    for seq in (31, 32, 33):
        ledger.stored("t1", seq)
    assert ledger.acknowledged_before("t1", 40)
    assert not ledger.acknowledged_before("t1", 40)  # asked already
    assert ledger.committed(ledger.counts(0.05), 0.05) == [Replay("t1", 11, 30)]
    assert ledger.committed(ledger.counts(0.1), 0.1) == []  # the gap's own timeout from now
    # An incarnation that starts at 500 (its status says so) is not behind at 499.
    ledger.replay_refused("t2", 500)
    assert not ledger.acknowledged_before("t2", 499)
