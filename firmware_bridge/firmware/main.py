# Reference shoe firmware, MicroPython on an RP2040 (e.g. a Raspberry Pi Pico).
#
# Wiring (change the pin numbers below to match a build):
#   PN532 on I2C0: SDA GP4, SCL GP5 (the PN532's mode switches set to I2C)
#   exit sensor (reflective IR at the shoe's mouth, high = card face seen): GP14
#   stack sensor (reflective IR looking at the next card in the stack, high = face up): GP15
#   deck switch (microswitch closed by the deck's weight, to ground): GP16
# The host link is the USB CDC serial port (sys.stdin / sys.stdout), frames per PROTOCOL.md.
#
# Service mode: hold the board's BOOTSEL button during the first second after power-up (press
# it just after plugging in: held while plugging in, it starts the RP2040's USB bootloader
# instead). The shoe does not start, Ctrl-C works again, and mpremote can copy new files.

# First of all, Ctrl-C off: the host's frames are binary, and a byte 0x03 in them (an ACK for
# seq 3, a COBS code byte; the host sends one as soon as it opens the port) would raise
# KeyboardInterrupt on USB CDC stdin, even while the imports below run.
import micropython

micropython.kbd_intr(-1)

import select  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import machine  # noqa: E402
from pn532 import PN532, PN532Reader  # noqa: E402
from protocol import ShoeProtocol  # noqa: E402
from shoe import Shoe  # noqa: E402

FIRMWARE = "shoe-fw 1.2.0"
WATCHDOG_MS = 8000
CAPS = 1 | 2 | 4 | 8  # exit sensor, stack sensor, NDEF text, deck-check mode
SERVICE_WINDOW_MS = 1000
USB_CHUNK = 64  # bytes written at once, and only while the port can take them
OUT_LIMIT = 4096  # bytes waiting for a host that does not read; the protocol resends them


class Millis:
    """The protocol's milliseconds (ms:u32, PROTOCOL.md): a true 32-bit count. time.ticks_ms()
    wraps at 2**30 on 32-bit ports (12.4 days), not 2**32, so this count advances by
    ticks_diff at every turn of the loop (which must come within 2**29 ms: it comes within
    milliseconds)."""

    def __init__(self):
        self.last = time.ticks_ms()
        self.ms = self.last

    def now(self):
        ticks = time.ticks_ms()
        self.ms = (self.ms + time.ticks_diff(ticks, self.last)) & 0xFFFFFFFF
        self.last = ticks
        return self.ms


class Input:
    """A digital sensor; ok() is False while it reads a level it should never hold for long."""

    def __init__(self, pin_number, pull=None, active_high=True, stuck_ms=60000):
        self.pin = machine.Pin(pin_number, machine.Pin.IN, pull)
        self.active_high = active_high
        self.stuck_ms = stuck_ms
        self.since = time.ticks_ms()
        self.level = self.pin.value()

    def active(self):
        level = self.pin.value()
        now = time.ticks_ms()
        if level != self.level:
            self.level = level
            self.since = now
        elif time.ticks_diff(now, self.since) > self.stuck_ms:
            # ticks_diff is right only within 2**29 ms: a level held longer keeps its age just
            # past stuck_ms (a week without an edge must not read as a fresh one)
            self.since = time.ticks_add(now, -self.stuck_ms - 1)
        return bool(level) == self.active_high

    def ok(self):
        self.active()
        # A reflective sensor that sees "face" for a minute is blocked or broken.
        return not (self.active() and time.ticks_diff(time.ticks_ms(), self.since) > self.stuck_ms)


class ExitSensor(Input):
    def face_up(self):
        return self.active()


class StackSensor(Input):
    """Latches what it saw of the next card when the previous one left the mouth."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.latched = False

    def latch(self):
        self.latched = self.active()

    def boxed(self):
        value = self.latched
        self.latch()
        return value


class DeckSwitch(Input):
    def present(self):
        # Debounce: a level must hold 50 ms.
        level = self.active()
        if time.ticks_diff(time.ticks_ms(), self.since) < 50:
            return getattr(self, "stable", level)
        self.stable = level
        return level


def boot_id():
    seed = machine.unique_id() + struct.pack(">I", time.ticks_us())
    value = 0
    for byte in seed:
        value = (value * 131 + byte) & 0xFFFFFFFF
    return value


def service_mode():
    """BOOTSEL held during the first second after power-up."""
    try:
        import rp2
    except ImportError:  # not an RP2040: no button to ask
        return False
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < SERVICE_WINDOW_MS:
        if rp2.bootsel_button():
            return True
        time.sleep_ms(10)
    return False


class UsbOut:
    """The USB serial port's writing side, never blocking the loop: MicroPython's USB CDC
    write waits (up to 500 ms a call on rp2) for a host that holds the port open and does not
    read, so bytes go out in small pieces while poll says the port takes them; past OUT_LIMIT
    waiting they are dropped (the protocol sends its frames again; a cut frame is noise the
    host skips)."""

    def __init__(self, stream):
        self.stream = stream
        self.poller = select.poll()
        self.poller.register(stream, select.POLLOUT)
        self.waiting = bytearray()

    def write(self, data):
        self.waiting.extend(data)
        if len(self.waiting) > OUT_LIMIT:
            self.waiting = bytearray()
            return
        while self.waiting and self.poller.poll(0):
            chunk = bytes(self.waiting[:USB_CHUNK])
            try:
                sent = self.stream.buffer.write(chunk)
            except OSError:  # host gone mid-write: the protocol sends it again
                self.waiting = bytearray()
                return
            if not sent:
                return
            self.waiting = self.waiting[sent:]


def main():
    # Ctrl-C is data from here on (see the top), already while waiting for BOOTSEL.
    if service_mode():
        micropython.kbd_intr(3)
        print("shoe: service mode (BOOTSEL held at power-up): not started")
        return
    clock = Millis()
    i2c = machine.I2C(0, sda=machine.Pin(4), scl=machine.Pin(5), freq=400000)
    now = clock.now()
    reader = PN532Reader(PN532(i2c, time), now)  # it configures the PN532 on its first turn
    exit_sensor = ExitSensor(14)
    stack_sensor = StackSensor(15)
    deck = DeckSwitch(16, machine.Pin.PULL_UP, active_high=False)
    shoe_id = "".join("%02x" % b for b in machine.unique_id())
    protocol = ShoeProtocol(boot_id(), FIRMWARE, shoe_id, CAPS, now)
    shoe = Shoe(protocol, reader, exit_sensor, stack_sensor, deck, now)
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    read_byte = sys.stdin.buffer.read
    out = UsbOut(sys.stdout)
    # The watchdog resets the board if the loop stops turning, or if every turn has failed
    # for WATCHDOG_MS: Shoe.turn reports a failing turn to the host and says it was unhealthy.
    watchdog = machine.WDT(timeout=WATCHDOG_MS)
    while True:
        now = clock.now()
        incoming = bytearray()
        while poller.poll(0) and len(incoming) < 512:
            incoming.extend(read_byte(1))
        data, healthy = shoe.turn(now, bytes(incoming))
        if data or out.waiting:
            out.write(data)
        if healthy:
            watchdog.feed()
        time.sleep_ms(2)


try:
    main()
except Exception as exc:  # a bug outside the guarded turn: back to a clean boot, not the REPL
    sys.print_exception(exc)
    time.sleep_ms(100)
    machine.reset()
