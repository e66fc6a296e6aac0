"""The hub's recorder: the other end of the tables' acknowledgements.

It subscribes to every table's ``private`` topic with a persistent MQTT session (messages for
it wait at the broker while it is away), stores each ``(table, seq)`` exactly once (SQLite, or
PostgreSQL when ``db_path`` is a ``postgresql://`` URL: ``hub/storage.py``),
acknowledges the contiguous prefix it holds on the table's ``ack`` topic, and when a gap stays
open longer than the reorder timeout asks the table for a replay on ``cmd/replay``. Without a
session (its first start, or an expired one) it also asks every table that is online and quiet
for what follows its count.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract import topics
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Received, TlsSettings
from contract.schema import ContractError, receive, receive_events
from contract.supervise import LogOnce
from contract.wire import encode
from hub.ledger import RecorderLedger, Replay
from hub.storage import Storage, open_storage

log = logging.getLogger("tablectl.recorder")


@dataclass
class RecorderStats:
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    replay_requests: int = 0
    invalid: int = 0
    gaps: dict[str, int] = field(default_factory=dict)
    flushed_at: float = 0.0  # monotonic time of the last flush (the recorder has turned)


class Recorder(MqttWorker):
    worker_name = "recorder"
    batch = 1000

    def __init__(self, db_path: Path | str, *, venue: str, host: str = "127.0.0.1",
                 port: int = 1883, tls: TlsSettings | None = None, client_id: str = "recorder",
                 username: str | None = None, password: str | None = None,
                 reorder_timeout: float = 2.0, ack_interval: float = 0.05,
                 validate: Callable[[dict[str, Any]], None] | None = None,
                 on_stored: Callable[[str, list[dict[str, Any]]], None] | None = None) -> None:
        """``on_stored(table, envelopes)``: after each commit, on the recorder's thread, the
        envelopes it stored for the first time, in the order they came (it must not block:
        the floor enqueues them)."""
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
        self._stored: dict[str, list[dict[str, Any]]] = {}  # since the last commit
        # What it holds and asks for (pure: hub/ledger.py); this class is its MQTT and
        # database shell.
        self.ledger = RecorderLedger(reorder_timeout)
        self.upto = self.ledger.upto  # committed counts, table by table (read by others)
        self.stats = RecorderStats(gaps=self.ledger.gaps)
        self.connected = threading.Event()  # connected and subscribed (for whoever waits)
        self._unsent_acks: dict[str, int] = {}  # counts committed while offline
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
        self._last_flush = time.monotonic()

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=kept):
                self._subscribe()
                self.ledger.session(kept)
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

        # The tables' retained status only when the subscription is new (retain handling 1):
        # a recorder without a session (its first start, or its session expired) has missed
        # what the tables sent before, and the tables will not send it again unasked.
        every = topics.every_table
        self.subscribe([
            (every(self.venue, "private"), SubscribeOptions(qos=1)),
            (every(self.venue, "cmd-resp"), SubscribeOptions(qos=1)),
            (every(self.venue, "status"), SubscribeOptions(qos=1, retainHandling=1))])

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
                if retained and status["state"] == "online":
                    self.ledger.online(table, time.monotonic())
            elif leaf == "cmd-resp":
                self.ledger.heard(table)
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
                self.ledger.heard(table)
                for envelope in envelopes:
                    # Each row keeps its own envelope's JSON, as if it had come alone.
                    raw = payload.decode() if len(envelopes) == 1 else encode(envelope)
                    self._store(table, envelope, raw)
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(name, str(exc))

    def _request_replay(self, replay: Replay) -> None:
        self.stats.replay_requests += 1
        request: dict[str, Any] = {"transaction": uuid.uuid4().hex, "from_seq": replay.from_seq}
        if replay.to_seq is not None:
            request["to_seq"] = replay.to_seq
        self.client.publish(self._topic(replay.table, "cmd/replay"), encode(request), qos=1)

    def _store(self, table: str, envelope: dict[str, Any], raw: str) -> None:
        assert self._db is not None
        seq = envelope["seq"]
        new = self._db.insert(table, seq, envelope, raw)
        if not new:
            self.stats.duplicates += 1
        else:
            self.stats.stored += 1
            if self.on_stored is not None:
                self._stored.setdefault(table, []).append(envelope)
        self.ledger.stored(table, seq)

    def _command_response(self, table: str, body: dict[str, Any]) -> None:
        if body["command"] == "replay" and not body["ok"] and "oldest" in body:
            self.ledger.replay_refused(table, body["oldest"])

    def _flush(self, now: float) -> None:
        assert self._db is not None
        self.stats.flushed_at = now
        counted = self.ledger.counts(now)
        for table, upto in counted.items():
            self._db.set_upto(table, upto)
        # One commit (one fsync) for the rows and every table's count; only then the acks, so
        # a table never drops from its outbox what the recorder could still lose.
        self._db.commit()
        replays = self.ledger.committed(counted, now)
        stored, self._stored = self._stored, {}
        if self.on_stored is not None:
            for table, envelopes in stored.items():
                self.on_stored(table, envelopes)
        # Acknowledged once connected (the CONNACK, not the SUBACK: with a kept session the
        # broker delivers what waited before it answers the SUBSCRIBE); a count committed
        # while offline, once back: a table would otherwise wait for its next event's ack.
        self._unsent_acks.update(counted)
        if self.online:
            for table, upto in self._unsent_acks.items():
                self.client.publish(self._topic(table, "ack"), encode({"upto_seq": upto}),
                                    qos=1)
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
