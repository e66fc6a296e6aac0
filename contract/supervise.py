"""No worker thread dies silently.

Every long-lived worker (the table's MQTT link, the recorder, the floor, the venue clock) runs
through ``start_worker``. One bad message never reaches this point: each worker refuses what
breaks the contract and carries on. What does reach it is a bug or a lost resource (the
database gone, the disk full): the exception is logged with the worker's name, and the process
is marked failed. ``tablectl`` watches ``FAILED`` beside its signals and exits with status 70
(EX_SOFTWARE), so that systemd (``Restart=on-failure``) starts it again with its state read back
from its database and journal, instead of leaving a process that looks alive and does nothing.
``SystemdNotifier`` tells systemd the process is ready and, while it is healthy, pings its
watchdog.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

EXIT_WORKER_DIED = 70  # EX_SOFTWARE (sysexits.h)

log = logging.getLogger("tablectl.supervise")

FAILED = threading.Event()
failures: list[str] = []  # "worker: exception", in the order they happened
_lock = threading.Lock()


def report_failure(worker: str, exc: BaseException) -> None:
    with _lock:
        failures.append(f"{worker}: {type(exc).__name__}: {exc}")
    FAILED.set()


def start_worker(target: Callable[..., Any], name: str, *args: Any,
                 on_death: Callable[[str, BaseException], None] = report_failure
                 ) -> threading.Thread:
    """Run ``target(*args)`` on a daemon thread called ``name``; if it raises, log the
    exception with the worker's name and call ``on_death`` (by default: mark the process
    failed, see the module's docstring)."""

    def run() -> None:
        try:
            target(*args)
        except BaseException as exc:
            log.critical("worker %s died; the process must be restarted", name, exc_info=True)
            on_death(name, exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


class LogOnce:
    """Refused messages logged once per source (a topic, a client), then counted: a flood of
    bad messages must not become a flood of log lines."""

    def __init__(self, logger: logging.Logger, limit: int = 1000) -> None:
        self.logger = logger
        self.limit = limit
        self.seen: dict[str, int] = {}

    def __call__(self, source: str, reason: str) -> None:
        count = self.seen.get(source, 0)
        if count == 0 and len(self.seen) < self.limit:
            self.logger.warning("refused a message on %s: %s (later ones from there are "
                                "counted, not logged)", source, reason[:300])
        if count or len(self.seen) < self.limit:
            self.seen[source] = count + 1


class SystemdNotifier:
    """sd_notify without a library: a datagram to $NOTIFY_SOCKET (nothing when not under
    systemd)."""

    def __init__(self) -> None:
        self.address = os.environ.get("NOTIFY_SOCKET")
        interval = os.environ.get("WATCHDOG_USEC")
        self.watchdog = int(interval) / 2e6 if interval and interval.isdigit() else None

    def send(self, message: str) -> None:
        if not self.address:
            return
        address = self.address
        if address.startswith("@"):
            address = "\0" + address[1:]
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock, \
                contextlib.suppress(OSError):
            sock.sendto(message.encode(), address)
