"""A table in simulation, in this process: the real daemon (tablectl/daemon.py) with the
simulated shoe (the firmware's code on a pty) as its card reader, through the real serial
transport, codec and translation; no button, display, buzzer or hub.

The dealer's other lines (the button, seating, the clock) go onto the daemon's one queue as
inputs. ``play`` acts out a dealer's script (replay-format lines) in real time, at ``scale``
times its pace, running the daemon's loop meanwhile, and returns every event the table
committed from the script on (as its outbox holds them).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from controller.events import Event
from controller.inputs import Input, parse_input
from firmware_bridge.host import LinkUp
from hardware.shoe_serial import SerialShoe
from simulators.shoe import SimulatedShoe, play_script
from tablectl.config import config_from_data
from tablectl.daemon import Daemon
from tablectl.parts import DealerInput, Factories, SimulatedShoeReader, Wiring

EventData = dict[str, Any]  # an event as the outbox holds it (JSON)
QUIET = 0.02  # seconds without a new item before ``pump_until`` asks if it is done


class _WatchedShoeReader(SimulatedShoeReader):
    """The simulated shoe's reader, keeping the link events it turned into inputs, and
    when."""

    def __init__(self, wiring: Wiring, shoe: SimulatedShoe) -> None:
        self.link_events: list[object] = []
        self.last_read = 0.0  # when the main loop last took one in (time.monotonic)
        super().__init__(wiring, shoe)

    def inputs(self, what: object, t: float) -> list[Input]:
        self.link_events.append(what)
        self.last_read = time.monotonic()
        return super().inputs(what, t)


class SimulatedTable:
    """``directory``: this table's own folder (the shoe's port, the daemon's outbox).
    ``profile``: a house's profile, by name or file, as a table's configuration names it."""

    def __init__(self, directory: Path, profile: str, *, scale: float = 1.0,
                 deal_gap: float = 3.0, on_event: Callable[[EventData], None] | None = None,
                 out: TextIO = sys.stderr) -> None:
        self.scale = scale
        # The script's player holds the shoe's clock at its next card's moment (``play``), so
        # that a card it draws late (on a busy machine) is still stamped at its moment: a card
        # stamped late can fall after the press that follows it, and the core then rules
        # another hand. (The reader pins the translation's clock: this host maps the stamps
        # exactly.)
        self.shoe = SimulatedShoe(directory / "shoe").start()
        # The core judges rhythm on real (scaled) time: the dealing gap scales with the pace.
        config = config_from_data({
            "table": {"venue": "sim", "id": "sim", "profile": profile,
                      "deal_gap": deal_gap * scale},
            "shoe": {"backend": "simulated"}, "button": {"backend": "none"},
            "display": {"backend": "none"}, "buzzer": {"backend": "none"},
            "mqtt": {"enabled": False}, "storage": {"data_dir": str(directory)}},
            "the simulated table")
        self.reader: _WatchedShoeReader | None = None
        self.daemon = Daemon(config, out=out,
                             factories=replace(Factories(), reader=self._reader)).start()
        self.events: list[EventData] = []
        self.on_event = on_event
        self.daemon.subscribe(self._committed)  # from here on: the script's events
        if not self.pump_until(lambda: any(isinstance(e, LinkUp) for e in self.link_events),
                               10):
            self.close()
            raise RuntimeError("the simulated shoe's port did not open")

    def _reader(self, wiring: Wiring) -> _WatchedShoeReader:
        self.reader = _WatchedShoeReader(wiring, self.shoe)
        return self.reader

    @property
    def serial(self) -> SerialShoe:
        """The daemon's serial link to the shoe."""
        assert self.reader is not None
        return self.reader.serial

    @property
    def link_events(self) -> list[object]:
        return self.reader.link_events if self.reader is not None else []

    def _committed(self, events: Sequence[Event]) -> None:
        for event in events:
            data = event.to_json()  # what the table's outbox holds
            self.events.append(data)
            if self.on_event is not None:
                self.on_event(data)

    def direct(self, line: dict[str, object], at: float | None = None) -> None:
        """A non-shoe input (button, setup, seats, clock), stamped with its moment (``at``,
        when the script's player was late) or the time it happens."""
        t = time.monotonic() if at is None else at
        self.daemon.queue.put(DealerInput(parse_input({**line, "t": t})))

    def pump_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Run the daemon's loop until ``done`` holds, asked once no read has come for QUIET
        seconds (the serial link acknowledges a read after queueing it: the shoe has the
        acknowledgement by then)."""
        end = time.monotonic() + timeout
        queue = self.daemon.queue
        busy = [0.0]

        def until() -> bool:
            now = time.monotonic()
            if not queue.empty():
                busy[0] = now
            last = max(busy[0], self.reader.last_read if self.reader is not None else 0.0)
            return now >= end or (now - last >= QUIET and done())

        self.daemon.loop(until=until)
        return done()

    def play(self, lines: list[dict[str, object]], timeout: float = 600) -> list[EventData]:
        finished = threading.Event()

        def player() -> None:
            try:
                play_script(lines, self.shoe, self.direct, scale=self.scale)
            finally:
                finished.set()

        threading.Thread(target=player, name="dealer", daemon=True).start()
        done = self.pump_until(lambda: finished.is_set() and self.shoe.idle(0.01), timeout)
        if not done:
            raise TimeoutError("the simulated table did not finish the script in time")
        # The shoe is idle only once the host acknowledged every read, and the transport
        # queues a read's event before it sends the acknowledgement: all of it is queued.
        self.pump_until(lambda: True, 1)
        return self.events

    def close(self) -> None:
        self.daemon.stop()
        self.shoe.stop()
