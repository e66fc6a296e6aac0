# The shoe's PN532 driver (MicroPython, I2C): the UID of the card in the field and its label
# (ndef_label.py). The bus and the clock are passed in (machine.I2C and the time module on the
# board; a simulated PN532 and a test clock under CPython).
#
# From NXP's PN532 User Manual (UM0701-02): every command frame is answered by an ACK frame,
# then by the response frame when the command is done; a host that sees no ACK within 15 ms
# sends the command again (§6.2.3); on I2C each read starts with a status byte, bit 0 set once
# the PN532 has something to give. InListPassiveTarget waits for a card for as long as
# RFConfiguration's MxRtyPassiveActivation says (0xFF, its default: for ever), so the reader
# never blocks the shoe's loop on it: it sends the command, and looks at the status byte on each
# turn of the loop. A listen still pending is aborted with an ACK frame before anything else is
# sent (§6.2.1.3, the abort mechanism). The manual does not say what becomes of an answer the
# PN532 had ready when the abort came, nor drivers agree on what the first command after an
# abort meets (libnfc issue 167: no ACK), so the driver assumes neither: after an abort it
# reads out whatever is ready, and while it waits for an ACK it throws away any other frame.

try:
    from ndef_label import read_label  # on the board the modules lie side by side
except ImportError:  # under CPython the firmware is a package
    from firmware_bridge.firmware.ndef_label import read_label

ADDRESS = 0x24
ACK = b"\x00\x00\xff\x00\xff\x00"
CMD_GET_FIRMWARE = 0x02
CMD_SAM_CONFIGURATION = 0x14
CMD_IN_DATA_EXCHANGE = 0x40
CMD_IN_LIST_PASSIVE_TARGET = 0x4A
NTAG_READ = 0x30

ACK_MS = 15  # "within these 15 ms" (§6.2.3); the command is sent once more after that
ANSWER_MS = 120  # above the PN532's own RF timeouts, so that a card gone answers "time out"
READ_SIZE = 80  # bytes read for a response: the longest answer we ask for but one (below)
# InListPassiveTarget, 106 kbps type A: NbTg, Tg, SENS_RES (2), SEL_RES, NFCID length, NFCID
# (4, 7 or 10) and, for an ISO/IEC 14443-4 card (a phone, a bank card), its ATS: up to 62 bytes
# seen (a 7-byte UID and a 62-byte ATS do not fit in 80), and the ATS's length byte allows more.
# On I2C a frame is read whole in one transfer (what is not read is lost), so that answer is
# read at the longest a normal frame can be: 0x00 0x00 0xFF, LEN, LCS, 255 bytes, DCS, 0x00.
TARGET_READ_SIZE = 262  # 6 ms at 400 kHz, once a card
LISTEN_MS = 1000  # a listen pending this long is aborted and sent again: the chip still answers
RETRY_MS = 250  # a reader that failed is configured again this often
BOOT_MS = 1500  # a PN532 just powered may be slow to answer its first command: no fault yet
FAULT_MS = 500  # failing this long is a reader fault (one glitch is not, nor a flapping one)
BUS_ERRORS = 3  # status polls in a row that the bus refused before the reader has failed
GLITCHES = 50  # answers in a row that made no sense before the reader has failed
LABEL_TRIES = 2  # tries of a label in one turn; the shoe holds the card for more (shoe.py)
# Recovery of a PN532 that has failed (a fault reported), when the board wires its reset line
# (RSTPDN) and can drive the bus's lines: the bus cleared (nine SCL clocks and a STOP, the I2C
# specification's bus clear, UM10204 §3.1.16), RSTPDN held low, released, and the chip given
# time to start before it is configured again; then again every RECOVER_MS while it fails.
# The manual gives no figures for the pulse or the start: these are generous [choice], and the
# loop turns meanwhile (nothing here waits).
RESET_LOW_MS = 20
RESET_START_MS = 100
RECOVER_MS = 2000
SAME_CARD_MS = 300  # a card still in the field is not read again: its label is known


class PN532Error(Exception):
    """The PN532 did not answer as the manual says: not there, or not working."""


class TagError(Exception):
    """The tag did not answer a read, or answered what cannot be right: the reader is fine."""


def _frame(data):
    length = len(data)
    checksum = (-sum(data)) & 0xFF
    return bytes((0x00, 0x00, 0xFF, length, (-length) & 0xFF)) + bytes(data) + bytes(
        (checksum, 0x00))


def parse_response(raw, cmd):
    """The data of a PN532 response frame to ``cmd`` (after its status byte was stripped).
    Raises TagError for a frame that is cut or whose checksums fail (a glitch on the bus or a
    longer answer than was read), PN532Error for what is not an answer to ``cmd``."""
    i = 0
    n = len(raw)
    while i < n and raw[i] == 0x00:
        i += 1
    if i == 0 or i >= n or raw[i] != 0xFF:
        raise TagError("no frame start")
    i += 1
    if i + 2 > n:
        raise TagError("frame cut")
    length = raw[i]
    if (length + raw[i + 1]) & 0xFF:
        raise TagError("bad length checksum")
    if length == 0xFF:
        raise PN532Error("an extended frame, not asked for")
    body = raw[i + 2:i + 2 + length]
    if len(body) != length or i + 2 + length >= n:
        raise TagError("answer longer than read")
    if (sum(body) + raw[i + 2 + length]) & 0xFF:
        raise TagError("bad data checksum")
    if length == 1 and body[0] == 0x7F:
        raise PN532Error("syntax error frame")  # the PN532 refused the command itself
    if length < 2 or body[0] != 0xD5 or body[1] != cmd + 1:
        raise TagError("not the answer to this command")
    return body[2:]


class PN532:
    """The PN532 on an I2C bus: commands, answers, the status byte and aborts."""

    def __init__(self, i2c, clock, address=ADDRESS):
        self.i2c = i2c
        self.clock = clock  # ticks_ms, ticks_diff, sleep_ms (the time module on a board)
        self.address = address
        self.status = bytearray(1)

    def ready(self):
        """One look at the status byte: True when the PN532 has something for us."""
        self.i2c.readfrom_into(self.address, self.status)
        return self.status[0] & 0x01 == 0x01

    def _wait_ready(self, timeout_ms):
        # A status poll the bus refuses (a glitch on the wires) is "not ready" until the
        # deadline: Adafruit's driver does the same.
        clock = self.clock
        start = clock.ticks_ms()
        while True:
            try:
                if self.ready():
                    return True
            except OSError:
                pass
            if clock.ticks_diff(clock.ticks_ms(), start) >= timeout_ms:
                return False
            clock.sleep_ms(1)

    def _read(self, count):
        data = self.i2c.readfrom(self.address, count + 1)
        if len(data) != count + 1 or data[0] & 0x01 != 0x01:
            raise TagError("status not ready on read")
        return data[1:]

    def drain(self):
        """Read out what the PN532 holds ready (a late answer to an aborted command)."""
        for _ in range(4):
            try:
                if not self.ready():
                    return
                self._read(READ_SIZE)
            except Exception:
                return

    def abort(self):
        """An ACK frame: the PN532 drops the command it is processing (§6.2.1.3); then what it
        had ready is read out."""
        self.i2c.writeto(self.address, ACK)
        self.clock.sleep_ms(1)  # as nfcpy gives it after a cancel
        self.drain()

    def send(self, cmd, params=b""):
        """A command, as far as its ACK: sent again once if no ACK came within 15 ms; a frame
        that is not an ACK (a late answer) is thrown away meanwhile."""
        frame = _frame(bytes((0xD4, cmd)) + bytes(params))
        clock = self.clock
        for _ in range(2):
            self.i2c.writeto(self.address, frame)
            start = clock.ticks_ms()
            while True:
                left = ACK_MS - clock.ticks_diff(clock.ticks_ms(), start)
                if left <= 0 or not self._wait_ready(left):
                    break
                if bytes(self._read(6)) == ACK:
                    return
        raise PN532Error("no ACK")

    def answer(self, cmd, size=READ_SIZE):
        """The response to ``cmd``, which is ready (read ``size`` bytes long at most)."""
        return parse_response(self._read(size), cmd)

    def command(self, cmd, params=b"", timeout_ms=ANSWER_MS):
        self.send(cmd, params)
        if not self._wait_ready(timeout_ms):
            self.abort()
            raise PN532Error("no answer")
        return self.answer(cmd)

    def firmware_version(self):
        return self.command(CMD_GET_FIRMWARE)

    def configure(self):
        # Normal mode (no SAM), timeout 0x14 x 50 ms (unused in normal mode), IRQ pin used.
        self.command(CMD_SAM_CONFIGURATION, b"\x01\x14\x01")

    def listen(self):
        """InListPassiveTarget for one 106 kbps type A target: its answer comes when a card is
        in the field."""
        self.send(CMD_IN_LIST_PASSIVE_TARGET, b"\x01\x00")

    def target(self):
        """The answer to listen(): (uid, sel_res), or None when no target was found."""
        data = self.answer(CMD_IN_LIST_PASSIVE_TARGET, TARGET_READ_SIZE)
        if not data or data[0] == 0:
            return None
        if len(data) < 6 or len(data) < 6 + data[5]:
            raise TagError("target answer cut")
        return bytes(data[6:6 + data[5]]), data[4]

    def read16(self, page):
        """Type 2 READ through InDataExchange: 16 bytes (4 pages) from ``page``."""
        try:
            data = self.command(CMD_IN_DATA_EXCHANGE, bytes((1, NTAG_READ, page)))
        except PN532Error:
            raise TagError("READ %d: no answer" % page) from None
        if not data or data[0] & 0x3F != 0:
            raise TagError("READ %d: status %02x" % (page, data[0] if data else 0xFF))
        if len(data) != 17:
            raise TagError("READ %d: %d bytes, not 16" % (page, len(data) - 1))
        return bytes(data[1:])


def _elapsed(now_ms, then_ms):
    return (now_ms - then_ms) & 0xFFFFFFFF


class PN532Reader:
    """The shoe's reader over a PN532: read(now_ms) on every turn of the loop, ok() for its
    health. Never raises.

    ``lines``, when the board has them, are what it can do to the chip beyond its bus:
    ``reset(low)`` drives RSTPDN (True holds the chip in reset), ``clear_bus()`` clears a bus
    a device holds (nine SCL clocks and a STOP) and returns the I2C bus to use from then on.
    With them the reader recovers a PN532 that has failed: at boot, and after a fault."""

    def __init__(self, pn532, now_ms, lines=None):
        self.pn532 = pn532
        self.lines = lines
        # the recovery in progress: None, or its next step (0 clear and reset, 1 release,
        # 2 started) due at next_setup_ms; at boot, a board with lines starts with one
        self.recovery = 0 if lines is not None else None
        self.recovered_ms = now_ms  # when the last recovery began
        self.recoveries = 0
        self.booted_ms = now_ms
        self.healthy = True  # until it has been seen failing (no fault at boot)
        self.failing_ms = None  # since when it has been failing
        self.configured = False
        self.fresh = True  # this boot has not spoken to the PN532 yet
        self.next_setup_ms = now_ms
        self.listening_ms = None  # when the pending listen was sent
        self.bus_errors = 0
        self.glitches = 0
        self.last_uid = None
        self.last_label = None
        self.last_ms = now_ms

    def ok(self):
        return self.healthy

    def read(self, now_ms):
        """(uid, label) for a card in the field: label "" when the tag has none, None when it
        could not be read; None when no card answered."""
        try:
            return self._read(now_ms)
        except TagError:
            self.glitches += 1
            if self.glitches >= GLITCHES:  # nothing it says makes sense any more
                self._failed(now_ms)
            else:
                self._restart()
        except Exception:  # PN532Error, OSError (no device on the bus), anything
            self._failed(now_ms)
        return None

    def _restart(self):
        # A glitch: whatever the PN532 is doing is dropped; listen again on the next turn.
        try:
            self.pn532.abort()
        except Exception:
            pass
        self.listening_ms = None

    def _working(self):
        self.failing_ms = None
        self.healthy = True

    def _failed(self, now_ms):
        self.configured = False
        self.listening_ms = None
        self.glitches = 0
        self.bus_errors = 0
        self.next_setup_ms = (now_ms + RETRY_MS) & 0xFFFFFFFF
        if self.failing_ms is None:
            self.failing_ms = now_ms
        if _elapsed(now_ms, self.booted_ms) >= BOOT_MS and \
                _elapsed(now_ms, self.failing_ms) >= FAULT_MS:
            if self.healthy or _elapsed(now_ms, self.recovered_ms) >= RECOVER_MS:
                self._recover(now_ms)  # at the fault, and then every RECOVER_MS
            self.healthy = False

    def _recover(self, now_ms):
        if self.lines is not None and self.recovery is None:
            self.recovery = 0
            self.recovered_ms = now_ms
            self.next_setup_ms = now_ms  # at once, not after RETRY_MS

    def _recovering(self, now_ms):
        """The next step of the recovery, when it is due: True while it is not over."""
        lines = self.lines
        step = self.recovery
        if step == 0:
            self.recoveries += 1
            self.recovered_ms = now_ms
            self.pn532.i2c = lines.clear_bus()
            lines.reset(True)
            self.recovery = 1
            self.next_setup_ms = (now_ms + RESET_LOW_MS) & 0xFFFFFFFF
            return True
        if step == 1:
            lines.reset(False)
            self.recovery = 2
            self.next_setup_ms = (now_ms + RESET_START_MS) & 0xFFFFFFFF
            return True
        self.recovery = None
        self.fresh = False  # a chip just reset has no listen pending: nothing to abort
        return False

    def _read(self, now_ms):
        chip = self.pn532
        if not self.configured:
            if _elapsed(now_ms, self.next_setup_ms) >= 0x80000000:
                return None  # not due yet
            if self.recovery is not None and self._recovering(now_ms):
                return None
            if self.fresh:
                # A watchdog reset restarts the RP2040, not the PN532: its listen from the
                # previous life may still be pending.
                self.fresh = False
                chip.abort()
            chip.configure()
            self.configured = True
            self._working()
        if self.listening_ms is None:
            chip.listen()
            self.listening_ms = now_ms
            return None
        try:
            ready = chip.ready()
            self.bus_errors = 0
        except OSError:
            self.bus_errors += 1
            if self.bus_errors >= BUS_ERRORS:
                raise
            return None
        if not ready:
            if _elapsed(now_ms, self.listening_ms) >= LISTEN_MS:
                chip.abort()
                chip.listen()  # an ACK again: the chip is still there
                self.listening_ms = now_ms
                self._working()
            return None
        target = chip.target()
        self.listening_ms = None
        self.glitches = 0
        self._working()
        if target is None:
            return None
        uid, sel_res = target
        if uid == self.last_uid and self.last_label is not None and \
                _elapsed(now_ms, self.last_ms) < SAME_CARD_MS:
            label = self.last_label
        else:
            label = self._label(sel_res)
        self.last_uid = uid
        self.last_label = label
        self.last_ms = now_ms
        return uid, label

    def _label(self, sel_res):
        # SEL_RES bits 6-5 (0x60) say ISO/IEC 14443-4 or NFC-DEP (a phone, a bank card), bit 3
        # (0x08) MIFARE Classic: no Type 2 Tag memory to read a label from; the UID alone.
        if sel_res & 0x68:
            return ""
        for _ in range(LABEL_TRIES):
            try:
                return read_label(self.pn532.read16)
            except (TagError, ValueError):  # ValueError: a READ that did not give 16 bytes
                self.pn532.drain()
        return None
