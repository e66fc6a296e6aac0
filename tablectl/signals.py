"""SIGTERM, Ctrl-C and SIGHUP noted by a flag that the main thread's waits read.

A Python signal handler runs in the main thread between two of its bytecodes, wherever that
thread stands. A handler that raises there (``KeyboardInterrupt``) once broke
``threading.Thread.start()`` half-way, in its condition's lock ("release unlocked lock"), and
``tablectl sim`` stopped by SIGTERM then exited 1 instead of 130. A handler that takes a lock
there (``Event.set``, ``Queue.put``) waits for ever when the main thread already holds that
lock. So these handlers only assign an attribute, and the main thread's loops, which wake at
least every few tenths of a second, act on it.
"""

from __future__ import annotations

import signal
import time
from types import FrameType

__all__ = ["POLL", "StopSignals"]

POLL = 0.05  # seconds between a waiting main thread's looks at the flag


class StopSignals:
    """SIGTERM, and SIGINT (Ctrl-C) when it has Python's default handler, noted as a request
    to stop: ``by`` says which came first ("SIGTERM" or "Ctrl-C"), ``None`` before. An SIGINT
    the process was started ignoring (``nohup``, a background job) stays ignored."""

    def __init__(self) -> None:
        self.by: str | None = None

    def install(self) -> StopSignals:
        signal.signal(signal.SIGTERM, self._note)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._note)
        return self

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.by is None:  # (a second signal while stopping changes nothing)
            self.by = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"

    def is_set(self) -> bool:
        return self.by is not None

    def wait(self, timeout: float) -> bool:
        """Whether a stop was asked for within ``timeout`` seconds (as ``Event.wait``)."""
        end = time.monotonic() + timeout
        while self.by is None:
            left = end - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL, left))
        return True
