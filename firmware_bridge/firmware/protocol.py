# The shoe's end of the shoe protocol (firmware_bridge/PROTOCOL.md), version 1.
#
# Written for MicroPython on the RP2040 and CPython alike: no dataclasses, no typing, only
# struct. Time comes in as milliseconds (time.ticks_ms() on the board); bytes go out through
# poll(). The host's implementation is firmware_bridge/host.py; vectors.json ties them together.

import struct
from array import array

VERSION = 1
HELLO = 0x01
HEARTBEAT = 0x02
CARD = 0x10
DECK_IN = 0x11
DECK_OUT = 0x12
FAULT = 0x13
MODE = 0x14
ACK = 0x20
HELLO_ACK = 0x21
HOST_HELLO = 0x81
SET_MODE = 0x82

RETRANSMIT_MS = 250
HEARTBEAT_MS = 1000
QUEUE_LIMIT = 128  # unacked messages kept; when full, the oldest is dropped (PROTOCOL.md)
# A retransmission goes out this many bytes a poll (a turn of the loop), not the whole queue at
# once: 128 frames of 250 bytes copied into one buffer, then into the bytes returned, took
# 64 kB of an RP2040's 264 kB on top of the queue itself.
RESEND_BYTES = 1024
MAX_PAYLOAD = 240
MAX_FRAME = 7 + MAX_PAYLOAD  # a decoded frame: header, payload, CRC
# The longest frame on the wire: its delimiters and MAX_FRAME bytes COBS-encoded (one code byte
# for up to 254). The queue holds each message's frame in a slot this long, in one bytearray
# made when the protocol is (32,000 bytes): a full queue allocates nothing more, and nothing it
# holds is scattered over the heap.
SLOT = 2 + MAX_FRAME + 1

FLAG_FACE_UP = 1
FLAG_BOXED = 2
FLAG_DECK_CHECK = 4
FLAG_TEXT_CUT = 8  # the tag's text did not fit in a frame: cut at a character boundary
FLAG_UNREADABLE = 16  # a card left the shoe but its tag gave no usable UID (UID length 0)
UID_SIZES = (4, 7, 10)
FAULT_TEXT_MAX = 100

_CRC_TABLE = array("H", range(256))  # 512 bytes (a list of 256 ints is twice that)
for _i in range(256):
    _c = _i << 8
    for _ in range(8):
        _c = ((_c << 1) ^ 0x1021) if _c & 0x8000 else (_c << 1)
    _CRC_TABLE[_i] = _c & 0xFFFF


def crc16(data):
    crc = 0xFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data):
    out = bytearray()
    code_at = 0
    out.append(0)
    code = 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
        else:
            out.append(byte)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at = len(out)
                out.append(0)
                code = 1
    out[code_at] = code
    return bytes(out)


def cobs_decode(data):
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0 or i + code > n:
            return None
        out.extend(data[i + 1:i + code])
        i += code
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame(type_, seq, payload=b""):
    body = struct.pack(">BBHB", VERSION, type_, seq, len(payload)) + payload
    crc = crc16(body)
    return b"\x00" + cobs_encode(body + bytes(((crc >> 8) & 0xFF, crc & 0xFF))) + b"\x00"


def _cut_utf8(data, limit):
    """At most ``limit`` bytes of UTF-8 ``data``, never splitting a character."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:  # a continuation byte: step back
        end -= 1
    return data[:end]


def _text(text, limit=255):
    data = _cut_utf8(text.encode("utf-8"), limit)
    return bytes((len(data),)) + data


def _ascii(text, limit=FAULT_TEXT_MAX):
    # FAULT texts are ASCII by contract; an exception's message may not be.
    out = "".join(c if 32 <= ord(c) < 127 else "?" for c in str(text))
    return out[:limit]


class ShoeProtocol:
    """Reliable, ordered delivery of the shoe's messages; answers the host's commands."""

    def __init__(self, boot_id, firmware, shoe_id, caps, now_ms):
        self.boot_id = boot_id & 0xFFFFFFFF
        self.firmware = firmware
        self.shoe_id = shoe_id
        self.caps = caps
        self.next_seq = 0  # a boot numbers its reliable messages from 0 (PROTOCOL.md)
        # The messages not yet acknowledged: seqs first_seq .. first_seq + held - 1, each
        # message's frame in slot seq % QUEUE_LIMIT of ``queue``, its length and type beside.
        self.queue = bytearray(QUEUE_LIMIT * SLOT)
        self.view = memoryview(self.queue)
        self.lengths = bytearray(QUEUE_LIMIT)
        self.types = bytearray(QUEUE_LIMIT)
        self.first_seq = 0
        self.held = 0
        self.out = bytearray()
        # Where frames go: into ``out``, which poll() returns, or, given a sink (the board's
        # preallocated USB backlog: put(frame) -> bool, room() -> bytes free), straight into
        # it, whole or not at all: a frame it refuses is sent again in its turn, and a
        # retransmission waits for room instead of building a kilobyte in the heap.
        self.sink = None
        self.mode = 0
        self.sensors = 0
        self.last_send_ms = now_ms
        self.last_heartbeat_ms = now_ms
        self.rx = bytearray()
        self.resend_seq = None  # the next held message a retransmission in progress sends
        # Until the host answers this boot's HELLO with a HELLO_ACK naming it, reliable
        # messages are held, not sent: a host that missed the HELLO would take them for the
        # previous boot's numbers (and might acknowledge reads it never delivered).
        self.synced = False
        self.dropped = 0  # reliable messages dropped from a full queue, this boot
        self.lost_cards = 0  # of which card reads (announced in HELLO, mod 65536)
        self.send_hello()

    # -- what the shoe has to say
    @property
    def unacked(self):
        """[seq, frame bytes, type] of each message held, oldest first: made when asked (the
        simulated shoe and the tests ask; the firmware itself does not)."""
        out = []
        for i in range(self.held):
            seq = (self.first_seq + i) & 0xFFFF
            slot = seq % QUEUE_LIMIT
            start = slot * SLOT
            out.append([seq, bytes(self.queue[start:start + self.lengths[slot]]),
                        self.types[slot]])
        return out

    def _reliable(self, type_, payload, now_ms):
        data = frame(type_, self.next_seq, payload)
        if len(data) > SLOT:
            raise ValueError("frame longer than a queue slot")
        if self.held >= QUEUE_LIMIT:
            # Full (the host has not acknowledged for a long while): keep the newest, which
            # belong to the hand being dealt. The next HELLO announces the loss: its next_seq
            # skips the dropped numbers and lost_cards counts the card reads among them.
            self.dropped += 1
            if self.types[self.first_seq % QUEUE_LIMIT] == CARD:
                self.lost_cards = (self.lost_cards + 1) & 0xFFFF
            self.first_seq = (self.first_seq + 1) & 0xFFFF
            self.held -= 1
        slot = self.next_seq % QUEUE_LIMIT
        start = slot * SLOT
        self.queue[start:start + len(data)] = data
        self.lengths[slot] = len(data)
        self.types[slot] = type_
        if not self.held:
            self.first_seq = self.next_seq
        self.held += 1
        self.next_seq = (self.next_seq + 1) & 0xFFFF
        if self.held == 1:
            self.last_send_ms = now_ms
        if self.synced and self.resend_seq is None:
            self._emit(data)  # (during a retransmission, it goes in its turn)

    def card(self, now_ms, uid, text, face_up, boxed, read_ms=None):
        """A card left the shoe (read at ``read_ms``, now if not given). Whatever its tag holds,
        this makes one valid frame: a UID of a size no tag has is sent as "unreadable", a text
        too long for the frame is cut."""
        flags = ((FLAG_FACE_UP if face_up else 0) | (FLAG_BOXED if boxed else 0)
                 | (FLAG_DECK_CHECK if self.mode == 1 else 0))
        uid = bytes(uid or b"")
        if len(uid) not in UID_SIZES:
            uid = b""
            flags |= FLAG_UNREADABLE
        room = MAX_PAYLOAD - 7 - len(uid)  # ms, flags, uid_len, uid, text_len
        data = (text or "").encode("utf-8")
        if len(data) > room:
            data = _cut_utf8(data, room)
            flags |= FLAG_TEXT_CUT
        at = now_ms if read_ms is None else read_ms
        payload = (struct.pack(">IB", at & 0xFFFFFFFF, flags) + bytes((len(uid),)) + uid
                   + bytes((len(data),)) + data)
        self._reliable(CARD, payload, now_ms)

    def deck_in(self, now_ms):
        self._reliable(DECK_IN, struct.pack(">I", now_ms & 0xFFFFFFFF), now_ms)

    def deck_out(self, now_ms):
        self._reliable(DECK_OUT, struct.pack(">I", now_ms & 0xFFFFFFFF), now_ms)

    def fault(self, now_ms, code, active, text):
        payload = struct.pack(">IBB", now_ms & 0xFFFFFFFF, code, 1 if active else 0)
        self._reliable(FAULT, payload + _text(_ascii(text)), now_ms)

    def send_hello(self):
        # next_seq is the oldest message still held: a host that accepted less than that
        # knows exactly which numbers were dropped from a full queue.
        oldest = self.first_seq if self.held else self.next_seq
        payload = struct.pack(">BIHH", VERSION, self.boot_id, oldest, self.caps)
        self._emit(frame(HELLO, 0, payload + _text(_ascii(self.firmware, 60))
                         + _text(_ascii(self.shoe_id, 60)) + struct.pack(">H", self.lost_cards)))

    # -- what the host says
    def receive(self, data, now_ms):
        self.rx.extend(data)
        while True:
            end = self.rx.find(b"\x00")
            if end < 0:
                break
            chunk = bytes(self.rx[:end])
            self.rx = self.rx[end + 1:]
            raw = cobs_decode(chunk) if chunk else None
            # PROTOCOL.md: shorter than 7 or longer than 247 bytes, a length byte that
            # disagrees, another version: noise, even when its CRC happens to agree.
            if raw is None or not 7 <= len(raw) <= MAX_FRAME or raw[0] != VERSION \
                    or raw[4] != len(raw) - 7:
                continue
            if crc16(raw[:-2]) != (raw[-2] << 8 | raw[-1]):
                continue
            self._command(raw[1], raw[2] << 8 | raw[3], raw[5:-2], now_ms)
        if len(self.rx) > 512:
            self.rx = bytearray()

    def _command(self, type_, seq, payload, now_ms):
        if type_ == HELLO_ACK:
            # The host adopted a boot's numbering; its seq acknowledges like an ACK's.
            if len(payload) != 4 or struct.unpack(">I", payload)[0] != self.boot_id:
                return  # another boot's: not for us
            self._release(seq, now_ms)
            if not self.synced:
                self.synced = True
                self.resend_all(now_ms)
        elif type_ == ACK:
            if self.synced:  # before that, an ACK is meant for a previous boot's numbers
                self._release(seq, now_ms)
        elif type_ == HOST_HELLO:
            self.send_hello()
            self.resend_all(now_ms)
        elif type_ == SET_MODE and len(payload) == 1 and payload[0] in (0, 1):
            self.mode = payload[0]
            self._reliable(MODE, bytes((self.mode,)), now_ms)

    def _release(self, seq, now_ms):
        # Cumulative: everything up to and including seq is safe at the host. An ACK for a
        # number outside what is held (one never sent in this boot, or an old one) is
        # ignored: it must never discard a read the host does not have.
        if self.held:
            upto = (seq - self.first_seq) & 0xFFFF
            if upto < self.held:
                self.first_seq = (seq + 1) & 0xFFFF
                self.held -= upto + 1
                self.last_send_ms = now_ms

    def resend_all(self, now_ms):
        """Send every held message again, in order, from the oldest (paced: poll)."""
        self.last_send_ms = now_ms
        if self.synced and self.held:
            self.resend_seq = self.first_seq

    def _resend_some(self, now_ms):
        held = self.held
        if not held:
            self.resend_seq = None
            return
        offset = (self.resend_seq - self.first_seq) & 0xFFFF
        if offset >= 0x8000:  # acknowledged meanwhile: go on from the oldest still held
            offset = 0
        sent = 0
        sink = self.sink
        while offset < held and sent < RESEND_BYTES:
            slot = (self.first_seq + offset) % QUEUE_LIMIT
            size = self.lengths[slot]
            if sink is not None and sink.room() < size:
                break  # the port's backlog is full: this frame goes on a later poll
            start = slot * SLOT
            self._emit(self.view[start:start + size])
            sent += size
            offset += 1
        self.last_send_ms = now_ms  # the next round is due 250 ms after this one ends
        if offset < held:
            self.resend_seq = (self.first_seq + offset) & 0xFFFF
        else:
            self.resend_seq = None

    # -- time passes; returns the bytes to write now
    def poll(self, now_ms):
        if _elapsed(now_ms, self.last_send_ms) >= RETRANSMIT_MS:
            if not self.synced:
                self.send_hello()  # no answer to this boot's HELLO yet: say it again
                self.last_send_ms = now_ms
            elif self.held and self.resend_seq is None:
                self.resend_all(now_ms)
        if self.resend_seq is not None:
            self._resend_some(now_ms)
        if _elapsed(now_ms, self.last_heartbeat_ms) >= HEARTBEAT_MS:
            self.last_heartbeat_ms = now_ms
            self._emit(frame(HEARTBEAT, 0, struct.pack(
                ">IBBB", now_ms & 0xFFFFFFFF, self.mode, min(self.held, 255),
                self.sensors)))
        if not self.out:
            return b""
        data = bytes(self.out)
        self.out = bytearray()
        return data

    def _emit(self, data):
        if self.sink is None:
            self.out.extend(data)
        else:
            self.sink.put(data)

    def link_up(self, now_ms):
        """The host is reachable again (the port reopened): say hello, then resend."""
        self.out = bytearray()
        self.resend_seq = None
        self.send_hello()
        self.resend_all(now_ms)


def _elapsed(now_ms, then_ms):
    # ticks_diff for a 32-bit millisecond counter that wraps.
    return (now_ms - then_ms) & 0xFFFFFFFF
