"""NFC reader backend with nfcpy: a PN532 on the Pi's UART, a USB reader (ACR122U...), read
NTAG cards' NDEF text (``R1:As``) or UIDs; the same reader signs dealers in with their badges.

The frontend is opened by an injected ``opener``; ``open_frontend`` understands nfcpy's own
paths (``tty:serial0:pn532`` for the Pi's GPIO UART on every model, ``tty:AMA0:pn532`` for a
device by its kernel name, ``usb``, ``udp``) and ``pn532:/any/tty/path`` to put nfcpy's PN532
driver on any serial device
(the simulated PN532 on a pty in the tests). Each card is reported once per pass: the reader
waits for it to leave the field before it looks for the next (two presence checks failed in a
row: one may fail on the link with the card still there).

A label's read can break off with the card still there (a noisy field, a UART that drops a
frame or a host too busy to read it in time: nfcpy then gives up waiting for the chip's ACK);
the reader reads it again while the card stays, a few times at most, each retry in the log, so
a card reported with no label is one that holds none, or one that left before it was read.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # nfcpy is imported when a reader is opened
    import nfc

log = logging.getLogger("tablectl.nfc")

LABEL_READ_TRIES = 5
PRESENCE_CHECKS = 2  # unanswered in a row before a card counts as gone
LINK_FAILURES = 10  # presence checks failed on the link in a row: the pass given up


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
    """The tag's first NDEF Text record, read once; "" if there is none or the read failed."""
    try:
        return _text_of(tag)
    except _ReadFailed:
        return ""


class _ReadFailed(Exception):
    pass


def _text_of(tag: Any) -> str:
    try:
        ndef = tag.ndef
    except Exception as exc:  # nfcpy's I/O errors (OSError) and its tag errors alike
        raise _ReadFailed(f"{type(exc).__name__}: {exc}") from exc
    if ndef is None:  # nfcpy's answer both to no NDEF and to a read that broke off
        raise _ReadFailed("no NDEF data read")
    for record in ndef.records:
        text = getattr(record, "text", None)
        if isinstance(text, str):
            return text
    return ""


def _still_present(tag: Any) -> bool:
    """False only when the tag did not answer; a link that failed says nothing of it."""
    try:
        return bool(tag.is_present)
    except Exception:
        return True


def read_label(tag: Any, uid: str, tries: int = LABEL_READ_TRIES,
               abort: Callable[[], None] = lambda: None) -> str:
    """The tag's first NDEF Text record, the read tried again while the tag stays in the
    field, ``tries`` reads at most; "" when it holds none (or left, or every try failed).
    ``abort`` is called after a failed read, before anything more is asked of the chip."""
    for attempt in range(1, tries + 1):
        try:
            return _text_of(tag)
        except _ReadFailed as failure:
            if attempt == tries:
                log.warning("NFC tag %s: label not read in %d tries (%s): its UID alone",
                            uid, tries, failure)
                return ""
            abort()
            if not _still_present(tag):
                log.info("NFC tag %s left the field before its label was read (%s)",
                         uid, failure)
                return ""
            log.info("NFC tag %s: label read failed (%s); reading it again, try %d of %d",
                     uid, failure, attempt + 1, tries)
    return ""


def _abort(tag: Any) -> None:
    """An ACK frame to a PN53x: the command it was doing and any answer it had not sent are
    dropped (UM0701-02 §6.2.1.3), so an answer late for a read nfcpy gave up on does not come
    in front of the next command's. nfcpy leaves this undone when its wait for the ACK times
    out; other frontends have no such frame to send."""
    chipset = getattr(getattr(getattr(tag, "clf", None), "device", None), "chipset", None)
    send_ack = getattr(chipset, "send_ack", None)
    if callable(send_ack):
        with contextlib.suppress(Exception):
            send_ack()


class NfcReader:
    def __init__(
        self,
        spec: str,
        on_read: Callable[[TagRead | ReaderState, float], None],
        *,
        opener: Callable[[str], nfc.ContactlessFrontend] = open_frontend,
        clock: Callable[[], float] = time.monotonic,
        retry_interval: float = 1.0,
        presence_interval: float = 0.1,
    ) -> None:
        self.spec = spec
        self.on_read = on_read
        self.opener = opener
        self.clock = clock
        self.retry_interval = retry_interval
        self.presence_interval = presence_interval  # as nfcpy's own hold
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
        self.on_read(TagRead(uid, read_label(tag, uid, abort=lambda: _abort(tag))),
                     self.clock())
        self._hold(tag, uid)
        return False  # held here: nfcpy's own hold takes a broken link for the card gone

    def _hold(self, tag: Any, uid: str) -> None:
        """Until the card leaves the field: one read per pass. A presence check the card
        did not answer (or answered garbled: nfcpy reports both as absence) is made again,
        the chip aborted first, before the card counts as gone; one the link failed (an I/O
        error: the chip's ACK not come) says nothing of the card, and is made again, the chip
        aborted, up to LINK_FAILURES in a row. Else the card still there would be found, and
        read, again."""
        misses = failures = 0
        while not self._stop.wait(0 if misses or failures else self.presence_interval):
            try:
                present = bool(tag.is_present)
            except Exception as exc:
                failures += 1
                if failures >= LINK_FAILURES:
                    log.warning("NFC tag %s: %d presence checks in a row failed on the link "
                                "(%s): taken for gone", uid, failures, exc)
                    return
                _abort(tag)
                continue
            failures = 0
            if present:
                misses = 0
                continue
            misses += 1
            if misses >= PRESENCE_CHECKS:
                return
            log.info("NFC tag %s did not answer a presence check: checking again", uid)
            _abort(tag)

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
