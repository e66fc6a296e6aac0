"""The table's link to the venue hub over MQTT 5 (paho-mqtt 2, ``CallbackAPIVersion.VERSION2``).

Events come from the outbox (``hardware/outbox.py``), published in ``seq`` order with a bounded
number in flight, each to ``private`` (whole) and ``events`` (public view), QoS 1. Rows go only
when the recorder's ``ack`` covers them; after a reconnect everything unacknowledged is sent
again, the backlog flagged ``historical``; the recorder keeps each ``(table, seq)`` once. What
to send and when is ``contract.delivery.OutboxSender`` (pure); this is its MQTT shell.
Retained ``status``: ``online`` at connect, the Last Will ``lost`` if the table vanishes,
``offline`` at a clean stop, each with the ``boot`` counter so a late Last Will of an old
session is recognisable. Commands on ``cmd/<name>`` are validated and answered on ``cmd-resp``.

An ``MqttWorker`` (``contract/mqtt.py``): paho's callbacks only enqueue typed items; one worker
thread owns the publishing.
"""

from __future__ import annotations

import logging
import queue
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contract import topics
from contract.commands import Command, CommandError, ReplayCommand, StatusCommand, parse_command
from contract.delivery import OutboxSender
from contract.mqtt import (
    BrokerClient,
    Connected,
    Disconnected,
    Endpoint,
    MqttWorker,
    Published,
    Received,
    TlsSettings,
)
from contract.schema import ContractError, receive
from contract.snapshots import VenueClockReading
from contract.supervise import LogOnce
from contract.views import public_event
from contract.wire import encode
from hardware.outbox import Outbox

log = logging.getLogger("tablectl.link")

MAX_SPANS = 50  # incarnations a status describes (the contract's maxItems): the newest


@dataclass
class LinkStats:
    published: int = 0  # events
    messages: int = 0  # messages on private (a backlog goes several events a message)
    historical: int = 0
    pubacks: int = 0
    commands: int = 0
    refused: int = 0
    invalid: int = 0  # acks and venue clock messages that broke the contract


@dataclass(frozen=True)
class OutboxGrew:
    """New rows are in the outbox."""


@dataclass(frozen=True)
class PublishState:
    state: dict[str, Any]


class TableLink(MqttWorker):
    worker_name = "mqtt-link"

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
        on_venue_clock: Callable[[VenueClockReading, bool], None] | None = None,
        max_inflight: int = 16,
        keepalive: int = 10,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(Endpoint(host, port, f"table-{table}", tls, username, password,
                                  keepalive))
        self.outbox = outbox
        self.venue = venue
        self.table = table
        self.on_command = on_command
        self.on_venue_clock = on_venue_clock
        self.max_inflight = max_inflight
        self.clock = clock
        self.stats = LinkStats()
        self.sender = OutboxSender(venue=venue, table=table, public_view=public_event,
                                   max_inflight=max_inflight)
        self._numbers: dict[int, int] = {}  # paho's mid -> the sender's message number
        self._transactions: OrderedDict[str, None] = OrderedDict()
        self._refused = LogOnce(log)

    @property
    def connected(self) -> bool:
        return self.sender.connected

    def topic(self, leaf: str) -> str:
        return topics.table(self.venue, self.table, leaf)

    def _status(self, state: str) -> bytes:
        identity = self.outbox.identity
        status: dict[str, Any] = {
            "state": state, "boot": self.outbox.boot, "table": self.table,
            "ts": int(self.clock() * 1000), "journal": identity.journal,
            "incarnation": identity.incarnation, "since_seq": identity.since_seq,
            "kept": self.outbox.spans()[-MAX_SPANS:]}
        if identity.follows is not None:
            status["follows"] = identity.follows
        return encode(status).encode()

    # ------------------------------------------------------------------ what others call
    def notify(self) -> None:
        """New rows are in the outbox (called by the main loop after appending)."""
        self.put(OutboxGrew())

    def publish_state(self, state: dict[str, Any]) -> None:
        self.put(PublishState(state))

    # ------------------------------------------------------------------ the worker
    def configure(self, client: BrokerClient) -> None:
        client.will_set(self.topic("status"), self._status("lost"), qos=1, retain=True)
        client.max_inflight_messages_set(self.max_inflight * 2 + 8)

    def handle(self, item: object) -> None:
        try:
            match item:
                case Connected(refused=False):
                    self._on_connect()
                case Disconnected():
                    self.sender.disconnect()
                    self._numbers.clear()
                case Received(topic=name, payload=payload, retained=retained):
                    if name == topics.venue_clock(self.venue):
                        self._venue_clock(payload, retained)
                    else:
                        self._on_message(name, payload)
                case Published(mid=mid):
                    if self._puback(mid):
                        self.stats.pubacks += 1
                case PublishState(state=state) if self.connected:
                    self.client.publish(self.topic("state"), encode(state), qos=1, retain=True)
        except ContractError as exc:
            self.stats.invalid += 1
            self._refused(getattr(item, "topic", type(item).__name__), str(exc))
        except Exception:  # a publish that failed: the outbox keeps the rows, the link goes on
            log.exception("mqtt link: %s failed", type(item).__name__)

    def turn(self) -> None:
        # After everything that waited (PUBACKs come in bursts): one pump for all.
        self._pump()

    def _on_connect(self) -> None:
        client = self.client
        # Subscribed before "online" is said: the hub answers "online" at once (its status
        # question for the table's clock, hand-for-hand's state), and the broker takes one
        # connection's packets in order, so the subscription is in place before anyone hears
        # it. Said first, a starved table's subscription could come after the hub's question,
        # which the broker then dropped: the hub never measured that table's clock.
        subscriptions = [(self.topic("cmd/+"), 1), (self.topic("ack"), 1)]
        if self.on_venue_clock is not None:
            subscriptions.append((topics.venue_clock(self.venue), 1))
        client.subscribe(subscriptions)
        client.publish(self.topic("status"), self._status("online"), qos=1, retain=True)
        self._numbers.clear()
        self.sender.connect(self.outbox.acked_upto, self.outbox.last_seq)

    def _pump(self) -> None:
        for message in self.sender.pump(self.outbox.rows):
            self.stats.published += len(message.seqs)
            self.stats.historical += message.historical
            info = self.client.publish(self.topic("private"), message.private, qos=1)
            self.stats.messages += 1
            if message.public is not None:
                self.client.publish(self.topic("events"), message.public, qos=1)
            self._numbers[info.mid] = message.number

    def _puback(self, mid: int) -> bool:
        number = self._numbers.pop(mid, None)
        return number is not None and self.sender.puback(number)

    def _on_message(self, name: str, payload: bytes) -> None:
        if name == self.topic("ack"):
            # A malformed ack is refused (ContractError): rows stay until a good one comes.
            ack = receive("Ack", payload)
            self.outbox.ack(self.sender.acked(ack["upto_seq"]), ack.get("incarnation"))
            return
        topic = topics.parse(name)
        if topic is None or topic.table != self.table or not topic.leaf.startswith("cmd/"):
            # Only what the link subscribed to arrives; anything else is the broker's error.
            raise ContractError(f"topic {name[:120]!r} is not one of this table's commands")
        command_name = topic.leaf.removeprefix("cmd/")
        self.stats.commands += 1
        try:
            command = parse_command(command_name, payload, self._transactions)
        except CommandError as exc:
            self.stats.refused += 1
            self._respond(exc.transaction, command_name, str(exc))
            return
        self._remember(command.transaction)
        error: str | None = None
        extra: dict[str, Any] = {}
        if isinstance(command, ReplayCommand):
            to_seq = command.to_seq
            error, extra = self._replay(int(command.from_seq),
                                        None if to_seq is None else int(to_seq),
                                        command.incarnation or self.outbox.incarnation)
        elif isinstance(command, StatusCommand):
            self.client.publish(self.topic("status"), self._status("online"), qos=1,
                                 retain=True)
            extra = {"last_seq": self.outbox.last_seq, "acked_upto": self.outbox.acked_upto,
                     "ts": self.outbox.now_ms(), "incarnation": self.outbox.incarnation}
        elif self.on_command is not None:
            error = self.on_command(command)
        else:
            error = "this table takes no floor commands"
        self._respond(command.transaction, command.name, error, **extra)

    def _venue_clock(self, payload: bytes, retained: bool) -> None:
        reading = VenueClockReading.parse(payload)
        if self.on_venue_clock is not None:
            self.on_venue_clock(reading, retained)

    def _replay(self, from_seq: int, to_seq: int | None,
                incarnation: str) -> tuple[str | None, dict[str, Any]]:
        """Send ``incarnation``'s events again from ``from_seq`` (``OutboxSender.replay``);
        an incarnation this table does not know (another daemon's under its name) keeps
        nothing here."""
        span = self.outbox.span(incarnation)
        if span is None:
            return (f"incarnation {incarnation} is not this table's "
                    f"(this one is {self.outbox.incarnation})",
                    {"last_seq": self.outbox.last_seq})
        first, last = span
        oldest = self.outbox.oldest_kept(incarnation)
        if oldest is None:  # none of its rows kept: it starts after its last
            oldest = last + 1
        return self.sender.replay(from_seq, to_seq, oldest=max(oldest, first),
                                  last=last, read=self.outbox.rows)

    def _remember(self, transaction: str) -> None:
        self._transactions[transaction] = None
        while len(self._transactions) > 1000:
            self._transactions.popitem(last=False)

    def _respond(self, transaction: str | None, name: str, error: str | None,
                 **extra: Any) -> None:
        body = {"transaction": transaction, "command": name, "ok": error is None, **extra}
        if error is not None:
            body["error"] = error
        self.client.publish(self.topic("cmd-resp"), encode(body), qos=1)

    def finish(self) -> None:
        """Clean stop: flush what the broker will take (3 s at most), say ``offline``."""
        deadline = time.monotonic() + 3.0
        while self.connected and self.sender.in_flight and time.monotonic() < deadline:
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            if isinstance(item, Published):
                self._puback(item.mid)
        if self.connected:
            info = self.client.publish(self.topic("status"), self._status("offline"), qos=1,
                                       retain=True)
            info.wait_for_publish(2.0)
