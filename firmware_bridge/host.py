"""The host's end of the shoe link, sans-I/O (after h11): bytes in, events out; commands in,
bytes out.

    link = HostLink()
    link.receive_data(serial_bytes)
    while (event := link.next_event()) is not NEED_DATA:
        ...                              # CardDrawn, DeckInserted, Hello, LinkNoise, ...
    port.write(link.data_to_send())      # acknowledgements and commands

Reliable messages are delivered once and in order (go-back-N, cumulative ACKs); retransmitted
ones are acknowledged again and dropped. What the device gets wrong is reported as events
(``LinkNoise``), never raised; what the caller gets wrong raises ``UsageError``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

from firmware_bridge import messages as m
from firmware_bridge.framing import Frame, FrameDecoder, Noise, UsageError, encode_frame


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()


@dataclass(frozen=True, slots=True)
class LinkNoise:
    """The device sent bytes that were not a valid message; they were skipped."""

    reason: str
    size: int
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class ShoeRestarted:
    """A HELLO with a new boot id: the shoe lost power; reads it had not sent are gone."""

    previous_boot: int
    boot_id: int


@dataclass(frozen=True, slots=True)
class Retransmission:
    """A reliable message seen again (its ACK was lost): acknowledged again, not delivered."""

    seq: int


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The transport opened the port (reported by the transport, not by the codec)."""

    port: str


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The port went away or could not be opened."""

    port: str
    reason: str


HostEvent = m.ShoeMessage | LinkNoise | ShoeRestarted | Retransmission
ShoeLinkEvent = HostEvent | LinkUp | LinkDown


@dataclass
class LinkStats:
    frames: int = 0
    delivered: int = 0
    retransmissions: int = 0
    ahead: int = 0
    noise: dict[str, int] = field(default_factory=dict)


class HostLink:
    def __init__(self) -> None:
        self._decoder = FrameDecoder()
        self._events: deque[HostEvent] = deque()
        self._out = bytearray()
        self._ack_due: int | None = None
        self.expected: int | None = None  # next reliable seq to accept; None until HELLO
        self.boot_id: int | None = None
        self.hello: m.Hello | None = None
        self.stats = LinkStats()

    # -- input
    def receive_data(self, data: bytes) -> None:
        for item in self._decoder.feed(data):
            if isinstance(item, Noise):
                self._noise(item.reason, item.size)
            else:
                self._frame(item)

    def next_event(self) -> HostEvent | _NeedData:
        return self._events.popleft() if self._events else NEED_DATA

    def events(self) -> list[HostEvent]:
        out = list(self._events)
        self._events.clear()
        return out

    # -- output
    def data_to_send(self) -> bytes:
        if self._ack_due is not None:
            self._out += encode_frame(m.ACK, self._ack_due)
            self._ack_due = None
        data = bytes(self._out)
        self._out.clear()
        return data

    def request_hello(self) -> None:
        self._out += encode_frame(m.HOST_HELLO, 0, bytes([1]))

    def set_mode(self, mode: int) -> None:
        if mode not in (m.MODE_DEALING, m.MODE_DECK_CHECK):
            raise UsageError(f"mode {mode!r} is not MODE_DEALING (0) or MODE_DECK_CHECK (1)")
        self._out += encode_frame(m.SET_MODE, 0, bytes([mode]))

    # -- internals
    def _noise(self, reason: str, size: int, seq: int | None = None) -> None:
        self.stats.noise[reason] = self.stats.noise.get(reason, 0) + 1
        self._events.append(LinkNoise(reason, size, seq))

    def _frame(self, frame: Frame) -> None:
        self.stats.frames += 1
        if frame.type in m.RELIABLE:
            self._reliable(frame)
            return
        try:
            message = m.parse(frame.type, frame.seq, frame.payload)
        except KeyError:
            self._noise("unknown_type", len(frame.payload))
            return
        except m.PayloadError:
            self._noise("bad_payload", len(frame.payload))
            return
        if isinstance(message, m.Hello):
            self._hello(message)
        self._events.append(message)

    def _hello(self, hello: m.Hello) -> None:
        if self.boot_id is not None and hello.boot_id != self.boot_id:
            self._events.append(ShoeRestarted(self.boot_id, hello.boot_id))
            self.expected = hello.next_seq
        elif self.expected is None:
            self.expected = hello.next_seq
        # Same boot, link back: keep our own count; the shoe's oldest unacked message may be
        # one we accepted whose ACK was lost, and it must not be delivered twice.
        self.boot_id = hello.boot_id
        self.hello = hello
        if self.expected is not None and (hello.next_seq - self.expected) & 0xFFFF >= 0x8000:
            self._ack_due = (self.expected - 1) & 0xFFFF

    def _reliable(self, frame: Frame) -> None:
        if self.expected is None:
            return  # before HELLO we cannot know the sequence: the shoe will send it again
        distance = (frame.seq - self.expected) & 0xFFFF
        if distance >= 0x8000:
            self.stats.retransmissions += 1
            self._events.append(Retransmission(frame.seq))
            self._ack_due = (self.expected - 1) & 0xFFFF
            return
        if distance > 0:
            self.stats.ahead += 1
            return  # a frame before it was lost: wait for the retransmission, in order
        self.expected = (self.expected + 1) & 0xFFFF
        self._ack_due = frame.seq
        try:
            message = m.parse(frame.type, frame.seq, frame.payload)
        except m.PayloadError:
            # Acknowledged all the same, or the shoe would resend it forever and block the line.
            self._noise("bad_payload", len(frame.payload), frame.seq)
            return
        self.stats.delivered += 1
        self._events.append(message)
