"""``tablectl run``: the table daemon, the parts wired from the configuration.

One queue into the core: the shoe's serial (or NFC) thread, the button's gpiozero callbacks,
the MQTT link's commands and the timer all put items on it; the main loop alone touches the
table core. Each input the core handles is committed with the events it caused, in one SQLite
transaction, to the journal and the outbox: after a SIGKILL or a power cut, replaying the
journal rebuilds the hand in progress and the clock, and no event is lost or sent twice.

Time is the daemon's own: monotonic seconds, continued from the journal's last time after a
restart (the time the table was down is not counted until the venue clock says otherwise; a Pi
has no real-time clock). systemd: ``READY=1`` once running, ``WATCHDOG=1`` pings, ``STATUS=``
lines; SIGTERM stops cleanly (status ``offline``, outbox flushed as far as the broker allows);
SIGHUP reloads what can change without a restart (profile, gestures, dealing gap, volume).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from contract.commands import Command
from contract.snapshots import TableState, VenueClockReading
from contract.supervise import EXIT_WORKER_DIED, FAILED, SystemdNotifier, failures
from contract.wire import decode
from controller.decks import DeckRegistry
from controller.events import Event, JournalQuarantined
from controller.inputs import (
    ClockCommand,
    Gesture,
    Input,
    SeatsChange,
    Setup,
    input_to_dict,
    parse_input,
)
from controller.screens import ALERT_LINES, DisplayModel, Status
from controller.table import Table, TableConfig, TableUsageError
from houses.loaders import house_structure, load_profile, read_toml
from tablectl.command_to_core import command_input, venue_clock_input
from tablectl.config import Config, ConfigError, config_from_data

STATE_REFRESH = 10.0  # seconds between state snapshots when only the clock moves
# Seconds between the timer's turns (the clock's time, the display, the link's status): the
# dealer sees the clock's second change within a quarter of a second.
TICK = 0.25


def load_config(path: str) -> Config:
    """The configuration file, with ``~`` in storage.data_dir as the user's home (a PC's
    configuration keeps its outbox there)."""
    config = config_from_data(read_toml(path, ConfigError), path)
    config.data_dir = os.path.expanduser(config.data_dir)
    return config


STAMP_WINDOW = 10.0  # seconds a simulated finger's stamp may differ from now
HUB_CONNECT_GRACE = 10.0  # seconds a starting table shows "HUB .." before "HUB LOST"
# A venue clock reading's age (the hub's wall clock against this table's) is trusted within
# a minute; beyond, the two wall clocks disagree and the age says nothing.
READING_CLOCKS_AGREE = 60.0
# A reading this much older than the last one followed is the hub's wall clock stepped back
# (NTP), not a stale reading: it is followed, and readings are ordered from it on.
HUB_CLOCK_STEP = 600.0


class TerminalDisplay:
    """The display drawn in the terminal: the 20x4 LCD's text, each time it changes."""

    def __init__(self, out: TextIO, table: str) -> None:
        self.out = out
        self.table = table
        self.last: Any = None  # the screen last shown (drawn, or a tick of the clock drawn)

    def show(self, screen: Any) -> bool:
        from hardware.display import render_lcd

        if screen == self.last:
            return False
        ticked = (self.last is not None and screen.kind == self.last.kind == "clock"
                  and replace(screen, big=self.last.big) == self.last)
        self.last = screen
        if ticked:
            return True  # the clock ticking every second would flood the terminal
        lines = render_lcd(screen)
        bar = "+" + "-" * 20 + "+"
        self.out.write(f"[{self.table}] {bar}\n" + "".join(
            f"[{self.table}] |{line}|\n" for line in lines) + f"[{self.table}] {bar}\n")
        self.out.flush()
        return True


class TerminalBuzzer:
    def __init__(self, out: TextIO, table: str) -> None:
        self.out = out
        self.table = table

    def handle_event(self, event: Event) -> None:
        from controller.sounds import sounds_for

        for name in sounds_for(event):
            self.play(name)

    def play(self, name: str) -> None:
        self.out.write(f"[{self.table}] buzzer: {name}\n")
        self.out.flush()

    def close(self) -> None:
        pass


# What goes on the daemon's one queue: each adapter's callback only puts one of these.
@dataclass(frozen=True)
class ShoeEvent:
    """A link event from the serial shoe, at the host time it arrived."""

    event: Any
    t: float


@dataclass(frozen=True)
class NfcRead:
    read: Any
    t: float


@dataclass(frozen=True)
class ButtonPressed:
    gesture: Any  # hardware.button's gesture: its kind and time


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
class Reload:
    """SIGHUP: read the configuration again."""


class Daemon:
    def __init__(self, config: Config, *, config_path: str | None = None,
                 out: TextIO = sys.stdout, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.config = config
        self.config_path = config_path
        self.out = out
        self._mono = clock
        self._wall = wall
        self._reading_at: float | None = None  # the hub's time of the last reading followed
        self.queue: queue.Queue[object] = queue.Queue()
        self.venue_clock_readings = 0  # venue clock states handled (tests wait on it)
        self.started_at = self._mono()
        self.hub_seen = False  # the link has been up at least once since the start
        self.notifier = SystemdNotifier()
        self.running = threading.Event()
        self.stopped = threading.Event()
        self.parts: dict[str, Any] = {}
        self.offset = 0.0
        self.events = 0
        self.resumed = 0  # journal lines replayed at start
        self.quarantined: list[tuple[int, str]] = []  # (journal line id, why) at this start
        self._state_shown: tuple[Any, ...] | None = None  # what the last snapshot showed
        self._state_sent = 0.0
        # Whether the snapshot may differ from the last one sent: an input committed, a
        # reload, the link's state (the clock's time alone is refreshed every STATE_REFRESH).
        self._state_changed = True
        self._state_link: bool | None = None
        self.link: Any = None
        self.buzzer: Any = None
        self.display: Any = None

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        return self._mono() + self.offset

    # ------------------------------------------------------------------ startup
    def start(self) -> Daemon:
        from hardware.outbox import Outbox

        config = self.config
        data = Path(config.data_dir)
        data.mkdir(parents=True, exist_ok=True)
        self.outbox = Outbox(data / f"{config.table}.db")
        registry = DeckRegistry()
        if config.decks:
            from tablectl.deck_commands import load_registry

            registry = load_registry(Path(config.decks))
        structures = config.clock_structures
        self.table = Table(load_profile(config.profile),
                           TableConfig(deal_gap=config.deal_gap,
                                       gestures=dict(config.gesture_actions), evaluate=False),
                           registry=registry,
                           structure_loader=lambda name: house_structure(name, structures))
        # A ruling pages by what the display holds under its title (the terminal draws the LCD).
        device = "oled" if config.display_backend in ("ssd1306", "sh1106") else "lcd"
        self.model = DisplayModel(status=Status(hub="connecting" if config.mqtt_enabled
                                                else None),
                                  alert_lines=ALERT_LINES[device])
        journal = self.outbox.journal_lines()
        if journal:
            self._resume(journal)
            self._report_quarantine()
        self.table.config.evaluate = True
        past = self._past_house_size(config.seats)
        if past:
            raise ConfigError(str(self.config_path or "the configuration"),
                              [f"seats: {past}"])
        if not journal:
            self.feed(Setup(config.game, tuple(sorted(config.seats)), config.button_seat,
                            t=self.now()))
            if config.clock_mode == "standalone" and config.clock_structure:
                self.feed(ClockCommand("start", config.clock_structure, t=self.now()))
        self._start_parts()
        self.running.set()
        self.notifier.send("READY=1\nSTATUS=dealing: table " + config.table)
        return self

    def _resume(self, journal: list[tuple[int, str]]) -> None:
        """Rebuild the core from the journal (the events are in the outbox already). A line
        that cannot be replayed (unreadable, or the core fails on it) is quarantined and
        reported, and the table carries on: it never crash-loops on its own journal."""
        last_t = 0.0
        for line_id, text in journal:
            try:
                line = decode(text)
                t = line.get("t") or last_t
                if line.get("type") == "tick":
                    last_t = max(last_t, float(t))
                    self.table.advance(float(t))
                    continue
                item = parse_input(line)
                last_t = max(last_t, item.t or last_t)
                events = self.table.handle(item)
            except TableUsageError:
                continue  # refused when it was first fed too: the table said so then
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"[:500]
                self.outbox.quarantine(line_id, reason, int(time.time() * 1000))
                self.quarantined.append((line_id, reason))
                continue
            for event in events:
                self.model.update(event)
        # Continue the daemon's time where the journal stopped.
        self.offset = last_t + 0.001 - self._mono()
        self.resumed = len(journal)

    def _report_quarantine(self) -> None:
        for line_id, reason in self.quarantined:
            self.out.write(f"[{self.config.table}] journal line {line_id} quarantined: "
                           f"{reason}\n")
            self.outbox.append(JournalQuarantined(line=line_id, reason=reason,
                                                  t=self.now()).to_json(),
                               int(time.time() * 1000))
            self.events += 1

    def _start_parts(self) -> None:
        config = self.config
        if config.shoe_backend in ("serial", "simulated"):
            from hardware.shoe_serial import SerialShoe
            from tablectl.shoe_to_core import ShoeTranslator

            port = config.shoe_port
            if config.shoe_backend == "simulated":
                port = self._simulated_shoe()
            self.translator = ShoeTranslator()
            self.parts["shoe"] = SerialShoe(
                port, lambda e, t: self.queue.put(ShoeEvent(e, t)), clock=self.now).start()
        elif config.shoe_backend == "nfc":
            from hardware.nfc_reader import NfcReader

            self.parts["nfc"] = NfcReader(
                config.nfc_path, lambda r, t: self.queue.put(NfcRead(r, t)),
                clock=self.now).start()
        if config.button_backend != "none":
            self.parts["button"] = self._button()
        self.display = self._display()
        self.buzzer = self._buzzer()
        if config.mqtt_enabled:
            from contract.mqtt import tls_settings
            from hardware.mqtt_link import TableLink

            self.link = TableLink(
                self.outbox, venue=config.venue, table=config.table, host=config.mqtt_host,
                port=config.mqtt_port,
                tls=tls_settings(config.mqtt_ca, config.mqtt_cert, config.mqtt_key),
                username=config.mqtt_username, password=config.mqtt_password,
                on_command=self._command_from_link,
                on_venue_clock=(lambda reading, retained: self.queue.put(
                    VenueClockFollowed(reading, retained)))
                if config.clock_mode == "venue" else None).start()
        else:
            self.link = None

    def _simulated_shoe(self) -> str:
        """A PC without a shoe: the shoe's firmware on a pty in this process, reached through
        the same serial link as a real shoe; its port lives in a temporary folder."""
        import tempfile

        from simulators.shoe import SimulatedShoe

        folder = tempfile.TemporaryDirectory(prefix="tablectl-shoe-")
        self.parts["simulated shoe folder"] = folder
        shoe = SimulatedShoe(Path(folder.name) / "shoe", shoe_id=f"sim-{self.config.table}")
        self.parts["simulated shoe"] = shoe.start()
        return str(shoe.port)

    def _button(self) -> Any:
        from hardware.button import DealerButton

        config = self.config
        factory: Any = None
        if config.button_backend == "mock" or config.pin_factory == "mock":
            from gpiozero.pins.mock import MockFactory

            factory = MockFactory()
        elif config.pin_factory == "lgpio":
            from gpiozero.pins.lgpio import LGPIOFactory

            factory = LGPIOFactory()
        elif config.pin_factory == "rpigpio":
            from gpiozero.pins.rpigpio import RPiGPIOFactory

            factory = RPiGPIOFactory()
        button = DealerButton(config.button_pin, lambda e: self.queue.put(ButtonPressed(e)),
                              config=config.gestures, pin_factory=factory, clock=self.now)
        if config.button_control:
            self._control_socket(factory.pin(config.button_pin), config.button_control, button)
        return button

    def _control_socket(self, pin: Any, path: str, button: Any) -> None:
        """The simulator's finger: datagrams "down"/"up" drive the mock pin (active low),
        optionally with the finger's monotonic time of the edge ("down 1234.567"), which the
        gesture recogniser then uses: presses delivered late on a busy machine keep their
        rhythm (two taps do not become a double tap)."""
        if os.path.exists(path):
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        self.parts["control"] = sock  # stop() shuts it down: the blocked recv returns b""

        def serve() -> None:
            while not self.stopped.is_set():
                try:
                    message = sock.recv(64)
                except OSError:
                    return
                if not message:
                    continue  # shut down (the loop ends) or an empty datagram
                what, _, when = message.partition(b" ")
                try:
                    stamped = float(when) + self.offset if when else None
                except ValueError:
                    continue
                if stamped is not None and not (
                        math.isfinite(stamped) and abs(stamped - self.now()) <= STAMP_WINDOW):
                    stamped = None  # not a moment of this run: the edge keeps its arrival
                if what == b"down":
                    button.edge_time = stamped
                    pin.drive_low()
                elif what == b"up":
                    button.edge_time = stamped
                    pin.drive_high()

        threading.Thread(target=serve, name="button-control", daemon=True).start()

    def _display(self) -> Any:
        config = self.config
        if config.display_backend == "none":
            return None
        if config.display_backend == "terminal":
            return TerminalDisplay(self.out, config.table)
        from hardware.display import Display, lcd_device, oled_device

        if config.display_backend == "hd44780":
            return Display(lcd_device(port=config.display_port, address=config.display_address))
        return Display(oled_device(config.display_backend, port=config.display_port,
                                   address=config.display_address))

    def _buzzer(self) -> Any:
        config = self.config
        if config.buzzer_backend == "none":
            return None
        if config.button_backend == "mock":
            return TerminalBuzzer(self.out, config.table)  # a simulated table: sounds as text
        from datetime import time as daytime

        from hardware.buzzer import BuzzerPlayer

        quiet = None
        if config.quiet_hours:
            start, end = (daytime.fromisoformat(x) for x in config.quiet_hours)
            quiet = (start, end)
        return BuzzerPlayer(config.buzzer_pin, kind=config.buzzer_backend, volume=config.volume,
                            quiet_hours=quiet)

    # ------------------------------------------------------------------ the core
    def feed(self, item: Input) -> list[Event]:
        """One input from the table's own devices through the core; a refusal is printed."""
        try:
            return self._handle(item)
        except TableUsageError as exc:
            self.out.write(f"[{self.config.table}] refused: {exc}\n")
            return []

    def _handle(self, item: Input) -> list[Event]:
        """One input through the core; the input and its events committed together."""
        events = self.table.handle(item)
        self._commit(input_to_dict(item), events)
        return events

    def _commit(self, line: dict[str, Any], events: list[Event]) -> None:
        self.outbox.record(line, [event.to_json() for event in events],
                           int(time.time() * 1000))
        self.events += len(events)
        self._state_changed = True
        if self.link is not None and events:
            self.link.notify()
        for event in events:
            self.model.update(event)
            if self.buzzer is not None:
                self.buzzer.handle_event(event)

    def tick(self) -> None:
        t = self.now()
        if self.link is not None:
            if self.link.connected:
                self.hub_seen = True
                self.model.status.hub = "ok"
            elif self.hub_seen or self._mono() - self.started_at >= HUB_CONNECT_GRACE:
                self.model.status.hub = "lost"
            # else: still "connecting" (no false HUB LOST in the first frames after a start)
        events = self.table.advance(t)
        if events:
            self._commit({"type": "tick", "t": t}, events)
        if self.display is not None:
            self.display.show(self.model.screen(t, self.table.clock_state(), self.table.now))
        if self.link is not None:
            self._publish_state()

    def _publish_state(self) -> None:
        """The retained ``state`` snapshot for late joiners (the dashboard): published when
        something a viewer sees changes, and every STATE_REFRESH seconds for the clock."""
        assert self.link is not None
        connected, mono = self.link.connected, self._mono()
        if not self._state_changed and connected == self._state_link and \
                mono - self._state_sent < STATE_REFRESH:
            return  # nothing a viewer sees can have changed: no snapshot built
        self._state_changed, self._state_link = False, connected
        # The snapshot describes the table at its core's time, its last input's moment (a
        # press is stamped when the finger moved, seconds back for a hold; the clock's ticks
        # are no input): ``ts`` says when that was, so that a viewer reading the clock's time
        # left against ``ts`` is right.
        behind = max(0.0, self.now() - self.table.now)
        state = TableState.of(self.table.state(), hub_link="ok" if connected else "lost",
                              last_seq=self.outbox.last_seq,
                              ts_ms=int((time.time() - behind) * 1000))
        shown = state.shown()
        if shown != self._state_shown or mono - self._state_sent >= STATE_REFRESH:
            self._state_shown, self._state_sent = shown, mono
            self.link.publish_state(state.to_json())

    def _dispatch(self, item: object) -> None:
        match item:
            case ShoeEvent(event=event, t=t):
                for inp in self.translator.translate(event, t):
                    self.feed(inp)
            case NfcRead(read=read, t=t):
                from hardware.nfc_reader import TagRead
                from tablectl.shoe_to_core import tag_read

                if isinstance(read, TagRead):
                    self.feed(tag_read(read.uid, read.text, t))
            case ButtonPressed(gesture=gesture) if gesture.kind == "held":
                if self.buzzer is not None:
                    self.buzzer.play("held")
            case ButtonPressed(gesture=gesture):
                self.feed(Gesture(gesture.kind, t=gesture.t))
            case Reload():
                self.reload()
            case VenueClockFollowed(reading=reading, retained=retained):
                self._follow_venue_clock(reading, retained)
            case FloorCommand():
                self._dispatch_command(item)

    def _follow_venue_clock(self, reading: VenueClockReading, retained: bool) -> None:
        """The hub's clock (checked against the contract by the link), the authority: follow
        it, as of when the hub took it (a retained state may be older still: it starts a clock
        the table does not have, and the next fresh one corrects it)."""
        self.venue_clock_readings += 1
        age = self._reading_age(reading.at)
        if age is None:
            return
        structure = reading.structure
        if structure is None:  # the hub stopped the clock
            if self.table.clock is not None and not retained:
                self.feed(ClockCommand("stop", t=self.now()))
            return
        if retained and self.table.clock is not None and \
                self.table.clock.structure.name == structure:
            return
        try:  # the core's own check too: a name, a finite and bounded reading
            item = venue_clock_input(reading, age, self.now())
        except ValueError as exc:
            self.out.write(f"[{self.config.table}] venue clock refused: {exc}\n")
            return
        self.feed(item)

    def _reading_age(self, at: object) -> float | None:
        """How old a venue clock reading taken at ``at`` (the hub's wall clock) is, in seconds;
        None when it is older than one already followed (the broker's queue after a cut):
        following it would set the clock back. A reading without ``at``, or
        from a hub whose wall clock is a minute or more from this table's (no NTP yet on a
        Pi without a battery clock), is taken as of now, as before readings said when."""
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
            return 0.0
        last = self._reading_at
        if last is not None and last - HUB_CLOCK_STEP < at < last:
            return None  # (the same moment again is a redelivery or a second publication)
        self._reading_at = float(at)
        age = self._wall() - at
        if abs(age) >= READING_CLOCKS_AGREE:
            return 0.0
        return max(0.0, age)

    def _command_from_link(self, command: Command) -> str | None:
        """On the link's worker thread: hand the command to the main loop and wait for it."""
        reply: list[str | None] = []
        done = threading.Event()
        self.queue.put(FloorCommand(command, reply, done))
        if not done.wait(5.0):
            return "the table did not answer in time"
        return reply[0]

    # ------------------------------------------------------------------ running
    def run(self) -> int:
        signal.signal(signal.SIGTERM, lambda *_: self.running.clear())
        signal.signal(signal.SIGHUP, lambda *_: self.queue.put(Reload()))
        with contextlib.suppress(KeyboardInterrupt):
            self.loop()
        self.stop()
        if FAILED.is_set():
            self.out.write(f"[{self.config.table}] a worker died, exiting so that systemd "
                           f"restarts the table: {'; '.join(failures)}\n")
            return EXIT_WORKER_DIED
        return 0

    def loop(self, until: Callable[[], bool] | None = None) -> None:
        next_tick = self._mono()
        last_ping = 0.0
        while self.running.is_set() and not FAILED.is_set() and not (until and until()):
            try:  # an item, or the next tick: the loop wakes for nothing else
                item = self.queue.get(timeout=max(0.0, next_tick - self._mono()))
            except queue.Empty:
                item = None
            if item is not None:
                self._dispatch(item)
            mono = self._mono()
            if mono >= next_tick:
                next_tick = max(next_tick + TICK, mono)  # no burst of ticks after a stall
                self.tick()
            watchdog = self.notifier.watchdog
            if watchdog and mono - last_ping >= watchdog:
                last_ping = mono
                hand = self.table.hand.number if self.table.hand else "-"
                self.notifier.send(f"WATCHDOG=1\nSTATUS=hand {hand}, {self.events} events")

    def _dispatch_command(self, item: FloorCommand) -> None:
        item.reply.append(self._apply_command_committed(item.command))
        item.done.set()
        if self.link is not None:
            self._publish_state()  # a floor command's effect shows at once, not at the tick

    def _apply_command_committed(self, command: Command) -> str | None:
        try:
            item = command_input(command, self.now())
        except ValueError as exc:
            return str(exc)
        if item is None:
            return f"{command.name} is handled by the link"
        seats = item.seats if isinstance(item, SeatsChange | Setup) else None
        past = self._past_house_size(seats or ())
        if past:
            return past  # a command from a tool that is not the hub (which checks it too)
        try:
            self._handle(item)
        except TableUsageError as exc:
            return str(exc)  # the floor's command was refused: the answer says why
        return None

    def _past_house_size(self, seats: Iterable[int]) -> str | None:
        """Why these seats cannot be this house's (a seat past its table size), or None."""
        rule = self.table.profile.rules["table_size"]
        size = int(rule.value)
        past = sorted(seat for seat in seats if seat > size)
        if not past:
            return None
        return (f"seat {', '.join(map(str, past))}: {self.table.profile.name} seats {size} a "
                f"table ({rule.source}); no seat past {size}")

    def reload(self) -> None:
        if self.config_path is None:
            return
        try:
            config = load_config(self.config_path)
        except ConfigError as exc:
            self.out.write(f"[{self.config.table}] reload refused, keeping the running "
                           f"configuration:\n{exc}\n")
            return
        changed = []
        if config.profile != self.config.profile:
            self.table.profile = load_profile(config.profile)
            changed.append("profile")
            self._state_changed = True  # the snapshot names the profile
        if config.deal_gap != self.config.deal_gap:
            self.table.config.deal_gap = config.deal_gap
            changed.append("deal_gap")
        if config.gesture_actions != self.config.gesture_actions:
            self.table.config.gestures = dict(config.gesture_actions)
            changed.append("button.actions")
        if config.volume != self.config.volume and hasattr(self.buzzer, "volume"):
            self.buzzer.volume = config.volume
            changed.append("buzzer.volume")
        needs_restart = [k for k in ("shoe_backend", "shoe_port", "mqtt_host", "mqtt_port",
                                     "display_backend", "button_pin", "table", "venue")
                         if getattr(config, k) != getattr(self.config, k)]
        self.config = config
        self.out.write(f"[{config.table}] reloaded: {', '.join(changed) or 'nothing changed'}"
                       + (f"; restart to apply {', '.join(needs_restart)}"
                          if needs_restart else "") + "\n")
        self.notifier.send("STATUS=configuration reloaded")

    def stop(self) -> None:
        self.notifier.send("STOPPING=1")
        self.stopped.set()
        if self.link is not None:
            self.link.stop()
        for name in ("shoe", "nfc", "simulated shoe"):
            if name in self.parts:
                self.parts[name].stop()
        if "simulated shoe folder" in self.parts:
            self.parts["simulated shoe folder"].cleanup()
        if "button" in self.parts:
            self.parts["button"].close()
        if "control" in self.parts:
            with contextlib.suppress(OSError):
                self.parts["control"].shutdown(socket.SHUT_RDWR)
            self.parts["control"].close()
        if self.buzzer is not None:
            self.buzzer.close()
        self.outbox.close()

    def summary(self) -> dict[str, Any]:
        return {"table": self.config.table, "events": self.events,
                "hand": self.table.hand.number if self.table.hand else None,
                "resumed_inputs": self.resumed}


def main_run(config_path: str, out: TextIO = sys.stdout) -> int:
    import faulthandler

    # SIGUSR1: every thread's stack on stderr (the journal), the daemon running on. A table
    # that takes nothing in while alive says where it waits (``kill -USR1``).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    config = load_config(config_path)
    daemon = Daemon(config, config_path=config_path, out=out).start()
    out.write(f"[{config.table}] running: {json.dumps(daemon.summary())}\n")
    out.flush()
    return daemon.run()
