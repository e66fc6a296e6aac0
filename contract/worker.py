"""``QueueWorker``: the one shape of every long-lived part that talks to a broker (a table's link,
the hub's recorder, floor and venue clock over MQTT, ``contract.mqtt``; a venue's uplink and the
group's central recorder over NATS, ``group.link``).

A worker owns its state on one thread. The network library's callbacks run on its own thread
and only put typed items (``Connected``, ``Disconnected``, ``Received``, and what the transport
adds) on the worker's queue; other threads put their own items with ``put``. The worker takes
what waits (up to ``batch`` at a time), hands each item to ``handle``, then calls ``turn``
(also when nothing came for ``turn_seconds``). It runs under ``contract.supervise``: an
exception that escapes ``handle`` is a bug or a lost resource, and ends the process so that
systemd restarts it; what a single bad message can cause is caught where it is handled.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import traceback
from dataclasses import dataclass

from contract.supervise import start_worker

# -------------------------------------------------------------------- what goes on the queue

@dataclass(frozen=True)
class Connected:
    """The broker accepted (or, ``refused``, turned down) the connection."""

    refused: bool
    reason: str
    session_present: bool = False  # MQTT: the broker kept this client's session


@dataclass(frozen=True)
class Disconnected:
    reason: str


@dataclass(frozen=True)
class Received:
    topic: str  # an MQTT topic, or a NATS subject
    payload: bytes
    retained: bool = False
    # NATS: where the sender waits for an answer ("" for none), and the connection the message
    # came on (the cluster takes an answer only on that one).
    reply: str = ""
    connection: int = 0


@dataclass(frozen=True)
class Stop:
    """End the worker: ``finish`` runs on the worker's thread, then ``done`` is set."""

    done: threading.Event


class QueueWorker:
    """See the module's docstring. Subclasses set ``worker_name`` and override ``handle``, and
    where they need them ``setup`` (on the worker's thread, before the network's loop starts:
    open a database), ``turn`` and ``finish``; a transport's subclass adds ``start`` (connect,
    then ``_start_thread``) and ``stop`` (``_stop_thread``, then close)."""

    worker_name = "worker"
    turn_seconds: float | None = None  # None: wait for an item, however long
    batch = 1000  # items taken per turn

    def __init__(self) -> None:
        self.queue: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._finished = threading.Event()
        # Which connection a message came on: moves on at each connection and each loss, so
        # an answer for a message of a lost connection is never taken for one of the next.
        self.connection = 0
        # Connected (the last connection accepted, no loss since), as the worker's thread has
        # seen it: what it sends now goes on this connection.
        self.online = False
        self.last_turn = time.monotonic()  # a worker with turn_seconds turns that often
        # What the worker's thread is on now, since when (monotonic) and how many items of
        # its batch wait behind it (taken off the queue already), or None between items: for
        # ``busy``, when another thread gave up waiting for it.
        self.doing: tuple[object, float, int] | None = None

    # ------------------------------------------------------------------ for subclasses
    def setup(self) -> None:
        """On the worker's thread, before any item is handled."""

    def handle(self, item: object) -> None:
        raise NotImplementedError

    def turn(self) -> None:
        """After each batch of items, and every ``turn_seconds`` without any."""

    def finish(self) -> None:
        """On the worker's thread, at ``stop``: flush, say goodbye, close."""

    def noted(self, item: object) -> None:
        """A transport's bookkeeping of ``item``, on the worker's thread, before ``handle``."""

    def turned(self) -> None:
        """A transport's, after each ``turn``: send what the turn queued."""

    # ------------------------------------------------------------------ lifecycle
    def _start_thread(self) -> None:
        self._thread = start_worker(self._run, self.worker_name)
        # setup() has run (or raised, and the process is marked failed) before the network's
        # loop delivers anything: a database is open before the first message.
        self._ready.wait(30)

    def put(self, item: object) -> None:
        self.queue.put(item)

    def _stop_thread(self, timeout: float) -> None:
        """``finish`` on the worker's thread, waited for ``timeout`` at most."""
        if self._thread is not None and self._thread.is_alive():
            done = threading.Event()
            self.queue.put(Stop(done))
            done.wait(timeout)
            self._thread.join(timeout)

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

    def busy(self) -> str:
        """What the worker is doing now, for a log line when someone waited in vain: the item
        and for how long, how many wait behind it, and where its thread is (the innermost
        frames of its stack)."""
        doing, waiting = self.doing, self.queue.qsize()
        if doing is None:
            return f"the {self.worker_name} worker is between items, {waiting} waiting"
        item, since, behind = doing
        waiting += behind
        text = (f"the {self.worker_name} worker has been on {str(item)[:160]} for "
                f"{time.monotonic() - since:.1f} s, {waiting} waiting")
        frame = (sys._current_frames().get(self._thread.ident)
                 if self._thread is not None and self._thread.ident is not None else None)
        if frame is not None:
            where = traceback.format_stack(frame)[-6:]
            text += "; its stack, innermost last:\n" + "".join(where).rstrip()
        return text

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
                self.doing = (item, time.monotonic(), len(items) - index - 1)
                self.noted(item)
                self.handle(item)
            self.doing = ("the turn after a batch", time.monotonic(), 0)
            self.turn()
            self.turned()
            self.doing = None
            self.last_turn = time.monotonic()

    def _put_back(self, items: list[object]) -> None:
        """``items`` back on the queue, ahead of what waits there, at once: the network's
        thread puts meanwhile (taking what waits and putting it all back let a message it put
        between the two overtake these). Under the queue's own lock, on its deque (``Queue``'s
        ``mutex``, ``queue`` and ``not_empty``: CPython's, unchanged since Python 2.4)."""
        if not items:
            return
        with self.queue.mutex:
            self.queue.queue.extendleft(reversed(items))
            self.queue.not_empty.notify()
