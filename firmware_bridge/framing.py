"""Frames on the shoe's serial line: COBS, CRC-16/CCITT-FALSE, resynchronisation. Sans-I/O.

``encode_frame`` turns (type, seq, payload) into bytes for the wire; ``FrameDecoder`` takes
bytes as they arrive, in any chunks, and yields decoded frames, or ``Noise`` for every stretch
of garbage it had to skip. It never raises for what the device sent.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass

VERSION = 1
MAX_PAYLOAD = 240
_HEADER = struct.Struct(">BBHB")  # version, type, seq, payload length
MIN_FRAME = _HEADER.size + 2
MAX_FRAME = _HEADER.size + MAX_PAYLOAD + 2
# An encoded frame is at most one byte per 254 longer than the frame, plus its code byte.
MAX_ENCODED = MAX_FRAME + MAX_FRAME // 254 + 2


class UsageError(ValueError):
    """The caller misused the codec (a bug in this program, not the device's fault)."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF (``binascii.crc_hqx`` computes exactly it)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    out = bytearray()
    for block in data.split(b"\x00"):
        while len(block) >= 254:
            out.append(0xFF)
            out += block[:254]
            block = block[254:]
        out.append(len(block) + 1)
        out += block
    return bytes(out)


class CobsError(ValueError):
    pass


def cobs_decode(data: bytes) -> bytes:
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise CobsError("zero byte inside an encoded frame")
        end = i + code
        if end > n:
            raise CobsError("frame ends inside a COBS block")
        out += data[i + 1:end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Frame:
    type: int
    seq: int
    payload: bytes = b""


@dataclass(frozen=True, slots=True)
class Noise:
    """Bytes the device sent that were not a valid frame, and why they were skipped."""

    reason: str  # bad_cobs, too_short, too_long, bad_crc, bad_version, bad_length
    size: int


def encode_frame(type_: int, seq: int, payload: bytes = b"") -> bytes:
    if not 0 <= type_ <= 0xFF or not 0 <= seq <= 0xFFFF:
        raise UsageError(f"frame type {type_} or seq {seq} out of range")
    if len(payload) > MAX_PAYLOAD:
        raise UsageError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = _HEADER.pack(VERSION, type_, seq, len(payload)) + payload
    # A delimiter before and after: noise on the line before a frame ends at the first one and
    # cannot corrupt the frame (an empty run between two delimiters is skipped).
    return b"\x00" + cobs_encode(body + crc16(body).to_bytes(2, "big")) + b"\x00"


def decode_frame(encoded: bytes) -> Frame | Noise:
    """Decode one frame's bytes (without the delimiter)."""
    if len(encoded) > MAX_ENCODED:
        return Noise("too_long", len(encoded))
    try:
        raw = cobs_decode(encoded)
    except CobsError:
        return Noise("bad_cobs", len(encoded))
    if len(raw) < MIN_FRAME:
        return Noise("too_short", len(encoded))
    if len(raw) > MAX_FRAME:
        return Noise("too_long", len(encoded))
    if crc16(raw[:-2]) != int.from_bytes(raw[-2:], "big"):
        return Noise("bad_crc", len(encoded))
    version, type_, seq, length = _HEADER.unpack_from(raw)
    if version != VERSION:
        return Noise("bad_version", len(encoded))
    if length != len(raw) - MIN_FRAME:
        # A corrupted delimiter can add a zero byte that a CRC without final XOR still
        # accepts; the length field catches it.
        return Noise("bad_length", len(encoded))
    return Frame(type_, seq, raw[_HEADER.size:-2])


class FrameDecoder:
    """Bytes in (any chunking), frames and noise out, in order."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._discarding = False  # inside an over-long run: skip to the next delimiter

    def feed(self, data: bytes) -> list[Frame | Noise]:
        out: list[Frame | Noise] = []
        buffer = self._buffer
        buffer += data
        start = 0
        while True:
            end = buffer.find(0, start)
            if end < 0:
                break
            chunk = bytes(buffer[start:end])
            start = end + 1
            if self._discarding:
                self._discarding = False
                out.append(Noise("too_long", len(chunk)))
                continue
            if chunk:
                out.append(decode_frame(chunk))
        del buffer[:start]
        if len(buffer) > MAX_ENCODED:
            # No delimiter for longer than any frame can be: drop it, resync at the next 0x00.
            if not self._discarding:
                self._discarding = True
            buffer.clear()
        return out

    @property
    def pending(self) -> int:
        return len(self._buffer)
