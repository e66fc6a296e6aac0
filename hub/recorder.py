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
        self.stats = RecorderStats()
        self.upto: dict[str, int] = {}
        self._above: dict[str, set[int]] = {}  # seqs stored beyond each table's upto
        self._skip_to: dict[str, int] = {}  # a table no longer keeps what is below this
        self._gap_since: dict[str, float] = {}
        self._quiet_since: dict[str, float] = {}  # online tables not heard since subscribing
        self._last_request: dict[str, float] = {}
        self._ack_due: set[str] = set()
        # Connected without a session (nothing was kept for the recorder while away), and
        # the tables heard from since.
        self._fresh_session = False
        self._heard: set[str] = set()
        self.connected = threading.Event()
        self._db: Storage | None = None
        self._refused = LogOnce(log)
        self.last_turn = time.monotonic()  # the worker turns at least every ack_interval
        self._last_flush = 0.0

    def _topic(self, table: str, leaf: str) -> str:
        return topics.table(self.venue, table, leaf)

    # ------------------------------------------------------------------ the worker
    def setup(self) -> None:
        self._db = open_storage(self.db_path)
        self.upto.update(self._db.uptos())
        self._last_flush = time.monotonic()

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=kept):
                self._subscribe()
                self.connected.set()
                # Without its session the broker kept nothing for the recorder while it was
                # away: a table's first event above the count means events were lost, not
                # late (one publisher's QoS 1 messages arrive in order): ask at once.
                self._fresh_session, self._heard = not kept, set()
            case Disconnected():
                self.connected.clear()
            case Received(topic=name, payload=payload, retained=retained):
                self._receive(name, payload, retained)

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
        self.client.subscribe([
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
                    self._table_status(table)
            elif leaf == "cmd-resp":
                self._quiet_since.pop(table, None)
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
                self._quiet_since.pop(table, None)
                for envelope in envelopes:
                    # Each row keeps its own envelope's JSON, as if it had come alone.
                    raw = payload.decode() if len(envelopes) == 1 else encode(envelope)
                    self._store(table, envelope, raw)
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(name, str(exc))

    def _table_status(self, table: str) -> None:
        """A table that is online, heard through a new subscription: if it stays quiet for
        the reorder timeout (it is not resending after a reconnect of its own), ask it for
        everything after what is stored (nothing comes back if nothing is missing)."""
        self._quiet_since.setdefault(table, time.monotonic())

    def _request_replay(self, table: str, now: float) -> None:
        """Ask the table for what is missing: from what is stored on, to the first seq held
        beyond a gap (a table sends only the gap again, not what is already here)."""
        self._last_request[table] = now
        self.stats.replay_requests += 1
        request = {"transaction": uuid.uuid4().hex, "from_seq": self.upto.get(table, 0) + 1}
        above = self._above.get(table)
        if above:
            request["to_seq"] = min(above) - 1
        self.client.publish(self._topic(table, "cmd/replay"), encode(request), qos=1)

    def _store(self, table: str, envelope: dict[str, Any], raw: str) -> None:
        assert self._db is not None
        seq = envelope["seq"]
        if self._fresh_session and table not in self._heard:
            self._heard.add(table)
            if (seq - 1 > self.upto.get(table, 0) and seq - 1 not in self._above.get(table, ())
                    and table not in self._gap_since):
                self._gap_since[table] = float("-inf")  # asked at the next flush
        if not self._db.insert(table, seq, envelope, raw):
            self.stats.duplicates += 1
        else:
            self.stats.stored += 1
            if self.on_stored is not None:
                self._stored.setdefault(table, []).append(envelope)
            if seq > self.upto.get(table, 0):
                self._above.setdefault(table, set()).add(seq)
        self._ack_due.add(table)

    def _command_response(self, table: str, body: dict[str, Any]) -> None:
        if body["command"] == "replay" and not body["ok"] and "oldest" in body:
            # The table no longer keeps what we miss: start our count where it starts.
            self._skip_to[table] = max(self._skip_to.get(table, 0), body["oldest"] - 1)
            self._ack_due.add(table)

    def _flush(self, now: float) -> None:
        assert self._db is not None
        self.stats.flushed_at = now
        due = sorted(self._ack_due)
        self._ack_due.clear()
        counted: dict[str, int] = {}
        for table in due:
            upto = max(self.upto.get(table, 0), self._skip_to.pop(table, 0))
            above = self._above.setdefault(table, set())
            while upto + 1 in above:
                upto += 1
                above.discard(upto)
            above.difference_update([s for s in above if s <= upto])
            counted[table] = upto
            self._db.set_upto(table, upto)
            if above:
                self._gap_since.setdefault(table, now)
            else:
                self._gap_since.pop(table, None)
        # One commit (one fsync) for the rows and every table's count; only then the acks, so
        # a table never drops from its outbox what the recorder could still lose. ``upto``
        # moves only after the commit: whoever reads it finds those rows in the database.
        self._db.commit()
        self.upto.update(counted)
        stored, self._stored = self._stored, {}
        if self.on_stored is not None:
            for table, envelopes in stored.items():
                self.on_stored(table, envelopes)
        if self.connected.is_set():
            for table in due:
                self.client.publish(self._topic(table, "ack"),
                                     encode({"upto_seq": self.upto[table]}), qos=1)
        for table, since in list(self._quiet_since.items()):
            if now - since >= self.reorder_timeout:
                del self._quiet_since[table]
                self._request_replay(table, now)
        for table, since in list(self._gap_since.items()):
            if now - since < self.reorder_timeout:
                continue
            if now - self._last_request.get(table, 0.0) < self.reorder_timeout:
                continue
            self.stats.gaps[table] = self.stats.gaps.get(table, 0) + 1
            self._request_replay(table, now)
            self._gap_since[table] = now

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
