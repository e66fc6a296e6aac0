"""The group's central recorder: every venue's events, from the group's cluster (NATS;
``deploy/cluster``), into one database, each venue's apart.

Each venue's uplink (``group.uplink``) sends what its hub recorded through the cluster, each
message with a reply subject; the recorder answers there only after the rows the message
carried are committed, and the uplink counts a message delivered only on that answer. So a
message is never lost between the venue and the database: one lost on the way (a node lost,
the recorder restarting) is not answered and goes again; one answered after the commit whose
answer was lost comes again and its rows are counted as duplicates, not stored twice, by their
key ``(venue, table, incarnation, seq)`` (a table's incarnation: its journal's start, so that a
table re-installed or restored from a backup, whose seqs its older incarnations made too, loses
nothing; an envelope without one is the legacy incarnation's, as every row stored before).

Venues are kept apart three times: each venue has an account of its own at the cluster, and
the recorder another that only it logs in to (``deploy/cluster/accounts.conf``), so no venue
can read another's messages or answers, nor the centre's; a venue's user may publish only
under its own ``pkr.v1.<venue>.``; and the recorder stores an envelope only when it names the
venue and table of the subject it came on.

What an uplink counts but the centre lacks (a central database restored from an older
backup) comes back: each uplink reports its counts every 2 s, stream by stream (with where each
starts, which need not be seq 1, and what its venue lost before sending), and the recorder asks
it to send again the streams it is behind on (``group.gaps``).

No venue can stall the others: what comes in waits in a bounded queue per venue, taken one
message of each venue in turn (``group.intake``); what a venue sends past its share is not taken,
so not answered, and its uplink sends it again later (back-pressure). The writers are shared
by table, and each takes what waits for it one message of each venue in turn, up to
``write_events`` a write (``group.turns``): another venue's message is in a writer's next
write whatever a venue has pending. The recorder takes no more of venues with something
pending while its writers have ``max_pending_events`` waiting (their intake shares fill, and
their uplinks send again later): memory stays bounded whatever the venues send, and a venue
with nothing pending is always taken in. What it refuses or leaves is logged once a minute a
venue, in a few lines.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from contract import topics
from contract.envelope import LEGACY_INCARNATION, Stream, incarnation_of
from contract.schema import ContractError, is_name, receive, receive_events, shortened
from contract.supervise import start_worker
from contract.wire import encode
from contract.worker import Connected, Disconnected, Received
from group.gaps import CentralHoldings
from group.intake import FairIntake
from group.link import GroupEndpoint, NatsWorker, subject, topic
from group.turns import VenueTurns
from store.database import connect, migrate

log = logging.getLogger("tablectl.group")

MIGRATIONS = [
    [
        "CREATE TABLE IF NOT EXISTS group_events (venue TEXT NOT NULL, tbl TEXT NOT NULL,"
        " seq BIGINT NOT NULL, boot BIGINT, type TEXT, ts BIGINT, historical INTEGER,"
        " envelope TEXT NOT NULL, PRIMARY KEY (venue, tbl, seq))",
    ],
    [
        # An event is named by its table's incarnation too (``hub.storage``'s migration 9
        # at the venues): what was stored before is the legacy incarnation's.
        "CREATE TABLE group_events_by_incarnation (venue TEXT NOT NULL, tbl TEXT NOT NULL,"
        " inc TEXT NOT NULL, seq BIGINT NOT NULL, boot BIGINT, type TEXT, ts BIGINT,"
        " historical INTEGER, envelope TEXT NOT NULL, PRIMARY KEY (venue, tbl, inc, seq))",
        f"INSERT INTO group_events_by_incarnation SELECT venue, tbl, '{LEGACY_INCARNATION}',"
        " seq, boot, type, ts, historical, envelope FROM group_events",
        "DROP TABLE group_events",
        "ALTER TABLE group_events_by_incarnation RENAME TO group_events",
    ],
]


class GroupStorage:
    """The central database: PostgreSQL (a ``postgresql://`` URL) or a SQLite file."""

    def __init__(self, location: str, *, passed_between_threads: bool = False) -> None:
        self.db, self.p = connect(location, passed_between_threads=passed_between_threads)
        migrate(self.execute, "group_schema", MIGRATIONS)
        self.db.commit()

    def execute(self, text: str, args: tuple[Any, ...] = ()) -> Any:
        return self.db.execute(text.replace("?", self.p), args)

    def insert(self, messages: list[tuple[str, list[dict[str, Any]], bytes]]) -> int:
        """Store messages' events (each: its venue, its envelopes, checked, and the message as
        it came: one envelope or an ``EnvelopeBatch``); how many rows were new (an event the
        venue's table already had at that incarnation and seq is left as it is). Each row
        keeps its envelope's own JSON."""
        if not messages:
            return 0
        cursor = self.db.cursor()
        if self.p == "%s":
            # PostgreSQL takes the messages whole and splits them itself (``json`` keeps each
            # element's text as it came): one statement, one round trip for a turn's messages,
            # nothing re-encoded here, each message a parameter of its own (as one array they
            # cost an escape of every quote in Python; a row a statement in psycopg's pipeline
            # cost about 40 us of this process's CPU a row and a round trip a message). Each
            # element's columns come from one json_to_record (an ->> each parsed the element
            # again: 30-38 us of the server's time a row, 20-22 so). Numbers are read as
            # numeric: the schema's "integer" takes 5.0, which bigint's parser refuses (the
            # whole turn's statement with it).
            cursor.execute(
                "INSERT INTO group_events SELECT m.venue, e.\"table\","
                f" COALESCE(e.incarnation, '{LEGACY_INCARNATION}'), e.seq::bigint,"
                " e.boot::bigint, e.type, e.ts::bigint,"
                " CASE WHEN e.historical THEN 1 ELSE 0 END, r::text"
                " FROM (VALUES " + ", ".join(["(%s, %s::json)"] * len(messages)) +
                ") AS m(venue, message),"
                " json_array_elements(CASE WHEN json_typeof(m.message->'batch') = 'array'"
                " THEN m.message->'batch' ELSE json_build_array(m.message) END) r,"
                " json_to_record(r) AS e(\"table\" text, incarnation text, seq numeric,"
                " boot numeric, type text, ts numeric, historical boolean)"
                " ON CONFLICT (venue, tbl, inc, seq) DO NOTHING",
                [part for venue, _, payload in messages for part in (venue, payload.decode())],
                prepare=False)  # a statement of its own length each turn: not worth keeping
            return int(cursor.rowcount)
        new = 0
        for venue, envelopes, payload in messages:
            # A lone envelope keeps its text; a batch's are encoded again (a lone envelope that
            # only mentions "batch" somewhere is encoded again too: the same JSON value).
            one = len(envelopes) == 1 and b'"batch"' not in payload
            cursor.executemany(
                "INSERT INTO group_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (venue, tbl, inc, seq) DO NOTHING",
                [(venue, e["table"], incarnation_of(e), e["seq"], e.get("boot"), e.get("type"),
                  e.get("ts"), int(bool(e.get("historical"))),
                  payload.decode() if one else encode(e))
                 for e in envelopes])
            new += int(cursor.rowcount)
        return new

    def commit(self) -> None:
        self.db.commit()

    def counts(self) -> dict[str, dict[str, int]]:
        """Events held, venue by venue and table by table."""
        held: dict[str, dict[str, int]] = {}
        for venue, table, count in self.execute(
                "SELECT venue, tbl, COUNT(*) FROM group_events GROUP BY venue, tbl"):
            held.setdefault(str(venue), {})[str(table)] = int(count)
        return held

    def uptos(self) -> list[tuple[str, Stream, int, int]]:
        """Venue by venue and stream by stream (a table's incarnation), the first seq held
        and the seq up to which every event from it is held: each stream's first run of
        consecutive seqs. A stream need not start at seq 1, and a central database restored
        from a backup may lack its first events as well as its newest (the newer ones stored
        since): the uplink's report says where the stream starts (group/gaps.py)."""
        firsts = {(str(v), str(t), str(i)): int(first) for v, t, i, first in self.execute(
            "SELECT venue, tbl, inc, MIN(seq) FROM group_events GROUP BY venue, tbl, inc")}
        return [(str(v), Stream(str(t), str(i)), firsts[(str(v), str(t), str(i))], int(end))
                for v, t, i, end in self.execute(
                    "SELECT venue, tbl, inc, MIN(seq) FROM group_events g WHERE NOT EXISTS"
                    " (SELECT 1 FROM group_events n WHERE n.venue = g.venue AND n.tbl = g.tbl"
                    " AND n.inc = g.inc AND n.seq = g.seq + 1) GROUP BY venue, tbl, inc")]

    def envelopes(self, venue: str, table: str,
                  incarnation: str | None = None) -> list[dict[str, Any]]:
        """The table's events held (of one incarnation), by incarnation then seq."""
        if incarnation is not None:
            return [json.loads(r[0]) for r in self.execute(
                "SELECT envelope FROM group_events WHERE venue = ? AND tbl = ? AND inc = ?"
                " ORDER BY seq", (venue, table, incarnation))]
        return [json.loads(r[0]) for r in self.execute(
            "SELECT envelope FROM group_events WHERE venue = ? AND tbl = ? ORDER BY inc, seq",
            (venue, table))]

    def total(self) -> int:
        return int(self.execute("SELECT COUNT(*) FROM group_events").fetchone()[0])

    def close(self) -> None:
        self.db.close()


@dataclass
class GroupStats:
    received: int = 0  # envelopes
    stored: int = 0
    duplicates: int = 0
    refused: int = 0  # messages
    asked_again: int = 0  # tables a venue's uplink was asked to send again
    not_taken: int = 0  # messages past their venue's share: not answered, sent again


@dataclass(frozen=True)
class Wake:
    """Something waits in the intake (put on the worker's queue by nats-py's loop)."""


Message = tuple[str, list[dict[str, Any]], bytes]  # venue, its envelopes (checked), as it came
# The connection it came on, the reply subject its uplink waits on, the answer: empty once
# stored, a GroupRefusal (why) for a message refused.
Ack = tuple[int, str, bytes]
# What waits for a writer: the venue it came from (as its intake share names it), the message
# (None for a message refused, or one with no events) and the answer it waits for (None for
# none).
Entry = tuple[str, Message | None, Ack | None]


@dataclass(frozen=True)
class Write:
    """Messages to store in one statement and one commit; then ``acks`` may be sent.
    ``venues``: the events it carries, venue by venue (each venue's pending ones, once
    written)."""

    messages: list[Message]
    acks: list[Ack]
    venues: dict[str, int]


@dataclass(frozen=True)
class Written:
    """A ``Write`` committed by writer number ``writer``: ``stored`` of its rows were new."""

    writer: int
    messages: list[Message]
    acks: list[Ack]
    venues: dict[str, int]
    stored: int


@dataclass(frozen=True)
class _Close:
    done: threading.Event


class GroupWriter:
    """A thread of the central database's, with a connection of its own, fed ``Write``s and
    answering what it took together with one ``Written`` (to ``done``) after its commit. So
    the recorder checks the next messages while PostgreSQL stores the last: one after the
    other, the two took turns on one core. What waits when a write ends goes in the next
    statement together."""

    def __init__(self, number: int, storage: GroupStorage,
                 done: Callable[[Written], None]) -> None:
        self.number = number
        self.storage = storage
        self.done = done
        self.queue: queue.Queue[Write | _Close] = queue.Queue()
        self.busy_since: float | None = None  # a write's start, while it runs
        self.thread: threading.Thread | None = None

    def start(self) -> GroupWriter:
        self.thread = start_worker(self._run, f"central-recorder-storage-{self.number}")
        return self

    def put(self, write: Write) -> None:
        self.queue.put(write)

    def close(self, timeout: float) -> bool:
        """Store what was put, then close the database; False if that took over ``timeout``."""
        done = threading.Event()
        self.queue.put(_Close(done))
        return done.wait(timeout)

    def _run(self) -> None:
        while True:
            items = [self.queue.get()]
            while True:
                try:
                    items.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            writes = [item for item in items if isinstance(item, Write)]
            if writes:
                self.busy_since = time.monotonic()
                messages = [m for write in writes for m in write.messages]
                stored = self.storage.insert(messages)
                self.storage.commit()
                self.busy_since = None
                venues: dict[str, int] = {}
                for write in writes:
                    for venue, events in write.venues.items():
                        venues[venue] = venues.get(venue, 0) + events
                self.done(Written(self.number, messages,
                                  [a for write in writes for a in write.acks], venues, stored))
            for item in items:
                if isinstance(item, _Close):
                    self.storage.close()
                    item.done.set()
                    return


def _venue_of(subject_: str) -> str:
    """The venue a subject names (``pkr.v1.<venue>....``; each venue's account may publish
    only under its own), cut short; "" for none."""
    levels = subject_.split(".", 3)
    return levels[2][:40] if len(levels) > 2 else ""


class CentralRecorder(NatsWorker):
    worker_name = "central-recorder"
    turn_seconds = 0.05
    commit_interval = 0.05  # seconds at least between a writer's writes (each an fsync)
    # PostgreSQL's writers, each its share of the tables (a table's rows always by the same
    # one: two never insert the same key, so never wait on each other): the database's work
    # on two cores, not one, when a backlog's last messages wait for it. SQLite takes one
    # writer at a time: one.
    postgresql_writers = 2
    # A venue's share of the intake: its uplink keeps 64 messages in flight at most, each of
    # up to 128 kB (the contract's EnvelopeBatch), so this holds all of a sound uplink's.
    venue_messages = 256
    venue_bytes = 16 * 1024 * 1024
    # What a turn checks, in turns of venues: up to this many messages, for this long at
    # most (at least one), so that what the writers committed is answered and handed its next
    # write between two turns, not after a flood's whole share has been checked (a hostile
    # venue's malformed 256 kB batches cost 20-40 ms each).
    take_at_once = 256
    take_seconds = 0.02
    max_pending_events = 10_000  # checked and waiting for the writers: take no more
    # The most events a write takes (and a message): one write's time is what another venue's
    # message may wait for behind what a venue has pending, twice (the write under way, then
    # its own, taken a venue's message at a time in turn: group/turns.py).
    write_events = 2_500
    say_every = 60.0  # seconds between two log lines about one venue's refused or left messages

    def __init__(self, db: str, endpoint: GroupEndpoint) -> None:
        super().__init__(endpoint)
        self.db_path = db
        self.stats = GroupStats()
        self.intake: FairIntake[Received] = FairIntake(max_messages=self.venue_messages,
                                                       max_bytes=self.venue_bytes)
        self._wake_put = False  # a Wake is on the queue (set by the loop, cleared here)
        self._pending_events = 0
        self._refused_since: dict[str, int] = {}  # venue: refused since it was last said
        self._refusals_said: dict[str, float] = {}  # venue: when its refusals were last said
        self._left_since: dict[str, int] = {}  # venue: messages past its share, not yet said
        self._left_said = -math.inf  # when those were last said
        self._writers: list[GroupWriter] = []
        # Writer by writer: a Write is with it (the next waits for its Written), what it
        # has not been handed yet (messages checked, answers), venue by venue, when it was last.
        self._writing: list[bool] = []
        self._pending: list[VenueTurns[Entry]] = []
        self._last_write: list[float] = []
        self._venue_events: dict[str, int] = {}  # venue: its events checked, not yet written
        self.holdings = CentralHoldings()

    def setup(self) -> None:
        storage = GroupStorage(self.db_path, passed_between_threads=True)
        now = time.monotonic()
        for venue, stream, first, upto in storage.uptos():
            self.holdings.load(venue, stream, upto, now, first)
        storage.commit()  # end the read
        # From here on each connection is its writer's alone.
        count = self.postgresql_writers if storage.p == "%s" else 1
        storages = [storage] + [GroupStorage(self.db_path) for _ in range(count - 1)]
        self._writers = [GroupWriter(n, s, self.put).start() for n, s in enumerate(storages)]
        self._writing = [False] * count
        self._pending = [VenueTurns() for _ in range(count)]
        self._last_write = [0.0] * count

    def unhealthy(self, timeout: float = 5.0) -> str | None:
        for writer in self._writers:
            if writer.thread is None or not writer.thread.is_alive():
                return f"the central recorder's storage thread {writer.number} is not running"
            started = writer.busy_since
            if started is not None and time.monotonic() - started > timeout:
                return f"the central database has not answered a write for {timeout:g} s"
        return super().unhealthy(timeout)

    def subscriptions(self) -> list[str]:
        return [subject(topics.every_table("+", "private")),
                subject(topics.uplink_counts("+"))]

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, reason=reason):
                log.info("%s (the group's cluster)", reason)
            case Connected(refused=True, reason=reason):
                log.error("the group's cluster refused the central recorder: %s (check its "
                          "user and password)", reason)
            case Disconnected(reason=reason):
                log.warning("lost the group's cluster (%s): connecting to the next node",
                            reason)
            case Received():
                self._receive(item)
            case Written():
                self._written(item)
            case Wake():
                pass  # the turn that follows takes what waits

    async def _received(self, msg: Any) -> None:
        """On nats-py's loop: into the message's venue's share (the subject's third level;
        each venue's account may publish only under its own), or dropped when that is full."""
        venue = _venue_of(msg.subject)
        item = Received(msg.subject, msg.data, reply=msg.reply or "",
                        connection=self.connection)
        if self.intake.offer(venue, item, len(msg.data)) and not self._wake_put:
            self._wake_put = True
            self.queue.put(Wake())

    def _take(self) -> None:
        """What waits in the intake, a venue's message at a time in turn, of the venues not
        paused (``_admits``); a Wake for the rest, after what else is on the queue."""
        self._wake_put = False  # (before taking: an offer from now on puts a Wake)
        until = time.monotonic() + self.take_seconds
        for _ in range(self.take_at_once):
            taken = self.intake.take(1, self._admits)
            if not taken:
                return  # nothing waits, or its venues are paused: Written turns the worker
            self._receive(taken[0])
            if time.monotonic() > until:
                break
        if len(self.intake) and not self._wake_put:
            self._wake_put = True
            self.queue.put(Wake())

    def _admits(self, venue: Hashable) -> bool:
        """Whether a venue's next message is taken in: one with nothing pending always is (a
        message: memory stays bounded, by the venues' number), so another venue's backlog
        does not keep it waiting at the intake; one with events pending, while all venues'
        are under ``max_pending_events``. (A share of those a venue, 7,500 of 10,000, cost the
        group's bench more than half its rate: a venue's uplink, 6,400 events in flight,
        sends again what is not answered in time, and went over it.)"""
        return (self._venue_events.get(str(venue), 0) == 0
                or self._pending_events < self.max_pending_events)

    def _receive(self, item: Received) -> None:
        named = topics.parse(topic(item.topic))
        if named is not None and named.table is None and named.leaf == "uplink/sent":
            self._compare(named.venue, item)
            return
        try:
            if named is None or named.table is None or "/" in named.leaf:
                raise ContractError(f"subject {item.topic[:120]!r} names no venue's table")
            venue, table = named.venue, named.table
            envelopes = receive_events("Envelope", item.payload)
            for envelope in envelopes:  # a message is taken whole or not at all
                if envelope["venue"] != venue or envelope["table"] != table:
                    raise ContractError(f"an envelope of {envelope['venue']}/"
                                        f"{envelope['table']} on {venue}/{table}'s topic")
            self.stats.received += len(envelopes)
            writer = hash((venue, table)) % len(self._writers)
            message: Message | None = (venue, envelopes, item.payload) if envelopes else None
            answer = b""
        except ContractError as exc:
            self._refuse(item.topic, exc)
            writer, message = 0, None
            answer = encode({"v": 1, "refused": shortened(str(exc))}).encode("utf-8", "replace")
        # Stored or refused, it is answered after the commit of the write that takes it (in
        # its venue's turn); refused, with why: its uplink counts nothing of it and parks the
        # table, instead of sending it forever.
        ack: Ack | None = (item.connection, item.reply, answer) if item.reply else None
        if message is None and ack is None:
            return
        share, events = _venue_of(item.topic), len(message[1]) if message else 0
        self._pending[writer].add(share, (share, message, ack), events)
        if events:
            self._pending_events += events
            self._venue_events[share] = self._venue_events.get(share, 0) + events

    def _refuse(self, topic: str, problem: ContractError) -> None:
        """Counted; said once a minute a venue at most, its reason cut short: a venue's bad
        messages cost the log a line a minute, however many and however large."""
        self.stats.refused += 1
        venue = _venue_of(topic)
        if venue not in self._refused_since and len(self._refused_since) >= 1000:
            return  # (a venue is an account of the cluster's: never that many)
        self._refused_since[venue] = self._refused_since.get(venue, 0) + 1
        now = time.monotonic()
        if now - self._refusals_said.get(venue, -math.inf) < self.say_every:
            return
        self._refusals_said[venue] = now
        count, self._refused_since[venue] = self._refused_since[venue], 0
        log.warning("refused %d message(s) of venue %s in the last %g s, the last on %s: %s "
                    "(the venue's uplink sent what the contract does not allow)", count,
                    venue, self.say_every, topic[:120], shortened(str(problem), 300))

    def _say_left(self, now: float) -> None:
        """Counted each turn, said once a minute: the venues whose messages were past their
        share (not answered)."""
        for venue, count in self.intake.refusals().items():
            self.stats.not_taken += count
            self._left_since[str(venue)] = self._left_since.get(str(venue), 0) + count
        if not self._left_since or now - self._left_said < self.say_every:
            return
        self._left_said = now
        left, self._left_since = self._left_since, {}
        log.warning("messages past their venue's share, not answered (each uplink sends them "
                    "again, slower): %s; a venue that keeps sending faster than the centre "
                    "stores: see what its uplink sends", ", ".join(
                        f"{venue} {count}" for venue, count in sorted(
                            left.items(), key=lambda found: -found[1])[:10]))

    def _compare(self, venue: str, item: Received) -> None:
        """A venue's uplink's counts: ask it for the streams the centre lacks (in the words
        it used: an uplink of an earlier release counts tables, its legacy streams)."""
        try:
            if not is_name(venue):
                raise ContractError(f"venue {venue[:40]!r} is not a name")
            report = receive("UplinkCounts", item.payload)
        except ContractError as exc:
            self._refuse(item.topic, exc)
            return
        now = time.monotonic()
        by_table = {Stream(table, LEGACY_INCARNATION): upto
                    for table, upto in report.get("tables", {}).items()}
        for table, upto in report.get("gone", {}).items():  # lost at the venue: never asked
            self.holdings.gone(venue, Stream(table, LEGACY_INCARNATION), upto, now)
        counts: dict[Stream, int] = {}
        for entry in report.get("streams", []):
            stream = Stream(entry["table"], entry["incarnation"])
            self.holdings.starts(venue, stream, entry.get("since", 1), now)
            self.holdings.gone(venue, stream, entry.get("gone", 0), now)
            counts[stream] = entry["upto"]
        asked_tables = self.holdings.to_ask(venue, by_table, now)
        asked = self.holdings.to_ask(venue, counts, now)
        if not asked_tables and not asked:
            return
        self.stats.asked_again += len(asked_tables) + len(asked)
        log.warning("venue %s's uplink counts more than the centre holds: asked to send again "
                    "%s", venue, ", ".join(
                        f"{s.table}{_of(s)} from {upto + 1}"
                        for s, upto in sorted({**asked_tables, **asked}.items())[:10]))
        request: dict[str, Any] = {"v": 1}
        if asked_tables:
            request["tables"] = {s.table: upto for s, upto in sorted(asked_tables.items())}
        if asked:
            request["streams"] = [{"table": s.table, "incarnation": s.incarnation,
                                   "upto": upto} for s, upto in sorted(asked.items())]
        self.publish(subject(topics.group_resend(venue)), encode(request))

    def _written(self, written: Written) -> None:
        """A write committed: its messages acknowledged, what the centre holds moved on."""
        self._writing[written.writer] = False
        self._pending_events -= sum(len(envelopes) for _, envelopes, _ in written.messages)
        for share, events in written.venues.items():
            left = self._venue_events.pop(share, 0) - events
            if left > 0:
                self._venue_events[share] = left
        self.stats.stored += written.stored
        self.stats.duplicates += (sum(len(envelopes) for _, envelopes, _ in written.messages)
                                  - written.stored)
        for connection, reply, answer in written.acks:
            # The cluster lets the recorder answer only what came on the same connection
            # (allow_responses): a message of a lost connection goes unanswered, and its
            # uplink sends it again (it is stored already; counted twice).
            if connection == self.connection:
                self.publish(reply, answer)
        now = time.monotonic()
        for venue, envelopes, _ in written.messages:
            seqs: dict[Stream, list[int]] = {}  # (an uplink's message: one stream's)
            for envelope in envelopes:
                stream = Stream(envelope["table"], incarnation_of(envelope))
                seqs.setdefault(stream, []).append(envelope["seq"])
            for stream, held in seqs.items():
                # (a stream is held from its first seq, which its uplink's report names)
                if (self.holdings.held(venue, stream, held, now)
                        and self.holdings.upto(venue, stream) > 0):
                    log.info("%s/%s%s: held up to %d, with a gap before seq %d", venue,
                             stream.table, _of(stream), self.holdings.upto(venue, stream),
                             held[0])

    def turn(self) -> None:
        """What was taken in since a writer's last write, to it, once it is free; then what
        waits in the intake taken in (in turns of venues), for the next."""
        self._hand_writes()
        self._take()
        self._hand_writes()
        self._say_left(time.monotonic())

    def _hand_writes(self) -> None:
        now = time.monotonic()
        for n, writer in enumerate(self._writers):
            if (self._writing[n] or not self._pending[n]
                    or now - self._last_write[n] < self.commit_interval):
                continue
            writer.put(_write(self._pending[n].take(self.write_events)))
            self._writing[n] = True
            self._last_write[n] = now

    def finish(self) -> None:
        """What was taken in is stored, and the database closed. The writes under way are
        answered once committed (the connection is still up); what still waited is stored
        unanswered, so its uplink sends it again (a duplicate)."""
        for n, writer in enumerate(self._writers):
            entries: list[Entry] = []
            while self._pending[n]:
                entries += self._pending[n].take(self.write_events)
            if entries:
                writer.put(dataclasses.replace(_write(entries), acks=[]))
        # Within stop's 5 s, all writers together; a writer whose thread died is not waited for.
        deadline = time.monotonic() + 4.0
        for writer in self._writers:
            alive = writer.thread is not None and writer.thread.is_alive()
            if alive and not writer.close(timeout=max(0.0, deadline - time.monotonic())):
                log.error("the central database did not take the last writes within 4 s: "
                          "the uplinks send them again")
        while True:  # the last writes' answers
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, Written):
                self._written(item)


def _write(entries: list[Entry]) -> Write:
    venues: dict[str, int] = {}
    for share, message, _ in entries:
        if message is not None:
            venues[share] = venues.get(share, 0) + len(message[1])
    return Write([message for _, message, _ in entries if message is not None],
                 [ack for _, _, ack in entries if ack is not None], venues)


def _of(stream: Stream) -> str:
    """Which of a table's incarnations, in a log line ("" for the legacy one's)."""
    return "" if stream.incarnation == LEGACY_INCARNATION else f" ({stream.incarnation[:8]})"
