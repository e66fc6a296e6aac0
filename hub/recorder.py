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
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract import topics
from contract.mqtt import TlsSettings, mqtt_client
from contract.schema import ContractError, is_name, receive
from contract.supervise import LogOnce, start_worker
from contract.wire import encode
from hub.storage import Storage, open_storage

log = logging.getLogger("tablectl.recorder")


@dataclass
class RecorderStats:
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    replay_requests: int = 0
    acks: int = 0
    invalid: int = 0
    gaps: dict[str, int] = field(default_factory=dict)
    flushed_at: float = 0.0  # monotonic time of the last flush (the recorder has turned)


class Recorder:
    def __init__(self, db_path: Path | str, *, venue: str, host: str = "127.0.0.1",
                 port: int = 1883, tls: TlsSettings | None = None, client_id: str = "recorder",
                 username: str | None = None, password: str | None = None,
                 reorder_timeout: float = 2.0, ack_interval: float = 0.05,
                 validate: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.db_path = str(db_path)
        self.venue = venue
        self.host, self.port, self.tls = host, port, tls
        self.client_id = client_id
        self.username, self.password = username, password
        self.reorder_timeout = reorder_timeout
        self.ack_interval = ack_interval
        self.validate = validate
        self.stats = RecorderStats()
        self.upto: dict[str, int] = {}
        self._above: dict[str, set[int]] = {}  # seqs stored beyond each table's upto
        self._skip_to: dict[str, int] = {}  # a table no longer keeps what is below this
        self._gap_since: dict[str, float] = {}
        self._quiet_since: dict[str, float] = {}  # online tables not heard since subscribing
        self._last_request: dict[str, float] = {}
        self._ack_due: set[str] = set()
        self._queue: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._stop = threading.Event()
        self._client: Any = None
        self._worker: threading.Thread | None = None
        self.connected = threading.Event()
        self._db: Storage | None = None
        self._refused = LogOnce(log)
        self.last_turn = time.monotonic()  # the worker's loop turns at least every ack_interval

    def _open(self) -> Storage:
        storage = open_storage(self.db_path)
        self.upto.update(storage.uptos())
        return storage

    def start(self) -> Recorder:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        client = mqtt_client(self.client_id, tls=self.tls, username=self.username,
                             password=self.password)
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 7 * 24 * 3600  # a persistent session
        client.on_connect = lambda c, u, f, rc, p=None: self._queue.put(("connect", rc))
        client.on_disconnect = lambda c, u, f, rc, p=None: self._queue.put(("disconnect",))
        client.on_message = lambda c, u, msg: self._queue.put(("message", msg.topic,
                                                               msg.payload, msg.retain))
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.connect_async(self.host, self.port, keepalive=10, clean_start=False,
                             properties=properties)
        self._client = client
        client.loop_start()
        self._worker = start_worker(self._run, "recorder")
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._worker is not None:
            self._worker.join(timeout=5)
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()

    def _topic(self, table: str, leaf: str) -> str:
        return topics.table(self.venue, table, leaf)

    def _run(self) -> None:
        self._db = self._open()
        last_flush = time.monotonic()
        while not self._stop.is_set():
            self.last_turn = time.monotonic()
            try:
                items = [self._queue.get(timeout=self.ack_interval)]
            except queue.Empty:
                items = []
            while items and len(items) < 1000:  # take what waits: fewer wake-ups per message
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for item in items:
                if item[0] == "connect":
                    if not getattr(item[1], "is_failure", False):
                        self._subscribe()
                        self.connected.set()
                elif item[0] == "disconnect":
                    self.connected.clear()
                elif item[0] == "message":
                    self._receive(item[1], item[2], item[3])
            now = time.monotonic()
            # Commit (an fsync) and acknowledge in batches, at most every ack_interval.
            if now - last_flush >= self.ack_interval:
                self._flush(now)
                last_flush = now
        self._flush(time.monotonic())
        self._db.close()

    def _subscribe(self) -> None:
        from paho.mqtt.subscribeoptions import SubscribeOptions

        # The tables' retained status only when the subscription is new (retain handling 1):
        # a recorder without a session (its first start, or its session expired) has missed
        # what the tables sent before, and the tables will not send it again unasked.
        every = topics.every_table
        self._client.subscribe([
            (every(self.venue, "private"), SubscribeOptions(qos=1)),
            (every(self.venue, "cmd-resp"), SubscribeOptions(qos=1)),
            (every(self.venue, "status"), SubscribeOptions(qos=1, retainHandling=1))])

    def _receive(self, name: str, payload: bytes, retained: bool) -> None:
        """One message from the broker, checked against the contract before anything acts on
        it: a refused one is counted and logged once for its topic, and changes nothing."""
        parts = name.split("/")
        leaf = parts[-1]
        try:
            if len(parts) != 6 or not is_name(parts[4]):
                raise ContractError(f"topic {name[:120]!r} names no table")
            table = parts[4]
            if leaf == "status":
                status = receive("Status", payload)
                if retained and status["state"] == "online":
                    self._table_status(table)
            elif leaf == "cmd-resp":
                self._quiet_since.pop(table, None)
                self._command_response(table, receive("CommandResponse", payload))
            else:
                self.stats.received += 1
                self._quiet_since.pop(table, None)
                envelope = receive("Envelope", payload)
                if envelope["table"] != table or envelope["venue"] != self.venue:
                    raise ContractError(f"an envelope of {envelope['venue']}/"
                                        f"{envelope['table']} on {table}'s topic")
                if self.validate is not None:
                    self.validate(envelope)
                self._store(table, envelope, payload)
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(name, str(exc))

    def _table_status(self, table: str) -> None:
        """A table that is online, heard through a new subscription: if it stays quiet for
        the reorder timeout (it is not resending after a reconnect of its own), ask it for
        everything after what is stored (nothing comes back if nothing is missing)."""
        self._quiet_since.setdefault(table, time.monotonic())

    def _request_replay(self, table: str, now: float) -> None:
        self._last_request[table] = now
        self.stats.replay_requests += 1
        self._client.publish(self._topic(table, "cmd/replay"), encode(
            {"transaction": uuid.uuid4().hex, "from_seq": self.upto.get(table, 0) + 1}), qos=1)

    def _store(self, table: str, envelope: dict[str, Any], payload: bytes) -> None:
        assert self._db is not None
        seq = envelope["seq"]
        if not self._db.insert(table, seq, envelope, payload.decode()):
            self.stats.duplicates += 1
        else:
            self.stats.stored += 1
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
        if self.connected.is_set():
            for table in due:
                self._client.publish(self._topic(table, "ack"),
                                     encode({"upto_seq": self.upto[table]}), qos=1)
                self.stats.acks += 1
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
