"""Delivery without a broker (``contract/delivery.py``): the table's sender with the venue
recorder's rules (``hub/ledger.py``), and the venue's uplink sender with the group centre's
(``group/gaps.py``), each with its outbox or database, all in memory and driven by hypothesis
through a broker that reorders and redelivers, connections that drop what is on its way,
sessions lost (a broker restarted, a recorder without its session), the centre's database
restored from an older backup, and either side restarted. Every run must end, once the network
heals, with every event stored exactly once, as it was made; on the way, an outbox may never
drop a row its recorder has not committed, nor an uplink count what the centre never
committed, and every message on the wire
keeps to the contract (``contract/schema.py``). Then the rules one by one, as the broker tests
see them (``tests/test_reporting.py``, ``tests/test_multi_venue.py``): these take
milliseconds, those seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.delivery import (
    BATCH_EVENTS,
    MAX_BATCH_BYTES,
    UPLINK_BATCH_BYTES,
    UPLINK_BATCH_EVENTS,
    OutboxSender,
    Row,
    TableMessage,
    UplinkMessage,
    UplinkSender,
)
from contract.envelope import LEGACY_INCARNATION, Stream, envelope, incarnation_of
from contract.schema import receive, receive_events
from contract.views import public_envelope, public_event
from contract.wire import encode
from group.gaps import PATIENCE_S, CentralHoldings
from hub.ledger import RecorderLedger

VENUE = "v1"
TABLES = ("t1", "t2")
TIMEOUT = 2.0  # the recorder's reorder timeout, in the simulation's seconds
KEEP = 3  # acknowledged rows an outbox keeps for replays (10,000 on a table)
GAP = 3  # rows of a gap a table sends again per request (2,000 on a table)
WINDOW = 3  # messages in flight (16 on a table)
READ_AHEAD = 4  # rows a table reads from its outbox at a time (500 on a table)
BIG = "x" * 30_000  # an event this big now and then: batches are halved, or cut, to fit


def _event(seq: int, big: bool) -> dict[str, Any]:
    """A table's event: a hole card (hidden in the public view), a board card, or a hand
    record (private altogether)."""
    if seq % 5 == 0:
        return {"type": "hand.record", "hand": seq, "outcome": "complete",
                "hole": {"1": ["As", "Kd"]}, "board": [], "burns": [], "best": {},
                "t": float(seq)}
    event = {"type": "card", "hand": seq, "n": seq, "card": "As", "deck": "R1",
             "role": "hole" if seq % 2 else "board", "seat": 1, "street": "preflop",
             "t": float(seq)}
    return {**event, "pad": BIG} if big else event


# ---------------------------------------------------------------------- a table's link

@dataclass
class Outbox:
    """``hardware/outbox.py`` in memory: a row goes only below the acknowledgement, less the
    newest ``KEEP``; an acknowledgement beyond the last row covers what exists."""

    made: dict[int, Row] = field(default_factory=dict)  # every row ever appended
    kept: set[int] = field(default_factory=set)
    last: int = 0
    acked: int = 0
    boot: int = 1  # the table's starts

    def append(self, big: bool) -> None:
        self.last += 1
        self.made[self.last] = (self.last, 1000 + self.last, self.boot, _event(self.last, big),
                                LEGACY_INCARNATION)
        self.kept.add(self.last)

    def rows(self, after: int, limit: int) -> list[Row]:
        return [self.made[seq] for seq in sorted(s for s in self.kept if s > after)[:limit]]

    def ack(self, upto: int) -> None:
        self.acked = max(self.acked, min(upto, self.last))
        self.kept -= {seq for seq in self.kept if seq <= self.acked - KEEP}

    def oldest(self) -> int | None:
        return min(self.kept, default=None)


def _check_table_message(message: TableMessage) -> None:
    """What a table publishes keeps to the contract: consecutive seqs; several only from the
    backlog, flagged historical, at most ``BATCH_EVENTS`` and ``MAX_BATCH_BYTES``; the public
    message the public view of the same events."""
    private = receive_events("Envelope", message.private)
    seqs = [e["seq"] for e in private]
    assert tuple(seqs) == message.seqs == tuple(range(seqs[0], seqs[-1] + 1))
    assert message.historical == sum(e["historical"] for e in private)
    if len(private) > 1:
        assert all(e["historical"] for e in private), seqs  # live events go one a message
        assert len(private) <= BATCH_EVENTS and len(message.private) <= MAX_BATCH_BYTES
    public = [shown for e in private if (shown := public_envelope(e)) is not None]
    if message.public is None:
        assert public == []
    else:
        assert receive_events("PublicEnvelope", message.public) == public


@dataclass
class Table:
    name: str
    outbox: Outbox = field(default_factory=Outbox)
    sender: OutboxSender = field(init=False)
    wire: list[TableMessage] = field(default_factory=list)  # published, not at the broker yet
    pubacks: list[int] = field(default_factory=list)  # the broker's, on the way back
    inbox: list[tuple[str, int, int | None]] = field(default_factory=list)  # acks, replays
    # The first seq this connection has not sent yet: a message starts at or before it (a
    # gap asked for again comes ahead), never after it (that would skip rows and leave the
    # recorder to find the gap).
    not_sent: int = 1

    def __post_init__(self) -> None:
        self.sender = OutboxSender(venue=VENUE, table=self.name, public_view=public_event,
                                   max_inflight=WINDOW, max_gap_replay=GAP,
                                   read_ahead=READ_AHEAD)

    def restart(self) -> None:
        """The table's process starts again: its outbox is as it was."""
        self.cut()
        self.outbox.boot += 1
        self.__post_init__()

    def cut(self) -> None:
        """The connection is gone: what was on its way either way is lost (the table's
        session starts clean; an acknowledgement the recorder sent meanwhile never comes)."""
        self.sender.disconnect()
        self.wire.clear()
        self.pubacks.clear()
        self.inbox.clear()

    def pump(self) -> None:
        for message in self.sender.pump(self.outbox.rows):
            _check_table_message(message)
            first, last = message.seqs[0], message.seqs[-1]
            assert first <= self.not_sent, (
                f"{self.name} sent {first}..{last} with {self.not_sent}.. not sent yet: "
                "rows skipped")
            self.not_sent = max(self.not_sent, last + 1)
            self.wire.append(message)


@dataclass
class Venue:
    tables: dict[str, Table] = field(default_factory=lambda: {t: Table(t) for t in TABLES})
    ledger: RecorderLedger = field(default_factory=lambda: RecorderLedger(TIMEOUT))
    # At the broker for the recorder's session: (table, a private message or a command's
    # answer).
    queue: list[tuple[str, str | dict[str, Any]]] = field(default_factory=list)
    committed: dict[str, dict[int, dict[str, Any]]] = field(
        default_factory=lambda: {t: {} for t in TABLES})
    pending: dict[str, dict[int, dict[str, Any]]] = field(
        default_factory=lambda: {t: {} for t in TABLES})
    counts: dict[str, int] = field(default_factory=dict)  # the database's count column
    now: float = 0.0

    def arrive(self, name: str, index: int) -> None:
        """One of the table's messages reaches the broker, which acknowledges it."""
        table = self.tables[name]
        if table.wire:
            message = table.wire.pop(index % len(table.wire))
            self.queue.append((name, message.private))
            table.pubacks.append(message.number)

    def puback(self, name: str, index: int) -> None:
        table = self.tables[name]
        if table.pubacks:
            assert table.sender.puback(table.pubacks.pop(index % len(table.pubacks)))
            table.pump()

    def cut(self, name: str, arrived: int) -> None:
        """The table's connection drops: its first ``arrived`` messages on the way reached the
        broker (their acknowledgements did not come back), the rest are lost."""
        table = self.tables[name]
        self.queue += [(name, message.private) for message in table.wire[:arrived]]
        table.cut()

    def connect(self, name: str) -> None:
        table = self.tables[name]
        if not table.sender.connected:
            # Everything the recorder has not acknowledged goes again, from the first such
            # row, without waiting to be asked.
            table.sender.connect(table.outbox.acked, table.outbox.last)
            table.not_sent = table.outbox.acked + 1
            table.pump()

    def deliver(self, index: int) -> None:
        """One message reaches the recorder (any of those waiting: the broker's order is not
        kept across a replay and the live stream); the recorder as ``hub/recorder.py``."""
        if not self.queue:
            return
        name, message = self.queue.pop(index % len(self.queue))
        self.ledger.heard(name)
        if isinstance(message, dict):  # a command's answer
            if not message["ok"] and "oldest" in message:
                self.ledger.replay_refused(name, message["oldest"])
            return
        for stored in receive_events("Envelope", message):
            assert stored["table"] == name and stored["venue"] == VENUE
            seq = stored["seq"]
            if seq not in self.committed[name] and seq not in self.pending[name]:
                self.pending[name][seq] = stored
            self.ledger.stored(name, seq)

    def flush(self, seconds: float) -> None:
        """The recorder commits rows and counts together, then acknowledges and asks."""
        self.now += seconds
        counted = self.ledger.counts(self.now)
        self.counts.update(counted)
        for name in TABLES:
            self.committed[name].update(self.pending[name])
            self.pending[name].clear()
        replays = self.ledger.committed(counted, self.now)
        for name, upto in counted.items():
            self._to_table(name, ("ack", upto, None))
        for replay in replays:
            self._to_table(replay.stream, ("replay", replay.from_seq, replay.to_seq))

    def _to_table(self, name: str, command: tuple[str, int, int | None]) -> None:
        table = self.tables[name]
        if table.sender.connected:  # subscribed; else nobody keeps it for the table
            table.inbox.append(command)

    def hear(self, name: str) -> None:
        """The table takes the next acknowledgement or replay request (in order: one
        publisher's)."""
        table = self.tables[name]
        if not table.inbox:
            return
        kind, first, to_seq = table.inbox.pop(0)
        if kind == "ack":
            table.outbox.ack(table.sender.acked(first))
            gone = set(table.outbox.made) - table.outbox.kept
            assert gone <= set(self.committed[name]), (
                f"{name}'s outbox dropped {sorted(gone - set(self.committed[name]))}, "
                f"which the recorder has not committed")
        else:
            error, extra = table.sender.replay(first, to_seq, oldest=table.outbox.oldest(),
                                               last=table.outbox.last, read=table.outbox.rows)
            self.queue.append((name, {"command": "replay", "ok": error is None, **extra}))
        table.pump()

    def settle(self, seconds: float = 0.05) -> None:
        """Everything on its way arrives, in order; the recorder flushes; the tables hear."""
        for name, table in self.tables.items():
            while table.wire or table.pubacks:
                self.arrive(name, 0)
                self.puback(name, 0)
        while self.queue:
            self.deliver(0)
        self.flush(seconds)
        for name, table in self.tables.items():
            while table.inbox:
                self.hear(name)

    def recorder_crash(self, session_kept: bool) -> None:
        """The recorder dies: what it had not committed is gone; it starts again from the
        database's counts. Without its session the broker dropped what waited for it, and
        the retained statuses of the tables online come with the new subscription."""
        self.pending = {name: {} for name in TABLES}
        self.ledger = RecorderLedger(TIMEOUT)
        self.ledger.load(self.counts)
        self.ledger.session(session_kept)
        if not session_kept:
            self.queue.clear()
            for name in (name for name, table in self.tables.items() if table.sender.connected):
                self.ledger.online(name, self.now)

    def broker_restart(self) -> None:
        """Mosquitto without persistence: every session and message gone, every client cut."""
        self.queue.clear()
        for name in TABLES:
            self.cut(name, 0)
        self.ledger.session(False)


def _steps(weights: dict[str, int]) -> Any:
    """Steps by name, the traffic more often than the faults, each with the same arguments
    (a table, a number, whether an event is big, seconds), used as the step needs them: all
    four from one integer drawn, which halves the time hypothesis takes to draw a run."""
    names = [name for name, weight in weights.items() for _ in range(weight)]

    def step(name: str, n: int) -> tuple[str, str, int, bool, float]:
        return (name, TABLES[n % 2], n // 2 % 64, n // 128 % 10 == 0,
                (n // 1280 % 300 + 1) / 100)

    return st.builds(step, st.sampled_from(names), st.integers(0, 1280 * 300 - 1))


table_steps = _steps(
    {"make": 3, "arrive": 3, "puback": 3, "deliver": 3, "redeliver": 1, "flush": 2, "hear": 3,
     "settle": 1, "cut": 1, "connect": 2, "table_restart": 1, "recorder_crash": 2,
     "broker_restart": 1})


def _run_table_steps(venue: Venue, steps: list[tuple[Any, ...]]) -> None:
    for step in steps:
        match step:
            case ("make", name, number, big, _):
                table = venue.tables[name]
                for _ in range(number % 8 + 1):
                    table.outbox.append(big)
                table.pump()
            case ("arrive", name, index, _, _):
                venue.arrive(name, index)
            case ("puback", name, index, _, _):
                venue.puback(name, index)
            case ("deliver", _, index, _, _):
                venue.deliver(index)
            case ("settle", *_):
                venue.settle()
            case ("redeliver", _, index, _, _):  # QoS 1: the broker sends one again
                if venue.queue:
                    venue.queue.append(venue.queue[index % len(venue.queue)])
            case ("flush", _, _, _, seconds):
                venue.flush(seconds)
            case ("hear", name, *_):
                venue.hear(name)
            case ("cut", name, number, _, _):
                venue.cut(name, number % 4)  # that many messages on the way arrived
            case ("connect", name, *_):
                venue.connect(name)
            case ("table_restart", name, *_):
                venue.tables[name].restart()
            case ("recorder_crash", _, number, _, _):
                venue.recorder_crash(session_kept=number % 2 == 0)
            case ("broker_restart", *_):
                venue.broker_restart()
        for table in venue.tables.values():  # the link's turn, after whatever came
            table.pump()


def _heal(venue: Venue) -> None:
    """The network heals and the room plays on: every table connected, one more event each,
    and time passes; whatever was lost is asked for again within a few reorder timeouts."""
    for name, table in venue.tables.items():
        venue.connect(name)
        table.outbox.append(False)
        table.pump()
    for _ in range(100):
        venue.settle(TIMEOUT)
        if all(table.outbox.acked == table.outbox.last and not table.wire
               for table in venue.tables.values()):
            break


@settings(max_examples=200, deadline=None)
@given(st.lists(table_steps, min_size=30, max_size=120))
def test_a_table_s_events_are_stored_once_each_and_dropped_only_once_held(steps):
    venue = Venue()
    for name in TABLES:
        venue.connect(name)
    _run_table_steps(venue, steps)
    _heal(venue)
    for name, table in venue.tables.items():
        made = table.outbox.made
        stored = venue.committed[name]
        assert sorted(stored) == list(range(1, table.outbox.last + 1)), name
        for seq, held in stored.items():  # as it was made, whichever copy came first
            _, ts, boot, event, _ = made[seq]
            assert held == envelope(event, venue=VENUE, table=name, seq=seq, boot=boot,
                                    ts_ms=ts, historical=held["historical"])
        assert venue.ledger.upto[name] == table.outbox.last == table.outbox.acked, name


# ---------------------------------------------------------------------- a venue's uplink

@dataclass
class Group:
    """One venue's hub database and uplink, the group's cluster (core NATS: it keeps nothing)
    and its central recorder, which answers each message once its rows are committed. The
    hub holds each table's incarnations apart (streams): a table's daemon starts a new one at
    each start, from the seq it had reached; a re-installed table starts one at seq 1 again
    (a new journal), a table restored from a backup one at an earlier seq: the same seqs as
    another stream's, other events."""

    # Each stream's first seq and its events (their JSON) from there, as the hub holds them.
    since: dict[Stream, int] = field(
        default_factory=lambda: {Stream(t, LEGACY_INCARNATION): 1 for t in TABLES})
    hub: dict[Stream, list[str]] = field(
        default_factory=lambda: {Stream(t, LEGACY_INCARNATION): [] for t in TABLES})
    current: dict[str, Stream] = field(
        default_factory=lambda: {t: Stream(t, LEGACY_INCARNATION) for t in TABLES})
    sender: UplinkSender[Stream] = field(
        default_factory=lambda: UplinkSender(window=5, per_table=2))
    saved: dict[Stream, int] = field(default_factory=dict)  # the uplink's --state file
    saved_gone: dict[Stream, int] = field(default_factory=dict)  # and its gaps
    uptos: dict[Stream, int] = field(default_factory=dict)  # the hub's counts, as last read
    starts: dict[Stream, int] = field(default_factory=dict)  # and its streams' first seqs
    # Each message with the sender that numbered it: its answer goes to that sender's reply
    # subject (an inbox of the uplink process's own), never to a later process's.
    wire: list[tuple[UplinkSender[Stream], UplinkMessage[Stream]]] = field(default_factory=list)
    taken: list[tuple[UplinkSender[Stream], UplinkMessage[Stream]]] = field(
        default_factory=list)
    answers: list[tuple[UplinkSender[Stream], int]] = field(default_factory=list)
    holdings: CentralHoldings = field(default_factory=CentralHoldings)
    committed: dict[Stream, dict[int, dict[str, Any]]] = field(default_factory=dict)
    ever_committed: dict[Stream, set[int]] = field(default_factory=dict)
    # Seqs the hub's database lost (deleted before or after they were sent): gone for good.
    lost: dict[Stream, set[int]] = field(default_factory=dict)
    incarnations: int = 0
    now: float = 0.0

    def seqs(self, stream: Stream) -> range:
        """Every seq the stream made."""
        return range(self.since[stream], self.since[stream] + len(self.hub[stream]))

    def record(self, name: str, count: int, big: bool) -> None:
        """The venue's recorder commits the table's next events (of its incarnation now)."""
        stream = self.current[name]
        rows = self.hub[stream]
        for _ in range(count):
            seq = self.since[stream] + len(rows)
            rows.append(encode(envelope(_event(seq, big), venue=VENUE, table=name, seq=seq,
                                        boot=1, ts_ms=seq, historical=False,
                                        incarnation=stream.incarnation)))

    def incarnate(self, name: str, since: int) -> None:
        """The table starts a new incarnation at seq ``since``: its status says so, the hub
        keeps the stream (counted up to the seq before it, holding nothing of it yet)."""
        self.incarnations += 1
        stream = self.current[name] = Stream(name, f"{self.incarnations:032x}")
        self.since[stream], self.hub[stream] = since, []

    def restart(self, name: str) -> None:
        """The table's daemon starts again: the same journal goes on."""
        self.incarnate(name, self.since[self.current[name]] + len(self.hub[self.current[name]]))

    def reinstall(self, name: str) -> None:
        """The table is re-installed (a new card): a new journal, from seq 1."""
        self.incarnate(name, 1)

    def restore(self, name: str, back: int) -> None:
        """The table's card is restored from a backup: its journal goes on from an earlier
        seq, ``back`` before where it was."""
        current = self.current[name]
        self.incarnate(name, max(1, self.since[current] + len(self.hub[current]) - back))

    def read(self, stream: Stream, first: int, last: int) -> list[tuple[int, str]]:
        rows, since, lost = self.hub[stream], self.since[stream], self.lost.get(stream, set())
        return [(seq, rows[seq - since]) for seq in range(max(first, since), last + 1)
                if seq - since < len(rows) and seq not in lost]

    def first_held(self, stream: Stream, seq: int) -> int | None:
        lost = self.lost.get(stream, set())
        return next((s for s in self.seqs(stream) if s >= seq and s not in lost), None)

    def hub_loses(self, name: str, count: int) -> None:
        """The hub's database loses the table's oldest ``count`` events it still has, of its
        first streams (deleted by hand, an older retention, a state file lost after a
        purge)."""
        for stream in [s for s in self.hub if s.table == name]:
            kept = [s for s in self.seqs(stream) if s not in self.lost.get(stream, set())]
            self.lost.setdefault(stream, set()).update(kept[:count])
            count -= len(kept[:count])

    def poll(self) -> None:
        """The uplink reads the hub's counts and saves its own (what moved)."""
        self.uptos = {stream: self.since[stream] + len(rows) - 1
                      for stream, rows in self.hub.items()}
        self.starts = dict(self.since)
        if self.sender.dirty:
            for stream, sent, gone in self.sender.unsaved():
                self.saved[stream] = sent
                if gone:
                    self.saved_gone[stream] = gone
            self.sender.saved()

    def pump(self) -> None:
        messages, gaps = self.sender.pump(self.uptos, self.read, self.first_held, self.now,
                                          self.starts)
        for stream, first, last in gaps:  # only what the hub lost is ever taken as gone
            assert set(range(first, last + 1)) <= self.lost.get(stream, set()), (
                stream, first, last)
        for message in messages:
            envelopes = receive_events("Envelope", message.payload)
            assert {(e["table"], incarnation_of(e)) for e in envelopes} == {message.stream}
            seqs = [e["seq"] for e in envelopes]
            assert seqs == list(range(message.first_seq, message.last_seq + 1))
            assert seqs[0] >= self.since[message.stream], (message.stream, seqs)
            assert len(seqs) <= UPLINK_BATCH_EVENTS
            assert len(seqs) == 1 or len(message.payload) <= UPLINK_BATCH_BYTES + 20
            self.wire.append((self.sender, message))

    def arrive(self, index: int) -> None:
        """A message reaches the central recorder."""
        if self.wire:
            self.taken.append(self.wire.pop(index % len(self.wire)))

    def answer(self, index: int) -> None:
        """An answer of the centre's reaches the uplink: it never counts what the centre
        never committed."""
        if self.answers:
            sender, number = self.answers.pop(index % len(self.answers))
            if sender is self.sender:  # (an earlier process's inbox: nobody listens there)
                self.sender.puback(number, self.now)
            for stream, count in self.sender.sent.items():
                counted = set(range(self.since[stream], count + 1)) - self.lost.get(stream, set())
                assert counted <= self.ever_committed.get(stream, set()), (
                    f"the uplink counts {stream} up to {count}, the centre committed "
                    f"{sorted(self.ever_committed.get(stream, set()))}")
            self.pump()

    def cut(self, arrived: int) -> None:
        """The uplink's connection drops: its first ``arrived`` messages on the way reached
        the centre, the rest are lost, and so are the answers on their way back."""
        self.taken += self.wire[:arrived]
        self.wire.clear()
        self.answers.clear()
        self.sender.disconnect()

    def connect(self) -> None:
        """nats-py connects (to the next node); the uplink sends from its counts."""
        if not self.sender.connected:
            self.sender.connect()
            self.pump()

    def wait(self, seconds: float) -> None:
        """Time passes at the uplink: what the centre did not answer in time goes again."""
        self.now += seconds
        self.sender.expire(self.now)
        self.pump()

    def uplink_crash(self) -> None:
        """The uplink's process dies and starts again from its state file."""
        self.cut(0)
        self.sender = UplinkSender(window=5, per_table=2)
        self.sender.load(self.saved, self.saved_gone)
        self.uptos, self.starts = {}, {}

    def centre_turn(self) -> None:
        """The central recorder stores what it took, commits, then answers each message
        (``group/centre.py``)."""
        for sender, message in self.taken:
            envelopes = receive_events("Envelope", message.payload)
            for stored in envelopes:
                stream = Stream(stored["table"], incarnation_of(stored))
                self.committed.setdefault(stream, {}).setdefault(stored["seq"], stored)
                self.ever_committed.setdefault(stream, set()).add(stored["seq"])
            self.holdings.held(VENUE, message.stream, [e["seq"] for e in envelopes], self.now)
            self.answers.append((sender, message.number))
        self.taken.clear()

    def centre_crash(self) -> None:
        """The central recorder dies before committing what it took (never answered); it
        starts again from its database (what it holds without a gap from each stream's
        first seq held: ``GroupStorage.uptos``)."""
        self.taken.clear()
        self.holdings = CentralHoldings()
        for stream, stored in self.committed.items():
            if stored:  # as group/centre.py's GroupStorage.uptos reads its database
                first = upto = min(stored)
                while upto + 1 in stored:
                    upto += 1
                self.holdings.load(VENUE, stream, upto, self.now, first)

    def centre_database_lost(self, name: str, keep: int) -> None:
        """The central database is restored from a backup that held ``name``'s streams up to
        seq ``keep``: the recorder starts again from it."""
        for stream, stored in self.committed.items():
            if stream.table == name:
                self.committed[stream] = {s: e for s, e in stored.items() if s <= keep}
        self.centre_crash()

    def settle(self, seconds: float = 0.05) -> None:
        """The uplink reads the hub; everything on its way arrives and is answered; time
        passes (what went unanswered goes again); the uplink reports."""
        self.poll()
        self.pump()
        while self.wire or self.taken or self.answers:
            self.arrive(0)
            self.centre_turn()
            self.answer(0)
        self.wait(seconds)
        self.report(0.0)

    def report(self, seconds: float) -> None:
        """Time passes; the uplink reports its counts, the centre asks again what it lacks
        (lost while the uplink is away), as ``group/centre.py`` and ``group/uplink.py`` do."""
        self.now += seconds
        for report in self.sender.reports(self.now):
            receive("UplinkCounts", encode(report))  # the contract allows it
            counts = {}
            for entry in report["streams"]:
                stream = Stream(entry["table"], entry["incarnation"])
                assert entry.get("since", 1) == self.since[stream], entry
                self.holdings.starts(VENUE, stream, entry.get("since", 1), self.now)
                self.holdings.gone(VENUE, stream, entry.get("gone", 0), self.now)
                counts[stream] = entry["upto"]
            asks = self.holdings.to_ask(VENUE, counts, self.now)
            if asks and self.sender.connected:
                request = {"v": 1, "streams": [
                    {"table": s.table, "incarnation": s.incarnation, "upto": upto}
                    for s, upto in sorted(asks.items())]}
                asked = receive("ResendRequest", encode(request))["streams"]
                self.sender.resend({Stream(s["table"], s["incarnation"]): s["upto"]
                                    for s in asked})
                self.pump()


uplink_steps = _steps(
    {"record": 3, "poll": 3, "arrive": 3, "answer": 3, "centre_turn": 2, "wait": 2,
     "report": 2, "settle": 1, "cut": 1, "connect": 2, "uplink_crash": 1, "centre_crash": 1,
     "centre_database_lost": 1, "hub_loses": 1, "state_lost": 1, "table_restart": 1,
     "reinstall": 1, "restore": 1})


@settings(max_examples=200, deadline=None)
@given(st.lists(uplink_steps, min_size=30, max_size=120))
def test_a_venue_s_events_reach_the_centre_once_each_through_losses_and_restarts(steps):
    group = Group()
    group.connect()
    for step in steps:
        match step:
            case ("record", name, number, big, _):
                group.record(name, number % 40 + 1, big)
            case ("poll", *_):
                group.poll()
            case ("settle", *_):
                group.settle()
            case ("arrive", _, index, _, _):
                group.arrive(index)
            case ("answer", _, index, _, _):
                group.answer(index)
            case ("cut", _, number, _, _):
                group.cut(number % 4)  # that many messages on the way arrived
            case ("connect", *_):
                group.connect()
            case ("uplink_crash", *_):
                group.uplink_crash()
            case ("centre_turn", *_):
                group.centre_turn()
            case ("centre_crash", *_):
                group.centre_crash()
            case ("centre_database_lost", name, number, _, _):
                group.centre_database_lost(name, number % 30)
            case ("hub_loses", name, number, _, _):
                group.hub_loses(name, number % 30 + 1)
            case ("state_lost", *_):  # the uplink's state file lost with its process
                group.saved, group.saved_gone = {}, {}
                group.uplink_crash()
            case ("table_restart", name, *_):
                group.restart(name)
            case ("reinstall", name, *_):
                group.reinstall(name)
            case ("restore", name, number, _, _):
                group.restore(name, number % 20)
            case ("wait", _, _, _, seconds):
                group.wait(seconds)
            case ("report", _, _, _, seconds):
                group.report(seconds)
        group.pump()  # the uplink's turn, after whatever came
    # The network heals: the uplink connected, each message delivered and answered, every few
    # seconds a report; whatever went unanswered goes again, whatever the centre lacks is
    # asked for again.
    group.connect()

    def missing(stream: Stream) -> set[int]:
        return (set(group.seqs(stream)) - group.lost.get(stream, set())
                - set(group.committed.get(stream, {})))

    for _ in range(100):
        group.settle(PATIENCE_S)
        if not any(missing(stream) for stream in group.hub):
            break
    for stream, rows in group.hub.items():
        stored = group.committed.get(stream, {})
        # Every event the hub still has, and none it never had; a lost one only if it was
        # sent before it was lost.
        assert not missing(stream), (stream, sorted(missing(stream)))
        assert set(stored) <= set(group.seqs(stream)), stream
        assert all(encode(stored[seq]) == rows[seq - group.since[stream]] for seq in stored)
    assert set(group.committed) <= set(group.hub)


# ---------------------------------------------------------------------- the rules one by one

def _outbox(count: int, big: bool = False) -> Outbox:
    outbox = Outbox()
    for _ in range(count):
        outbox.append(big)
    return outbox


def _sent(sender: OutboxSender, outbox: Outbox) -> list[tuple[list[int], list[bool]]]:
    """Pump, take every PUBACK, pump again, until nothing more goes: each message's seqs and
    historical flags."""
    out = []
    while messages := sender.pump(outbox.rows):
        for message in messages:
            _check_table_message(message)
            envelopes = receive_events("Envelope", message.private)
            out.append(([e["seq"] for e in envelopes], [e["historical"] for e in envelopes]))
            assert sender.puback(message.number)
    return out


def test_the_backlog_at_connect_goes_in_batches_flagged_historical_then_live_one_a_message():
    outbox = _outbox(120)
    sender = OutboxSender(venue=VENUE, table="t1", public_view=public_event)
    assert sender.pump(outbox.rows) == []  # not connected: nothing
    sender.connect(acked_upto=10, last_seq=120)
    sent = _sent(sender, outbox)
    assert [seqs for seqs, _ in sent] == [list(range(11, 61)), list(range(61, 111)),
                                          list(range(111, 121))]
    assert all(all(flags) for _, flags in sent)
    outbox.append(False)
    outbox.append(False)
    assert _sent(sender, outbox) == [([121], [False]), ([122], [False])]


def test_a_batch_over_128_kB_is_halved_until_it_fits():
    outbox = _outbox(50, big=True)  # 50 events of 30 kB: 1.5 MB
    sender = OutboxSender(venue=VENUE, table="t1", public_view=public_event)
    sender.connect(acked_upto=0, last_seq=50)
    sent = _sent(sender, outbox)
    assert [seq for seqs, _ in sent for seq in seqs] == list(range(1, 51))
    # Halves of halves, in order: 50 -> 25 -> 12 | 13 -> 6 | 6 | 6 | 7 -> threes, and 3 | 4.
    assert [len(seqs) for seqs, _ in sent] == [3, 3, 3, 3, 3, 3, 3, 4] * 2


def test_the_window_holds_max_inflight_messages_until_the_broker_acknowledges():
    outbox = _outbox(10)
    sender = OutboxSender(venue=VENUE, table="t1", public_view=public_event, max_inflight=3)
    sender.connect(acked_upto=0, last_seq=0)  # nothing as backlog: one a message
    first = sender.pump(outbox.rows)
    assert [m.seqs for m in first] == [(1,), (2,), (3,)] and sender.pump(outbox.rows) == []
    assert sender.puback(first[1].number) and not sender.puback(first[1].number)
    assert [m.seqs for m in sender.pump(outbox.rows)] == [(4,)]
    sender.disconnect()  # what was in flight is forgotten: sent again from the ack
    assert not sender.puback(first[0].number) and sender.pump(outbox.rows) == []
    sender.connect(acked_upto=2, last_seq=10)
    assert [m.seqs for m in sender.pump(outbox.rows)] == [tuple(range(3, 11))]
    assert sender.acked(7) == 7  # the recorder's acknowledgement drops rows, a PUBACK none


def test_a_gap_is_sent_again_ahead_of_what_comes_next_and_only_the_gap():
    """As ``test_reporting.test_a_table_sends_again_only_the_gap_the_recorder_names``."""
    outbox = _outbox(20)
    sender = OutboxSender(venue=VENUE, table="t6", public_view=public_event)
    sender.connect(acked_upto=0, last_seq=0)
    assert len(_sent(sender, outbox)) == 20

    def replay(from_seq, to_seq):
        return sender.replay(from_seq, to_seq, oldest=outbox.oldest(), last=outbox.last,
                             read=outbox.rows)

    assert replay(5, 7) == (None, {"from_seq": 5, "to_seq": 7, "last_seq": 20})
    outbox.append(False)
    assert _sent(sender, outbox) == [([5, 6, 7], [True] * 3), ([21], [False])]
    assert replay(5, 99) == ("to_seq 99 is outside 5..21", {"last_seq": 21})
    assert replay(0, None) == ("from_seq 0 is outside 1..22", {"last_seq": 21})
    sender.max_gap_replay = 2  # a gap longer than one replay: the answer says how far
    assert replay(10, 15) == (None, {"from_seq": 10, "to_seq": 11, "last_seq": 21})
    assert _sent(sender, outbox) == [([10, 11], [True, True])]
    # Without to_seq: everything after from_seq again, as backlog.
    assert replay(19, None) == (None, {"from_seq": 19, "last_seq": 21})
    assert _sent(sender, outbox) == [([19, 20, 21], [True] * 3)]
    outbox.ack(21)  # rows the recorder holds go, but for the newest few (KEEP)
    assert replay(1, 3) == ("events before seq 19 are no longer kept",
                            {"oldest": 19, "last_seq": 21})


def test_a_gap_not_sent_yet_is_not_sent_twice():
    outbox = _outbox(10)
    sender = OutboxSender(venue=VENUE, table="t1", public_view=public_event, max_inflight=2)
    sender.connect(acked_upto=0, last_seq=0)
    first = sender.pump(outbox.rows)
    assert [m.seqs for m in first] == [(1,), (2,)]
    assert all(sender.puback(m.number) for m in first)
    # The recorder asks 2..8: only 2 has gone; 3..8 come anyway, once.
    assert sender.replay(2, 8, oldest=1, last=10, read=outbox.rows)[1]["to_seq"] == 8
    seqs = [seq for message in _sent(sender, outbox) for seq in message[0]]
    assert seqs == list(range(2, 11))


T1, T2 = Stream("t1", LEGACY_INCARNATION), Stream("t2", LEGACY_INCARNATION)


def _uplink(window: int = 64, per_table: int = 4) -> UplinkSender[Stream]:
    sender: UplinkSender[Stream] = UplinkSender(window=window, per_table=per_table)
    sender.connect()
    return sender


def _entry(stream: Stream, upto: int, **more: int) -> dict[str, Any]:
    return {"table": stream.table, "incarnation": stream.incarnation, "upto": upto, **more}


def test_the_uplink_sends_batches_of_100_or_120_kB_at_most_per_table_and_window():
    group = Group()
    group.record("t1", 250, False)
    group.record("t2", 10, True)  # 30 kB each: three to a message
    sender = _uplink(window=5, per_table=2)
    messages, gaps = sender.pump({T1: 250, T2: 10}, group.read, group.first_held)
    assert gaps == []
    assert [(m.table, m.first_seq, m.last_seq) for m in messages] == [
        ("t1", 1, 100), ("t1", 101, 200), ("t2", 1, 3), ("t2", 4, 7)]  # 5 is small
    assert messages[0].payload == '{"v":1,"batch":[' + ",".join(group.hub[T1][:100]) + "]}"
    assert sender.stats.messages == 4 and sender.stats.events == 207
    sender.puback(messages[2].number)
    more, _ = sender.pump({T1: 250, T2: 10}, group.read, group.first_held)
    assert [(m.table, m.first_seq, m.last_seq) for m in more] == [("t2", 8, 10)]
    assert sender.in_flight == 4


def test_the_uplink_counts_a_table_over_messages_held_in_order_and_reports_the_counts():
    group = Group()
    group.record("t1", 3, False)
    sender = _uplink(per_table=4)
    sender.load({T1: 0})
    messages = []
    for upto in (1, 2, 3):  # one event a message, as the hub records them
        messages += sender.pump({T1: upto}, group.read, group.first_held)[0]
    assert [m.payload for m in messages] == group.hub[T1]
    sender.puback(messages[1].number)
    assert sender.sent == {T1: 0} and not sender.dirty  # 1 not held yet
    sender.puback(messages[0].number)
    assert sender.sent == {T1: 2} and sender.dirty and sender.stats.acknowledged == 2
    assert sender.unsaved() == [(T1, 2, 0)]
    sender.saved()
    assert not sender.dirty and sender.unsaved() == []
    assert sender.reports(10.0) == [{"v": 1, "streams": [_entry(T1, 2)]}]
    assert sender.reports(11.0) == [] and sender.reports(12.0) != []
    sender.disconnect()
    assert sender.reports(20.0) == []
    assert sender.pump({T1: 3}, group.read, group.first_held) == ([], [])
    sender.connect()  # at once: a new session may have lost some
    assert sender.reports(20.5) == [{"v": 1, "streams": [_entry(T1, 2)]}]
    sender.puback(messages[2].number)  # an answer from before the loss: its number forgotten
    assert sender.sent == {T1: 2}
    again, _ = sender.pump({T1: 3}, group.read, group.first_held)  # in flight: goes again
    assert [(m.first_seq, m.last_seq) for m in again] == [(3, 3)]
    sender.puback(again[0].number)
    assert sender.sent == {T1: 3}


def test_the_uplink_sends_again_what_the_centre_did_not_answer_in_time():
    """A message unanswered for ``answer_timeout`` (1 s at least, four times the answers'
    recent delay) goes again from the stream's count, with what its stream has in flight
    after it; other streams wait on. Each expiry doubles the timeout (a stalled centre is not
    flooded with copies) until an answer comes in time; a late answer counts nothing but
    still teaches the delay."""
    group = Group()
    group.record("t1", 3, False)
    group.record("t2", 1, False)
    sender = _uplink(per_table=4)
    messages = []
    for upto in (1, 2, 3):
        messages += sender.pump({T1: upto, T2: 1}, group.read, group.first_held, now=10.0)[0]
    assert [(m.table, m.first_seq) for m in messages] == [("t1", 1), ("t2", 1), ("t1", 2),
                                                          ("t1", 3)]
    sender.puback(messages[0].number, now=10.1)
    assert sender.sent == {T1: 1} and sender.delay == pytest.approx(0.02)
    assert sender.answer_timeout == 1.0  # the floor: answers come fast
    assert sender.expire(10.9) == []
    assert sender.expire(11.1) == [T1, T2]  # both sent at 10.0, unanswered
    assert sender.stats.unanswered == 3 and sender.in_flight == 0
    assert sender.answer_timeout == 2.0  # backed off
    again, _ = sender.pump({T1: 3, T2: 1}, group.read, group.first_held, now=11.1)
    assert [(m.table, m.first_seq, m.last_seq) for m in again] == [("t1", 2, 3), ("t2", 1, 1)]
    sender.puback(messages[2].number, now=16.0)  # a late answer to the first sending
    assert sender.sent == {T1: 1}  # its number is forgotten: nothing counted twice...
    assert sender.delay == pytest.approx(0.2 * 6.0 + 0.8 * 0.02)  # ...but the delay learnt
    assert sender.answer_timeout == pytest.approx(4 * sender.delay * 2)
    assert sender.expire(20.0) == [] and sender.expire(21.0) == [T1, T2]  # 11.1 + 9.7
    assert sender.answer_timeout == pytest.approx(4 * sender.delay * 4)
    for _ in range(10):  # a centre that answers nothing: the timeout stops doubling
        sender.pump({T1: 3, T2: 1}, group.read, group.first_held, now=20.0)
        sender.expire(1e6)
    assert sender.backoff == sender.answer_backoff_cap
    third, _ = sender.pump({T1: 3, T2: 1}, group.read, group.first_held, now=1e6)
    sender.puback(third[0].number, now=1e6 + 0.1)  # an answer in time: back to once
    assert sender.backoff == 1.0 and sender.sent == {T1: 3}


def test_the_uplink_parks_a_table_the_centre_refused():
    """The centre refused a message (the contract does not let it store it): nothing of it is
    counted, the stream is sent no more (nor on the centre's request) until the uplink
    starts again; the other streams go on."""
    group = Group()
    group.record("t1", 5, False)
    group.record("t2", 2, False)
    sender = _uplink()
    messages, _ = sender.pump({T1: 5, T2: 2}, group.read, group.first_held, now=1.0)
    t1 = next(m for m in messages if m.table == "t1")
    assert sender.refuse(t1.number, "an envelope of b/t1 on a/t1's topic") == T1
    assert sender.refuse(t1.number, "again") is None  # said once
    assert sender.refused == {T1: "an envelope of b/t1 on a/t1's topic"}
    assert sender.sent.get(T1, 0) == 0 and sender.stats.acknowledged == 0
    group.record("t1", 3, False)
    more, _ = sender.pump({T1: 8, T2: 2}, group.read, group.first_held, now=2.0)
    assert all(m.table != "t1" for m in more)
    assert sender.resend({T1: 0}) == []
    t2 = next(m for m in messages if m.table == "t2")
    sender.puback(t2.number, now=1.1)
    assert sender.sent == {T2: 2}


def test_the_uplink_sends_again_what_the_centre_asks_for_once_nothing_is_in_flight():
    group = Group()
    group.record("t1", 30, False)
    sender = _uplink()
    sender.load({T1: 30})
    first, _ = sender.pump({T1: 30}, group.read, group.first_held)
    assert first == []
    assert sender.resend({T1: 10, T2: 0}) == [(T1, 10, 20)]
    assert sender.sent == {T1: 10} and sender.stats.sent_again == 20
    again, _ = sender.pump({T1: 30}, group.read, group.first_held)
    assert [(m.first_seq, m.last_seq) for m in again] == [(11, 30)]
    assert sender.resend({T1: 0}) == []  # in flight: the centre asks again later
    sender.puback(again[0].number)
    assert sender.sent == {T1: 30}


def test_the_uplink_goes_on_past_what_the_hub_lost_and_says_it_gone():
    """The hub's database holds t1 from seq 37 only (retention deleted 1-36 before they were
    sent, or the uplink's state file was lost): the uplink sends from 37, says 1-36 once, and
    tells the centre they are gone in each report, which then holds t1 from there and asks
    for nothing; a resend request cannot take the count below what is gone."""
    hub = {seq: encode(envelope(_event(seq, False), venue=VENUE, table="t1", seq=seq, boot=1,
                                ts_ms=seq, historical=False)) for seq in range(37, 61)}

    def read(stream: Stream, first: int, last: int) -> list[tuple[int, str]]:
        return [(seq, hub[seq]) for seq in range(first, last + 1) if seq in hub]

    def first_held(stream: Stream, seq: int) -> int | None:
        return min((s for s in hub if s >= seq), default=None)

    sender = _uplink()
    messages, gaps = sender.pump({T1: 60}, read, first_held)
    assert gaps == [(T1, 1, 36)]
    assert [(m.first_seq, m.last_seq) for m in messages] == [(37, 60)]
    assert sender.pump({T1: 60}, read, first_held) == ([], [])  # said once
    sender.puback(messages[0].number, 0.1)
    assert sender.sent == {T1: 60} and sender.gone == {T1: 36}
    [report] = sender.reports(1.0)
    assert report == {"v": 1, "streams": [_entry(T1, 60, gone=36)]}
    receive("UplinkCounts", encode(report))  # the contract allows it

    centre = CentralHoldings(patience=0.0)
    centre.held(VENUE, T1, range(37, 61), 1.0)
    assert centre.to_ask(VENUE, {T1: 60}, 5.0) == {T1: 0}  # without gone: forever
    centre.gone(VENUE, T1, 36, 5.0)
    assert centre.upto(VENUE, T1) == 60
    assert centre.to_ask(VENUE, {T1: 60}, 10.0) == {}
    assert sender.resend({T1: 0}) == [(T1, 36, 24)]  # from what is gone, not from 0
    # The hub loses more later (retention at 50): what follows goes on after it.
    for seq in range(37, 51):
        del hub[seq]
    hub.update({seq: hub[60] for seq in range(61, 66)})
    messages, gaps = sender.pump({T1: 65}, read, first_held, 2.0)
    assert gaps == [(T1, 37, 50)] and sender.gone == {T1: 50}


def test_a_stream_that_starts_past_seq_1_is_sent_from_its_first_seq_and_nothing_is_gone():
    """A table's daemon started again makes a new incarnation from the seq it had reached
    (here 41): the uplink sends it from 41 (nothing before it is its, nor lost), reports
    where it starts, and the centre holds it from there without asking for 1-40. A table
    re-installed makes another from seq 1: the same seqs as the legacy stream's, other
    events, each counted apart."""
    group = Group()
    group.record("t1", 40, False)
    group.restart("t1")
    restarted = group.current["t1"]
    group.record("t1", 5, False)
    group.reinstall("t1")
    new = group.current["t1"]
    group.record("t1", 3, False)
    group.poll()
    assert group.uptos == {T1: 40, T2: 0, restarted: 45, new: 3}
    sender = group.sender
    sender.connect()
    messages, gaps = sender.pump(group.uptos, group.read, group.first_held, 0.0, group.starts)
    assert gaps == []
    assert sorted((m.stream, m.first_seq, m.last_seq) for m in messages) == sorted([
        (T1, 1, 40), (restarted, 41, 45), (new, 1, 3)])
    for message in messages:
        sender.puback(message.number, 0.1)
    assert sender.sent == {T1: 40, restarted: 45, new: 3} and sender.gone == {}
    assert sorted(sender.unsaved()) == [(T1, 40, 0), (restarted, 45, 0), (new, 3, 0)]
    [report] = sender.reports(1.0)
    assert report["streams"] == [_entry(T1, 40), _entry(restarted, 45, since=41),
                                 _entry(new, 3)]
    receive("UplinkCounts", encode(report))

    centre = CentralHoldings(patience=0.0)
    for message in messages:
        centre.held(VENUE, message.stream, range(message.first_seq, message.last_seq + 1),
                    1.0)
    assert centre.upto(VENUE, restarted) == 0  # its start not said yet: from 1
    centre.starts(VENUE, restarted, 41, 2.0)
    assert [centre.upto(VENUE, s) for s in (T1, restarted, new)] == [40, 45, 3]
    assert centre.to_ask(VENUE, {T1: 40, restarted: 45, new: 3}, 10.0) == {}
    # The centre's database restored from a backup without the restarted stream: asked for
    # again from its start, which is all a resend request can go back to.
    centre = CentralHoldings(patience=0.0)
    centre.starts(VENUE, restarted, 41, 20.0)
    assert centre.to_ask(VENUE, {restarted: 45}, 20.0) == {restarted: 40}
    assert sender.resend({restarted: 0}) == [(restarted, 40, 5)]
    again, _ = sender.pump(group.uptos, group.read, group.first_held, 21.0, group.starts)
    assert [(m.stream, m.first_seq, m.last_seq) for m in again] == [(restarted, 41, 45)]


def test_a_stream_heard_of_before_its_start_is_sent_once_its_start_is_known():
    """The hub knows an incarnation from its first event before its status (which says where
    it starts): it counts it up to nothing until then. Once the hub holds it from 41, the
    uplink starts it there."""
    group = Group()
    group.record("t1", 40, False)
    group.restart("t1")
    restarted = group.current["t1"]
    group.record("t1", 5, False)
    sender = _uplink()
    messages, gaps = sender.pump({restarted: 0}, group.read, group.first_held, 0.0,
                                 {restarted: 1})
    assert (messages, gaps) == ([], [])
    messages, gaps = sender.pump({restarted: 45}, group.read, group.first_held, 0.0,
                                 {restarted: 41})
    assert gaps == [] and [(m.first_seq, m.last_seq) for m in messages] == [(41, 45)]


@pytest.mark.parametrize("streams", [1, 500, 501, 1200, 2000, 2600])
def test_the_uplink_reports_500_streams_a_message_and_2000_at_most_in_turns(streams):
    sender = _uplink()
    counts = {Stream(f"t{i % 50}", f"{i:032x}"): i + 1 for i in range(streams)}
    sender.load(counts)
    assert sender.reports(0.0) == []  # the hub not read yet: where each starts is not known
    assert sender.pump(counts, Group().read, Group().first_held) == ([], [])
    reports = sender.reports(2.0)
    assert [len(r["streams"]) for r in reports] == [
        min(500, min(streams, 2000) - i) for i in range(0, min(streams, 2000), 500)]
    for report in reports:
        receive("UplinkCounts", encode(report))
    assert sender.reports(3.0) == []  # the next in report_seconds
    told = [Stream(e["table"], e["incarnation"]) for r in reports for e in r["streams"]]
    told += [Stream(e["table"], e["incarnation"])
             for r in sender.reports(4.0) for e in r["streams"]]
    assert set(told) == set(counts)  # the next report goes on where this one stopped
