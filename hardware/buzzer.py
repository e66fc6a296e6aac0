"""The piezo buzzer through gpiozero: ``TonalBuzzer`` (a passive piezo, pitched patterns) or
``Buzzer`` (an active buzzer, on/off). The pin factory is injected (``MockFactory`` in tests).

Patterns (``controller.sounds``) play one after another on the player's own thread; the
table's event loop only queues them. Volume: ``normal`` plays everything, ``quiet`` only the
alarms (irregularity, floor call, shot clock expired), ``off`` nothing. Quiet hours, given as
local ``(start, end)`` times, turn ``normal`` into ``quiet`` while the venue's clock says so;
before the table knows the venue's wall time (a Pi has no real-time clock), they do not apply.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from datetime import time as daytime
from typing import TYPE_CHECKING, Any

from controller.events import Event
from controller.sounds import ALARMS, PATTERNS, sounds_for

if TYPE_CHECKING:  # gpiozero is imported when a buzzer is made: the core never needs it
    from gpiozero.pins import Factory

VOLUMES = ("normal", "quiet", "off")


class BuzzerPlayer:
    def __init__(
        self,
        pin: int | str,
        *,
        kind: str = "tonal",
        pin_factory: Factory | None = None,
        volume: str = "normal",
        quiet_hours: tuple[daytime, daytime] | None = None,
        wall_clock: Callable[[], datetime | None] = lambda: None,
        sleep: Callable[[float], None] = time.sleep,
        threaded: bool = True,
    ) -> None:
        if kind not in ("tonal", "active"):
            raise ValueError(f"buzzer.kind: {kind!r} is not 'tonal' or 'active'")
        if volume not in VOLUMES:
            raise ValueError(f"buzzer.volume: {volume!r} is not one of {', '.join(VOLUMES)}")
        from gpiozero import Buzzer, TonalBuzzer

        self.kind = kind
        if kind == "tonal":
            # A5 with two octaves each way: 220 Hz to 3.5 kHz, the piezo's useful range.
            self.device: Any = TonalBuzzer(pin, mid_tone="A5", octaves=2,
                                           pin_factory=pin_factory)
        else:
            self.device = Buzzer(pin, pin_factory=pin_factory)
        self.volume = volume
        self.quiet_hours = quiet_hours
        self.wall_clock = wall_clock
        self.sleep = sleep
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.played: list[str] = []
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="buzzer", daemon=True)
            self._thread.start()

    def effective_volume(self) -> str:
        if self.volume != "normal" or self.quiet_hours is None:
            return self.volume
        now = self.wall_clock()
        if now is None:
            return self.volume
        start, end = self.quiet_hours
        current = now.time()
        inside = start <= current < end if start <= end else current >= start or current < end
        return "quiet" if inside else "normal"

    def handle_event(self, event: Event) -> None:
        for name in sounds_for(event):
            self.play(name)

    def committed(self, events: Sequence[Event]) -> None:
        """The table committed these events (the daemon's subscriber): their sounds queued."""
        for event in events:
            self.handle_event(event)

    def play(self, name: str) -> None:
        if name not in PATTERNS:
            raise ValueError(f"no buzzer pattern named {name!r}")
        volume = self.effective_volume()
        if volume == "off" or (volume == "quiet" and name not in ALARMS):
            return
        self.queue.put(name)

    def run_pending(self) -> None:
        """Play what is queued, in the caller's thread (for tests and a threadless player)."""
        while True:
            try:
                name = self.queue.get_nowait()
            except queue.Empty:
                return
            if name is not None:
                self._play_now(name)

    def _run(self) -> None:
        while (name := self.queue.get()) is not None:
            self._play_now(name)

    def _play_now(self, name: str) -> None:
        self.played.append(name)
        for frequency, seconds in PATTERNS[name]:
            if frequency:
                if self.kind == "tonal":
                    from gpiozero.tones import Tone

                    self.device.play(Tone.from_frequency(frequency))
                else:
                    self.device.on()
            else:
                self._silence()
            self.sleep(seconds)
        self._silence()

    def _silence(self) -> None:
        if self.kind == "tonal":
            self.device.stop()
        else:
            self.device.off()

    def close(self) -> None:
        if self._thread is not None:
            self.queue.put(None)
            self._thread.join(timeout=5)
        self.device.close()
