# The shoe on the board: its pins, the USB serial port, the watchdog and the loop. main.py,
# the file the board runs at boot, turns Ctrl-C off and runs this module, which mpy-cross
# compiles like the others (a module loaded from an .mpy keeps less of the heap than one the
# board compiles from source at each boot).
#
# Wiring (change the pin numbers below to match a build):
#   PN532 on I2C0: SDA GP4, SCL GP5 (the PN532's mode switches set to I2C); its RSTPDN
#   (the breakout's RST or RSTPDN pad) to GP6: the firmware resets a PN532 that has failed
#   exit sensor (reflective IR at the shoe's mouth, high = card face seen): GP14
#   stack sensor (reflective IR looking at the next card in the stack, high = face up): GP15
#   deck switch (microswitch closed by the deck's weight, to ground): GP16
# The host link is the USB CDC serial port (sys.stdin / sys.stdout), frames per PROTOCOL.md.
#
# Service mode: hold the board's BOOTSEL button during the first second after power-up (press
# it just after plugging in: held while plugging in, it starts the RP2040's USB bootloader
# instead). The shoe does not start, Ctrl-C works again, and mpremote can copy new files.

import select
import struct
import sys
import time

import machine
import micropython
from pn532 import PN532, PN532Reader
from protocol import ShoeProtocol
from shoe import Shoe

FIRMWARE = "shoe-fw 1.2.0"
WATCHDOG_MS = 8000
CAPS = 1 | 2 | 4 | 8  # exit sensor, stack sensor, NDEF text, deck-check mode
SERVICE_WINDOW_MS = 1000
# The USB serial port's backlog: bytes waiting for a host that does not read, preallocated at
# boot (while the heap is whole) and never grown; a frame that does not fit is not taken, and
# the protocol sends it again in its turn. The protocol's queue holds every frame until it is
# acknowledged, so the backlog only keeps the port busy (64 bytes go a turn): 1 KiB, four
# frames of the longest, is 16 turns' worth.
OUT_BYTES = 1024
TURN_OUT_BYTES = 64  # written a turn at most (one byte a write: see UsbOut)
IN_BYTES = 512  # read from the host a turn at most
I2C_ID, SDA_PIN, SCL_PIN, RSTPDN_PIN = 0, 4, 5, 6  # the PN532's bus and its reset line
BUS_CLEAR_US = 5  # half an SCL period of the bus clear: 100 kHz, the standard mode's

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


def _ready(poller):
    # ipoll, not poll: poll() builds a list a call, ipoll() allocates nothing
    for _ in poller.ipoll(0):
        return True
    return False


class UsbOut:
    """The USB serial port's writing side: a ring of OUT_BYTES, preallocated, that the protocol
    puts whole frames into (its sink) and that goes out a byte at a time while poll says the
    port takes one. MicroPython's USB CDC write (shared/tinyusb/mp_usbd_cdc.c,
    mp_usbd_cdc_tx_strn) waits up to MICROPY_HW_USB_CDC_TX_TIMEOUT (500 ms on rp2) while a
    piece of up to 64 bytes is larger than the room in its 256-byte FIFO, and POLLOUT promises
    only one byte of room: a byte is the only write that never waits for a host that holds the
    port open and does not read."""

    def __init__(self, stream, size=OUT_BYTES):
        self.write = stream.buffer.write
        self.poller = select.poll()
        self.poller.register(stream, select.POLLOUT)
        self.ring = bytearray(size)
        self.size = size
        self.head = 0  # the next byte to write
        self.count = 0  # bytes waiting
        self.byte = bytearray(1)
        self.refused = 0  # frames not taken (full), since boot

    def room(self):
        return self.size - self.count

    def put(self, data):
        """All of ``data`` into the ring, or none of it (False)."""
        n = len(data)
        if n > self.size - self.count:
            self.refused += 1
            return False
        tail = self.head + self.count
        if tail >= self.size:
            tail -= self.size
        first = self.size - tail
        if n <= first:
            self.ring[tail:tail + n] = data
        else:
            part = memoryview(data)
            self.ring[tail:self.size] = part[:first]
            self.ring[0:n - first] = part[first:]
        self.count += n
        return True

    def pump(self, budget=TURN_OUT_BYTES):
        """Up to ``budget`` bytes out, never waiting."""
        byte = self.byte
        while self.count and budget and _ready(self.poller):
            byte[0] = self.ring[self.head]
            try:
                sent = self.write(byte)
            except OSError:  # host gone mid-write: the protocol sends it all again
                self.clear()
                return
            if not sent:
                return
            self.head += 1
            if self.head == self.size:
                self.head = 0
            self.count -= 1
            budget -= 1

    def clear(self):
        self.head = 0
        self.count = 0


class UsbIn:
    """The USB serial port's reading side, into a buffer preallocated at boot."""

    def __init__(self, stream, size=IN_BYTES):
        self.readinto = stream.buffer.readinto
        self.poller = select.poll()
        self.poller.register(stream, select.POLLIN)
        self.buffer = bytearray(size)
        self.view = memoryview(self.buffer)
        self.byte = bytearray(1)

    def read(self):
        """What the host sent since the last turn (a view of the buffer, up to its size)."""
        n = 0
        byte = self.byte
        while n < len(self.buffer) and _ready(self.poller):
            self.readinto(byte)
            self.buffer[n] = byte[0]
            n += 1
        return self.view[:n] if n else b""


class ReaderLines:
    """What the PN532 driver can do to the chip beyond its bus (pn532.PN532Reader's lines):
    drive its reset line, and clear a bus a device holds."""

    def __init__(self):
        self.rstpdn = machine.Pin(RSTPDN_PIN, machine.Pin.OUT, value=1)  # high: running

    def i2c(self):
        return machine.I2C(I2C_ID, sda=machine.Pin(SDA_PIN), scl=machine.Pin(SCL_PIN),
                           freq=400000)

    def reset(self, low):
        self.rstpdn.value(0 if low else 1)

    def clear_bus(self):
        """The I2C specification's bus clear (UM10204 §3.1.16): the pins taken from the I2C
        peripheral, nine clocks on SCL (a device holding SDA low lets it go within them), a
        STOP; then the peripheral set up again, which is returned."""
        sda = machine.Pin(SDA_PIN, machine.Pin.OPEN_DRAIN, value=1)
        scl = machine.Pin(SCL_PIN, machine.Pin.OPEN_DRAIN, value=1)
        for _ in range(9):
            scl.value(0)
            time.sleep_us(BUS_CLEAR_US)
            scl.value(1)
            time.sleep_us(BUS_CLEAR_US)
        scl.value(0)
        sda.value(0)
        time.sleep_us(BUS_CLEAR_US)
        scl.value(1)
        time.sleep_us(BUS_CLEAR_US)
        sda.value(1)  # SDA rising while SCL is high: the STOP
        time.sleep_us(BUS_CLEAR_US)
        return self.i2c()


class Firmware:
    """The shoe on the board: what main() sets up, and one turn of its loop."""

    def __init__(self):
        self.clock = Millis()
        lines = ReaderLines()
        now = self.clock.now()
        # It clears the bus, resets the PN532 and configures it on its first turns.
        reader = PN532Reader(PN532(lines.i2c(), time), now, lines)
        exit_sensor = ExitSensor(14)
        stack_sensor = StackSensor(15)
        deck = DeckSwitch(16, machine.Pin.PULL_UP, active_high=False)
        shoe_id = "".join("%02x" % b for b in machine.unique_id())
        self.protocol = ShoeProtocol(boot_id(), FIRMWARE, shoe_id, CAPS, now)
        self.usb_in = UsbIn(sys.stdin)
        self.usb_out = UsbOut(sys.stdout)
        self.protocol.sink = self.usb_out
        self.usb_out.put(self.protocol.poll(now))  # the HELLO written before the sink was set
        self.shoe = Shoe(self.protocol, reader, exit_sensor, stack_sensor, deck, now)
        self.port_failures = 0
        # The watchdog resets the board if the loop stops turning, or if every turn has failed
        # for WATCHDOG_MS: Shoe.turn reports a failing turn to the host and says it was
        # unhealthy.
        self.watchdog = machine.WDT(timeout=WATCHDOG_MS)

    def turn(self):
        now = self.clock.now()
        try:
            incoming = self.usb_in.read()
            port_ok = True
        except Exception:  # nothing of the port may stop the loop (the watchdog decides)
            incoming = b""
            port_ok = False
        data, healthy = self.shoe.turn(now, incoming)
        try:
            if data:  # only what was written before the sink was set
                self.usb_out.put(data)
            self.usb_out.pump()
        except Exception:
            self.usb_out.clear()  # the protocol sends its frames again
            port_ok = False
        if not port_ok:
            self.port_failures += 1
        if healthy and port_ok:
            self.watchdog.feed()


def main():
    # Ctrl-C is data from here on (see the top), already while waiting for BOOTSEL.
    if service_mode():
        micropython.kbd_intr(3)
        print("shoe: service mode (BOOTSEL held at power-up): not started")
        return
    firmware = Firmware()
    while True:
        firmware.turn()
        time.sleep_ms(2)


def run():
    try:
        main()
    except Exception as exc:  # a bug outside the guarded turn: back to a clean boot, not the REPL
        sys.print_exception(exc)
        time.sleep_ms(100)
        machine.reset()
