"""The group's link: a ``QueueWorker`` (``contract.worker``) speaking NATS's own protocol
(nats-py) to the group's cluster (``deploy/cluster``), for a venue's uplink (``group.uplink``)
and the central recorder (``group.centre``).

Core NATS only: no JetStream, no MQTT session. A message goes from the node its publisher is
on to the node its subscriber is on, through the cluster's routes, and is not stored on the
way; what makes the group's delivery sure is end to end, between the two ends that have
databases: the central recorder answers each of an uplink's messages once the rows it carried
are committed, and the uplink moves its count only on that answer (it sends again what was
not answered in time). So a node lost costs its clients a reconnection to the next node
(tried at once) and what was in flight through it a second sending, never a raft
leader's election (4-9 s in nats-server; what a JetStream stream waits when its leader is
lost).

nats-py runs an asyncio loop on a thread of its own; its callbacks only put items on the
worker's queue (``Connected``, ``Disconnected``, ``Received`` with its ``reply``), and what
the worker publishes during a turn goes to that loop once, at the turn's end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from contract.supervise import start_worker
from contract.worker import Connected, Disconnected, QueueWorker, Received

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.msg import Msg

log = logging.getLogger("tablectl.group_link")


class _SslEofNotice(logging.Filter):
    """asyncio warns "returning true from eof_received() has no effect when using ssl" each
    time a node closes a TLS connection that nats-py reads with a stream (a node stopped or
    lost): nothing to act on, and the log says the connection was lost anyway."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "eof_received() has no effect" not in record.getMessage()


SSL_EOF_NOTICE = _SslEofNotice()


def subject(topic: str) -> str:
    """An MQTT-style topic of the contract (``contract.topics``) as a NATS subject: the same
    levels, ``.`` between them and ``*`` for ``+`` (a contract's names hold neither)."""
    return topic.replace("/", ".").replace("+", "*")


def topic(subject_: str) -> str:
    """The inverse of ``subject`` for a subject a message came on."""
    return subject_.replace(".", "/")


@dataclass(frozen=True)
class GroupEndpoint:
    """The group's cluster, and who connects to it."""

    servers: tuple[str, ...]  # each node's HOST:PORT, tried in turn
    user: str | None = None
    password: str | None = None
    ca_file: str | None = None  # the group CA: TLS, the nodes verified (None: plain TCP)
    name: str = ""  # the connection's name, as the cluster's monitoring shows it

    def urls(self) -> list[str]:
        scheme = "tls" if self.ca_file else "nats"
        return [f"{scheme}://{server}" for server in self.servers]


class NatsWorker(QueueWorker):
    """See the module's docstring. Subclasses set ``worker_name``, list what they read in
    ``subscriptions``, and ``publish`` from the worker's thread."""

    # Before trying a node again: the next one is tried at once, so a node lost costs no
    # wait; with every node down, each is tried once a second.
    reconnect_seconds = 1.0
    connect_timeout = 2.0
    # A node that stopped answering without closing its connection (a cable cut, a frozen
    # host): found after about ping_seconds * (max_outstanding + 1).
    ping_seconds = 2
    max_outstanding_pings = 2

    def __init__(self, endpoint: GroupEndpoint) -> None:
        super().__init__()
        self.endpoint = endpoint
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Client | None = None
        self._connecting: concurrent.futures.Future[None] | None = None
        self._loop_thread: threading.Thread | None = None
        self._out: list[tuple[str, bytes, str]] = []  # what this turn published
        self._closing = False
        self._tasks: set[asyncio.Future[None]] = set()
        self.lost_for_good: str | None = None  # why nats-py gave the connection up, if it did
        self._said: dict[str, float] = {}  # what the cluster said, when it was last logged

    # ------------------------------------------------------------------ for subclasses
    def subscriptions(self) -> Sequence[str]:
        """The subjects this worker reads, from its first connection on."""
        return ()

    def publish(self, subject_: str, payload: bytes | str, reply: str = "") -> None:
        """On the worker's thread: sent to the cluster at the end of this turn."""
        self._out.append((subject_, payload.encode() if isinstance(payload, str) else payload,
                          reply))

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Start the worker (``setup`` first), then connect in the background: nats-py
        reconnects by itself, to the next node at once."""
        self._start_thread()
        logging.getLogger("asyncio").addFilter(SSL_EOF_NOTICE)  # (once: the same filter)
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._loop_thread = start_worker(loop.run_forever, f"{self.worker_name}-nats")
        self._connecting = asyncio.run_coroutine_threadsafe(self._connect(), loop)
        self._connecting.add_done_callback(self._connect_ended)
        return self

    def _connect_ended(self, future: concurrent.futures.Future[None]) -> None:
        if not future.cancelled() and future.exception() is not None:
            self.lost_for_good = f"connecting to the cluster failed: {future.exception()!r}"
            log.error("%s", self.lost_for_good)

    def unhealthy(self, timeout: float = 5.0) -> str | None:
        """Also unhealthy once nats-py has given the connection up for good (a server error it
        does not retry): systemd restarts the service."""
        if self.lost_for_good is not None:
            return self.lost_for_good
        return super().unhealthy(timeout)

    def turned(self) -> None:
        self._send_out()

    def _send_out(self) -> None:
        if not self._out or self._loop is None:
            return
        out, self._out = self._out, []
        self._loop.call_soon_threadsafe(self._publish_all, out)

    def stop(self, timeout: float = 5.0) -> None:
        """``finish`` on the worker's thread, what it published sent, the connection closed.
        Idempotent."""
        self._stop_thread(timeout)
        if self.stopped:  # finish ran: what it published goes (else its thread still owns it)
            self._send_out()
        loop = self._loop
        if loop is None or self._closing:
            return
        self._closing = True
        if self._connecting is not None:
            self._connecting.cancel()  # still trying to get in: give up
        try:
            asyncio.run_coroutine_threadsafe(self._close(), loop).result(timeout)
        except Exception as exc:  # a connection that will not close: the process ends anyway
            log.warning("the %s's connection to the cluster did not close: %r",
                        self.worker_name, exc)
        loop.call_soon_threadsafe(loop.stop)
        if self._loop_thread is not None:
            self._loop_thread.join(timeout)
            if not self._loop_thread.is_alive():
                loop.close()

    # ------------------------------------------------------------------ on nats-py's loop
    async def _connect(self) -> None:
        import nats
        import nats.errors

        end = self.endpoint
        put = self.queue.put
        tls = ssl.create_default_context(cafile=end.ca_file) if end.ca_file else None

        async def disconnected() -> None:
            self.connection += 1
            put(Disconnected("the connection to the cluster's node was lost"))

        async def reconnected() -> None:
            self.connection += 1
            client = self._client
            put(Connected(False, f"reconnected to {client.connected_url.netloc}"
                          if client is not None and client.connected_url else "reconnected"))

        async def closed() -> None:
            if not self._closing:
                self.lost_for_good = "nats-py closed the connection to the cluster for good"
                log.error("%s: the %s stops, to be started again", self.lost_for_good,
                          self.worker_name)

        async def error(exc: Exception) -> None:
            # nats-py tries the nodes again and again while none answers, and says why each
            # time: each reason is logged once a minute at most.
            text = str(exc) or type(exc).__name__
            if "authorization" in text.lower() or isinstance(exc, nats.errors.AuthorizationError):
                text = "authorization violation"
                if self._said.get(text) is None:
                    put(Connected(True, text))  # the worker says who is at fault
            now = time.monotonic()
            if now - self._said.get(text, -math.inf) >= 60.0:
                self._said[text] = now
                log.warning("the cluster says to the %s: %s", self.worker_name, text)

        options: dict[str, Any] = dict(
            servers=end.urls(), name=end.name or self.worker_name, tls=tls,
            user=end.user, password=end.password, dont_randomize=True,
            allow_reconnect=True, max_reconnect_attempts=-1,
            reconnect_time_wait=self.reconnect_seconds, connect_timeout=self.connect_timeout,
            ping_interval=self.ping_seconds, max_outstanding_pings=self.max_outstanding_pings,
            disconnected_cb=disconnected, reconnected_cb=reconnected, error_cb=error,
            closed_cb=closed)
        while not self._closing:
            try:  # (nats-py itself tries the nodes until one lets it in)
                client = await nats.connect(**options)
                break
            except Exception as exc:  # what it gives up on (a TLS context it cannot use)
                await error(exc)
                await asyncio.sleep(self.reconnect_seconds)
        else:
            return
        self._client = client
        self.connection += 1  # before the subscriptions: what they bring is of this connection
        for wanted in self.subscriptions():
            await client.subscribe(wanted, cb=self._received)
        await client.flush()
        put(Connected(False, f"connected to {client.connected_url.netloc}"
                      if client.connected_url else "connected"))

    async def _received(self, msg: Msg) -> None:
        self.queue.put(Received(msg.subject, msg.data, reply=msg.reply or "",
                                connection=self.connection))

    def _publish_all(self, out: list[tuple[str, bytes, str]]) -> None:
        client = self._client
        if client is None or client.is_closed:
            return  # before the first connection: the worker sends it again when connected
        task = asyncio.ensure_future(self._publish(client, out))
        self._tasks.add(task)  # (the loop keeps only a weak reference to a task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, client: Client, out: list[tuple[str, bytes, str]]) -> None:
        try:
            for subject_, payload, reply in out:
                await client.publish(subject_, payload, reply=reply)
        except Exception as exc:  # closed, or its buffer full while reconnecting: resent
            log.debug("not sent to the cluster now (%r): the worker sends it again", exc)

    async def _close(self) -> None:
        client = self._client
        if client is not None and not client.is_closed:
            with contextlib.suppress(Exception):  # closing anyway
                await client.flush(timeout=1)
            await client.close()

