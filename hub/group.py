"""The group's central recorder: every venue's events, from the group's clustered broker (NATS
with JetStream; ``deploy/cluster``), into one database, each venue's apart.

Each venue's uplink (``hub.uplink``) publishes what its hub recorded to the cluster; the
cluster keeps every QoS 1 message for this recorder's persistent MQTT 3.1.1 session in a
replicated stream until the recorder acknowledges it. The recorder acknowledges a message only
after the rows it carried are committed, so a message is never lost between the cluster and
the database (a crash before the commit: the cluster sends it again; after the commit but
before the acknowledgement: the same rows arrive again and are counted as duplicates, not
stored twice, by their key ``(venue, table, seq)``).

Venues are kept apart three times: each venue has an account of its own at the cluster, and
the recorder another that only it logs in to (``deploy/cluster/accounts.conf``), so no venue
can take the recorder's session or client id, or another venue's; a venue's user may publish
only under its own ``pkr/v1/<venue>/``; and the recorder stores an envelope only when it names
the venue and table of the topic it came on.

What the cluster acknowledged to a venue but the recorder never got (its session wiped, a
message lost between the venue's account and the recorder's) comes back: each uplink reports
its counts every 2 s, and the recorder asks it to send again the tables it is behind on
(``hub.gaps``).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from contract import topics
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Received
from contract.schema import ContractError, is_name, receive, receive_events
from contract.wire import encode
from hub.gaps import CentralHoldings
from hub.storage import connect, migrate

log = logging.getLogger("tablectl.group")

MIGRATIONS = [
    [
        "CREATE TABLE IF NOT EXISTS group_events (venue TEXT NOT NULL, tbl TEXT NOT NULL,"
        " seq BIGINT NOT NULL, boot BIGINT, type TEXT, ts BIGINT, historical INTEGER,"
        " envelope TEXT NOT NULL, PRIMARY KEY (venue, tbl, seq))",
    ],
]


class GroupStorage:
    """The central database: PostgreSQL (a ``postgresql://`` URL) or a SQLite file."""

    def __init__(self, location: str) -> None:
        self.db, self.p = connect(location)
        migrate(self.execute, "group_schema", MIGRATIONS)
        self.db.commit()

    def execute(self, text: str, args: tuple[Any, ...] = ()) -> Any:
        return self.db.execute(text.replace("?", self.p), args)

    def insert(self, messages: list[tuple[str, list[dict[str, Any]], bytes]]) -> int:
        """Store messages' events (each: its venue, its envelopes, checked, and the message as
        it came: one envelope or an ``EnvelopeBatch``); how many rows were new (an event the
        venue's table already had at that seq is left as it is). Each row keeps its
        envelope's own JSON."""
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
                "INSERT INTO group_events SELECT m.venue, e.\"table\", e.seq::bigint,"
                " e.boot::bigint, e.type, e.ts::bigint,"
                " CASE WHEN e.historical THEN 1 ELSE 0 END, r::text"
                " FROM (VALUES " + ", ".join(["(%s, %s::json)"] * len(messages)) +
                ") AS m(venue, message),"
                " json_array_elements(CASE WHEN json_typeof(m.message->'batch') = 'array'"
                " THEN m.message->'batch' ELSE json_build_array(m.message) END) r,"
                " json_to_record(r) AS e(\"table\" text, seq numeric, boot numeric, type text,"
                " ts numeric, historical boolean)"
                " ON CONFLICT (venue, tbl, seq) DO NOTHING",
                [part for venue, _, payload in messages for part in (venue, payload.decode())],
                prepare=False)  # a statement of its own length each turn: not worth keeping
            return int(cursor.rowcount)
        new = 0
        for venue, envelopes, payload in messages:
            # A lone envelope keeps its text; a batch's are encoded again (a lone envelope that
            # only mentions "batch" somewhere is encoded again too: the same JSON value).
            one = len(envelopes) == 1 and b'"batch"' not in payload
            cursor.executemany(
                "INSERT INTO group_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (venue, tbl, seq) DO NOTHING",
                [(venue, e["table"], e["seq"], e.get("boot"), e.get("type"), e.get("ts"),
                  int(bool(e.get("historical"))), payload.decode() if one else encode(e))
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

    def uptos(self) -> list[tuple[str, str, int]]:
        """Venue by venue and table by table, the seq up to which every event is held (0 when
        the first is missing): the end of each table's first run of consecutive seqs."""
        first = {(str(v), str(t)): int(low) for v, t, low in self.execute(
            "SELECT venue, tbl, MIN(seq) FROM group_events GROUP BY venue, tbl")}
        ends = self.execute(
            "SELECT venue, tbl, MIN(seq) FROM group_events g WHERE NOT EXISTS (SELECT 1 FROM"
            " group_events n WHERE n.venue = g.venue AND n.tbl = g.tbl AND n.seq = g.seq + 1)"
            " GROUP BY venue, tbl")
        return [(str(v), str(t), int(end) if first[str(v), str(t)] == 1 else 0)
                for v, t, end in ends]

    def envelopes(self, venue: str, table: str) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.execute(
            "SELECT envelope FROM group_events WHERE venue = ? AND tbl = ? ORDER BY seq",
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


class CentralRecorder(MqttWorker):
    worker_name = "central-recorder"
    manual_ack = True  # after the commit of what the message carried
    turn_seconds = 0.05
    commit_interval = 0.05  # seconds between commits (each an fsync) while messages come

    def __init__(self, db: str, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.db_path = db
        self.stats = GroupStats()
        self._db: GroupStorage | None = None
        self._unacked: list[tuple[int, int, int]] = []  # (connection, mid, qos)
        # Checked messages not stored yet: (venue, envelopes, the message as it came).
        self._pending: list[tuple[str, list[dict[str, Any]], bytes]] = []
        self._last_commit = 0.0
        self._refused_topics: set[str] = set()
        self.holdings = CentralHoldings()

    def setup(self) -> None:
        self._db = GroupStorage(self.db_path)
        now = time.monotonic()
        for venue, table, upto in self._db.uptos():
            self.holdings.load(venue, table, upto, now)
        self._db.commit()  # end the read

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=present):
                log.info("connected to the group's cluster (session %s)",
                         "kept" if present else "new")
                if not present:  # a new session: the cluster keeps it from now on
                    self.client.subscribe(topics.every_table("+", "private"), qos=1)
                # QoS 0, asked on every connection: a session kept from before the uplinks
                # reported their counts has no such subscription.
                self.client.subscribe(topics.uplink_counts("+"), qos=0)
            case Connected(refused=True, reason=reason):
                log.error("the group's cluster refused the central recorder: %s (check its "
                          "user and password)", reason)
            case Disconnected(reason=reason):
                log.warning("lost the group's cluster (%s): connecting to the next node",
                            reason)
            case Received():
                self._receive(item)

    def _receive(self, item: Received) -> None:
        assert self._db is not None
        topic = topics.parse(item.topic)
        if topic is not None and topic.table is None and topic.leaf == "uplink/sent":
            self._compare(topic.venue, item)
            return
        try:
            if topic is None or topic.table is None or "/" in topic.leaf:
                raise ContractError(f"topic {item.topic[:120]!r} names no venue's table")
            venue, table = topic.venue, topic.table
            envelopes = receive_events("Envelope", item.payload)
            for envelope in envelopes:  # a message is taken whole or not at all
                if envelope["venue"] != venue or envelope["table"] != table:
                    raise ContractError(f"an envelope of {envelope['venue']}/"
                                        f"{envelope['table']} on {venue}/{table}'s topic")
            self.stats.received += len(envelopes)
            if envelopes:  # stored with the turn's other messages, in one statement (turn)
                self._pending.append((venue, envelopes, item.payload))
        except ContractError as exc:
            self._refuse(item.topic, exc)
        # Refused or stored, it is acknowledged after the next commit: a refused message
        # would come back forever otherwise.
        if item.qos > 0:
            self._unacked.append((item.connection, item.mid, item.qos))

    def _refuse(self, topic: str, problem: ContractError) -> None:
        self.stats.refused += 1
        if topic not in self._refused_topics and len(self._refused_topics) < 1000:
            self._refused_topics.add(topic)  # said once a topic
            log.warning("refused a message on %s: %s (the venue's uplink sent what the "
                        "contract does not allow)", topic[:120], problem)

    def _compare(self, venue: str, item: Received) -> None:
        """A venue's uplink's counts: ask it for the tables the centre lacks."""
        try:
            if not is_name(venue):
                raise ContractError(f"venue {venue[:40]!r} is not a name")
            counts = receive("UplinkCounts", item.payload)["tables"]
        except ContractError as exc:
            self._refuse(item.topic, exc)
            return
        asks = self.holdings.to_ask(venue, counts, time.monotonic())
        if not asks:
            return
        self.stats.asked_again += len(asks)
        log.warning("venue %s's uplink counts more than the centre holds: asked to send again "
                    "%s", venue, ", ".join(f"{t} from {upto + 1}"
                                           for t, upto in sorted(asks.items())[:10]))
        self.client.publish(topics.group_resend(venue), encode({"v": 1, "tables": asks}),
                            qos=0)

    def _store_pending(self) -> None:
        """The messages taken in since the last turn, in one statement; then what the centre
        holds of their tables."""
        assert self._db is not None
        pending, self._pending = self._pending, []
        if not pending:
            return
        stored = self._db.insert(pending)
        self.stats.stored += stored
        self.stats.duplicates += sum(len(envelopes) for _, envelopes, _ in pending) - stored
        now = time.monotonic()
        for venue, envelopes, _ in pending:
            table = envelopes[0]["table"]
            if self.holdings.held(venue, table, [e["seq"] for e in envelopes], now):
                log.info("%s/%s: held up to %d, with a gap before seq %d", venue, table,
                         self.holdings.upto(venue, table), envelopes[0]["seq"])

    def turn(self) -> None:
        self._store_pending()
        now = time.monotonic()
        if not self._unacked or now - self._last_commit < self.commit_interval:
            return
        assert self._db is not None
        self._db.commit()
        self._last_commit = now
        for connection, mid, qos in self._unacked:
            # An id from an earlier connection may name another message now: that one is
            # left for the cluster to send again (it is stored already; counted twice).
            if connection == self.connection:
                self.client.ack(mid, qos)
        self._unacked.clear()

    def finish(self) -> None:
        assert self._db is not None
        self._store_pending()
        self._db.commit()
        self._db.close()
