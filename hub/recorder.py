"""The hub's recorder: the other end of the tables' acknowledgements.

It subscribes to every table's ``private`` topic with a persistent MQTT session (messages for
it wait at the broker while it is away), stores each ``(table, incarnation, seq)`` exactly once
(SQLite, or PostgreSQL when ``db_path`` is a ``postgresql://`` URL: ``hub/storage.py``),
acknowledges the contiguous prefix it holds of each incarnation on the table's ``ack`` topic,
and when a gap stays open longer than the reorder timeout asks the table for a replay on
``cmd/replay``. Without a session (its first start, or an expired one) it also asks every
table that is online and quiet for what follows its count.

A table's identity: each start of a table's journal is an incarnation (``hardware/outbox.py``)
that its online status names, with its journal and the incarnation it follows. The recorder
keeps them (``streams``) and tells the floor (``on_news``) when a table comes with a new
journal (re-installed), with a journal that went back (restored from a backup, or a copied
card: a second successor of one incarnation, or one that starts below what the hub holds of
the one it follows), or when two devices take turns answering under one name.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract import topics
from contract.envelope import LEGACY_INCARNATION, Stream, incarnation_of
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Received, TlsSettings
from contract.schema import ContractError, receive, receive_events
from contract.supervise import LogOnce
from contract.wire import encode
from hub.identities import TableIdentities
from hub.ledger import RecorderLedger, Replay
from hub.states import TableStatus
from hub.storage import Storage, event_row, open_storage

log = logging.getLogger("tablectl.recorder")

CLOCK_ROUND_TRIP_S = 5.0  # a status answer slower than this does not measure a table's clock
# Status questions an incarnation is asked for its clock: an answer too slow to measure (a
# loaded hub, a link retransmitting) asks again at once, so one slow moment does not leave the
# table's times unmeasured for the whole run; a link always that slow stays unmeasured.
CLOCK_TRIES = 3


@dataclass
class RecorderStats:
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    replay_requests: int = 0
    invalid: int = 0
    gaps: dict[Stream, int] = field(default_factory=dict)
    flushed_at: float = 0.0  # monotonic time of the last flush (the recorder has turned)


class Recorder(MqttWorker):
    worker_name = "recorder"
    batch = 1000

    def __init__(self, db_path: Path | str, *, venue: str, host: str = "127.0.0.1",
                 port: int = 1883, tls: TlsSettings | None = None, client_id: str = "recorder",
                 username: str | None = None, password: str | None = None,
                 reorder_timeout: float = 2.0, ack_interval: float = 0.05,
                 validate: Callable[[dict[str, Any]], None] | None = None,
                 on_stored: Callable[[str, list[dict[str, Any]]], None] | None = None,
                 on_news: Callable[[str, str, str], None] | None = None,
                 wall: Callable[[], float] = time.time) -> None:
        """``on_stored(table, envelopes)``: after each commit, on the recorder's thread, the
        envelopes it stored for the first time, in the order they came (it must not block:
        the floor enqueues them). ``on_news(table, kind, text)``: what it found of a
        table's identity, an alert for the floor (the same thread, the same rule)."""
        # A persistent session: what the tables send while the recorder is away waits at the
        # broker for it.
        super().__init__(Endpoint(host, port, client_id, tls, username, password,
                                  session_seconds=7 * 24 * 3600))
        self.db_path = str(db_path)
        self.venue = venue
        self.reorder_timeout = reorder_timeout
        self.ack_interval = ack_interval
        self.turn_seconds = ack_interval
        self.validate = validate
        self.on_stored = on_stored
        self.on_news = on_news
        self.wall = wall
        self._stored: dict[str, list[dict[str, Any]]] = {}  # since the last commit
        # The events found new since the last commit, written with it: rows and their keys.
        self._waiting_rows: list[tuple[Any, ...]] = []
        self._waiting_keys: set[tuple[str, str, int]] = set()
        # What it holds and asks for (pure: hub/ledger.py); this class is its MQTT and
        # database shell.
        self.ledger: RecorderLedger[Stream] = RecorderLedger(reorder_timeout)
        # Committed counts of each table's newest incarnation (read by others).
        self.upto: dict[str, int] = {}
        self.identities = TableIdentities()
        self.stats = RecorderStats(gaps=self.ledger.gaps)
        self.connected = threading.Event()  # connected and subscribed (for whoever waits)
        self._unsent_acks: dict[Stream, int] = {}  # counts committed while offline
        self._asked: OrderedDict[str, Stream] = OrderedDict()  # replays by transaction
        self._fresh_session = True
        self._status_asked: set[Stream] = set()
        self._clock_tries: dict[Stream, int] = {}  # status questions asked of each
        # status asked: its transaction -> the incarnation, and when (the hub's clock)
        self._clock_asked: OrderedDict[str, tuple[Stream, float]] = OrderedDict()
        self._db: Storage | None = None
        self._refused = LogOnce(log)
        self.last_turn = time.monotonic()  # the worker turns at least every ack_interval
        self._last_flush = 0.0

    def _topic(self, table: str, leaf: str) -> str:
        return topics.table(self.venue, table, leaf)

    # ------------------------------------------------------------------ the worker
    def setup(self) -> None:
        self._db = open_storage(self.db_path)
        self.ledger.load(self._db.uptos())
        self.identities.load(self._db.streams())
        self._count_newest(self.ledger.upto)
        self._last_flush = time.monotonic()

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=kept):
                self._subscribe()
                self.ledger.session(kept)
                self._fresh_session = not kept
            case Disconnected():
                self.connected.clear()
            case Received(topic=name, payload=payload, retained=retained):
                self._receive(name, payload, retained)

    def subscribed(self) -> None:
        self.connected.set()  # connected and subscribed: what a table sends now is heard

    def turn(self) -> None:
        now = self.last_turn = time.monotonic()
        # Commit (an fsync) and acknowledge in batches, at most every ack_interval.
        if now - self._last_flush >= self.ack_interval:
            self._flush(now)
            self._last_flush = now

    def finish(self) -> None:
        self._flush(time.monotonic())
        assert self._db is not None
        self._db.close()

    def _subscribe(self) -> None:
        from paho.mqtt.subscribeoptions import SubscribeOptions

        # The tables' retained status at every subscription (retain handling 0): each says
        # what the table keeps and what the recorder acknowledged of it, so a database
        # restored from a backup is found behind and asks again; and a recorder without a
        # session (its first start, or its session expired) has missed what the tables sent
        # before, which they will not send again unasked.
        every = topics.every_table
        self.subscribe([
            (every(self.venue, "private"), SubscribeOptions(qos=1)),
            (every(self.venue, "cmd-resp"), SubscribeOptions(qos=1)),
            (every(self.venue, "status"), SubscribeOptions(qos=1, retainHandling=0))])

    def _receive(self, name: str, payload: bytes, retained: bool) -> None:
        """One message from the broker, checked against the contract before anything acts on
        it: a refused one is counted and logged once for its topic, and changes nothing."""
        topic = topics.parse(name)
        try:
            if topic is None or topic.table is None or "/" in topic.leaf:
                raise ContractError(f"topic {name[:120]!r} names no table")
            table, leaf = topic.table, topic.leaf
            if leaf == "status":
                status = receive("Status", payload)
                stream = self._status(table, status)
                if status["state"] == TableStatus.ONLINE:
                    if retained and self._fresh_session:
                        self.ledger.online(stream, time.monotonic())
                    self._ask_status(stream)
            elif leaf == "cmd-resp":
                self._command_response(table, receive("CommandResponse", payload))
            else:
                envelopes = receive_events("Envelope", payload)
                for envelope in envelopes:  # a batch is taken whole or not at all
                    if envelope["table"] != table or envelope["venue"] != self.venue:
                        raise ContractError(f"an envelope of {envelope['venue']}/"
                                            f"{envelope['table']} on {table}'s topic")
                    if self.validate is not None:
                        self.validate(envelope)
                self.stats.received += len(envelopes)
                for envelope in envelopes:
                    self.ledger.heard(self._stream_of(table, envelope))
                    # Each row keeps its own envelope's JSON, as if it had come alone.
                    raw = payload.decode() if len(envelopes) == 1 else encode(envelope)
                    self._store(table, envelope, raw)
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(name, str(exc))

    def _status(self, table: str, status: dict[str, Any]) -> Stream:
        """A table's status: the incarnation it names (the legacy one for a table of an
        earlier release), kept with what the status says of it; news of its identity go to
        the floor."""
        stream = Stream(table, str(status.get("incarnation", LEGACY_INCARNATION)))
        if "incarnation" not in status:
            return stream
        since = int(status.get("since_seq", 1))
        news = self.identities.status(stream, journal=status.get("journal"),
                                      follows=status.get("follows"), since_seq=since,
                                      online=status["state"] == TableStatus.ONLINE,
                                      held=self.ledger.upto)
        self._save_stream(stream)
        # What comes before its first seq is its predecessor's: nothing to ask it for.
        self.ledger.replay_refused(stream, since)
        for span in status.get("kept", ()):
            kept = Stream(table, span["incarnation"])
            if kept != stream:
                if self.identities.heard(kept, span["first_seq"]):
                    self._save_stream(kept)
                self.ledger.replay_refused(kept, span["first_seq"])
            if self.ledger.acknowledged_before(kept, span["acked_upto"]):
                log.warning(
                    "%s: the hub's database lacks events up to %d of incarnation %s that it had "
                    "acknowledged (restored from a backup?): asking the table for them again",
                    table, span["acked_upto"], kept.incarnation[:8])
        for kind, text in news:
            log.warning("%s: %s", table, text)
            if self.on_news is not None:
                self.on_news(table, kind, text)
        return stream

    def _ask_status(self, stream: Stream) -> None:
        """Once a run, for each incarnation heard online: its status as it is now (the
        retained one says what the recorder had acknowledged when the table connected; the
        database, restored from a backup since, may lack more), and its clock, timed both
        ways (how far it is from the hub's)."""
        if stream in self._status_asked or stream.incarnation == LEGACY_INCARNATION:
            return
        self._status_asked.add(stream)
        self._clock_tries[stream] = self._clock_tries.get(stream, 0) + 1
        transaction = uuid.uuid4().hex
        self._clock_asked[transaction] = (stream, self.wall())
        while len(self._clock_asked) > 1000:
            self._clock_asked.popitem(last=False)
        self.client.publish(self._topic(stream.table, "cmd/status"),
                            encode({"transaction": transaction}), qos=1)

    def _clock_answer(self, table: str, body: dict[str, Any]) -> None:
        """A status answer: the table's clock against the hub's, the round trip halved (an
        answer slower than ``CLOCK_ROUND_TRIP_S`` measures nothing)."""
        asked = self._clock_asked.pop(body.get("transaction") or "", None)
        if asked is None or "ts" not in body:
            return
        stream, sent = asked
        now = self.wall()
        if body.get("incarnation") != stream.incarnation:
            return  # another device answered under the name
        if now - sent > CLOCK_ROUND_TRIP_S:  # too late to tell: asked again, a few times
            if self._clock_tries.get(stream, 0) < CLOCK_TRIES:
                self._status_asked.discard(stream)
                self._ask_status(stream)
            return
        assert self._db is not None
        offset = round((sent + now) / 2 * 1000) - int(body["ts"])
        self._write_waiting()  # (their times moved too)
        self._db.set_clock_offset(stream, offset)
        self._db.commit()  # (once a table a run: the write lock let go at once, as above)
        for kind, text in self.identities.clock(stream, offset, int(body["ts"])):
            log.warning("%s: %s", table, text)
            if self.on_news is not None:
                self.on_news(table, kind, text)

    def _stream_of(self, table: str, envelope: dict[str, Any]) -> Stream:
        """The incarnation an event belongs to; one never heard of (its status not seen) is
        kept from its first event on."""
        stream = Stream(table, incarnation_of(envelope))
        if self.identities.heard(stream):  # its first seq is its status's to say
            self._save_stream(stream)
        return stream

    def _save_stream(self, stream: Stream) -> None:
        assert self._db is not None
        known = self.identities.streams[stream]
        self._db.save_stream(stream, journal=known.journal, follows=known.follows,
                             since_seq=known.since_seq, epoch=known.epoch,
                             first_seen=int(self.wall() * 1000))
        # Committed at once (a status, a journal's first event: a few a table a run), not with
        # the batch: SQLite's one write lock is not held while the batch goes on (_store).
        self._db.commit()

    def _request_replay(self, replay: Replay[Stream]) -> None:
        self.stats.replay_requests += 1
        transaction = uuid.uuid4().hex
        self._asked[transaction] = replay.stream
        while len(self._asked) > 1000:
            self._asked.popitem(last=False)
        request: dict[str, Any] = {"transaction": transaction, "from_seq": replay.from_seq}
        if replay.to_seq is not None:
            request["to_seq"] = replay.to_seq
        request["incarnation"] = replay.stream.incarnation
        self.client.publish(self._topic(replay.stream.table, "cmd/replay"), encode(request),
                            qos=1)

    def _store(self, table: str, envelope: dict[str, Any], raw: str) -> None:
        assert self._db is not None
        seq = envelope["seq"]
        stream = Stream(table, incarnation_of(envelope))
        known = self.identities.streams.get(stream)
        ts = envelope.get("ts")
        # When it happened by the hub's clock: the table's stamp moved by its clock's offset;
        # until that is measured, when the hub got it (set again once it is).
        if known is not None and known.clock_offset is not None and isinstance(ts, int):
            hub_ts = ts + known.clock_offset
        else:
            hub_ts = int(self.wall() * 1000)
        # Written when the turn commits (``_flush``), not now: SQLite has one write lock,
        # and a write now would hold it, against the floor's writes, until then. Only the
        # recorder stores events: what is neither waiting here nor in the database is new.
        key = (table, stream.incarnation, seq)
        if key in self._waiting_keys or self._db.has_event(*key):
            self.stats.duplicates += 1
        else:
            self._waiting_rows.append(event_row(table, seq, envelope, raw, hub_ts))
            self._waiting_keys.add(key)
            self.stats.stored += 1
            if self.on_stored is not None:
                self._stored.setdefault(table, []).append(envelope)
        self.ledger.stored(stream, seq)

    def _command_response(self, table: str, body: dict[str, Any]) -> None:
        if body["command"] == "status" and body["ok"]:
            self._clock_answer(table, body)
        if body["command"] == "replay" and not body["ok"] and "oldest" in body:
            # The answer names no incarnation: the table's newest the recorder knows asked.
            stream = self._asked.get(body.get("transaction") or "")
            if stream is not None:
                known = self.identities.streams.get(stream)
                since = known.since_seq if known is not None else 1
                if body["oldest"] > max(since, self.ledger.upto.get(stream, 0) + 1):
                    log.warning("%s: events %d-%d of incarnation %s are no longer kept at the "
                                "table: the hub never had them, they are lost to it", table,
                                max(since, self.ledger.upto.get(stream, 0) + 1),
                                body["oldest"] - 1,
                                stream.incarnation[:8])
                self.ledger.replay_refused(stream, body["oldest"])

    def _write_waiting(self) -> None:
        """The events found new since the last commit, written (into its transaction)."""
        if self._waiting_rows:
            assert self._db is not None
            self._db.insert_rows(self._waiting_rows)
            self._waiting_rows, self._waiting_keys = [], set()

    def _count_newest(self, counted: Mapping[Stream, int]) -> None:
        for stream, upto in counted.items():
            if self.identities.newest.get(stream.table) == stream:
                self.upto[stream.table] = upto

    def _flush(self, now: float) -> None:
        assert self._db is not None
        self.stats.flushed_at = now
        counted = self.ledger.counts(now)
        self._write_waiting()
        for stream, upto in counted.items():
            self._db.set_upto(stream, upto)
        # One commit (one fsync) for the rows and every table's count; only then the acks, so
        # a table never drops from its outbox what the recorder could still lose.
        self._db.commit()
        replays = self.ledger.committed(counted, now)
        self._count_newest(counted)
        stored, self._stored = self._stored, {}
        if self.on_stored is not None:
            for table, envelopes in stored.items():
                self.on_stored(table, envelopes)
        # Acknowledged once connected (the CONNACK, not the SUBACK: with a kept session the
        # broker delivers what waited before it answers the SUBSCRIBE); a count committed
        # while offline, once back: a table would otherwise wait for its next event's ack.
        self._unsent_acks.update(counted)
        if self.online:
            for stream, upto in self._unsent_acks.items():
                ack = {"upto_seq": upto, "incarnation": stream.incarnation}
                self.client.publish(self._topic(stream.table, "ack"), encode(ack), qos=1)
            self._unsent_acks.clear()
        for replay in replays:
            self._request_replay(replay)

    # -- reading what was recorded (thread-safe: a connection of its own)
    def seqs(self, table: str) -> list[int]:
        storage = open_storage(self.db_path)
        try:
            return storage.seqs(table)
        finally:
            storage.close()

    def envelopes(self, table: str) -> list[dict[str, Any]]:
        storage = open_storage(self.db_path)
        try:
            return storage.envelopes(table)
        finally:
            storage.close()
