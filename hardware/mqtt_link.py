"""The table's link to the venue hub over MQTT 5 (paho-mqtt 2, ``CallbackAPIVersion.VERSION2``).

Events come from the outbox (``hardware/outbox.py``), published in ``seq`` order with a bounded
number in flight, each to ``private`` (whole) and ``events`` (public view), QoS 1. Rows go only
when the recorder's ``ack`` covers them; after a reconnect everything unacknowledged is sent
again, the backlog flagged ``historical``; the recorder keeps each ``(table, seq)`` once.
Retained ``status``: ``online`` at connect, the Last Will ``lost`` if the table vanishes,
``offline`` at a clean stop, each with the ``boot`` counter so a late Last Will of an old
session is recognisable. Commands on ``cmd/<name>`` are validated and answered on ``cmd-resp``.

paho's callbacks run on paho's thread and only enqueue; one worker thread owns the publishing.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contract import topics
from contract.commands import Command, CommandError, parse_command
from contract.envelope import envelope
from contract.mqtt import TlsSettings, mqtt_client
from contract.schema import ContractError, receive
from contract.supervise import LogOnce, start_worker
from contract.views import public_event
from contract.wire import encode
from hardware.outbox import Outbox

log = logging.getLogger("tablectl.link")


@dataclass
class LinkStats:
    published: int = 0
    historical: int = 0
    pubacks: int = 0
    acks: int = 0
    connects: int = 0
    commands: int = 0
    refused: int = 0
    invalid: int = 0  # acks and venue clock messages that broke the contract


class TableLink:
    def __init__(
        self,
        outbox: Outbox,
        *,
        venue: str,
        table: str,
        host: str = "127.0.0.1",
        port: int = 1883,
        tls: TlsSettings | None = None,
        username: str | None = None,
        password: str | None = None,
        on_command: Callable[[Command], str | None] | None = None,
        on_venue_clock: Callable[[dict[str, Any], bool], None] | None = None,
        max_inflight: int = 16,
        keepalive: int = 10,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.outbox = outbox
        self.venue = venue
        self.table = table
        self.host = host
        self.port = port
        self.tls = tls
        self.username = username
        self.password = password
        self.on_command = on_command
        self.on_venue_clock = on_venue_clock
        self.max_inflight = max_inflight
        self.keepalive = keepalive
        self.clock = clock
        self.stats = LinkStats()
        self.connected = False
        self._queue: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._inflight: dict[int, int] = {}  # mid -> seq
        self._sent_upto = 0
        self._buffer: deque[tuple[int, int, int, dict[str, Any]]] = deque()  # rows read ahead
        self._backlog_upto = 0
        self._transactions: OrderedDict[str, None] = OrderedDict()
        self._client: Any = None
        self._worker: threading.Thread | None = None
        self._stopped = threading.Event()
        self._refused = LogOnce(log)

    def topic(self, leaf: str) -> str:
        return topics.table(self.venue, self.table, leaf)

    # ------------------------------------------------------------------ lifecycle

    def _status(self, state: str) -> bytes:
        return encode({"state": state, "boot": self.outbox.boot, "table": self.table,
                       "ts": int(self.clock() * 1000)}).encode()

    def start(self) -> TableLink:
        client = mqtt_client(f"table-{self.table}", tls=self.tls, username=self.username,
                             password=self.password)
        client.will_set(self.topic("status"), self._status("lost"), qos=1, retain=True)
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.on_connect = lambda c, u, f, rc, p=None: self._queue.put(("connect", rc))
        client.on_disconnect = lambda c, u, f, rc, p=None: self._queue.put(("disconnect", rc))
        client.on_message = lambda c, u, msg: self._queue.put(("message", msg.topic,
                                                               msg.payload, msg.retain))
        client.on_publish = lambda c, u, mid, rc, p: self._queue.put(("puback", mid))
        client.max_inflight_messages_set(self.max_inflight * 2 + 8)
        self._client = client
        client.connect_async(self.host, self.port, keepalive=self.keepalive)
        client.loop_start()
        self._worker = start_worker(self._run, "mqtt-link")
        return self

    def notify(self) -> None:
        """New rows are in the outbox (called by the main loop after appending)."""
        self._queue.put(("wake",))

    def publish_state(self, state: dict[str, Any]) -> None:
        self._queue.put(("state", state))

    def stop(self, timeout: float = 5.0) -> None:
        """Clean stop: flush what the broker will take, say ``offline``, disconnect."""
        done = threading.Event()
        self._queue.put(("stop", done))
        done.wait(timeout)
        self._stopped.set()
        if self._worker is not None:
            self._worker.join(timeout=timeout)
        if self._client is not None:
            self._client.loop_stop()

    # ------------------------------------------------------------------ the worker

    def _run(self) -> None:
        while True:
            items = [self._queue.get()]
            # Take everything already waiting (PUBACKs come in bursts): one pump for all.
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for item in items:
                if not self._handle(item):
                    return
            self._pump()

    def _handle(self, item: tuple[Any, ...]) -> bool:
        """Handle one queued item; False when the worker must end."""
        kind = item[0]
        try:
            if kind == "connect":
                self._on_connect(item[1])
            elif kind == "disconnect":
                self.connected = False
                self._inflight.clear()
            elif kind == "message":
                if item[1] == topics.venue_clock(self.venue):
                    self._venue_clock(item[2], bool(item[3]))
                else:
                    self._on_message(item[1], item[2])
            elif kind == "puback":
                if self._inflight.pop(item[1], None) is not None:
                    self.stats.pubacks += 1
            elif kind == "state" and self.connected:
                self._client.publish(self.topic("state"), encode(item[1]), qos=1,
                                     retain=True)
            elif kind == "stop":
                self._clean_stop(item[1])
                return False
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(str(item[1]), str(exc))
        except Exception:  # a publish that failed: the outbox keeps the rows, the link goes on
            log.exception("mqtt link: %s failed", kind)
        return True

    def _on_connect(self, reason: Any) -> None:
        if getattr(reason, "is_failure", False):
            return
        self.connected = True
        self.stats.connects += 1
        client = self._client
        client.publish(self.topic("status"), self._status("online"), qos=1, retain=True)
        subscriptions = [(self.topic("cmd/+"), 1), (self.topic("ack"), 1)]
        if self.on_venue_clock is not None:
            subscriptions.append((topics.venue_clock(self.venue), 1))
        client.subscribe(subscriptions)
        self._inflight.clear()
        self._buffer.clear()
        self._sent_upto = self.outbox.acked_upto
        self._backlog_upto = self.outbox.last_seq

    def _pump(self) -> None:
        if not self.connected:
            return
        while len(self._inflight) < self.max_inflight:
            if not self._buffer:
                # Read ahead in batches: one query per few hundred rows, not per PUBACK.
                self._buffer.extend(self.outbox.rows(self._sent_upto, 500))
                if not self._buffer:
                    return
            seq, ts, boot, event = self._buffer.popleft()
            historical = seq <= self._backlog_upto
            message = envelope(event, venue=self.venue, table=self.table, seq=seq, boot=boot,
                               ts_ms=ts, historical=historical)
            info = self._client.publish(self.topic("private"), encode(message), qos=1)
            public = public_event(event)
            if public is not None:
                shown = envelope(public, venue=self.venue, table=self.table, seq=seq, boot=boot,
                                 ts_ms=ts, historical=historical)
                self._client.publish(self.topic("events"), encode(shown), qos=1)
            self._inflight[info.mid] = seq
            self._sent_upto = seq
            self.stats.published += 1
            self.stats.historical += historical

    def _on_message(self, name: str, payload: bytes) -> None:
        if name == self.topic("ack"):
            # A malformed ack is refused (ContractError): rows stay until a good one comes.
            upto = receive("Ack", payload)["upto_seq"]
            self.stats.acks += 1
            self.outbox.ack(upto)
            return
        command_name = name.rsplit("/", 1)[-1]
        self.stats.commands += 1
        try:
            command = parse_command(command_name, payload, set(self._transactions))
        except CommandError as exc:
            self.stats.refused += 1
            self._respond(exc.transaction, command_name, str(exc))
            return
        self._remember(command.transaction)
        error: str | None = None
        extra: dict[str, Any] = {}
        if command.name == "replay":
            error, extra = self._replay(int(command.args["from_seq"]))
        elif command.name == "status":
            self._client.publish(self.topic("status"), self._status("online"), qos=1,
                                 retain=True)
            extra = {"last_seq": self.outbox.last_seq, "acked_upto": self.outbox.acked_upto}
        elif self.on_command is not None:
            error = self.on_command(command)
        else:
            error = "this table takes no floor commands"
        self._respond(command.transaction, command.name, error, **extra)

    def _venue_clock(self, payload: bytes, retained: bool) -> None:
        state = receive("VenueClock", payload)
        if self.on_venue_clock is not None:
            self.on_venue_clock(state, retained)

    def _replay(self, from_seq: int) -> tuple[str | None, dict[str, Any]]:
        oldest = self.outbox.oldest_kept()
        last = self.outbox.last_seq
        if from_seq < 1 or from_seq > last + 1:
            return f"from_seq {from_seq} is outside 1..{last + 1}", {"last_seq": last}
        if oldest is None or from_seq < oldest:
            return (f"events before seq {oldest or last + 1} are no longer kept",
                    {"oldest": oldest or last + 1, "last_seq": last})
        self._sent_upto = min(self._sent_upto, from_seq - 1)
        self._buffer.clear()
        self._backlog_upto = max(self._backlog_upto, last)
        return None, {"from_seq": from_seq, "last_seq": last}

    def _remember(self, transaction: str) -> None:
        self._transactions[transaction] = None
        while len(self._transactions) > 1000:
            self._transactions.popitem(last=False)

    def _respond(self, transaction: str | None, name: str, error: str | None,
                 **extra: Any) -> None:
        body = {"transaction": transaction, "command": name, "ok": error is None, **extra}
        if error is not None:
            body["error"] = error
        self._client.publish(self.topic("cmd-resp"), encode(body), qos=1)

    def _clean_stop(self, done: threading.Event) -> None:
        deadline = time.monotonic() + 3.0
        while self.connected and self._inflight and time.monotonic() < deadline:
            try:
                item = self._queue.get(timeout=0.05)
            except queue.Empty:
                continue
            if item[0] == "puback":
                self._inflight.pop(item[1], None)
        if self.connected:
            info = self._client.publish(self.topic("status"), self._status("offline"), qos=1,
                                        retain=True)
            info.wait_for_publish(2.0)
            self._client.disconnect()
        done.set()
