"""A table in simulation: the simulated shoe (the firmware's code) on a pty, the real serial
transport and codec, and the table core, all fed through one queue as the daemon is.

Inputs that do not come from the shoe (the dealer's button, seating, the clock) go into the
same queue. ``play`` acts out a dealer's script (replay-format lines) in real time, at
``scale`` times its pace, and returns every event the core emitted.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.inputs import parse_input
from controller.profiles import Profile
from controller.table import Table, TableConfig
from firmware_bridge.host import LinkUp, ShoeLinkEvent
from hardware.shoe_serial import SerialShoe
from houses.loaders import load_structure
from simulators.shoe import SimulatedShoe, play_script
from tablectl.shoe_to_core import ShoeTranslator

EventData = dict[str, Any]  # an event as the outbox holds it (JSON)


class SimulatedTable:
    def __init__(self, directory: Path, profile: Profile, *, scale: float = 1.0,
                 deal_gap: float = 3.0, evaluate: bool = True,
                 on_event: Callable[[EventData], None] | None = None,
                 shoe_behind: float = 1.0) -> None:
        self.scale = scale
        # The shoe's idle clock runs ``shoe_behind`` seconds late, so that a card the script's
        # player draws late (on a busy machine) is still stamped at its moment: a card stamped
        # late can fall after the press that follows it, and the core then rules another hand.
        # (The clock is pinned below, so this host maps the stamps exactly.)
        self.shoe = SimulatedShoe(directory / "shoe", behind_s=shoe_behind).start()
        self.queue: queue.Queue[tuple[str, Any, float]] = queue.Queue()
        self.link = SerialShoe(str(directory / "shoe"),
                               lambda e, t: self.queue.put(("link", e, t))).start()
        # The core judges rhythm on real (scaled) time: the dealing gap scales with the pace.
        self.table = Table(profile, TableConfig(deal_gap=deal_gap * scale, evaluate=evaluate),
                           load_structure)
        self.translator = ShoeTranslator()
        # The simulated shoe's clock is this host's: the mapping is known, not estimated
        # (ShoeClock.pin says why).
        self.translator.clock.pin(self.shoe.clock_offset())
        self.events: list[EventData] = []
        self.link_events: list[ShoeLinkEvent] = []
        self.on_event = on_event
        if not self.pump_until(lambda: any(isinstance(e, LinkUp) for e in self.link_events),
                               10):
            self.close()
            raise RuntimeError("the simulated shoe's port did not open")

    def direct(self, line: dict[str, object], at: float | None = None) -> None:
        """A non-shoe input (button, setup, seats, clock), stamped with its moment (``at``,
        when the script's player was late) or the time it happens."""
        self.queue.put(("direct", line, time.monotonic() if at is None else at))

    def _handle(self, item: tuple[str, Any, float]) -> None:
        kind, obj, t = item
        if kind == "link":
            self.link_events.append(obj)
            inputs = self.translator.translate(obj, t)
        else:
            inputs = [parse_input({**obj, "t": t})]
        for inp in inputs:
            for event in self.table.handle(inp):
                data = event.to_json()  # what the table's outbox would hold
                self.events.append(data)
                if self.on_event is not None:
                    self.on_event(data)

    def pump_until(self, done: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                self._handle(self.queue.get(timeout=0.02))
            except queue.Empty:
                if done():
                    return True
        return done()

    def play(self, lines: list[dict[str, object]], timeout: float = 600) -> list[EventData]:
        finished = threading.Event()

        def player() -> None:
            try:
                play_script(lines, self.shoe, self.direct, scale=self.scale)
            finally:
                finished.set()

        threading.Thread(target=player, name="dealer", daemon=True).start()
        done = self.pump_until(lambda: finished.is_set() and self.shoe.idle(0.01)
                               and self.queue.empty(), timeout)
        if not done:
            raise TimeoutError("the simulated table did not finish the script in time")
        # The shoe is idle only once the host acknowledged every read, and the transport
        # queues a read's event before it sends the acknowledgement: all of it is queued.
        self.pump_until(self.queue.empty, 1)
        return self.events

    def close(self) -> None:
        self.link.stop()
        self.shoe.stop()
