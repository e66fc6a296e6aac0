"""A simulated PN532 NFC controller and the cards that come into its field.

It speaks the PN532 host frame protocol over a pty as the PN532's high-speed UART does (nfcpy's
own ``pn532`` driver runs against it unchanged) and over a fake I2C bus (a status byte before
each read) for the shoe firmware's driver and for Adafruit's CircuitPython driver, which the
tests use as a reference the project did not write.

Each behaviour is tagged with what it rests on: [manual] NXP's PN532 User Manual UM0701-02
(Rev. 02, firmware V1.6), as quoted in public transcriptions of its text; [log] bytes from
real hardware posted by others, or what a driver's code shows; [choice] this simulator's own
choice where neither says, made so that a driver which depends on it is caught (the options
in brackets turn the other way on):

- A command frame is answered by an ACK frame, then by its response frame when the command is
  done (§6.2.1.3, §6.2.2) [manual]; the host should resend a command whose ACK does not come
  within 15 ms (§6.2.3, as libnfc's PR 429 quotes it) [manual].
- An ACK frame from the host is "the abort mechanism" (§6.2.1.3): the command in progress is
  dropped [manual]; no response for it is given [manual, by its dialogue]; nor one that was
  ready and not yet read [choice; ``abort_keeps_ready`` keeps it]. The first command after an
  abort may be lost (libnfc issue 167, on HSU) [log; ``loses_after_abort``].
- A NACK frame asks for "the retransmission of the last response frame" (§6.2.1.4) [manual].
- A frame lost on the way to the host (``lose_answer``: noise on the line, a UART overrun, a
  host too busy to read in time) is lost to the host only: the chip did the command and sent
  its ACK and response, so that response is still the one a NACK has sent again (§6.2.1.4)
  [manual]; a host that waits in vain for the ACK should send the command again (§6.2.3)
  [manual]. A frame that comes late (``delay_answer``: as a host starved of CPU meets it) comes
  after the host gave up, in front of the answers to its next commands unless an ACK frame
  aborts it first [choice: the order is the line's; the abort as above].
- The syntax error frame ``00 00 FF 01 FF 7F 81 00`` tells of "an error at the application
  level" (§6.2.1.5) [manual], after the ACK (libnfc issue 516) [log]. What draws it here: an
  unknown command, SAMConfiguration's Mode outside the manual's 1 to 4 (§7.2.10),
  InListPassiveTarget's MaxTg over 2 ("should not exceed 0x02", §7.3.5) or BrTy over 4
  [choice: the manual lists the values, not what others give].
- InListPassiveTarget waits for a card for as many activation retries as RFConfiguration item 5
  sets: MxRtyPassiveActivation "0xFF means to try eternally", its default (§7.3.1) [manual];
  after a finite number with no card, the answer is NbTg 0 (libnfc issue 85) [log], one
  attempt taking 10 ms here [choice]. A card is answered with Tg, SENS_RES (most significant
  byte first: libnfc issue 532), SEL_RES, NFCID length, NFCID and, when SEL_RES bit 5 says
  ISO/IEC 14443-4, the card's ATS, whose first byte counts itself (Adafruit_Python_PN532
  issue 14) [log; the layout §7.3.5, manual].
- InDataExchange to a target that is not listed answers status 0x27, "not acceptable due to the
  current context of the PN532 (... unknown target number ...)" (§7.1) [manual; libnfc logs
  the same]; a target that does not answer, 0x01 "Time Out" (§7.1) [manual] after the RF
  time-out of RFConfiguration item 2, 51.2 ms by default [driver: libnfc's defaults]. A Type 2
  tag's 4-bit NAK (a READ past the last page, NTAG21x datasheet §10.2) comes back as 0x13, as
  logged for a MIFARE Classic refusing a READ (chrome-nfc issue 12) [log, for another card].
- A new command while one is pending drops the pending one (the manual's p. 38, as quoted in
  Adafruit-PN532 issue 85, not checked) [manual, second-hand]; a response that was ready and
  not read stays in front, so a driver that sends without aborting first reads it where it
  expects the ACK, as that issue reports [log].
- Just powered, the chip is in low-battery mode, "the start up mode of PN532C106", which
  SAMConfiguration ends (NXP's application note AN10609) [manual: the application note];
  until then its RF field is off and a listen finds no card [choice]; ``wake_ms`` is a chip
  that does not take a frame for a while after power-up [choice].
- On I2C, each read begins with the status byte, bit 0 set once a frame is ready (§6.2.4, as
  quoted by go-pn532's PR 45) [manual, second-hand]; one read gives the frame from its start,
  and what it did not read is lost; bytes past the frame read as 0x00 [choice: the manual says
  neither; this makes a read too short for its answer visible].
- RSTPDN low holds the chip in reset: it acknowledges nothing on the bus; released, it starts
  as at power-up (``rstpdn``) [choice: the pin's function is the datasheet's, the bus's silence
  while it is low this simulator's]. A chip whose firmware has hung (``hang``) takes no frame
  and has nothing ready until then [choice: what a hung chip does is nowhere written].
- A bus left mid-transfer (``SimulatedPN532I2C.jam``, as when the host resets during a read):
  the chip holds SDA low until it has clocked out the rest of its byte, and the bus is not idle
  again until a STOP; every transfer fails meanwhile (OSError ETIMEDOUT). Nine SCL clocks and a
  STOP driven by hand (``line``) clear it, the I2C specification's bus clear (UM10204 §3.1.16)
  [manual: NXP's I2C specification]; a reset of the chip releases SDA but leaves the bus
  waiting for its STOP [choice].

    pn532 = SimulatedPN532Tty(tmp_path / "nfc").start()
    pn532.present(Ntag(uid, "R1:As"))   # a card (or a dealer's badge) enters the field
    pn532.remove()
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections import deque
from collections.abc import Callable
from pathlib import Path

ACK = b"\x00\x00\xff\x00\xff\x00"
NACK = b"\x00\x00\xff\xff\x00\x00"
SYNTAX_ERROR = b"\x00\x00\xff\x01\xff\x7f\x81\x00"
FIRMWARE = bytes((0x32, 0x01, 0x06, 0x07))  # PN532, firmware 1.6, ISO 14443A/B and 18092

# The PN532's commands (UM0701-02 §7): the ones simulated answer; the others are real but not
# simulated, and answered with the syntax error frame (and noted in ``unsimulated``).
REAL_COMMANDS = frozenset({
    0x00, 0x02, 0x04, 0x06, 0x08, 0x0C, 0x0E, 0x10, 0x12, 0x14, 0x16, 0x32, 0x58, 0x56, 0x46,
    0x4A, 0x50, 0x4E, 0x40, 0x42, 0x44, 0x52, 0x54, 0x60, 0x8C, 0x92, 0x94, 0x86, 0x88, 0x90,
    0x8A, 0x80, 0x8E, 0x84})

STATUS_OK = 0x00
STATUS_TIMEOUT = 0x01
STATUS_FRAMING = 0x13
STATUS_CONTEXT = 0x27

VERSIONS = {  # GET_VERSION answers of NXP NTAG21x
    "NTAG213": bytes.fromhex("0004040201000f03"),
    "NTAG215": bytes.fromhex("0004040201001103"),
    "NTAG216": bytes.fromhex("0004040201001303"),
}
PAGES = {"NTAG213": 45, "NTAG215": 135, "NTAG216": 231}
CC_SIZE = {"NTAG213": 0x12, "NTAG215": 0x3E, "NTAG216": 0x6D}
# What an NTAG213 holds from the factory before its NDEF TLV: a Lock Control TLV (its dynamic
# lock bytes at page 0x28, 12 bits, 8 bytes a bit); NTAG215 and 216 ship without one.
LOCK_CONTROL_NTAG213 = bytes.fromhex("0103a00c34")
RF_TIMEOUT_MS = 51.2  # RFConfiguration item 2's default non-DEP retry timeout (0x0A)
ACTIVATION_MS = 10.0  # one passive activation attempt with no card answering
TTY_IDLE_S = 0.002  # how often the chip on a pty looks at its field with nothing else to do


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 type A CRC, appended least significant byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


# -- NDEF, as phones and encoders write it -------------------------------------------------

def ndef_record(tnf: int, record_type: bytes, payload: bytes, *, record_id: bytes = b"",
                first: bool = True, last: bool = True, short: bool | None = None,
                chunk: bool = False) -> bytes:
    """One NDEF record: MB, ME, CF (``chunk``: more chunks of it follow), SR (one-byte payload
    length when it fits), IL, TNF; TYPE LENGTH, PAYLOAD LENGTH (1 or 4 bytes), ID LENGTH, the
    type, the id, the payload."""
    short = len(payload) < 256 if short is None else short
    header = ((0x80 if first else 0) | (0x40 if last else 0) | (0x20 if chunk else 0)
              | (0x10 if short else 0) | (0x08 if record_id else 0) | tnf)
    length = bytes((len(payload),)) if short else len(payload).to_bytes(4, "big")
    id_length = bytes((len(record_id),)) if record_id else b""
    return (bytes((header, len(record_type))) + length + id_length + record_type + record_id
            + payload)


def chunked_record(tnf: int, record_type: bytes, payload: bytes, sizes: list[int], *,
                   first: bool = True, last: bool = True) -> bytes:
    """One record in chunks of ``sizes`` bytes of its payload (the rest in the last): the
    first chunk with its TNF and type, the others TNF 6 (unchanged) with no type, CF on all
    but the last; MB on the first chunk, ME on the last (NDEF 1.0, record chunks)."""
    parts = []
    at = 0
    for size in sizes:
        parts.append(payload[at:at + size])
        at += size
    parts.append(payload[at:])
    out = b""
    for i, part in enumerate(parts):
        final = i == len(parts) - 1
        out += ndef_record(tnf if i == 0 else 6, record_type if i == 0 else b"", part,
                           first=first and i == 0, last=last and final, chunk=not final)
    return out


def text_payload(text: str, language: str = "en", *, utf16: str | None = None) -> bytes:
    """An RTD Text payload; ``utf16`` "be", "le" (each with its byte order mark) or "bare"
    (big-endian, no mark)."""
    lang = language.encode()
    if utf16 is None:
        return bytes((len(lang),)) + lang + text.encode()
    data = {"be": b"\xfe\xff" + text.encode("utf-16-be"),
            "le": b"\xff\xfe" + text.encode("utf-16-le"),
            "bare": text.encode("utf-16-be")}[utf16]
    return bytes((0x80 | len(lang),)) + lang + data


def ndef_message(*records: tuple[int, bytes, bytes]) -> bytes:
    """Records (tnf, type, payload) as one message: MB on the first, ME on the last."""
    return b"".join(ndef_record(tnf, kind, payload, first=i == 0, last=i == len(records) - 1)
                    for i, (tnf, kind, payload) in enumerate(records))


def uri_record(uri: str) -> tuple[int, bytes, bytes]:
    return (1, b"U", b"\x00" + uri.encode())


def vcard_record(size: int) -> tuple[int, bytes, bytes]:
    """A contact as a phone shares it: a MIME record (TNF 2) of type text/vcard, a vCard 3.0
    of exactly ``size`` bytes (its NOTE padded)."""
    head = b"BEGIN:VCARD\r\nVERSION:3.0\r\nN:Dealer;Floor\r\nFN:Floor Dealer\r\nNOTE:"
    tail = b"\r\nEND:VCARD\r\n"
    if size < len(head) + len(tail):
        raise ValueError("too short for a vCard")
    note = (b"Corner Pocket card room " * (size // 24 + 1))[:size - len(head) - len(tail)]
    return (2, b"text/vcard", head + note + tail)


def text_record(text: str, language: str = "en", *,
                utf16: str | None = None) -> tuple[int, bytes, bytes]:
    return (1, b"T", text_payload(text, language, utf16=utf16))


def _position(address: int, page_exponent: int) -> tuple[int, int]:
    """PageAddr and ByteOffset (4 bits each) for byte ``address`` in pages of
    2**``page_exponent`` bytes."""
    page = min(address >> page_exponent, 15)
    offset = address - (page << page_exponent)
    if offset > 15:
        raise ValueError(f"byte {address} is past what pages of {1 << page_exponent} reach")
    return page, offset


def lock_control_tlv(address: int, lock_bits: int, *, page_exponent: int = 2,
                 locked_exponent: int = 4) -> bytes:
    """A Lock Control TLV (NFC Forum Type 2 Tag Operation): its dynamic lock bits at byte
    ``address`` of the tag (from page 0) as PageAddr (high nibble) and ByteOffset (low nibble)
    in pages of 2**``page_exponent`` bytes (BytesPerPage), DLA_NbrLockBits (0 for 256), and
    BytesLockedPerLockBit (2**``locked_exponent``) beside BytesPerPage."""
    page, offset = _position(address, page_exponent)
    if not 1 <= lock_bits <= 256:
        raise ValueError("a Lock Control TLV holds 1 to 256 lock bits")
    return bytes((0x01, 3, page << 4 | offset, lock_bits & 0xFF,
                  locked_exponent << 4 | page_exponent))


def memory_control_tlv(address: int, size: int, *, page_exponent: int = 2) -> bytes:
    """A Memory Control TLV: ``size`` reserved bytes (0 for 256) at byte ``address`` of the
    tag, its position as in a Lock Control TLV, BytesPerPage in its third byte's low nibble."""
    page, offset = _position(address, page_exponent)
    if not 1 <= size <= 256:
        raise ValueError("a Memory Control TLV holds 1 to 256 reserved bytes")
    return bytes((0x02, 3, page << 4 | offset, size & 0xFF, page_exponent))


def control_range(tlv: bytes) -> range:
    """The bytes of the tag (from page 0) a Lock or Memory Control TLV takes out of its data
    area: from PageAddr x 2**BytesPerPage + ByteOffset, the Memory Control's size in bytes,
    the Lock Control's in bits (its lock bytes, rounded up); a size of 0 is 256."""
    kind, _, position, size, control = tlv[:5]
    start = (position >> 4) * 2 ** (control & 0x0F) + (position & 0x0F)
    count = size or 256
    return range(start, start + (-(-count // 8) if kind == 0x01 else count))


MEMORY_CONTROL = bytes.fromhex("0203b00a44")  # 10 reserved bytes at 176, as on a tag with a counter


def tlv_area(message: bytes | None, *, lock_control: bytes = b"",
             memory_control: bool | bytes = False, long_length: bool = False,
             filler: int = 0x00) -> bytes:
    """A Type 2 Tag's data area (from page 4) as a writer lays it out: control TLVs, the NDEF
    Message TLV (``long_length``: the three-byte length form, FF and two bytes), the
    Terminator TLV; each byte after a Lock or Memory Control TLV steps over the bytes that
    TLV takes (filled with ``filler``). ``lock_control`` and ``memory_control``: one or more
    five-byte TLVs (``memory_control=True``: MEMORY_CONTROL)."""
    controls = bytes(lock_control) + (MEMORY_CONTROL if memory_control is True
                                      else bytes(memory_control or b""))
    message = message or b""
    if long_length or len(message) >= 0xFF:
        head = b"\x03\xff" + len(message).to_bytes(2, "big")
    else:
        head = bytes((0x03, len(message)))
    out = bytearray()
    taken: set[int] = set()

    def put(data: bytes) -> None:
        for byte in data:
            while 16 + len(out) in taken:
                out.append(filler)
            out.append(byte)

    for i in range(0, len(controls), 5):
        put(controls[i:i + 5])
        taken.update(control_range(controls[i:i + 5]))
    put(head + message + b"\xfe")
    return bytes(out)


# -- the cards ---------------------------------------------------------------------------

class Card:
    """A card in the field as ISO/IEC 14443-3 type A anticollision sees it."""

    sens_res = b"\x00\x44"
    sel_res = 0x00
    ats = b""

    def __init__(self, uid: bytes) -> None:
        if len(uid) not in (4, 7, 10):
            raise ValueError("type A UIDs are 4, 7 or 10 bytes")
        self.uid = uid

    def target_data(self) -> bytes:
        """InListPassiveTarget's TargetData (UM0701-02 §7.3.5), after Tg."""
        data = self.sens_res + bytes((self.sel_res, len(self.uid))) + self.uid
        if self.sel_res & 0x20:
            data += self.ats
        return data

    def respond(self, command: bytes) -> bytes | None:
        """The card's answer (with CRC_A) to a raw command; b"\\x00" for a 4-bit NAK; None
        for no answer."""
        return None


class Type2Tag(Card):
    """An NFC Forum Type 2 Tag: pages of 4 bytes, READ gives 4 pages from any page below the
    last (rolling over to page 0), NAK past it."""

    def __init__(self, uid: bytes, memory: bytes, version: bytes | None = None) -> None:
        super().__init__(uid)
        self.memory = memory
        self.version = version

    def respond(self, command: bytes) -> bytes | None:
        if not command:
            return None
        if command[0] == 0x30 and len(command) >= 2:  # READ: 4 pages
            page = command[1]
            if page >= len(self.memory) // 4:
                return b"\x00"  # NAK
            data = (self.memory + self.memory[:16])[page * 4:page * 4 + 16]
            return data + crc_a(data)
        if command[0] == 0x60 and self.version is not None:  # GET_VERSION
            return self.version + crc_a(self.version)
        if command[0] == 0x3C:  # READ_SIG
            data = bytes(32)
            return data + crc_a(data)
        return None  # unsupported (e.g. Ultralight C AUTHENTICATE): the tag stays silent


class Ntag(Type2Tag):
    """An NTAG213/215/216: a 7-byte UID, its Capability Container, and a data area holding
    ``text`` as one NDEF Text record (an empty NDEF message when None), or the TLVs of
    ``data`` as given (a torn write, a phone's message). An NTAG213 keeps its factory Lock
    Control TLV before the NDEF TLV, as phones leave it."""

    def __init__(self, uid: bytes, text: str | None = None, kind: str = "NTAG215", *,
                 message: bytes | None = None, data: bytes | None = None,
                 lock_control: bool | None = None, long_length: bool = False) -> None:
        if len(uid) != 7:
            raise ValueError("NTAG UIDs are 7 bytes")
        self.kind = kind
        memory = bytearray(PAGES[kind] * 4)
        bcc0 = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        bcc1 = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        memory[0:12] = uid[0:3] + bytes((bcc0,)) + uid[3:7] + bytes((bcc1, 0x48, 0, 0))
        memory[12:16] = bytes((0xE1, 0x10, CC_SIZE[kind], 0x00))
        if data is None:
            if message is None and text is not None:
                message = ndef_message(text_record(text))
            lock = LOCK_CONTROL_NTAG213 if (kind == "NTAG213" if lock_control is None
                                             else lock_control) else b""
            data = tlv_area(message, lock_control=lock, long_length=long_length)
        if len(data) > CC_SIZE[kind] * 8:
            raise ValueError(f"{len(data)} bytes do not fit in an {kind}'s data area")
        memory[16:16 + len(data)] = data
        super().__init__(uid, bytes(memory), VERSIONS[kind])


Ntag215 = Ntag


class IsoDepCard(Card):
    """An ISO/IEC 14443-4 card: a bank card, a transit card, a phone (whose UID is random, 4
    bytes from 0x08). It answers no Type 2 command."""

    sens_res = b"\x00\x04"
    sel_res = 0x20

    def __init__(self, uid: bytes, ats: bytes) -> None:
        super().__init__(uid)
        if not ats or ats[0] != len(ats):
            raise ValueError("an ATS's first byte is its length")
        self.ats = ats


class MifareClassic(Card):
    """A MIFARE Classic 1K (SEL_RES 0x08): a READ without authentication is refused."""

    sens_res = b"\x00\x04"
    sel_res = 0x08

    def respond(self, command: bytes) -> bytes | None:
        return b"\x00" if command[:1] == b"\x30" else None


# -- the chip ----------------------------------------------------------------------------

def response_frame(cmd: int, data: bytes) -> bytes:
    body = bytes((0xD5, cmd + 1)) + data
    length = len(body)
    if length < 256:
        head = bytes((0x00, 0x00, 0xFF, length, (-length) & 0xFF))
    else:  # extended frame (§6.2.1.2): the PN532 uses it for frames over 255 bytes
        high, low = length >> 8, length & 0xFF
        head = bytes((0x00, 0x00, 0xFF, 0xFF, 0xFF, high, low, (-(high + low)) & 0xFF))
    return head + body + bytes(((-sum(body)) & 0xFF, 0x00))


class _SyntaxError(Exception):
    pass


class SimulatedPN532:
    """The chip: host frames in (``host_frame``), its frames out when their time comes
    (``ready``, ``take``). ``clock`` gives milliseconds (the host's monotonic clock if not
    given; a test's clock on the I2C bus)."""

    def __init__(self, clock: Callable[[], float] | None = None, *, wake_ms: float = 0.0,
                 ack_ms: float = 0.3, answer_ms: float = 1.0, abort_keeps_ready: bool = False,
                 loses_after_abort: bool = False) -> None:
        self.clock = clock or (lambda: time.monotonic() * 1000.0)
        self.powered_ms = self.clock()
        self.sam_mode: int | None = None  # None: low-battery mode, the RF field off
        self.wake_ms = wake_ms
        self.ack_ms = ack_ms
        self.answer_ms = answer_ms  # how long a command takes once it can be done
        self.abort_keeps_ready = abort_keeps_ready
        self.loses_after_abort = loses_after_abort
        self.deaf = False  # the next command frame is lost (loses_after_abort)
        # (command, parameters' start, its ACK lost, its response lost): lose_answer
        self.losses: list[tuple[int, bytes, bool, bool]] = []
        self.losing_response = False  # the response of the command in hand is to be lost
        self.lost: list[bytes] = []  # the frames lost on the way to the host, in order
        self.delays: list[tuple[int, bytes, float]] = []  # (command, params' start, ms)
        self.card: Card | None = None
        self.card_ms = 0.0  # when it came into the field
        self.listed: Card | None = None  # the target InListPassiveTarget listed as Tg 1
        self.registers: dict[int, int] = {}
        self.passive_retries = 0xFF
        self.out: deque[tuple[float, bytes]] = deque()  # (ready at, frame), in order
        self.pending: tuple[int, bytes, float] | None = None  # a listen waiting for a card
        self.last_response: bytes | None = None
        self.commands: list[int] = []
        self.unsimulated: list[int] = []
        self.aborts = 0
        self.dropped_by_command = 0  # commands sent over a pending one (no abort first)
        self.hung = False  # its firmware stopped: no frame taken, nothing ready
        self.in_reset = False  # RSTPDN held low
        self.resets = 0  # RSTPDN pulses seen
        self.lock = threading.RLock()

    # -- the field
    def present(self, card: Card) -> None:
        """A card enters the field (replacing any card there): not listed until a listen."""
        with self.lock:
            self._poll(self.clock())  # what was pending meets the field as it was
            self.card = card
            self.card_ms = self.clock()
            self.listed = None

    def remove(self) -> None:
        with self.lock:
            self.card = None

    @property
    def tag(self) -> Card | None:
        return self.card

    def power_cycle(self) -> None:
        """The chip loses power and starts again: waking, in low-battery mode, nothing held."""
        with self.lock:
            self.powered_ms = self.clock()
            self.sam_mode = None
            self.pending = None
            self.listed = None
            self.out.clear()
            self.last_response = None

    def hang(self) -> None:
        """Its firmware stops: until a reset (or power), it takes no frame and says nothing."""
        with self.lock:
            self.hung = True
            self.pending = None
            self.out.clear()

    def rstpdn(self, level: int) -> None:
        """The RSTPDN line driven: low holds the chip in reset, high lets it start again."""
        with self.lock:
            if not level:
                self.in_reset = True
                return
            if self.in_reset:
                self.in_reset = False
                self.hung = False
                self.resets += 1
                self.power_cycle()

    def lose_answer(self, command: int, params: bytes = b"", *, ack: bool = True,
                    response: bool = True) -> None:
        """The ACK and (or) the response of the next ``command`` whose parameters begin
        with ``params`` are lost on the way to the host; the chip does not know it."""
        with self.lock:
            self.losses.append((command, bytes(params), ack, response))

    def delay_answer(self, command: int, params: bytes = b"", ms: float = 150.0) -> None:
        """The ACK and the response of the next ``command`` whose parameters begin with
        ``params`` come ``ms`` late."""
        with self.lock:
            self.delays.append((command, bytes(params), ms))

    # -- frames from the host
    def host_frame(self, item: tuple[object, ...]) -> None:
        with self.lock:
            now = self.clock()
            if now - self.powered_ms < self.wake_ms or self.hung or self.in_reset:
                return  # still waking, or not working: the frame is not taken
            self._poll(now)  # what happened meanwhile happened before this frame
            if item[0] == "ack":
                self.aborts += 1
                self.pending = None
                self.losing_response = False
                if self.abort_keeps_ready:
                    self.out = deque(f for f in self.out if f[0] <= now)
                else:
                    self.out.clear()
                self.deaf = self.loses_after_abort
            elif item[0] == "nack":
                if self.last_response is not None:
                    self.out.append((now, self.last_response))
            elif self.deaf:
                self.deaf = False  # lost, as the first command after an abort can be
            else:
                cmd, params = int(item[1]), bytes(item[2])  # type: ignore[call-overload]
                self._command(cmd, params, now)

    def _command(self, cmd: int, params: bytes, now: float) -> None:
        self.commands.append(cmd)
        if self.pending is not None:
            self.dropped_by_command += 1
        self.pending = None  # a new command drops the one pending (p. 38)
        lose_ack = self.losing_response = False
        for loss in self.losses:
            if loss[0] == cmd and params.startswith(loss[1]):
                self.losses.remove(loss)
                lose_ack, self.losing_response = loss[2], loss[3]
                break
        late = 0.0
        for slow in self.delays:
            if slow[0] == cmd and params.startswith(slow[1]):
                self.delays.remove(slow)
                late = slow[2]
                break
        if lose_ack:
            self.lost.append(ACK)
        else:
            self.out.append((now + late + self.ack_ms, ACK))
        done = now + late + self.ack_ms + self.answer_ms
        try:
            data = self._execute(cmd, params, now)
        except _SyntaxError:
            self._respond(done, SYNTAX_ERROR)
            return
        if data is None:
            return  # pending: answered by _poll
        delay, payload = data
        self._respond(done + delay, response_frame(cmd, payload))

    def _respond(self, at: float, frame: bytes) -> None:
        self.last_response = frame
        if self.losing_response:
            self.losing_response = False
            self.lost.append(frame)
            return
        self.out.append((at, frame))

    def _execute(self, cmd: int, params: bytes, now: float) -> tuple[float, bytes] | None:
        card = self.card
        if cmd == 0x00:  # Diagnose: the communication line test echoes its data
            return 0.0, params
        if cmd == 0x02:
            return 0.0, FIRMWARE
        if cmd == 0x06:  # ReadRegister: big-endian addresses
            values = []
            for i in range(0, len(params) - 1, 2):
                address = params[i] << 8 | params[i + 1]
                if address == 0x6339 and card is None:
                    values.append(0x26)  # SENS_REQ still in the FIFO: nothing answered
                else:
                    values.append(self.registers.get(address, 0))
            return 0.0, bytes(values)
        if cmd == 0x08:
            for i in range(0, len(params) - 2, 3):
                self.registers[params[i] << 8 | params[i + 1]] = params[i + 2]
            return 0.0, b""
        if cmd in (0x10, 0x12):  # SetSerialBaudRate, SetParameters
            return 0.0, b""
        if cmd == 0x14:  # SAMConfiguration (§7.2.10): Mode 1 normal .. 4 dual card
            if not params or not 1 <= params[0] <= 4:
                raise _SyntaxError
            self.sam_mode = params[0]
            return 0.0, b""
        if cmd == 0x16:  # PowerDown
            return 0.0, b"\x00"
        if cmd == 0x32:  # RFConfiguration (§7.3.1)
            if not params:
                raise _SyntaxError
            if params[0] == 0x05 and len(params) >= 4:
                self.passive_retries = params[3]
            return 0.0, b""
        if cmd == 0x4A:  # InListPassiveTarget (§7.3.5)
            if len(params) < 2 or not 1 <= params[0] <= 2 or params[1] > 4:
                raise _SyntaxError
            self.listed = None
            self.pending = (cmd, params, now)
            self._poll(now)
            return None
        if cmd in (0x40, 0x42):  # InDataExchange / InCommunicateThru
            if cmd == 0x40:
                if not params or params[0] & 0x3F != 1 or self.listed is None:
                    return 0.0, bytes((STATUS_CONTEXT,))
                raw = params[1:]
            else:
                if self.listed is None:
                    return 0.0, bytes((STATUS_CONTEXT,))
                raw = params
            target = self.listed
            answer = target.respond(raw) if target is card else None
            if answer is None:
                return RF_TIMEOUT_MS, bytes((STATUS_TIMEOUT,))
            if cmd == 0x40:
                if len(answer) == 1:  # a 4-bit NAK
                    return 0.0, bytes((STATUS_FRAMING,))
                return 0.0, b"\x00" + answer[:-2]  # the PN532 checks and strips the CRC
            return 0.0, b"\x00" + answer
        if cmd in (0x44, 0x52):  # InDeselect, InRelease
            if cmd == 0x52:
                self.listed = None
            return 0.0, b"\x00"
        if cmd in REAL_COMMANDS:
            self.unsimulated.append(cmd)
        raise _SyntaxError

    def _poll(self, now: float) -> None:
        """Time passes: a pending listen finds the card in the field, or gives up."""
        if self.pending is None:
            return
        cmd, params, since = self.pending
        card = self.card if self.sam_mode is not None else None  # no field, no card
        if card is not None and params[1] == 0x00:
            self.pending = None
            self.listed = card
            # answered as soon as both the listen and the card were there, whenever this
            # is looked at
            self._respond(max(self.card_ms, since + self.ack_ms) + self.answer_ms,
                          response_frame(cmd, b"\x01\x01" + card.target_data()))
        elif self.passive_retries != 0xFF and \
                now - since >= (self.passive_retries + 1) * ACTIVATION_MS:
            self.pending = None
            self._respond(now, response_frame(cmd, b"\x00"))

    # -- frames to the host
    def ready(self) -> bool:
        with self.lock:
            if self.hung or self.in_reset:
                return False
            now = self.clock()
            self._poll(now)
            return bool(self.out) and self.out[0][0] <= now

    def due_in(self) -> float | None:
        """Milliseconds until its next frame is ready (0: it is); None: none is coming."""
        with self.lock:
            if self.hung or self.in_reset:
                return None
            now = self.clock()
            self._poll(now)
            return max(0.0, self.out[0][0] - now) if self.out else None

    def take(self) -> bytes | None:
        """The next frame, if it is ready."""
        with self.lock:
            if not self.ready():
                return None
            return self.out.popleft()[1]


class FrameParser:
    """Host-to-PN532 frames out of a byte stream (preambles and wake-up bytes skipped):
    ``("command", cmd, params)``, ``("ack",)``, ``("nack",)``."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[object, ...]]:
        self.buffer += data
        out: list[tuple[object, ...]] = []
        while True:
            start = self.buffer.find(b"\x00\xff")
            if start < 0 or len(self.buffer) < start + 4:
                if start < 0:
                    del self.buffer[:-1]
                return out
            length, lcs = self.buffer[start + 2], self.buffer[start + 3]
            if length == 0 and lcs == 0xFF:
                out.append(("ack",))
                del self.buffer[:start + 4]
                continue
            if length == 0xFF and lcs == 0x00:
                out.append(("nack",))
                del self.buffer[:start + 4]
                continue
            head = 4
            if length == 0xFF and lcs == 0xFF:  # extended frame: 16-bit length
                if len(self.buffer) < start + 7:
                    return out
                high, low, check = self.buffer[start + 4:start + 7]
                if (high + low + check) & 0xFF:
                    del self.buffer[:start + 1]
                    continue
                length, head = high << 8 | low, 7
            elif (length + lcs) & 0xFF:
                del self.buffer[:start + 1]
                continue
            end = start + head + length + 1
            if len(self.buffer) < end:
                return out
            body = bytes(self.buffer[start + head:start + head + length])
            dcs = self.buffer[start + head + length]
            del self.buffer[:end]
            if (sum(body) + dcs) & 0xFF or len(body) < 2 or body[0] != 0xD4:
                continue
            out.append(("command", body[1], body[2:]))


class SimulatedPN532Tty:
    """The chip behind its high-speed UART: a pty pair, the host side a stable symlink. Its
    ACK goes out as soon as a command frame is read (ack_ms 0, unless ``chip`` says
    otherwise): the line's own time is not simulated on a pty, and the machine's scheduler
    adds its own to every frame (nfcpy waits 100 ms for an ACK)."""

    def __init__(self, port: Path | str, chip: SimulatedPN532 | None = None) -> None:
        self.port = Path(port)
        self.chip = chip or SimulatedPN532(ack_ms=0.0)
        self._parser = FrameParser()
        self._running = False
        self._thread: threading.Thread | None = None
        self._master: int | None = None
        self._slave: int | None = None

    def start(self) -> SimulatedPN532Tty:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        if self.port.is_symlink() or self.port.exists():
            self.port.unlink()
        self.port.symlink_to(os.ttyname(slave))
        self._master, self._slave = master, slave
        self._running = True
        self._thread = threading.Thread(target=self._run, name="sim-pn532", daemon=True)
        self._thread.start()
        return self

    @property
    def device(self) -> str:
        """The pty's real device path (nfcpy resolves and reopens it)."""
        return os.path.realpath(self.port)

    def present(self, card: Card) -> None:
        self.chip.present(card)

    def remove(self) -> None:
        self.chip.remove()

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join(timeout=5)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.port.is_symlink():
            self.port.unlink()

    def _run(self) -> None:
        # Blocked until the host writes or the chip's next frame is due, not polling: a loaded
        # machine's scheduler wakes it late each time, and nfcpy waits 100 ms for an ACK.
        assert self._master is not None
        while self._running:
            due_ms = self.chip.due_in()
            wait = TTY_IDLE_S if due_ms is None else min(due_ms / 1000.0, TTY_IDLE_S)
            readable = select.select([self._master], [], [], wait)[0]
            data = b""
            if readable:
                try:
                    data = os.read(self._master, 4096)
                except OSError:  # the host side closed: nothing to read until it opens again
                    time.sleep(TTY_IDLE_S)
            for item in self._parser.feed(data):
                self.chip.host_frame(item)
            while (frame := self.chip.take()) is not None:
                with contextlib.suppress(OSError):
                    os.write(self._master, frame)


class SimulatedPN532I2C:
    """The chip on I2C: ``writeto`` a frame; ``readfrom`` a status byte (bit 0: a frame is
    ready) followed by that frame, which the read takes whole or in part (the rest is lost).
    ``writes`` keeps every write, for comparing drivers byte for byte."""

    def __init__(self, chip: SimulatedPN532 | None = None, address: int = 0x24) -> None:
        self.chip = chip or SimulatedPN532()
        self.address = address
        self._parser = FrameParser()
        self.writes: list[bytes] = []
        self.reads: list[int] = []
        self.jammed = False  # left mid-transfer: not idle until its bits and a STOP
        self.held_bits = 0  # SCL clocks until the chip lets SDA go
        self.scl = 1
        self.sda = 1  # as the host drives them by hand (open drain: 1 released)
        self.clears = 0  # jams ended by a bus clear

    def jam(self, bits: int = 8) -> None:
        """The bus left mid-transfer, the chip holding SDA low for ``bits`` more clocks."""
        self.jammed = True
        self.held_bits = bits

    def line(self, name: str, level: int) -> None:
        """The host drives SCL or SDA by hand (its bus clear): a rising SCL clocks one bit out
        of a chip holding SDA; SDA rising while SCL is high, SDA free, is a STOP."""
        level = 1 if level else 0
        if self.chip.in_reset:
            self.held_bits = 0  # a chip in reset lets go of SDA
        if name == "scl":
            if level and not self.scl and self.held_bits:
                self.held_bits -= 1
            self.scl = level
        else:
            if level and not self.sda and self.scl and not self.held_bits and self.jammed:
                self.jammed = False
                self.clears += 1
            self.sda = level

    def _check(self, address: int) -> None:
        if self.jammed:
            raise OSError(110, "the bus is not idle")  # ETIMEDOUT
        if address != self.address or self.chip.in_reset:
            raise OSError(5, "no device acknowledged the address")  # EIO, as MicroPython

    def writeto(self, address: int, data: bytes, stop: bool = True) -> int:
        self._check(address)
        data = bytes(data)
        self.writes.append(data)
        for item in self._parser.feed(data):
            self.chip.host_frame(item)
        return len(data)

    def readfrom_into(self, address: int, buffer: bytearray, stop: bool = True) -> None:
        buffer[:] = self.readfrom(address, len(buffer), stop)

    def readfrom(self, address: int, count: int, stop: bool = True) -> bytes:
        self._check(address)
        self.reads.append(count)
        if not self.chip.ready():
            return bytes(count)  # status 0x00: not ready
        if count == 1:
            return b"\x01"
        frame = self.chip.take() or b""
        return (b"\x01" + frame + bytes(count))[:count]
