"""A simulated PN532 NFC controller with NTAG21x cards in its field.

It speaks the PN532 host frame protocol (``00 00 FF LEN LCS D4 CMD ... DCS 00``, ACK frames)
over a pty as the PN532's high-speed UART does, so nfcpy's own ``pn532`` driver runs against it
unchanged; and over a fake I2C bus (status byte before each read) for the shoe firmware's
driver. It answers the commands those drivers use: GetFirmwareVersion, SAMConfiguration,
SetSerialBaudrate, SetParameters, RFConfiguration, Read/WriteRegister, InListPassiveTarget,
InCommunicateThru and InDataExchange (Type 2 tag READ, GET_VERSION, READ_SIG), Diagnose.

    pn532 = SimulatedPN532Tty(tmp_path / "nfc").start()
    pn532.present(Ntag215(uid, "R1:As"))   # a card (or a dealer's badge) enters the field
    pn532.remove()
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import tty
from pathlib import Path

ACK = b"\x00\x00\xff\x00\xff\x00"
VERSIONS = {  # GET_VERSION answers of NXP NTAG21x
    "NTAG213": bytes.fromhex("0004040201000f03"),
    "NTAG215": bytes.fromhex("0004040201001103"),
    "NTAG216": bytes.fromhex("0004040201001303"),
}
PAGES = {"NTAG213": 45, "NTAG215": 135, "NTAG216": 231}
CC_SIZE = {"NTAG213": 0x12, "NTAG215": 0x3E, "NTAG216": 0x6D}


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 type A CRC, appended least significant byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def ndef_text_message(text: str, language: str = "en") -> bytes:
    lang = language.encode()
    payload = bytes((len(lang),)) + lang + text.encode()
    if len(payload) > 255:
        raise ValueError("text too long for a short record")
    return bytes((0xD1, 1, len(payload))) + b"T" + payload


class Ntag:
    """An NTAG21x card: 7-byte UID, capability container, an NDEF Text record (or none)."""

    def __init__(self, uid: bytes, text: str | None = None, kind: str = "NTAG215") -> None:
        if len(uid) != 7:
            raise ValueError("NTAG UIDs are 7 bytes")
        self.uid = uid
        self.kind = kind
        memory = bytearray(PAGES[kind] * 4)
        bcc0 = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        bcc1 = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        memory[0:12] = uid[0:3] + bytes((bcc0,)) + uid[3:7] + bytes((bcc1, 0x48, 0, 0))
        memory[12:16] = bytes((0xE1, 0x10, CC_SIZE[kind], 0x00))
        message = ndef_text_message(text) if text is not None else b""
        tlv = bytes((0x03, len(message))) + message + b"\xfe"
        memory[16:16 + len(tlv)] = tlv
        self.memory = bytes(memory)

    def respond(self, command: bytes) -> bytes | None:
        """The card's answer (with CRC_A) to a raw command, or None for no answer."""
        if not command:
            return None
        if command[0] == 0x30 and len(command) >= 2:  # READ: 4 pages
            page = command[1]
            if page >= len(self.memory) // 4:
                return b"\x00"  # NAK, 4 bits: no CRC
            data = (self.memory + self.memory[:16])[page * 4:page * 4 + 16]
            return data + crc_a(data)
        if command[0] == 0x60:  # GET_VERSION
            data = VERSIONS[self.kind]
            return data + crc_a(data)
        if command[0] == 0x3C:  # READ_SIG
            data = bytes(32)
            return data + crc_a(data)
        return None  # unsupported (e.g. Ultralight C AUTHENTICATE): the card stays silent


Ntag215 = Ntag


class SimulatedPN532:
    """The chip: one host command frame in, ACK and response frames out."""

    def __init__(self) -> None:
        self.tag: Ntag | None = None
        self.selected = False  # a card answers READ only once selected (InListPassiveTarget)
        self.registers: dict[int, int] = {}
        self.commands: list[int] = []
        self.lock = threading.Lock()

    def present(self, tag: Ntag) -> None:
        """A card enters the field (replacing any card there): it is not selected yet."""
        with self.lock:
            self.tag = tag
            self.selected = False

    def remove(self) -> None:
        with self.lock:
            self.tag = None
            self.selected = False

    @staticmethod
    def response_frame(cmd: int, data: bytes) -> bytes:
        body = bytes((0xD5, cmd + 1)) + data
        length = len(body)
        if length < 256:
            head = bytes((0x00, 0x00, 0xFF, length, (-length) & 0xFF))
        else:  # extended frame
            high, low = length >> 8, length & 0xFF
            head = bytes((0x00, 0x00, 0xFF, 0xFF, 0xFF, high, low, (-(high + low)) & 0xFF))
        return head + body + bytes(((-sum(body)) & 0xFF, 0x00))

    def command(self, cmd: int, params: bytes) -> bytes:
        """Response data (after D5, CMD+1) for a host command."""
        self.commands.append(cmd)
        with self.lock:
            tag = self.tag
        if cmd == 0x00:  # Diagnose: the communication line test echoes its data
            return params
        if cmd == 0x02:
            return bytes((0x32, 0x01, 0x06, 0x07))
        if cmd == 0x06:  # ReadRegister: big-endian addresses
            values = []
            for i in range(0, len(params) - 1, 2):
                address = params[i] << 8 | params[i + 1]
                if address == 0x6339 and tag is None:
                    values.append(0x26)  # SENS_REQ still in the FIFO: nothing answered
                else:
                    values.append(self.registers.get(address, 0))
            return bytes(values)
        if cmd == 0x08:
            for i in range(0, len(params) - 2, 3):
                self.registers[params[i] << 8 | params[i + 1]] = params[i + 2]
            return b""
        if cmd == 0x4A:  # InListPassiveTarget, 106 kbps type A
            if tag is None or len(params) < 2 or params[1] != 0:
                return b"\x00"
            with self.lock:
                self.selected = self.tag is tag
            return bytes((1, 1, 0x00, 0x44, 0x00, len(tag.uid))) + tag.uid
        if cmd in (0x42, 0x40):  # InCommunicateThru / InDataExchange
            raw = params if cmd == 0x42 else params[1:]
            with self.lock:
                selected = self.selected
            answer = tag.respond(raw) if tag is not None and selected else None
            if answer is None:
                return b"\x01"  # timeout: the target has not answered
            if cmd == 0x40:
                answer = answer[:-2] if len(answer) > 2 else answer
            return b"\x00" + answer
        # SAMConfiguration, SetSerialBaudrate, SetParameters, RFConfiguration, PowerDown,
        # InRelease, InDeselect...: acknowledged and done.
        return b"\x00" if cmd in (0x16, 0x44, 0x52) else b""


class FrameParser:
    """Host-to-PN532 frames out of a byte stream (preambles and wake-up bytes skipped)."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes] | None]:
        """Commands ``(cmd, params)``; ``None`` for an ACK frame from the host (a cancel)."""
        self.buffer += data
        out: list[tuple[int, bytes] | None] = []
        while True:
            start = self.buffer.find(b"\x00\xff")
            if start < 0 or len(self.buffer) < start + 4:
                if start < 0:
                    del self.buffer[:-1]
                return out
            length, lcs = self.buffer[start + 2], self.buffer[start + 3]
            if length == 0 and lcs == 0xFF:
                out.append(None)
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
            out.append((body[1], body[2:]))


class SimulatedPN532Tty:
    """The chip behind its high-speed UART: a pty pair, the host side a stable symlink."""

    def __init__(self, port: Path | str, chip: SimulatedPN532 | None = None) -> None:
        self.port = Path(port)
        self.chip = chip or SimulatedPN532()
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

    def present(self, tag: Ntag) -> None:
        self.chip.present(tag)

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
        assert self._master is not None
        while self._running:
            try:
                data = os.read(self._master, 4096)
            except (BlockingIOError, OSError):
                time.sleep(0.001)
                continue
            for item in self._parser.feed(data):
                if item is None:
                    continue  # the host's ACK (after SetSerialBaudrate, or a cancel)
                cmd, params = item
                reply = ACK + SimulatedPN532.response_frame(cmd, self.chip.command(cmd, params))
                with contextlib.suppress(OSError):
                    os.write(self._master, reply)


class SimulatedPN532I2C:
    """The chip on I2C as the shoe firmware's driver sees it: ``writeto`` a frame, ``readfrom``
    a status byte (0x01 ready) followed by the ACK, then by the response."""

    def __init__(self, chip: SimulatedPN532 | None = None, address: int = 0x24) -> None:
        self.chip = chip or SimulatedPN532()
        self.address = address
        self._parser = FrameParser()
        self._pending: list[bytes] = []

    def writeto(self, address: int, data: bytes) -> None:
        if address != self.address:
            raise OSError(19, "no device at that address")
        for item in self._parser.feed(bytes(data)):
            if item is not None:
                cmd, params = item
                self._pending += [ACK, SimulatedPN532.response_frame(
                    cmd, self.chip.command(cmd, params))]

    def readfrom(self, address: int, count: int) -> bytes:
        if address != self.address:
            raise OSError(19, "no device at that address")
        if not self._pending:
            return bytes(count)  # status 0x00: not ready
        if count == 1:
            return b"\x01"
        frame = self._pending.pop(0)
        return (b"\x01" + frame + bytes(count))[:count]
