"""The shoe over a serial port: pyserial in a reader thread, reconnecting when the port goes.

The port is opened with ``serial.serial_for_url`` (a device path such as the udev name
``/dev/shoe``, or any pyserial URL), taken by injection so tests can pass their own. The
thread only moves bytes: the protocol is ``firmware_bridge.host.HostLink`` and every event is
handed to ``on_event`` (the daemon's queue ``put``) together with the host's monotonic time.
Link changes are reported as ``LinkUp`` / ``LinkDown`` events.

A read waits up to READ_TIMEOUT for a byte: an idle shoe costs two wake-ups a second, not
fifty (a mode change asked meanwhile goes out at the end of that wait); ``stop`` cancels the
wait where the port can.

A write waits for the port, not for the clock: pyserial's ``write_timeout`` counts from the
call and is checked after the bytes went out, so a thread descheduled past it on a busy host
raised with everything written and took a working shoe for lost, mid-hand. The link writes
to the port's descriptor itself and gives up only when the port takes nothing for
WRITE_STALL seconds (a shoe that stopped reading).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from firmware_bridge.host import NEED_DATA, HostLink, LinkDown, LinkUp, ShoeLinkEvent


def _default_opener(url: str) -> Any:
    import serial  # lazily: the pure core never needs it

    return serial.serial_for_url(url, baudrate=115200, timeout=READ_TIMEOUT, write_timeout=1.0)


READ_TIMEOUT = 0.5  # seconds a read waits for a byte (how often an idle link looks around)
WRITE_STALL = 1.0  # seconds a port may take nothing before the link is taken for lost


class WriteStalled(OSError):
    """The port took no byte for WRITE_STALL seconds: the shoe stopped reading."""


def write_all(port: Any, data: bytes, stall: float = WRITE_STALL) -> None:
    """Write all of ``data``: to the port's descriptor where it has one (a device, a pty),
    waiting while it takes nothing, up to ``stall`` seconds at a time; else with the port's
    own ``write`` (pyserial's URL handlers, a test's port)."""
    try:
        fd = port.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (io's UnsupportedOperation)
        port.write(data)
        return
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
            continue
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EINTR):
                raise
        # The kernel's account of the port, not this thread's clock: a thread descheduled
        # meanwhile finds it writable on waking, however long it slept.
        _, ready, _ = select.select([], [fd], [], stall)
        if not ready:
            raise WriteStalled(f"the port took no byte for {stall:g} s")


class SerialShoe:
    def __init__(
        self,
        url: str,
        on_event: Callable[[ShoeLinkEvent, float], None],
        *,
        opener: Callable[[str], Any] = _default_opener,
        reconnect_interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.on_event = on_event
        self.opener = opener
        self.reconnect_interval = reconnect_interval
        self.clock = clock
        self.link = HostLink()
        self._commands: list[Callable[[HostLink], None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._port: Any = None  # the open port (for stop to cancel its read)
        self._thread: threading.Thread | None = None
        self.connected = False

    def start(self) -> SerialShoe:
        self._thread = threading.Thread(target=self._run, name="shoe-serial", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        cancel = getattr(self._port, "cancel_read", None)
        if cancel is not None:
            with contextlib.suppress(Exception):
                cancel()  # the reader's wait ends now, not at its timeout
        if self._thread is not None:
            self._thread.join(timeout=5)

    def set_mode(self, mode: int) -> None:
        with self._lock:
            self._commands.append(lambda link: link.set_mode(mode))

    def _run(self) -> None:
        was_up = False
        reason = "not opened yet"
        while not self._stop.is_set():
            try:
                port = self.opener(self.url)
            except Exception as exc:
                if was_up:
                    self.on_event(LinkDown(self.url, reason), self.clock())
                    was_up = False
                reason = f"cannot open: {exc}"
                self._stop.wait(self.reconnect_interval)
                continue
            self.connected = was_up = True
            self._port = port
            self.on_event(LinkUp(self.url), self.clock())
            reason = self._serve(port)
            self.connected = False
            self._port = None
            with contextlib.suppress(Exception):
                port.close()
            if not self._stop.is_set():
                self.on_event(LinkDown(self.url, reason), self.clock())
                was_up = False
                self._stop.wait(self.reconnect_interval)

    def _serve(self, port: Any) -> str:
        link = self.link
        link.request_hello()
        try:
            write_all(port, link.data_to_send())
            while not self._stop.is_set():
                # Wait (up to the port timeout) for one byte, then take all that is there: a
                # plain read(4096) would sit out the whole timeout on every frame.
                data = port.read(port.in_waiting or 1)
                if data and port.in_waiting:
                    data += port.read(port.in_waiting)
                now = self.clock()
                if data:
                    link.receive_data(data)
                    while (event := link.next_event()) is not NEED_DATA:
                        self.on_event(event, now)  # type: ignore[arg-type]
                with self._lock:
                    commands, self._commands = self._commands, []
                for command in commands:
                    command(link)
                out = link.data_to_send()
                if out:
                    write_all(port, out)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return "stopped"
