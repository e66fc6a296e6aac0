"""The shoe over a serial port: pyserial in a reader thread, reconnecting when the port goes.

The port is opened with ``serial.serial_for_url`` (a device path such as the udev name
``/dev/shoe``, or any pyserial URL), taken by injection so tests can pass their own. The
thread only moves bytes: the protocol is ``firmware_bridge.host.HostLink`` and every event is
handed to ``on_event`` (the daemon's queue ``put``) together with the host's monotonic time.
Link changes are reported as ``LinkUp`` / ``LinkDown`` events.

The reader waits for bytes with a long timeout (an idle shoe costs two wake-ups a second, not
fifty): what the host sends unprompted (a mode change) is written at once by the caller's
thread, the link shared under a lock, and ``stop`` cancels the read where the port can.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from firmware_bridge.host import NEED_DATA, HostLink, LinkDown, LinkUp, ShoeLinkEvent


def _default_opener(url: str) -> Any:
    import serial  # lazily: the pure core never needs it

    return serial.serial_for_url(url, baudrate=115200, timeout=READ_TIMEOUT, write_timeout=1.0)


READ_TIMEOUT = 0.5  # how long a read waits for a byte: how often an idle link looks at _stop


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
        self._commands: list[Callable[[HostLink], None]] = []  # for the next connection
        self._lock = threading.Lock()  # the link, the commands and the port's writes
        self._port: Any = None  # the open port, while connected
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = False

    def start(self) -> SerialShoe:
        self._thread = threading.Thread(target=self._run, name="shoe-serial", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            port = self._port
        cancel = getattr(port, "cancel_read", None)
        if cancel is not None:
            with contextlib.suppress(Exception):
                cancel()  # the reader's wait ends now, not at its timeout
        if self._thread is not None:
            self._thread.join(timeout=5)

    def set_mode(self, mode: int) -> None:
        with self._lock:
            self._commands.append(lambda link: link.set_mode(mode))
            if self._port is not None:
                # A port that fails here fails the reader's next read too: it reconnects.
                with contextlib.suppress(Exception):
                    self._send_commands()

    def _send_commands(self) -> None:
        """The commands waiting, to the shoe (with the lock held, while connected)."""
        commands, self._commands = self._commands, []
        for command in commands:
            command(self.link)
        out = self.link.data_to_send()
        if out:
            self._port.write(out)

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
            self.on_event(LinkUp(self.url), self.clock())
            reason = self._serve(port)
            self.connected = False
            with contextlib.suppress(Exception):
                port.close()
            if not self._stop.is_set():
                self.on_event(LinkDown(self.url, reason), self.clock())
                was_up = False
                self._stop.wait(self.reconnect_interval)

    def _serve(self, port: Any) -> str:
        link = self.link
        try:
            with self._lock:
                link.request_hello()
                port.write(link.data_to_send())
                self._port = port
                self._send_commands()  # those asked for while the shoe was away
            while not self._stop.is_set():
                # Wait (up to the port timeout) for one byte, then take all that is there: a
                # plain read(4096) would sit out the whole timeout on every frame.
                data = port.read(port.in_waiting or 1)
                if data and port.in_waiting:
                    data += port.read(port.in_waiting)
                if not data:
                    continue
                now = self.clock()
                with self._lock:
                    link.receive_data(data)
                    events = []
                    while (event := link.next_event()) is not NEED_DATA:
                        events.append(event)
                    out = link.data_to_send()  # acknowledgements, requests to resend
                    if out:
                        port.write(out)
                for event in events:
                    self.on_event(event, now)  # type: ignore[arg-type]
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._port = None
        return "stopped"
