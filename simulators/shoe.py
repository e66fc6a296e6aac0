"""The simulated shoe: the reference firmware's own code (``firmware_bridge/firmware``) driving
simulated reader and sensors, speaking the real protocol over a pty pair.

The host opens ``shoe.port`` (a stable symlink, like the udev name ``/dev/shoe``) with pyserial
exactly as it opens a real shoe. A test or the demo scripts the physical world::

    shoe = SimulatedShoe(tmp_path / "shoe")
    shoe.start()
    shoe.insert_deck()
    shoe.draw("R1:As")                       # NDEF-labelled card, dealt face down
    shoe.draw(uid=bytes.fromhex("04a1b2c3d4e5f6"), face_up=True)
    shoe.unplug(); shoe.draw("R1:Ks"); shoe.replug()   # the shoe keeps its queue meanwhile
    shoe.send_garbage(b"\\x13\\x37junk")
    shoe.stop()

The shoe's clock is this host's monotonic clock in milliseconds, so the rhythm of dealing is
what the script makes it; a dealer's script that acts it out (``play_script``, and
``tablectl.sim_venue``'s player) holds that clock at the moment of its next action on the shoe
(``hold``) until it has done it, so that every card is stamped at its moment in the script,
however late a busy machine lets the player act.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import threading
import time
import tty
from collections import deque
from collections.abc import Callable
from pathlib import Path

from firmware_bridge.firmware.protocol import ShoeProtocol
from firmware_bridge.firmware.shoe import Shoe
from firmware_bridge.messages import clock_zero_ms

CAPS = 1 | 2 | 4 | 8
# With nothing to read, send or time closely, the loop turns this often (s), unless the host's
# bytes or an action on the shoe wake it: dozens of idle simulated shoes, turning every 2 ms
# as a board does, took a tenth of the test machine's CPU. Its timers (the heartbeat each
# second, a frame sent again after 250 ms) come at most this late.
IDLE_TURN_S = 0.02


def uid_for(label: str) -> bytes:
    """A stable 7-byte NTAG-style UID for a card label, so simulated decks are repeatable."""
    return b"\x04" + hashlib.sha256(label.encode()).digest()[:6]


class _Reader:
    def __init__(self) -> None:
        self.queue: deque[tuple[bytes, str]] = deque()
        self.healthy = True
        self.crashes = 0  # reads that raise, as a driver bug would (the firmware must survive)

    def read(self, now_ms: int) -> tuple[bytes, str] | None:
        if self.crashes and self.queue:
            self.crashes -= 1
            raise RuntimeError("simulated driver bug")
        return self.queue.popleft() if self.queue and self.healthy else None

    def ok(self) -> bool:
        return self.healthy


class _Sensor:
    def __init__(self) -> None:
        self.value = False
        self.healthy = True

    def face_up(self) -> bool:
        return self.value

    def boxed(self) -> bool:
        return self.value

    def present(self) -> bool:
        return self.value

    def ok(self) -> bool:
        return self.healthy


class SimulatedShoe:
    def __init__(self, port: Path | str, *, shoe_id: str = "sim-shoe", boot_id: int = 1,
                 firmware: str = "shoe-fw 1.2.0 (simulated)", step_s: float = 0.002) -> None:
        self.port = Path(port)
        self.step_s = step_s
        # The moment (ms) of the script's next action on the shoe: the firmware's clock, which
        # never runs backwards, does not pass it (``hold``). None: the clock is the host's.
        self._hold_ms: int | None = None
        self._floor_ms = 0  # the moment of the last timed action: the clock's next reading
        self._lock = threading.Lock()
        self._reader = _Reader()
        self._exit = _Sensor()
        self._stack = _Sensor()
        self._deck = _Sensor()
        self._pending: deque[tuple[bytes, str, bool, bool, int, int | None]] = deque()
        self._last_turn_ms = 0
        self.boot_id = boot_id
        self.firmware = firmware
        self.shoe_id = shoe_id
        self._boot()
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._running = False
        self._garbage: deque[bytes] = deque()
        self._wake_read, self._wake_write = os.pipe()  # an action on the shoe: turn now
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.deck_label = "R1"  # the deck whose labels scripted cards without a deck carry

    def _boot(self) -> None:
        now = self._now()
        self.protocol = ShoeProtocol(self.boot_id, self.firmware, self.shoe_id, CAPS, now)
        self.shoe = Shoe(self.protocol, self._reader, self._exit, self._stack, self._deck, now)
        self.unhealthy_turns = 0

    def power_cycle(self) -> None:
        """The shoe loses power and boots again: a new boot id, its unsent reads gone."""
        with self._lock:
            self.boot_id += 1
            self._boot()
        self._wake()

    def crash_reads(self, count: int = 1) -> None:
        """The next ``count`` reads raise inside the firmware's loop (a driver bug)."""
        with self._lock:
            self._reader.crashes += count
        self._wake()

    def _world_ms(self) -> int:
        real = int(time.monotonic() * 1000)
        return real if self._hold_ms is None else min(real, self._hold_ms)

    def hold(self, at: float | None) -> None:
        """The script's next action on the shoe is due at ``at`` (``time.monotonic()``), or
        at the latest then: until an action at that moment or later is done, the shoe's clock
        stops there (its cards, the deck's switch and its faults are stamped by that clock).
        A player that a busy machine holds up past its next card then still has it stamped
        at its moment in the script, instead of when the player got round to it: the core
        judges the dealing's rhythm by those stamps. The shoe's timers (heartbeat,
        retransmission) wait meanwhile, as long as the player is late and no longer. None:
        the clock runs with the host's again (the script is done)."""
        with self._lock:
            self._hold_ms = None if at is None else int(at * 1000)
        self._wake()

    def hold_here(self) -> float:
        """Stop the shoe's clock where it stands (``hold``) and say at what moment
        (``time.monotonic()``): an action done ``at`` that moment is stamped exactly then,
        however long the caller is kept from doing it. (A moment read from the host's clock
        first can already be behind the shoe's, which never runs backwards.)"""
        with self._lock:
            here = max(self._last_turn_ms, self._world_ms())
            self._hold_ms = here
            return here / 1000.0

    def _now(self) -> int:
        # Never before the last turn's reading, which a timed action may have moved ahead.
        return max(self._last_turn_ms, self._world_ms()) & 0xFFFFFFFF

    def clock_offset(self) -> float:
        """Host monotonic seconds at this shoe's millisecond 0 (its clock is the host's, cut to
        the firmware's 32 bits; held, it reads a moment of the host's that has passed): a host
        on the same machine knows the mapping exactly."""
        return clock_zero_ms(int(time.monotonic() * 1000)) / 1000.0

    # -- the cable
    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        tmp = self.port.with_name(self.port.name + ".new")
        if tmp.exists() or tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(self.port)
        self._master, self._slave = master, slave

    def _unplug(self) -> None:
        if self.port.is_symlink():
            self.port.unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None

    def start(self) -> SimulatedShoe:
        self._plug()
        self._running = True
        self._thread = threading.Thread(target=self._run, name="sim-shoe", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._running = False
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self._unplug()
        if self._thread is None or not self._thread.is_alive():
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _wake(self) -> None:
        """The firmware's loop turns now, not at its next idle turn."""
        with contextlib.suppress(OSError):  # full: it wakes already; closed: it has stopped
            os.write(self._wake_write, b"!")

    def unplug(self) -> None:
        """The USB cable is pulled: the port disappears; the shoe (on its own power) goes on."""
        with self._lock:
            self._unplug()

    def replug(self) -> None:
        with self._lock:
            self._plug()
            self.protocol.link_up(self._now())
        self._wake()

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def describe(self) -> str:
        """For a failure's message: cards drawn and not yet read, frames the host has not
        acknowledged (and those dropped), the cable, the clock's hold. (A firmware thread stuck
        holding the lock must not hang the failure that asks.)"""
        if not self._lock.acquire(timeout=1):
            return "its lock held for over 1 s (its firmware thread stuck?)"
        try:
            return (f"{len(self._pending)} cards not read, {len(self.protocol.unacked)} frames "
                    f"unacknowledged ({self.protocol.dropped} dropped this boot), plugged "
                    f"{self.plugged}, hold {self._hold_ms}")
        finally:
            self._lock.release()

    @property
    def deck_present(self) -> bool:
        return self._deck.value

    def wait_seen(self, timeout: float = 2.0) -> bool:
        """Wait until the firmware has seen the deck switch as it is now (a quick out-and-in
        must not fall between two turns of its loop)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if self.shoe.deck_present == self._deck.value:
                    return True
            time.sleep(self.step_s)
        return False

    # -- the physical world
    def insert_deck(self, at: float | None = None) -> None:
        """The deck goes in; ``at`` its moment (``time.monotonic()``), as for ``draw``."""
        with self._lock:
            self._deck.value = True
            self._raise_floor(at)
        self._wake()

    def remove_deck(self, at: float | None = None) -> None:
        with self._lock:
            self._deck.value = False
            self._raise_floor(at)
        self._wake()

    def _raise_floor(self, at: float | None) -> None:
        if at is not None:
            self._floor_ms = max(self._floor_ms, int(at * 1000))

    def draw(self, label: str | None = None, *, uid: bytes | None = None, face_up: bool = False,
             boxed: bool = False, reads: int = 1, at: float | None = None) -> None:
        """A card leaves the shoe. ``label`` is its NDEF text (``R1:As``); ``uid`` its tag UID
        (derived from the label when not given); ``reads`` how often the antenna sees it;
        ``at`` the moment it leaves (``time.monotonic()``; now when not given): a dealer's
        script keeps its rhythm on a machine too busy to act each line on time."""
        if uid is None:
            if label is None:
                raise ValueError("a card needs a label or a uid")
            uid = uid_for(label)
        with self._lock:
            at_ms = None if at is None else int(at * 1000)
            self._pending.append((uid, label or "", face_up, boxed, reads, at_ms))
        self._wake()

    def set_reader_ok(self, ok: bool) -> None:
        with self._lock:
            self._reader.healthy = ok
        self._wake()

    def send_garbage(self, data: bytes) -> None:
        with self._lock:
            self._garbage.append(data)
        self._wake()

    def read_out(self, timeout: float = 5.0) -> bool:
        """Wait until the firmware has read every card drawn so far (one a loop turn): what
        happens next on the shoe (the deck out, the cable pulled) comes after them."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if not self._pending and not self._reader.queue:
                    return True
            time.sleep(0.002)
        return False

    def idle(self, timeout: float = 5.0) -> bool:
        """Wait until every card drawn so far has been read and acknowledged by the host."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if not self._pending and not self._reader.queue and not self.protocol.unacked:
                    return True
            time.sleep(0.005)
        return False

    # -- the firmware's main loop
    def _run(self) -> None:
        while self._running:
            with self._lock:
                real = self._world_ms()
                # The antenna's repeated reads of a card still passing it (``reads``) come at
                # the card's moment: the clock stands while they are read. (Run on, a thread
                # starved past SAME_CARD_MS between two of them made one card two reads.)
                passing = bool(self._reader.queue)
                moment = self._feed_reader(real)
                if not passing:
                    # The firmware's clock never runs backwards: a card fed late is read at
                    # its moment (the clock held there: see ``hold``), or at the last turn's
                    # if that was later still; a timed action ahead of the idle clock moves
                    # it on to its moment.
                    self._last_turn_ms = max(self._last_turn_ms, moment, self._floor_ms)
                now = self._last_turn_ms & 0xFFFFFFFF  # the firmware's 32-bit milliseconds
                data = b""
                if self._master is not None:
                    try:
                        data = os.read(self._master, 4096)
                    except (BlockingIOError, OSError):
                        data = b""
                out, healthy = self.shoe.turn(now, data)
                if not healthy:
                    self.unhealthy_turns += 1
                if self._master is not None:
                    while self._garbage:
                        out = self._garbage.popleft() + out
                    if out:
                        # If the host is not reading, the protocol retransmits later.
                        with contextlib.suppress(OSError):
                            os.write(self._master, out)
                # A board's turn (step_s) while there is work: bytes going out (a turn
                # writes a part of a long queue), cards to read, a label awaited.
                busy = bool(out or data or self._pending or self._reader.queue
                            or self.shoe.held is not None or self._garbage)
                master = self._master
            self._rest(self.step_s if busy else IDLE_TURN_S, master)

    def _rest(self, seconds: float, master: int | None) -> None:
        """Until the next turn: ``seconds``, or less when the host writes or the world acts."""
        if seconds <= self.step_s:
            time.sleep(seconds)
            return
        watched = [self._wake_read] if master is None else [self._wake_read, master]
        try:
            ready, _, _ = select.select(watched, [], [], seconds)
        except (OSError, ValueError):  # the cable pulled meanwhile: its descriptor closed
            time.sleep(self.step_s)
            return
        if self._wake_read in ready:
            with contextlib.suppress(OSError):
                os.read(self._wake_read, 4096)
        elif ready:
            time.sleep(self.step_s)  # the host's bytes: at a board's pace still

    def _feed_reader(self, real_ms: int) -> int:
        """One card per loop turn reaches the antenna, with its sensor readings. Returns the
        moment this turn reads the world at: a card's own when it was drawn ``at`` one (the
        firmware reads it then, not when a busy machine got round to it), else ``real_ms``."""
        if not self._pending or self._reader.queue:
            return real_ms
        uid, label, face_up, boxed, reads, at_ms = self._pending.popleft()
        self._exit.value = face_up
        self._stack.value = boxed
        for _ in range(reads):
            self._reader.queue.append((uid, label))
        if at_ms is None:
            return real_ms
        self._floor_ms = max(self._floor_ms, at_ms)
        return at_ms


# What a dealer's script does on the shoe itself; the rest is the button, or the floor's.
SHOE_LINES = frozenset({"card", "deck_in", "deck_out", "dealer", "shoe"})


def settle(shoe: SimulatedShoe, timeout: float = 10.0) -> None:
    """Before the dealer's hand goes to the button: the cards drawn so far have reached the
    host (read, sent, acknowledged). A dealer presses after the card is out, and the host hears
    a read within milliseconds; a busy machine can take longer than the script's gap, and the
    press must not overtake the card. (The moments the core sees stay the script's.)"""
    if shoe.plugged:
        shoe.idle(timeout)


def play_script(
    lines: list[dict[str, object]],
    shoe: SimulatedShoe,
    direct: Callable[[dict[str, object], float | None], None],
    *,
    scale: float = 1.0,
    stop: threading.Event | None = None,
) -> None:
    """Act out a dealer's script (replay-format lines) in real time, ``scale`` times its pace.

    Shoe lines become physical actions on the simulated shoe (cards drawn, the deck in and
    out, the cable pulled for ``shoe`` ``lost``); every other line (button, setup, seats,
    clock) is handed to ``direct`` at its moment, as the dealer's button or the hub would.
    The shoe's clock is held at the next shoe line's moment until it is done (``hold``): a
    player late on a busy machine still deals at the script's moments.
    """
    start = time.monotonic()
    times = [float(t) for line in lines if isinstance(t := line.get("t"), int | float)]
    first_t = times[0] if times else 0.0

    def due_of(line: dict[str, object]) -> float | None:
        t = line.get("t")
        return start + (float(t) - first_t) * scale if isinstance(t, int | float) else None

    shoe.hold(next_on_the_shoe(lines, 0, due_of))
    try:
        for index, line in enumerate(lines):
            due = due_of(line)
            while due is not None and (delay := due - time.monotonic()) > 0:
                if stop is not None and stop.wait(min(delay, 0.05)):
                    return
                if stop is None:
                    time.sleep(min(delay, 0.05))
            if line["type"] not in SHOE_LINES:
                settle(shoe)
            perform(line, shoe, direct, at=due)
            if line["type"] in SHOE_LINES:
                shoe.hold(next_on_the_shoe(lines, index + 1, due_of))
    finally:
        shoe.hold(None)


def next_on_the_shoe(lines: list[dict[str, object]], index: int,
                     due_of: Callable[[dict[str, object]], float | None]) -> float | None:
    """The moment of the first shoe line from ``index`` on, as ``due_of`` reckons it (a player
    that may put its lines off later passes the earliest it can be); None: none is timed."""
    for line in lines[index:]:
        if line["type"] in SHOE_LINES:
            return due_of(line)
    return None


def perform(line: dict[str, object], shoe: SimulatedShoe,
            direct: Callable[[dict[str, object], float | None], None], *,
            at: float | None = None) -> None:
    """One line of a dealer's script, done now: on the shoe, or handed to ``direct``; ``at``
    is its moment (``time.monotonic()``) when it is late."""
    kind = line["type"]
    if kind == "card":
        tag = line.get("tag")
        label = line.get("ndef")
        if label is None and isinstance(line.get("card"), str):
            label = f"{line.get('deck') or shoe.deck_label}:{line['card']}"
        shoe.draw(str(label) if label is not None else None,
                  uid=bytes.fromhex(str(tag)) if isinstance(tag, str) else None,
                  face_up=line.get("face") == "up", boxed=bool(line.get("boxed")), at=at)
    elif kind in ("deck_in", "deck_out", "shoe"):
        # The cards drawn before came out before: a late player's cards must not be overtaken
        # by the deck switch or the cable.
        shoe.read_out()
        _perform_on_the_shoe(line, shoe, at)
    elif kind == "dealer" and isinstance(line.get("dealer"), str):
        shoe.draw(f"dealer:{line['dealer']}", at=at)  # the dealer's badge, tapped on the shoe
    else:
        direct(line, at)


def _perform_on_the_shoe(line: dict[str, object], shoe: SimulatedShoe,
                        at: float | None) -> None:
    kind = line["type"]
    if kind == "deck_in":
        if isinstance(line.get("deck"), str):
            shoe.deck_label = str(line["deck"])
        if shoe.deck_present:
            shoe.remove_deck(at)
            shoe.wait_seen()
        shoe.insert_deck(at)
        shoe.wait_seen()
    elif kind == "deck_out":
        shoe.remove_deck(at)
        shoe.wait_seen()
    elif kind == "shoe":
        if line.get("state") == "lost":
            # The script pulls the cable after the reads before it reached the host (within
            # milliseconds at a table); a host starved on a busy machine must not hear of the
            # deck and those cards only after the cable (then no hand was on when it went).
            settle(shoe)
            shoe.unplug()
        elif line.get("state") == "ok" and not shoe.plugged:
            shoe.replug()
        elif line.get("state") == "fault":
            shoe.set_reader_ok(False)
        else:
            shoe.set_reader_ok(True)
