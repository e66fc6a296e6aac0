"""The MQTT plumbing every part of the project shares: paho-mqtt 2 speaking MQTT 5 (callback API
version 2), with the venue's TLS client certificate, and ``MqttWorker``, the one way a long-lived
part (the table's link, the recorder, the hub's floor, the venue clock) talks MQTT.

A worker owns its state on one thread. paho's callbacks run on paho's network thread and only
put typed items (``Connected``, ``Disconnected``, ``Received``, ``Published``) on the worker's
queue; other threads put their own items with ``put``. The worker takes what waits (up to
``batch`` at a time), hands each item to ``handle``, then calls ``turn`` (also when nothing came
for ``turn_seconds``). It runs under ``contract.supervise``: an exception that escapes
``handle`` is a bug or a lost resource, and ends the process so that systemd restarts it; what
a single bad message can cause is caught where it is handled.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

from contract.supervise import start_worker

if TYPE_CHECKING:
    import paho.mqtt.client
    from paho.mqtt.subscribeoptions import SubscribeOptions


class Receipt(Protocol):
    """What ``publish`` answers: the message's id (its PUBACK names it) and a wait for it."""

    mid: int

    def wait_for_publish(self, timeout: float | None = None) -> None: ...


class BrokerClient(Protocol):
    """What a worker asks of its connection to the broker: paho's ``Client`` is one (mypy
    checks it, ``mqtt_client``), a test's recording stand-in another. Anything else a worker
    needs of paho belongs in ``MqttWorker``, not in a subclass."""

    def publish(self, topic: str, payload: str | bytes | None = None, qos: int = 0,
                retain: bool = False) -> Receipt: ...

    def subscribe(self, topic: str | list[tuple[str, int]] | list[tuple[str, SubscribeOptions]],
                  qos: int = 0) -> tuple[object, int | None]: ...

    def ack(self, mid: int, qos: int) -> object: ...

    def will_set(self, topic: str, payload: str | bytes | None = None, qos: int = 0,
                 retain: bool = False) -> None: ...

    def max_inflight_messages_set(self, inflight: int) -> None: ...

    def disconnect(self) -> object: ...

    def loop_stop(self) -> object: ...


class NotConnected:
    """A worker's client before ``start``: using it is a bug, said as such."""

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("this MQTT worker has no connection yet: start() it first")

    publish = subscribe = ack = will_set = max_inflight_messages_set = _refuse
    disconnect = loop_stop = _refuse


@dataclass
class TlsSettings:
    ca_file: str
    cert_file: str | None = None  # a client certificate (the venue's brokers ask for one)
    key_file: str | None = None


def tls_settings(ca_file: str | None, cert_file: str | None,
                 key_file: str | None) -> TlsSettings | None:
    """TLS with a client certificate when all three files are given, else none."""
    if ca_file and cert_file and key_file:
        return TlsSettings(ca_file, cert_file, key_file)
    return None


def mqtt_client(client_id: str = "", *, tls: TlsSettings | None = None,
                username: str | None = None, password: str | None = None,
                transport: Literal["tcp", "unix"] = "tcp", mqtt311: bool = False,
                manual_ack: bool = False) -> paho.mqtt.client.Client:
    """A paho-mqtt 2 client speaking MQTT 5 (callback API version 2), with the venue's TLS
    client certificate or a username when given: every MQTT client of the project starts here.
    ``transport="unix"``: the host is a Unix socket's path (the test harness's probe).
    ``mqtt311``: MQTT 3.1.1 with a persistent session (clean session off), for the group's
    cluster (NATS speaks no MQTT 5). ``manual_ack``: a QoS 1 message is acknowledged by the
    caller (``client.ack``), once it has done what the acknowledgement promises."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    if mqtt311:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv311, transport=transport, clean_session=False,
                             manual_ack=manual_ack)
    else:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv5, transport=transport, manual_ack=manual_ack)
    if tls is not None:
        client.tls_set(ca_certs=tls.ca_file, certfile=tls.cert_file, keyfile=tls.key_file)
    if username is not None:
        client.username_pw_set(username, password)
    return client


@dataclass(frozen=True)
class Endpoint:
    """Where a worker connects, and as whom."""

    host: str = "127.0.0.1"
    port: int = 1883
    client_id: str = ""
    tls: TlsSettings | None = None
    username: str | None = None
    password: str | None = None
    keepalive: int = 10
    # A persistent session (MQTT 5 session expiry, seconds): the broker keeps the worker's
    # subscriptions and queues its QoS 1 messages while it is away. None: a clean start.
    session_seconds: int | None = None
    # The group's cluster: MQTT 3.1.1 with a persistent session (``session_seconds`` unused),
    # the other nodes to fail over to, in turn, when the connection drops.
    mqtt311: bool = False
    others: tuple[tuple[str, int], ...] = ()


# -------------------------------------------------------------------- what goes on the queue

@dataclass(frozen=True)
class Connected:
    """The broker's CONNACK: ``refused`` when its reason code is a failure."""

    refused: bool
    reason: str
    session_present: bool = False  # the broker kept this client's session (subscriptions too)


@dataclass(frozen=True)
class Disconnected:
    reason: str


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    retained: bool
    # For a worker that acknowledges by itself (``MqttWorker.manual_ack``): the message's id,
    # its QoS, and the connection it came on (an id means nothing on a later connection).
    mid: int = 0
    qos: int = 0
    connection: int = 0


@dataclass(frozen=True)
class Published:
    """The broker acknowledged the QoS 1 message paho numbered ``mid``."""

    mid: int


@dataclass(frozen=True)
class Subscribed:
    """The broker's SUBACK for the subscription paho numbered ``mid``."""

    mid: int


@dataclass(frozen=True)
class Stop:
    """End the worker: ``finish`` runs on the worker's thread, then ``done`` is set."""

    done: threading.Event


class MqttWorker:
    """See the module's docstring. Subclasses set ``worker_name`` and override ``handle``, and
    where they need them ``configure`` (a Last Will, in-flight limits), ``setup`` (on the
    worker's thread, before paho's loop starts: open a database), ``turn`` and ``finish``."""

    worker_name = "mqtt"
    turn_seconds: float | None = None  # None: wait for an item, however long
    batch = 1000  # items taken per turn
    # True: a QoS 1 message is acknowledged by the worker (``client.ack``), when it has done
    # what the acknowledgement promises; False: by paho, once the message is queued here.
    manual_ack = False

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.queue: queue.Queue[object] = queue.Queue()
        self.client: BrokerClient = NotConnected()
        self._owns_client = False
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._finished = threading.Event()
        # Which connection a message came on: moves on at each CONNACK and each loss, so an
        # answer for a message of a lost connection is never taken for one of the next.
        self.connection = 0
        # Connected (the last CONNACK accepted, no loss since), as the worker's thread has
        # seen it: publish now and paho sends it on this connection.
        self.online = False
        self._address = 0  # which of the endpoint's addresses paho connects to
        self._stopping = False
        self.last_turn = time.monotonic()  # a worker with turn_seconds turns that often
        self._subscription: int | None = None  # the mid of the subscription being made

    # ------------------------------------------------------------------ for subclasses
    def configure(self, client: BrokerClient) -> None:
        """Before connecting: set a Last Will, in-flight limits."""

    def setup(self) -> None:
        """On the worker's thread, before any item is handled."""

    def handle(self, item: object) -> None:
        raise NotImplementedError

    def turn(self) -> None:
        """After each batch of items, and every ``turn_seconds`` without any."""

    def finish(self) -> None:
        """On the worker's thread, at ``stop``: flush, say goodbye, close."""

    def subscribed(self) -> None:
        """The broker acknowledged what ``subscribe`` asked: what is published from now on
        reaches this worker (before, the broker may take a message ahead of the SUBSCRIBE)."""

    def subscribe(self, subscriptions: str | list[tuple[str, int]]
                  | list[tuple[str, SubscribeOptions]], qos: int = 0) -> None:
        """On the worker's thread: subscribe; ``subscribed`` runs when the broker says so."""
        self._subscription = self.client.subscribe(subscriptions, qos)[1]

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Connect (in the background: paho reconnects by itself) and start the worker."""
        end = self.endpoint
        client = mqtt_client(end.client_id, tls=end.tls, username=end.username,
                             password=end.password, mqtt311=end.mqtt311,
                             manual_ack=self.manual_ack)
        self.configure(client)
        put = self.queue.put

        def connected(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
            self.connection += 1
            put(Connected(bool(getattr(rc, "is_failure", False)), str(rc),
                          bool(getattr(f, "session_present", False))))

        def disconnected(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
            self.connection += 1
            put(Disconnected(str(rc)))
            if end.others and not self._stopping:
                # paho reconnects to where connect_async last pointed it: the next node
                self._address = (self._address + 1) % (len(end.others) + 1)
                self._connect(client, self._address)

        client.on_connect = connected
        client.on_disconnect = disconnected
        client.on_message = lambda c, u, msg: put(
            Received(msg.topic, bytes(msg.payload), bool(msg.retain), msg.mid, msg.qos,
                     self.connection))
        client.on_publish = lambda c, u, mid, rc, p=None: put(Published(mid))
        client.on_subscribe = lambda c, u, mid, codes, p=None: put(Subscribed(mid))
        # A cluster's next node is tried at once (a lost node's clients fail over in 0.1 s,
        # not 1 s); a lone broker is not hammered. (paho's wait is a float in practice.)
        client.reconnect_delay_set(min_delay=0.1 if end.others else 1,  # type: ignore[arg-type]
                                   max_delay=5)
        self._connect(client, 0)
        self.client = client
        self._owns_client = True
        self._start_thread()
        client.loop_start()
        return self

    def _connect(self, client: paho.mqtt.client.Client, address: int) -> None:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        end = self.endpoint
        host, port = ((end.host, end.port), *end.others)[address]
        if end.mqtt311:
            client.connect_async(host, port, keepalive=end.keepalive)
            return
        properties = None
        if end.session_seconds is not None:
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            properties.SessionExpiryInterval = end.session_seconds
        client.connect_async(host, port, keepalive=end.keepalive,
                             clean_start=end.session_seconds is None, properties=properties)

    def _start_thread(self) -> None:
        self._thread = start_worker(self._run, self.worker_name)
        # setup() has run (or raised, and the process is marked failed) before paho's loop
        # delivers anything: a database is open before the first message.
        self._ready.wait(30)

    def put(self, item: object) -> None:
        self.queue.put(item)

    def stop(self, timeout: float = 5.0) -> None:
        """``finish`` on the worker's thread, then the connection closed. Idempotent."""
        if self._thread is not None and self._thread.is_alive():
            done = threading.Event()
            self.queue.put(Stop(done))
            done.wait(timeout)
            self._thread.join(timeout)
        if self._owns_client:
            self._stopping = True
            self.client.disconnect()
            self.client.loop_stop()

    @property
    def stopped(self) -> bool:
        return self._finished.is_set()

    def unhealthy(self, timeout: float = 5.0) -> str | None:
        """Why the worker cannot do its work now (None: it can): for the systemd watchdog.
        A worker with ``turn_seconds`` that has not turned for ``timeout`` is stuck."""
        if self._thread is None or not self._thread.is_alive():
            return f"the {self.worker_name} worker is not running"
        if self.turn_seconds is not None and time.monotonic() - self.last_turn > timeout:
            return f"the {self.worker_name} worker has not turned for {timeout:g} s"
        return None

    @property
    def thread(self) -> threading.Thread | None:
        """The worker's thread (for health checks: is it alive)."""
        return self._thread

    # ------------------------------------------------------------------ the worker
    def _run(self) -> None:
        try:
            self.setup()
        finally:
            self._ready.set()
        while True:
            try:
                items = [self.queue.get(timeout=self.turn_seconds)]
            except queue.Empty:
                items = []
            while items and len(items) < self.batch:  # take what waits: one turn for all
                try:
                    items.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            for index, item in enumerate(items):
                if isinstance(item, Stop):
                    self._put_back(items[index + 1:])  # for finish: an answer it waits for
                    try:
                        self.finish()
                    finally:
                        self._finished.set()
                        item.done.set()
                    return
                if isinstance(item, Connected):
                    self.online = not item.refused
                elif isinstance(item, Disconnected):
                    self.online = False
                if isinstance(item, Subscribed) and item.mid == self._subscription:
                    self._subscription = None
                    self.subscribed()
                self.handle(item)
            self.turn()
            self.last_turn = time.monotonic()

    def _put_back(self, items: list[object]) -> None:
        """``items`` back on the queue, ahead of what waits there (only this thread takes)."""
        waiting = []
        while True:
            try:
                waiting.append(self.queue.get_nowait())
            except queue.Empty:
                break
        for item in (*items, *waiting):
            self.queue.put(item)
