"""The shoe protocol's messages (PROTOCOL.md): typed values and their payloads. Sans-I/O."""

from __future__ import annotations

import struct
from dataclasses import dataclass

# Shoe to host.
HELLO = 0x01
HEARTBEAT = 0x02
CARD = 0x10
DECK_IN = 0x11
DECK_OUT = 0x12
FAULT = 0x13
MODE = 0x14
# Both ways / host to shoe.
ACK = 0x20
HELLO_ACK = 0x21
HOST_HELLO = 0x81
SET_MODE = 0x82

RELIABLE = frozenset({CARD, DECK_IN, DECK_OUT, FAULT, MODE})

MODE_DEALING = 0
MODE_DECK_CHECK = 1

FLAG_FACE_UP = 1
FLAG_BOXED = 2
FLAG_DECK_CHECK = 4
FLAG_TEXT_CUT = 8
FLAG_UNREADABLE = 16

UID_SIZES = (4, 7, 10)
MAX_PAYLOAD = 240

FAULT_CODES = {1: "reader", 2: "exit_sensor", 3: "stack_sensor", 4: "firmware"}


class PayloadError(ValueError):
    """A frame whose payload does not match its type (the device sent garbage)."""


@dataclass(frozen=True, slots=True)
class Hello:
    proto: int
    boot_id: int
    next_seq: int
    caps: int
    firmware: str
    shoe_id: str
    lost_cards: int | None = None  # card reads dropped from a full queue this boot (mod 2^16);
    # None from firmware before 1.1, which did not count them


@dataclass(frozen=True, slots=True)
class Heartbeat:
    ms: int
    mode: int
    unacked: int
    sensors: int


@dataclass(frozen=True, slots=True)
class CardDrawn:
    seq: int
    ms: int
    uid: bytes
    text: str
    face_up: bool
    boxed: bool
    deck_check: bool
    text_cut: bool = False  # the tag's text was longer than a frame holds
    unreadable: bool = False  # a card went out but its tag gave no UID

    @property
    def uid_hex(self) -> str:
        return self.uid.hex().upper()


@dataclass(frozen=True, slots=True)
class DeckInserted:
    seq: int
    ms: int


@dataclass(frozen=True, slots=True)
class DeckRemoved:
    seq: int
    ms: int


@dataclass(frozen=True, slots=True)
class Fault:
    seq: int
    ms: int
    code: int
    active: bool
    text: str

    @property
    def source(self) -> str:
        return FAULT_CODES.get(self.code, f"code{self.code}")


@dataclass(frozen=True, slots=True)
class ModeChanged:
    seq: int
    mode: int


ShoeMessage = Hello | Heartbeat | CardDrawn | DeckInserted | DeckRemoved | Fault | ModeChanged

_U32 = struct.Struct(">I")

# Every ``ms`` field is the shoe's clock in milliseconds, cut to 32 bits (PROTOCOL.md).
MS_WRAP = 1 << 32


def clock_zero_ms(host_ms: int) -> int:
    """Where a shoe whose clock is a host's millisecond clock cut to 32 bits (the simulated
    shoe's, on the host's monotonic clock) reads 0: the host's milliseconds at that clock's
    last wrap at or before ``host_ms``. The simulated shoe and a table that pins its mapping
    (``shoe.clock = "host"``) take it from here, so that both count from the same zero."""
    return host_ms - host_ms % MS_WRAP


def _take(payload: bytes, offset: int, size: int) -> tuple[bytes, int]:
    if offset + size > len(payload):
        raise PayloadError("payload shorter than its fields")
    return payload[offset:offset + size], offset + size


def _take_str(payload: bytes, offset: int, encoding: str = "ascii") -> tuple[str, int]:
    raw, offset = _take(payload, offset, 1)
    data, offset = _take(payload, offset, raw[0])
    try:
        return data.decode(encoding), offset
    except UnicodeDecodeError:
        raise PayloadError(f"text is not {encoding}") from None


def _done(payload: bytes, offset: int) -> None:
    if offset != len(payload):
        raise PayloadError("payload longer than its fields")


def parse(type_: int, seq: int, payload: bytes) -> ShoeMessage:
    """Parse a shoe-to-host message; ``PayloadError`` if it is malformed, ``KeyError`` if the
    type is unknown."""
    if type_ == HELLO:
        head, off = _take(payload, 0, 9)
        proto, boot_id, next_seq, caps = struct.unpack(">BIHH", head)
        firmware, off = _take_str(payload, off)
        shoe_id, off = _take_str(payload, off)
        lost_cards = None
        if off < len(payload):  # firmware 1.1 appends its count of lost card reads
            raw, off = _take(payload, off, 2)
            lost_cards = int.from_bytes(raw, "big")
        _done(payload, off)
        return Hello(proto, boot_id, next_seq, caps, firmware, shoe_id, lost_cards)
    if type_ == HEARTBEAT:
        if len(payload) != 7:
            raise PayloadError("heartbeat payload is 7 bytes")
        ms, mode, unacked, sensors = struct.unpack(">IBBB", payload)
        return Heartbeat(ms, mode, unacked, sensors)
    if type_ == CARD:
        head, off = _take(payload, 0, 5)
        ms, flags = struct.unpack(">IB", head)
        size, off = _take(payload, off, 1)
        unreadable = bool(flags & FLAG_UNREADABLE)
        if (size[0] != 0) if unreadable else (size[0] not in UID_SIZES):
            raise PayloadError(f"UID of {size[0]} bytes (tags have 4, 7 or 10; an unreadable "
                               "tag has none)")
        uid, off = _take(payload, off, size[0])
        text, off = _take_str(payload, off, "utf-8")
        _done(payload, off)
        return CardDrawn(seq, ms, uid, text, bool(flags & FLAG_FACE_UP),
                         bool(flags & FLAG_BOXED), bool(flags & FLAG_DECK_CHECK),
                         bool(flags & FLAG_TEXT_CUT), unreadable)
    if type_ in (DECK_IN, DECK_OUT):
        if len(payload) != 4:
            raise PayloadError("deck payload is 4 bytes")
        (ms,) = _U32.unpack(payload)
        return DeckInserted(seq, ms) if type_ == DECK_IN else DeckRemoved(seq, ms)
    if type_ == FAULT:
        head, off = _take(payload, 0, 6)
        ms, code, active = struct.unpack(">IBB", head)
        text, off = _take_str(payload, off)
        _done(payload, off)
        return Fault(seq, ms, code, bool(active), text)
    if type_ == MODE:
        if len(payload) != 1:
            raise PayloadError("mode payload is 1 byte")
        return ModeChanged(seq, payload[0])
    raise KeyError(type_)
