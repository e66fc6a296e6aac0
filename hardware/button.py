"""The dealer button on a GPIO pin, through gpiozero (active low, with the pull-up on).

The pin factory is injected: lgpio on a Pi (RPi.GPIO where someone installed it),
``MockFactory`` in tests. gpiozero's own debounce is off (its mock pins do not bounce, real
switches do): the recogniser in ``controller.gestures`` filters bounces. gpiozero's callbacks,
on its own thread, only record the edge; ``tick`` (a timer thread, or the test) lets time pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from controller.gestures import GestureConfig, GestureEvent, GestureRecogniser


class DealerButton:
    def __init__(
        self,
        pin: int | str,
        on_gesture: Callable[[GestureEvent], None],
        *,
        config: GestureConfig | None = None,
        pin_factory: Any = None,
        clock: Callable[[], float] = time.monotonic,
        tick_interval: float | None = 0.01,
    ) -> None:
        from gpiozero import Button  # lazily: the core never needs it

        self.clock = clock
        # The moment of the next edge when its source knows it better than our clock (the
        # simulator's finger stamps its presses: a busy machine may deliver them late).
        self.edge_time: float | None = None
        self.on_gesture = on_gesture
        self.recogniser = GestureRecogniser(config)
        self._lock = threading.Lock()
        self.button = Button(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
        self.button.when_pressed = lambda: self._edge(True)
        self.button.when_released = lambda: self._edge(False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if tick_interval is not None:
            self._thread = threading.Thread(target=self._ticker, args=(tick_interval,),
                                            name="button-tick", daemon=True)
            self._thread.start()

    def _edge(self, pressed: bool) -> None:
        with self._lock:
            at, self.edge_time = self.edge_time, None
            events = self.recogniser.edge(self.clock() if at is None else at, pressed)
        for event in events:
            self.on_gesture(event)

    def tick(self) -> None:
        with self._lock:
            events = self.recogniser.tick(self.clock())
        for event in events:
            self.on_gesture(event)

    def _ticker(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.tick()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.button.close()
