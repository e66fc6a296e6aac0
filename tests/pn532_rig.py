"""The shoe firmware's PN532 driver on a simulated I2C bus with time in the test's hands: a
board's clock (``ticks_ms`` wraps at 2**30, as on 32-bit MicroPython ports) and a bus whose
transfers take their time at 400 kHz, so a chip's delays are met as on a board."""

from __future__ import annotations

from simulators.pn532 import Card, SimulatedPN532, SimulatedPN532I2C

PERIOD = 1 << 30
BUS_MS_PER_BYTE = 0.0225  # 9 bits at 400 kHz


class BoardClock:
    """time.ticks_ms / ticks_diff / sleep_ms as MicroPython has them on an RP2040."""

    def __init__(self, start_ms: float = 0.0) -> None:
        self.ms = float(start_ms)

    def ticks_ms(self) -> int:
        return int(self.ms) % PERIOD

    @staticmethod
    def ticks_diff(a: int, b: int) -> int:
        return ((a - b + PERIOD // 2) % PERIOD) - PERIOD // 2

    def sleep_ms(self, ms: int) -> None:
        self.ms += ms


class TimedBus(SimulatedPN532I2C):
    """The simulated PN532's I2C bus; each transfer moves the board's clock on. ``corrupt``
    turns one bit of the next responses read (a glitch on the wires)."""

    def __init__(self, chip: SimulatedPN532, clock: BoardClock) -> None:
        super().__init__(chip)
        self.clock = clock
        self.corrupt = 0
        self.hide_ready = 0  # the next status reads say "not ready" whatever the chip has
        self.gone = False  # the reader unplugged or dead: no device acknowledges
        self.refuse = 0  # the next transfers refused by the bus (a glitch on the wires)

    def _refused(self) -> bool:
        if self.refuse:
            self.refuse -= 1
            return True
        return self.gone

    def writeto(self, address: int, data: bytes, stop: bool = True) -> int:
        self.clock.ms += BUS_MS_PER_BYTE * (len(data) + 1)
        if self._refused():
            raise OSError(5, "no device acknowledged the address")
        return super().writeto(address, data, stop)

    def readfrom(self, address: int, count: int, stop: bool = True) -> bytes:
        self.clock.ms += BUS_MS_PER_BYTE * (count + 1)
        if self._refused():
            raise OSError(5, "no device acknowledged the address")
        if count == 1 and self.hide_ready:
            self.hide_ready -= 1
            return b"\x00"
        data = super().readfrom(address, count, stop)
        if self.corrupt and count > 16 and data[:1] == b"\x01":
            self.corrupt -= 1
            data = data[:8] + bytes((data[8] ^ 0x10,)) + data[9:]
        return data


class RigLines:
    """The board's lines to the chip, as main.py drives them: RSTPDN, and SCL and SDA by hand
    for a bus clear (nine clocks, then a STOP), the I2C bus set up again after it."""

    def __init__(self, bus: TimedBus) -> None:
        self.bus = bus
        self.pulses = 0

    def reset(self, low: bool) -> None:
        self.pulses += 1 if low else 0
        self.bus.chip.rstpdn(0 if low else 1)

    def clear_bus(self) -> TimedBus:
        line = self.bus.line
        for _ in range(9):
            line("scl", 0)
            line("scl", 1)
        line("scl", 0)
        line("sda", 0)
        line("scl", 1)
        line("sda", 1)
        return self.bus


class ReaderRig:
    """A simulated PN532 (its clock the board's) on the bus, and the firmware's reader;
    ``lines=True`` wires RSTPDN and lets the reader clear the bus (main.py's ReaderLines)."""

    def __init__(self, start_ms: float = 0.0, lines: bool = False,
                 **chip_options: float | bool) -> None:
        from firmware_bridge.firmware.pn532 import PN532, PN532Reader

        self.clock = BoardClock(start_ms)
        self.chip = SimulatedPN532(lambda: self.clock.ms, **chip_options)
        self.bus = TimedBus(self.chip, self.clock)
        self.pn532 = PN532(self.bus, self.clock)
        self.lines = RigLines(self.bus) if lines else None
        self.reader = PN532Reader(self.pn532, self.now(), self.lines)

    def now(self) -> int:
        """The firmware's 32-bit milliseconds."""
        return int(self.clock.ms) & 0xFFFFFFFF

    def turns(self, count: int = 1, step_ms: int = 2) -> list[tuple[bytes, str | None]]:
        """``count`` turns of the shoe's loop; the reads they gave."""
        out = []
        for _ in range(count):
            self.clock.sleep_ms(step_ms)
            read = self.reader.read(self.now())
            if read is not None:
                out.append(read)
        return out

    def pages_read(self) -> list[int]:
        """The page of every Type 2 READ the reader sent (InDataExchange, Tg 1, 30 page), in
        order."""
        return [w[9] for w in self.bus.writes if w[5:9] == b"\xd4\x40\x01\x30"]

    def read(self, card: Card, turns: int = 10) -> tuple[bytes, str | None]:
        """The first read of ``card`` brought into the field."""
        self.chip.present(card)
        for _ in range(turns):
            reads = self.turns()
            for read in reads:
                if read[0] == card.uid:
                    self.chip.remove()
                    return read
        raise AssertionError(f"{card.uid.hex()} not read in {turns} turns")


class _NfcpyFrontend:
    """What nfcpy's Type 2 Tag code asks of its contactless frontend (exchange, and sense
    after a NAK), answered by a simulated tag as a PN532 passes its answers on: the CRC
    checked and stripped, a 4-bit NAK as one byte."""

    def __init__(self, card: Card) -> None:
        self.card = card

    def exchange(self, data: bytes, timeout: float) -> bytearray:
        import nfc.clf

        answer = self.card.respond(bytes(data))
        if answer is None:
            raise nfc.clf.TimeoutError("no answer")
        return bytearray(answer if len(answer) == 1 else answer[:-2])

    def sense(self, *targets: object, **options: object) -> object:
        return targets[0] if targets else None


def nfcpy_label(card: Card) -> str:
    """A tag's label as nfcpy reads it, not through a PN532 but with nfcpy's own Type 2 Tag
    code (nfc.tag.tt2: the Capability Container, the TLVs, the bytes its Lock and Memory
    Control TLVs take out) and ndeflib's records, taken as the table's NFC reader takes them
    (hardware.nfc_reader.first_text): a reference the project did not write, fast enough
    for a property test."""
    import nfc.clf
    import nfc.tag.tt2

    from hardware.nfc_reader import first_text

    target = nfc.clf.RemoteTarget("106A")
    target.sens_res = card.sens_res
    target.sel_res = bytes((card.sel_res,))
    target.sdd_res = card.uid
    return first_text(nfc.tag.tt2.Type2Tag(_NfcpyFrontend(card), target))
