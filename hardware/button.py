"""The dealer button on a GPIO pin, through gpiozero (active low, with the pull-up on).

The pin factory is injected: lgpio on a Pi (RPi.GPIO where someone installed it),
``MockFactory`` in tests. gpiozero's own debounce is off (its mock pins do not bounce, real
switches do): the recogniser in ``controller.gestures`` filters bounces. The pin is a plain
``DigitalInputDevice``: gpiozero's ``Button`` adds a hold thread that wakes ten times a second,
and the recogniser times holds itself. gpiozero's callbacks, on its own thread, only record the
edge; a timer thread sleeps until the recogniser's next deadline (a bounce to settle, a hold
threshold to announce) and otherwise until the next edge: an idle button costs no wake-ups.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from controller.gestures import GestureConfig, GestureEvent, GestureRecogniser

if TYPE_CHECKING:  # gpiozero is imported when a button is made: the core never needs it
    from gpiozero.pins import Factory
    from gpiozero.pins.mock import MockPin


class DealerButton:
    def __init__(
        self,
        pin: int | str,
        on_gesture: Callable[[GestureEvent], None],
        *,
        config: GestureConfig | None = None,
        pin_factory: Factory | None = None,
        clock: Callable[[], float] = time.monotonic,
        timer: bool = True,
    ) -> None:
        """``timer=False``: nobody lets time pass but the caller's ``tick`` (tests with a
        clock of their own)."""
        from gpiozero import DigitalInputDevice  # lazily: the core never needs it

        self.clock = clock
        # The moment of the next edge when its source knows it better than our clock (the
        # simulator's finger stamps its presses: a busy machine may deliver them late).
        self.edge_time: float | None = None
        self.on_gesture = on_gesture
        self.recogniser = GestureRecogniser(config)
        self._wake = threading.Condition()
        self._closing = False
        self.device = DigitalInputDevice(pin, pull_up=True, bounce_time=None,
                                         pin_factory=pin_factory)
        self.device.when_activated = lambda: self._edge(True)
        self.device.when_deactivated = lambda: self._edge(False)
        self._thread: threading.Thread | None = None
        if timer:
            self._thread = threading.Thread(target=self._timer, name="button-timer",
                                            daemon=True)
            self._thread.start()

    def _edge(self, pressed: bool) -> None:
        with self._wake:
            at, self.edge_time = self.edge_time, None
            events = self.recogniser.edge(self.clock() if at is None else at, pressed)
            self._wake.notify()  # a new deadline, perhaps
        for event in events:
            self.on_gesture(event)

    def tick(self) -> None:
        """Let time pass: what the recogniser settles or announces by now is reported."""
        with self._wake:
            events = self.recogniser.tick(self.clock())
        for event in events:
            self.on_gesture(event)

    def _timer(self) -> None:
        while True:
            with self._wake:
                while not self._closing:
                    deadline = self.recogniser.next_deadline()
                    if deadline is None:
                        self._wake.wait()  # until an edge, or close
                        continue
                    delay = deadline - self.clock()
                    if delay <= 0:
                        break
                    self._wake.wait(delay)
                if self._closing:
                    return
            self.tick()

    def close(self) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.device.close()


# Seconds a finger's stamp may differ from the button's clock. The simulator's dealer waits up
# to 15 s for the daemon to take in a card before a press (tablectl/sim_venue.py,
# SETTLE_SECONDS), then stamps the press at its moment in the script, as the card was: on a
# starved machine that stamp is over 10 s old. Refused, it would cost the press, not only its
# rhythm: its down and up, arriving together, read as a bounce.
STAMP_WINDOW = 60.0


class ButtonControl:
    """A mock pin's finger over a Unix datagram socket: the simulator's dealer, in another
    process (``tablectl sim``; ``Finger`` in tablectl/sim_venue.py). Datagrams "down"/"up"
    drive the pin (active low), optionally with the finger's monotonic time of the edge
    ("down 1234.567"), which the recogniser then uses: presses delivered late on a busy
    machine keep their rhythm (two taps do not become a double tap). A stamp that is no moment
    of this run (not finite, or further than STAMP_WINDOW from now) is ignored: the edge keeps
    its arrival. ``close`` closes the socket, then the button."""

    def __init__(self, path: str, pin: MockPin, button: DealerButton) -> None:
        self.button = button
        self.pin = pin
        if os.path.exists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self._closed = threading.Event()
        threading.Thread(target=self._serve, name="button-control", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                message = self.sock.recv(64)
            except OSError:
                return
            if not message:
                continue  # shut down (the loop ends) or an empty datagram
            what, _, when = message.partition(b" ")
            try:
                # The finger's clock is this machine's monotonic one; the button's may be
                # shifted (a daemon's time continues its journal's).
                now = self.button.clock()
                stamped = float(when) + now - time.monotonic() if when else None
            except ValueError:
                continue
            if stamped is not None and not (
                    math.isfinite(stamped) and abs(stamped - now) <= STAMP_WINDOW):
                stamped = None  # not a moment of this run: the edge keeps its arrival
            if what == b"down":
                self.button.edge_time = stamped
                self.pin.drive_low()
            elif what == b"up":
                self.button.edge_time = stamped
                self.pin.drive_high()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # the blocked recv returns b""
        self.sock.close()
        self.button.close()
