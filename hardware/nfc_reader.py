"""NFC reader backend with nfcpy: a PN532 on the Pi's UART, a USB reader (ACR122U...), read
NTAG cards' NDEF text (``R1:As``) or UIDs; the same reader signs dealers in with their badges.

The frontend is opened by an injected ``opener``; ``open_frontend`` understands nfcpy's own
paths (``tty:serial0:pn532`` for the Pi's GPIO UART on every model, ``tty:AMA0:pn532`` for a
device by its kernel name, ``usb``, ``udp``) and ``pn532:/any/tty/path`` to put nfcpy's PN532
driver on any serial device
(the simulated PN532 on a pty in the tests). Each card is reported once per pass: the reader
waits for it to leave the field before it looks for the next.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # nfcpy is imported when a reader is opened
    import nfc


@dataclass(frozen=True, slots=True)
class TagRead:
    uid: str  # upper-case hex
    text: str  # the first NDEF Text record, or ""


@dataclass(frozen=True, slots=True)
class ReaderState:
    ok: bool
    detail: str


def open_frontend(spec: str) -> nfc.ContactlessFrontend:
    import nfc
    import nfc.clf.transport

    if ":" in spec and spec.split(":", 1)[0] in ("pn532", "pn533", "acr122", "rcs956"):
        driver_name, device = spec.split(":", 1)
        driver = importlib.import_module(f"nfc.clf.{driver_name}")
        transport = nfc.clf.transport.TTY(device)
        try:
            device_object = driver.init(transport)
        except OSError:
            transport.close()
            raise
        device_object._path = device
        frontend = nfc.ContactlessFrontend()
        frontend.device = device_object
        return frontend
    frontend = nfc.ContactlessFrontend()
    if not frontend.open(spec):
        raise OSError(f"no NFC reader found at {spec!r}")
    return frontend


def first_text(tag: Any) -> str:
    try:
        ndef = tag.ndef
    except Exception:
        return ""
    if ndef is None:
        return ""
    for record in ndef.records:
        text = getattr(record, "text", None)
        if isinstance(text, str):
            return text
    return ""


class NfcReader:
    def __init__(
        self,
        spec: str,
        on_read: Callable[[TagRead | ReaderState, float], None],
        *,
        opener: Callable[[str], nfc.ContactlessFrontend] = open_frontend,
        clock: Callable[[], float] = time.monotonic,
        retry_interval: float = 1.0,
    ) -> None:
        self.spec = spec
        self.on_read = on_read
        self.opener = opener
        self.clock = clock
        self.retry_interval = retry_interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frontend: nfc.ContactlessFrontend | None = None

    def start(self) -> NfcReader:
        self._thread = threading.Thread(target=self._run, name="nfc-reader", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _on_connect(self, tag: Any) -> bool:
        uid = bytes(tag.identifier).hex().upper()
        self.on_read(TagRead(uid, first_text(tag)), self.clock())
        return True  # hold until the card leaves the field: one read per pass

    def _run(self) -> None:
        reported_down = False
        while not self._stop.is_set():
            try:
                frontend = self.opener(self.spec)
            except Exception as exc:
                if not reported_down:
                    self.on_read(ReaderState(False, f"cannot open {self.spec}: {exc}"),
                                 self.clock())
                    reported_down = True
                self._stop.wait(self.retry_interval)
                continue
            reported_down = False
            self.frontend = frontend
            self.on_read(ReaderState(True, str(frontend.device)), self.clock())
            try:
                while not self._stop.is_set():
                    frontend.connect(
                        rdwr={"on-connect": self._on_connect, "beep-on-connect": False,
                              "targets": ["106A"], "interval": 0.02},
                        terminate=self._stop.is_set)
            except Exception as exc:
                self.on_read(ReaderState(False, f"reader lost: {exc}"), self.clock())
                reported_down = True
            finally:
                with contextlib.suppress(Exception):
                    frontend.close()
