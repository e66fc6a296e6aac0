"""Shoe-side payloads for the tests and benchmarks that play the shoe without its firmware (the
firmware builds its own: ``firmware_bridge/firmware/protocol.py``; the golden vectors check that
both agree)."""

from __future__ import annotations

import struct

from firmware_bridge.messages import FLAG_BOXED, FLAG_DECK_CHECK, FLAG_FACE_UP


def _str(text: str, encoding: str = "ascii") -> bytes:
    data = text.encode(encoding)
    if len(data) > 255:
        raise ValueError("text longer than 255 bytes")
    return bytes([len(data)]) + data


def hello_payload(boot_id: int, next_seq: int, caps: int, firmware: str, shoe_id: str,
                  lost_cards: int | None = 0) -> bytes:
    tail = b"" if lost_cards is None else struct.pack(">H", lost_cards)
    return struct.pack(">BIHH", 1, boot_id, next_seq, caps) + _str(firmware) + _str(shoe_id) + tail


def card_payload(ms: int, uid: bytes, text: str = "", face_up: bool = False,
                 boxed: bool = False, deck_check: bool = False) -> bytes:
    flags = ((FLAG_FACE_UP if face_up else 0) | (FLAG_BOXED if boxed else 0)
             | (FLAG_DECK_CHECK if deck_check else 0))
    return struct.pack(">IB", ms, flags) + bytes([len(uid)]) + uid + _str(text, "utf-8")
