"""The table's parts, built from its configuration: the outbox, the card reader (the shoe's
serial link, the shoe's firmware simulated on a pty, or an NFC reader), the dealer's button,
the display, the buzzer and the link to the hub. The daemon (tablectl/daemon.py) runs them;
a simulator injects parts of its own (``Factories``).

A part talks to the daemon only through its one queue: each callback puts one of the typed
items below, and the daemon's main loop alone acts on them. Hardware libraries are imported
when a part that needs them is built (a table without a display never loads Pillow).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, runtime_checkable

from contract.commands import Command
from contract.snapshots import VenueClockReading
from controller.events import Event
from controller.inputs import Input
from controller.screens import Screen
from firmware_bridge.messages import clock_zero_ms
from tablectl.config import Config

if TYPE_CHECKING:
    from gpiozero.pins import Factory

    from controller.gestures import GestureEvent
    from hardware.outbox import Outbox
    from hardware.shoe_serial import SerialShoe
    from simulators.shoe import SimulatedShoe

COMMAND_TIMEOUT = 5.0  # seconds the link's thread waits for the main loop to apply a command


# ---------------------------------------------------------------- what goes on the queue
@dataclass(frozen=True)
class Read:
    """What the card reader's thread read (a shoe link event, a tag), at the host time it
    arrived; the reader's ``inputs`` turns it into core inputs on the main loop."""

    what: object
    t: float


@dataclass(frozen=True)
class ButtonPressed:
    gesture: GestureEvent


@dataclass(frozen=True)
class VenueClockFollowed:
    reading: VenueClockReading
    retained: bool


@dataclass(frozen=True)
class FloorCommand:
    """A command from the hub, applied by the main loop; the link's thread waits on ``done``."""

    command: Command
    reply: list[str | None]
    done: threading.Event


@dataclass(frozen=True)
class DealerInput:
    """An input a simulated dealer makes directly (the script's setup, seats, clock and button
    lines, as ``tablectl demo --shoe`` and the shoe tests play them)."""

    input: Input


@dataclass(frozen=True)
class Reload:
    """SIGHUP: read the configuration again."""


Put = Callable[[object], None]  # the daemon's queue: what a part's callback may do


# ---------------------------------------------------------------- what the daemon needs
class Reader(Protocol):
    """The card reader: its thread puts ``Read`` items; ``inputs`` (on the main loop only)
    turns one into the core's inputs."""

    def inputs(self, what: object, t: float) -> list[Input]: ...

    def stop(self) -> None: ...


class Button(Protocol):
    def close(self) -> None: ...


class Display(Protocol):
    def show(self, screen: Screen) -> bool: ...


class Buzzer(Protocol):
    """Sounds for the events the table commits (a subscriber), and one by name."""

    def committed(self, events: Sequence[Event]) -> None: ...

    def play(self, name: str) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class HasVolume(Protocol):
    """A buzzer whose volume a reload changes (the terminal's prints every sound)."""

    volume: str


class HubLink(Protocol):
    @property
    def connected(self) -> bool: ...

    def notify(self) -> None: ...

    def publish_state(self, state: dict[str, Any]) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Wiring:
    """What a part is built with besides the configuration."""

    config: Config
    put: Put
    now: Callable[[], float]  # the daemon's time (monotonic, continued from its journal)
    out: TextIO  # the terminal's display and buzzer write here
    outbox: Outbox


# ---------------------------------------------------------------- the factories
def open_outbox(config: Config) -> Outbox:
    from hardware.outbox import Outbox

    data = Path(config.storage.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    return Outbox(data / f"{config.table.id}.db")


class ShoeReader:
    """The shoe over its serial link; its link events become inputs through the translation
    (tablectl/shoe_to_core.py), whose clock ``pinned`` fixes when the shoe's clock is known to
    be this host's (``ShoeClock.pin``)."""

    def __init__(self, port: str, wiring: Wiring, pinned: float | None = None) -> None:
        from hardware.shoe_serial import SerialShoe
        from tablectl.shoe_to_core import ShoeTranslator

        self.translator = ShoeTranslator()
        if pinned is not None:
            self.translator.clock.pin(pinned)
        put = wiring.put
        self.serial: SerialShoe = SerialShoe(port, lambda e, t: put(Read(e, t)),
                                             clock=wiring.now).start()

    def inputs(self, what: object, t: float) -> list[Input]:
        from firmware_bridge.host import ShoeLinkEvent

        return self.translator.translate(what, t) if isinstance(what, ShoeLinkEvent) else []

    def stop(self) -> None:
        self.serial.stop()


class SimulatedShoeReader(ShoeReader):
    """A PC without a shoe: the shoe's firmware on a pty in this process, reached through the
    same serial link as a real shoe. ``shoe``: one the caller made and drives (a simulator's
    dealer); else one of its own, its port in a temporary folder, stopped with the reader.
    Its clock is this host's: the translation's mapping is pinned, not estimated."""

    def __init__(self, wiring: Wiring, shoe: SimulatedShoe | None = None) -> None:
        from simulators.shoe import SimulatedShoe

        self.folder: tempfile.TemporaryDirectory[str] | None = None
        if shoe is None:
            self.folder = tempfile.TemporaryDirectory(prefix="tablectl-shoe-")
            shoe = SimulatedShoe(Path(self.folder.name) / "shoe",
                                 shoe_id=f"sim-{wiring.config.table.id}").start()
        self.shoe = shoe
        super().__init__(str(shoe.port), wiring, host_clock_pin(wiring, shoe.clock_offset()))

    def stop(self) -> None:
        super().stop()
        if self.folder is not None:
            self.shoe.stop()
            self.folder.cleanup()


class TagReader:
    """An NFC reader on the Pi (nfcpy): each tag read becomes a card or a dealer's badge."""

    def __init__(self, wiring: Wiring) -> None:
        from hardware.nfc_reader import NfcReader

        put = wiring.put
        self.reader = NfcReader(wiring.config.shoe.nfc, lambda r, t: put(Read(r, t)),
                                clock=wiring.now).start()

    def inputs(self, what: object, t: float) -> list[Input]:
        from hardware.nfc_reader import TagRead
        from tablectl.shoe_to_core import tag_read

        return [tag_read(what.uid, what.text, t)] if isinstance(what, TagRead) else []

    def stop(self) -> None:
        self.reader.stop()


def host_clock_pin(wiring: Wiring, shoe_zero: float | None = None) -> float:
    """The mapping of a shoe's milliseconds onto the daemon's time when the shoe's clock is
    this machine's monotonic clock cut to the firmware's 32 bits (the simulated shoe's):
    ``shoe_zero`` the host's monotonic seconds at the shoe's millisecond 0 (by default, the
    last wrap of that clock), plus where the daemon's time stands against the host's."""
    if shoe_zero is None:
        shoe_zero = clock_zero_ms(int(time.monotonic() * 1000)) / 1000.0
    return shoe_zero + wiring.now() - time.monotonic()  # the daemon's continues its journal


def make_reader(wiring: Wiring) -> Reader | None:
    shoe = wiring.config.shoe
    if shoe.backend == "serial":
        # A shoe whose clock is this host's (a simulated shoe on a pty here): its stamps are
        # mapped exactly, not estimated from when its messages happened to be read.
        return ShoeReader(shoe.port, wiring,
                          host_clock_pin(wiring) if shoe.clock == "host" else None)
    backend = shoe.backend
    if backend == "simulated":
        return SimulatedShoeReader(wiring)
    if backend == "nfc":
        return TagReader(wiring)
    return None


def pin_factory(config: Config) -> Factory | None:
    """gpiozero's pin factory the configuration names (None: gpiozero's own choice)."""
    if config.button.backend == "mock" or config.button.pin_factory == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    if config.button.pin_factory == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    if config.button.pin_factory == "rpigpio":
        from gpiozero.pins.rpigpio import RPiGPIOFactory

        return RPiGPIOFactory()
    return None


def make_button(wiring: Wiring) -> Button | None:
    config = wiring.config
    if config.button.backend == "none":
        return None
    from hardware.button import ButtonControl, DealerButton

    put = wiring.put
    factory = pin_factory(config)
    button = DealerButton(config.button.pin, lambda e: put(ButtonPressed(e)),
                          config=config.button.gestures, pin_factory=factory, clock=wiring.now)
    if config.button.control:  # a mock pin the simulator's finger drives from its process
        from gpiozero.pins.mock import MockFactory

        assert isinstance(factory, MockFactory)  # the configuration allows no other
        return ButtonControl(config.button.control, factory.pin(config.button.pin), button)
    return button


def make_display(wiring: Wiring) -> Display | None:
    config = wiring.config
    if config.display.backend == "none":
        return None
    if config.display.backend == "terminal":
        from hardware.terminal import TerminalDisplay

        return TerminalDisplay(wiring.out, config.table.id)
    from hardware.display import Display, lcd_device, oled_device

    if config.display.backend == "hd44780":
        return Display(lcd_device(port=config.display.i2c_port, address=config.display.address))
    return Display(oled_device(config.display.backend, port=config.display.i2c_port,
                               address=config.display.address))


def make_buzzer(wiring: Wiring) -> Buzzer | None:
    config = wiring.config
    if config.buzzer.backend == "none":
        return None
    if config.button.backend == "mock":  # a simulated table: sounds as text
        from hardware.terminal import TerminalBuzzer

        return TerminalBuzzer(wiring.out, config.table.id)
    from datetime import time as daytime

    from hardware.buzzer import BuzzerPlayer

    quiet = None
    if config.buzzer.quiet_hours:
        start, end = (daytime.fromisoformat(x) for x in config.buzzer.quiet_hours)
        quiet = (start, end)
    return BuzzerPlayer(config.buzzer.pin, kind=config.buzzer.backend, volume=config.buzzer.volume,
                        quiet_hours=quiet)


def make_link(wiring: Wiring) -> HubLink | None:
    config = wiring.config
    if not config.mqtt.enabled:
        return None
    from contract.mqtt import tls_settings
    from hardware.mqtt_link import TableLink

    put = wiring.put

    def command(command: Command) -> str | None:
        """On the link's worker thread: hand the command to the main loop and wait for it."""
        reply: list[str | None] = []
        done = threading.Event()
        put(FloorCommand(command, reply, done))
        if not done.wait(COMMAND_TIMEOUT):
            return "the table did not answer in time"
        return reply[0]

    def venue_clock(reading: VenueClockReading, retained: bool) -> None:
        put(VenueClockFollowed(reading, retained))

    return TableLink(
        wiring.outbox, venue=config.table.venue, table=config.table.id, host=config.mqtt.host,
        port=config.mqtt.port, tls=tls_settings(config.mqtt.ca, config.mqtt.cert, config.mqtt.key),
        username=config.mqtt.username, password=config.mqtt.password, on_command=command,
        on_venue_clock=venue_clock if config.clock.mode == "venue" else None).start()


@dataclass(frozen=True)
class Factories:
    """How the daemon builds each part: from the configuration by default; a simulator
    replaces some (``dataclasses.replace``)."""

    outbox: Callable[[Config], Outbox] = open_outbox
    reader: Callable[[Wiring], Reader | None] = make_reader
    button: Callable[[Wiring], Button | None] = make_button
    display: Callable[[Wiring], Display | None] = make_display
    buzzer: Callable[[Wiring], Buzzer | None] = make_buzzer
    link: Callable[[Wiring], HubLink | None] = make_link


@dataclass
class Parts:
    """The parts a running table holds, stopped in this order by ``close``."""

    reader: Reader | None = None
    button: Button | None = None
    display: Display | None = None
    buzzer: Buzzer | None = None
    link: HubLink | None = None

    @classmethod
    def build(cls, factories: Factories, wiring: Wiring) -> Parts:
        return cls(reader=factories.reader(wiring), button=factories.button(wiring),
                   display=factories.display(wiring), buzzer=factories.buzzer(wiring),
                   link=factories.link(wiring))

    def close(self) -> None:
        if self.link is not None:
            self.link.stop()
        if self.reader is not None:
            self.reader.stop()
        if self.button is not None:
            self.button.close()
        if self.buzzer is not None:
            self.buzzer.close()
