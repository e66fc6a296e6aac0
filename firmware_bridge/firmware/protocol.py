# The shoe's end of the shoe protocol (firmware_bridge/PROTOCOL.md), version 1.
#
# Written for MicroPython on the RP2040 and CPython alike: no dataclasses, no typing, only
# struct. Time comes in as milliseconds (time.ticks_ms() on the board); bytes go out through
# poll(). The host's implementation is firmware_bridge/host.py; vectors.json ties them together.

import struct

VERSION = 1
HELLO = 0x01
HEARTBEAT = 0x02
CARD = 0x10
DECK_IN = 0x11
DECK_OUT = 0x12
FAULT = 0x13
MODE = 0x14
ACK = 0x20
HOST_HELLO = 0x81
SET_MODE = 0x82

RETRANSMIT_MS = 250
HEARTBEAT_MS = 1000
QUEUE_LIMIT = 128

_CRC_TABLE = []
for _i in range(256):
    _c = _i << 8
    for _ in range(8):
        _c = ((_c << 1) ^ 0x1021) if _c & 0x8000 else (_c << 1)
    _CRC_TABLE.append(_c & 0xFFFF)


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


def _text(text, limit=255):
    data = text.encode("utf-8")[:limit]
    return bytes((len(data),)) + data


class ShoeProtocol:
    """Reliable, ordered delivery of the shoe's messages; answers the host's commands."""

    def __init__(self, boot_id, firmware, shoe_id, caps, now_ms, first_seq=0):
        self.boot_id = boot_id & 0xFFFFFFFF
        self.firmware = firmware
        self.shoe_id = shoe_id
        self.caps = caps
        self.next_seq = first_seq & 0xFFFF
        self.unacked = []  # [seq, frame bytes], oldest first
        self.out = bytearray()
        self.mode = 0
        self.sensors = 0
        self.last_send_ms = now_ms
        self.last_heartbeat_ms = now_ms
        self.rx = bytearray()
        self.dropped = 0
        self.send_hello()

    # -- what the shoe has to say
    def _reliable(self, type_, payload, now_ms):
        if len(self.unacked) >= QUEUE_LIMIT:
            self.unacked.pop(0)
            self.dropped += 1
        data = frame(type_, self.next_seq, payload)
        self.unacked.append([self.next_seq, data])
        self.next_seq = (self.next_seq + 1) & 0xFFFF
        if len(self.unacked) == 1:
            self.last_send_ms = now_ms
        self.out.extend(data)

    def card(self, now_ms, uid, text, face_up, boxed):
        flags = (1 if face_up else 0) | (2 if boxed else 0) | (4 if self.mode == 1 else 0)
        payload = struct.pack(">IB", now_ms & 0xFFFFFFFF, flags) + bytes((len(uid),)) + uid
        self._reliable(CARD, payload + _text(text), now_ms)

    def deck_in(self, now_ms):
        self._reliable(DECK_IN, struct.pack(">I", now_ms & 0xFFFFFFFF), now_ms)

    def deck_out(self, now_ms):
        self._reliable(DECK_OUT, struct.pack(">I", now_ms & 0xFFFFFFFF), now_ms)

    def fault(self, now_ms, code, active, text):
        payload = struct.pack(">IBB", now_ms & 0xFFFFFFFF, code, 1 if active else 0)
        self._reliable(FAULT, payload + _text(text), now_ms)

    def send_hello(self):
        oldest = self.unacked[0][0] if self.unacked else self.next_seq
        payload = struct.pack(">BIHH", VERSION, self.boot_id, oldest, self.caps)
        self.out.extend(frame(HELLO, 0, payload + _text(self.firmware) + _text(self.shoe_id)))

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
            if raw is None or len(raw) < 7 or raw[0] != VERSION or raw[4] != len(raw) - 7:
                continue
            if crc16(raw[:-2]) != (raw[-2] << 8 | raw[-1]):
                continue
            self._command(raw[1], raw[2] << 8 | raw[3], raw[5:-2], now_ms)
        if len(self.rx) > 512:
            self.rx = bytearray()

    def _command(self, type_, seq, payload, now_ms):
        if type_ == ACK:
            # Cumulative: everything up to and including seq is safe at the host.
            while self.unacked and ((seq - self.unacked[0][0]) & 0xFFFF) < 0x8000:
                self.unacked.pop(0)
            self.last_send_ms = now_ms
        elif type_ == HOST_HELLO:
            self.send_hello()
            self.resend_all(now_ms)
        elif type_ == SET_MODE and len(payload) == 1 and payload[0] in (0, 1):
            self.mode = payload[0]
            self._reliable(MODE, bytes((self.mode,)), now_ms)

    def resend_all(self, now_ms):
        for _, data in self.unacked:
            self.out.extend(data)
        self.last_send_ms = now_ms

    # -- time passes; returns the bytes to write now
    def poll(self, now_ms):
        if self.unacked and _elapsed(now_ms, self.last_send_ms) >= RETRANSMIT_MS:
            self.resend_all(now_ms)
        if _elapsed(now_ms, self.last_heartbeat_ms) >= HEARTBEAT_MS:
            self.last_heartbeat_ms = now_ms
            self.out.extend(frame(HEARTBEAT, 0, struct.pack(
                ">IBBB", now_ms & 0xFFFFFFFF, self.mode, min(len(self.unacked), 255),
                self.sensors)))
        data = bytes(self.out)
        self.out = bytearray()
        return data

    def link_up(self, now_ms):
        """The host is reachable again (the port reopened): say hello, then resend."""
        self.out = bytearray()
        self.send_hello()
        self.resend_all(now_ms)


def _elapsed(now_ms, then_ms):
    # ticks_diff for a 32-bit millisecond counter that wraps.
    return (now_ms - then_ms) & 0xFFFFFFFF
