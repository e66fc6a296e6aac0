# Reference shoe firmware, MicroPython on an RP2040 (e.g. a Raspberry Pi Pico).
#
# Wiring (change the pin numbers below to match a build):
#   PN532 on I2C0: SDA GP4, SCL GP5 (the PN532's mode switches set to I2C)
#   exit sensor (reflective IR at the shoe's mouth, high = card face seen): GP14
#   stack sensor (reflective IR looking at the next card in the stack, high = face up): GP15
#   deck switch (microswitch closed by the deck's weight, to ground): GP16
# The host link is the USB CDC serial port (sys.stdin / sys.stdout), frames per PROTOCOL.md.

import select
import struct
import sys
import time

import machine
from pn532 import PN532, PN532Reader
from protocol import ShoeProtocol
from shoe import Shoe

FIRMWARE = "shoe-fw 1.1.0"
WATCHDOG_MS = 8000
CAPS = 1 | 2 | 4 | 8  # exit sensor, stack sensor, NDEF text, deck-check mode


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
        if level != self.level:
            self.level = level
            self.since = time.ticks_ms()
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


def main():
    i2c = machine.I2C(0, sda=machine.Pin(4), scl=machine.Pin(5), freq=400000)
    pn532 = PN532(i2c, time.sleep_ms, time.ticks_ms)
    try:
        pn532.configure()
    except Exception:  # the reader reports itself as not ok; the shoe still talks to the host
        pass
    reader = PN532Reader(pn532)
    exit_sensor = ExitSensor(14)
    stack_sensor = StackSensor(15)
    deck = DeckSwitch(16, machine.Pin.PULL_UP, active_high=False)
    now = time.ticks_ms()
    shoe_id = "".join(f"{b:02x}" for b in machine.unique_id())
    protocol = ShoeProtocol(boot_id(), FIRMWARE, shoe_id, CAPS, now)
    shoe = Shoe(protocol, reader, exit_sensor, stack_sensor, deck, now)
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    out = sys.stdout.buffer
    # The watchdog resets the board if the loop stops turning, or if every turn has failed
    # for WATCHDOG_MS: Shoe.turn reports a failing turn to the host and says it was unhealthy.
    watchdog = machine.WDT(timeout=WATCHDOG_MS)
    while True:
        now = time.ticks_ms()
        incoming = bytearray()
        while poller.poll(0) and len(incoming) < 512:
            incoming.extend(sys.stdin.buffer.read(1))
        data, healthy = shoe.turn(now, bytes(incoming))
        if data:
            try:
                out.write(data)
            except OSError:  # host gone mid-write: the protocol sends it again
                pass
        if healthy:
            watchdog.feed()
        time.sleep_ms(2)


main()
