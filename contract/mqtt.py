"""The MQTT plumbing every part of the project shares: paho-mqtt 2 speaking MQTT 5 (callback API
version 2), with the venue's TLS client certificate, and ``MqttWorker``, the one way a long-lived
part (the table's link, the recorder, the hub's floor, the venue clock) talks MQTT: a
``contract.worker.QueueWorker`` whose items paho's callbacks put (``Connected``,
``Disconnected``, ``Received``, and here ``Published``, ``Subscribed`` and ``Unsubscribed``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

from contract.worker import Connected, Disconnected, QueueWorker, Received, Stop

__all__ = ["BrokerClient", "Connected", "Disconnected", "Endpoint", "MqttWorker", "Published",
           "Received", "Retired", "Stop", "Subscribed", "TlsSettings", "Unsubscribed",
           "filters_overlap", "mqtt_client", "tls_settings"]

log = logging.getLogger("tablectl.mqtt")

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

    def unsubscribe(self, topic: str | list[str]) -> tuple[object, int | None]: ...

    def will_set(self, topic: str, payload: str | bytes | None = None, qos: int = 0,
                 retain: bool = False) -> None: ...

    def max_inflight_messages_set(self, inflight: int) -> None: ...

    def disconnect(self) -> object: ...

    def loop_stop(self) -> object: ...


class NotConnected:
    """A worker's client before ``start``: using it is a bug, said as such."""

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("this MQTT worker has no connection yet: start() it first")

    publish = subscribe = unsubscribe = will_set = max_inflight_messages_set = _refuse
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
                transport: Literal["tcp", "unix"] = "tcp") -> paho.mqtt.client.Client:
    """A paho-mqtt 2 client speaking MQTT 5 (callback API version 2), with the venue's TLS
    client certificate or a username when given: every MQTT client of the project starts here.
    ``transport="unix"``: the host is a Unix socket's path (the test harness's probe)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5, transport=transport)
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


@dataclass(frozen=True)
class Retired:
    """A subscription an older version of a worker made in its persistent session, and this
    version does not. The broker keeps a session's subscriptions across an upgrade: without
    this, it would go on queueing and sending what matches, which the worker refuses (a
    warning per table). Never a clean start instead: the session holds the messages sent
    while the worker was away."""

    filter: str  # the topic filter the older version subscribed to
    dropped: str  # the change that dropped it (a commit, and why), for the log


def filters_overlap(first: str, second: str) -> bool:
    """Whether some topic matches both MQTT topic filters. paho's ``topic_matches_sub``
    judges a topic against a filter, not two filters: so a topic both could match is made
    level by level (a ``+`` takes the other filter's level, a ``#`` the rest of the other
    filter, an ``x`` where both are wildcards), and paho judges it against each, with MQTT's
    rules (a ``#`` matches its parent level; no wildcard first matches a ``$`` topic)."""
    from paho.mqtt.client import topic_matches_sub

    left, right = first.split("/"), second.split("/")
    levels: list[str] = []
    for index in range(max(len(left), len(right))):
        mine = left[index] if index < len(left) else None
        theirs = right[index] if index < len(right) else None
        if mine == "#" or theirs == "#":
            rest = (right if mine == "#" else left)[index:]
            levels += ["x" if level == "+" else level for level in rest if level != "#"]
            break
        if mine is None or theirs is None:
            return False  # one has more levels, and no "#" to take them
        if mine != "+" and theirs != "+" and mine != theirs:
            return False
        levels.append(theirs if mine == "+" else mine)
    topic = "/".join("x" if level == "+" else level for level in levels) or "x"
    return topic_matches_sub(first, topic) and topic_matches_sub(second, topic)


# -------------------------------------------------------------------- what goes on the queue
# (besides contract.worker's Connected, Disconnected, Received and Stop)

@dataclass(frozen=True)
class Published:
    """The broker acknowledged the QoS 1 message paho numbered ``mid``."""

    mid: int


@dataclass(frozen=True)
class Subscribed:
    """The broker's SUBACK for the subscription paho numbered ``mid``."""

    mid: int


@dataclass(frozen=True)
class Unsubscribed:
    """The broker's UNSUBACK for the unsubscription paho numbered ``mid``: a reason code a
    filter (0: the session held it; 17: it held none)."""

    mid: int
    codes: tuple[int, ...]


class MqttWorker(QueueWorker):
    """A ``QueueWorker`` on paho (the module's docstring). Subclasses set ``worker_name`` and
    override ``handle``, and where they need them ``configure`` (a Last Will, in-flight
    limits), ``setup``, ``turn`` and ``finish``."""

    worker_name = "mqtt"

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.client: BrokerClient = NotConnected()
        self._owns_client = False
        self._subscription: int | None = None  # the mid of the subscription being made
        self._retired: tuple[Retired, ...] = ()  # what an older version subscribed to
        self._unsubscription: int | None = None  # the mid of their unsubscription
        self.retired_dropped = 0  # messages the broker sent on them, dropped unseen

    # ------------------------------------------------------------------ for subclasses
    def configure(self, client: BrokerClient) -> None:
        """Before connecting: set a Last Will, in-flight limits."""

    def subscribed(self) -> None:
        """The broker acknowledged what ``subscribe`` asked: what is published from now on
        reaches this worker (before, the broker may take a message ahead of the SUBSCRIBE)."""

    def retired(self) -> tuple[Retired, ...]:
        """The subscriptions older versions of this worker made in its persistent session and
        it makes no more (each filter must match no topic it subscribes to now: ``subscribe``
        refuses one that would): at each connection that finds the session kept they are
        unsubscribed (the UNSUBACK that says one was there is logged, once: after the
        upgrade), and what the broker still sends on them (queued while the worker was away,
        or sent before the UNSUBACK) is dropped unseen, counted in ``retired_dropped``."""
        return ()

    def subscribe(self, subscriptions: str | list[tuple[str, int]]
                  | list[tuple[str, SubscribeOptions]], qos: int = 0) -> None:
        """On the worker's thread: subscribe; ``subscribed`` runs when the broker says so.
        ValueError (a bug, before anything is sent) for a filter some topic of which a
        retired subscription also matches: what came on it would be dropped unseen."""
        wanted = ([subscriptions] if isinstance(subscriptions, str)
                  else [topic for topic, _ in subscriptions])
        for retired in self.retired():
            for topic in wanted:
                if filters_overlap(topic, retired.filter):
                    raise ValueError(
                        f"{self.worker_name}: {topic} meets {retired.filter}, which retired() "
                        f"lists (dropped in {retired.dropped}): what came on it would be "
                        "dropped unseen; take it out of retired() to subscribe there again")
        self._subscription = self.client.subscribe(subscriptions, qos)[1]

    def noted(self, item: object) -> None:
        if isinstance(item, Subscribed) and item.mid == self._subscription:
            self._subscription = None
            self.subscribed()
        elif isinstance(item, Connected) and item.session_present and not item.refused and \
                self._retired:
            self._unsubscription = self.client.unsubscribe(
                [retired.filter for retired in self._retired])[1]
        elif isinstance(item, Unsubscribed) and item.mid == self._unsubscription:
            self._unsubscription = None
            for retired, code in zip(self._retired, item.codes, strict=False):
                if code == 0:
                    log.info("%s: removed %s, an older version's subscription the broker kept "
                             "in its session (dropped in %s); %d message(s) it sent there "
                             "dropped unseen", self.endpoint.client_id or self.worker_name,
                             retired.filter, retired.dropped, self.retired_dropped)

    def _is_retired(self, topic: str) -> bool:
        """Whether ``topic`` came from a retired subscription (on paho's thread)."""
        from paho.mqtt.client import topic_matches_sub

        return any(topic_matches_sub(retired.filter, topic) for retired in self._retired)

    def _received(self, topic: str, payload: bytes, retain: bool) -> None:
        """On paho's thread: a message for the worker's queue, unless a retired subscription
        brought it."""
        if self._retired and self._is_retired(topic):
            self.retired_dropped += 1
            return
        self.queue.put(Received(topic, payload, retain))

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Connect (in the background: paho reconnects by itself) and start the worker."""
        end = self.endpoint
        client = mqtt_client(end.client_id, tls=end.tls, username=end.username,
                             password=end.password)
        self.configure(client)
        self._retired = self.retired()
        put = self.queue.put

        def connected(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
            self.connection += 1
            put(Connected(bool(getattr(rc, "is_failure", False)), str(rc),
                          bool(getattr(f, "session_present", False))))

        def disconnected(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
            self.connection += 1
            put(Disconnected(str(rc)))

        client.on_connect = connected
        client.on_disconnect = disconnected
        client.on_message = lambda c, u, msg: self._received(
            msg.topic, bytes(msg.payload), bool(msg.retain))
        client.on_publish = lambda c, u, mid, rc, p=None: put(Published(mid))
        client.on_subscribe = lambda c, u, mid, codes, p=None: put(Subscribed(mid))
        client.on_unsubscribe = lambda c, u, mid, codes, p=None: put(
            Unsubscribed(mid, tuple(int(getattr(code, "value", code)) for code in codes)))
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        self._connect(client)
        self.client = client
        self._owns_client = True
        self._start_thread()
        client.loop_start()
        return self

    def _connect(self, client: paho.mqtt.client.Client) -> None:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        end = self.endpoint
        properties = None
        if end.session_seconds is not None:
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            properties.SessionExpiryInterval = end.session_seconds
        client.connect_async(end.host, end.port, keepalive=end.keepalive,
                             clean_start=end.session_seconds is None, properties=properties)

    def stop(self, timeout: float = 5.0) -> None:
        """``finish`` on the worker's thread, then the connection closed. Idempotent."""
        self._stop_thread(timeout)
        if self._owns_client:
            self.client.disconnect()
            self.client.loop_stop()
