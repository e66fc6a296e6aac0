"""The host's end of the shoe link, sans-I/O (after h11): bytes in, events out; commands in,
bytes out.

    link = HostLink()
    link.receive_data(serial_bytes)
    while (event := link.next_event()) is not NEED_DATA:
        ...                              # CardDrawn, DeckInserted, Hello, LinkNoise, ...
    port.write(link.data_to_send())      # acknowledgements and commands

Reliable messages are delivered once and in order (go-back-N, cumulative ACKs); retransmitted
ones are acknowledged again and dropped; messages the shoe dropped from a full queue are reported
by sequence number (``ReadsLost``) and the link carries on from the shoe's numbering. The link
never waits for something that cannot come: a frame ahead of the expected number, or a reliable
frame before any HELLO, makes it ask the shoe for a HELLO. What the device gets wrong is reported
as events (``LinkNoise``), never raised; what the caller gets wrong raises ``UsageError``.
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
class ReadsLost:
    """The shoe dropped reliable messages it could not deliver (its queue was full while the
    host was away): sequence numbers ``first_seq`` .. ``first_seq + count - 1``, of which
    ``cards`` were card reads (None when the firmware does not count them)."""

    first_seq: int
    count: int
    cards: int | None

    @property
    def last_seq(self) -> int:
        return (self.first_seq + self.count - 1) & 0xFFFF


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


HostEvent = m.ShoeMessage | LinkNoise | ShoeRestarted | Retransmission | ReadsLost
ShoeLinkEvent = HostEvent | LinkUp | LinkDown


@dataclass
class LinkStats:
    frames: int = 0
    delivered: int = 0
    lost: int = 0
    hello_requests: int = 0
    noise: dict[str, int] = field(default_factory=dict)


class HostLink:
    def __init__(self) -> None:
        self._decoder = FrameDecoder()
        self._events: deque[HostEvent] = deque()
        self._out = bytearray()
        self._ack_due: int | None = None
        self._hello_ack_due: int | None = None  # boot id whose HELLO is to be answered
        self.expected: int | None = None  # next reliable seq to accept; None until HELLO
        self.boot_id: int | None = None
        self.hello: m.Hello | None = None
        self._lost_cards: int | None = None  # the shoe's count at its last HELLO
        self._hello_wanted = False  # a HOST_HELLO is out and no HELLO or progress since
        self._last_stalled: int | None = None  # seq of the last frame we could not accept
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
        if self._hello_ack_due is not None and self.expected is not None:
            # Answers the HELLO and acknowledges at once (a plain ACK would be redundant).
            self._out += encode_frame(m.HELLO_ACK, (self.expected - 1) & 0xFFFF,
                                      self._hello_ack_due.to_bytes(4, "big"))
            self._hello_ack_due = None
            self._ack_due = None
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

    def _stalled(self, seq: int) -> None:
        """A reliable frame we cannot accept. Ask for a HELLO once per round of the shoe's
        retransmissions: a frame numbered at or before the last one we could not accept means
        the shoe started a new round, so our request or its answer was lost; ask again."""
        last = self._last_stalled
        if last is not None and not 0 < (seq - last) & 0xFFFF < 0x8000:
            self._hello_wanted = False
        self._last_stalled = seq
        self._ask_for_hello()

    def _ask_for_hello(self) -> None:
        if not self._hello_wanted:
            self._hello_wanted = True
            self.stats.hello_requests += 1
            self.request_hello()

    def _lost(self, first: int, count: int, cards: int | None) -> None:
        # The card reads among them can be no more than them (a count that wrapped is not).
        self._events.append(ReadsLost(first, count, None if cards is None else min(cards, count)))
        self.stats.lost += count

    def _hello(self, hello: m.Hello) -> None:
        self._hello_wanted = False
        self._last_stalled = None
        if self.boot_id is not None and hello.boot_id != self.boot_id:
            self._events.append(ShoeRestarted(self.boot_id, hello.boot_id))
            self.expected = hello.next_seq
            if hello.next_seq:
                # A boot numbers from 0 and releases nothing before we answer its HELLO: a
                # first HELLO past 0 means its queue overflowed while we were away.
                self._lost(0, hello.next_seq, hello.lost_cards)
            # Whatever of the old boot was accepted in this same read must not be acknowledged
            # to the new boot, whose numbers mean other messages.
            self._ack_due = None
        elif self.expected is None:
            self.expected = hello.next_seq
        else:
            gap = (hello.next_seq - self.expected) & 0xFFFF
            if 0 < gap < 0x8000:
                # Same boot, and the oldest message the shoe still holds is past what we
                # accepted: the ones between were dropped from its full queue. Say which, and
                # carry on from the shoe's numbering (waiting for them would wait forever).
                cards = None
                if hello.lost_cards is not None and self._lost_cards is not None:
                    cards = (hello.lost_cards - self._lost_cards) & 0xFFFF
                self._lost(self.expected, gap, cards)
                self.expected = hello.next_seq
            elif gap:
                # Behind: the shoe's oldest unacked message is one we accepted whose ACK was
                # lost; keep our count (it must not be delivered twice) and acknowledge again.
                self._ack_due = (self.expected - 1) & 0xFFFF
        self.boot_id = hello.boot_id
        self.hello = hello
        self._lost_cards = hello.lost_cards
        # Tell the shoe we follow this boot's numbering: until then it holds its messages.
        self._hello_ack_due = hello.boot_id

    def _reliable(self, frame: Frame) -> None:
        if self.expected is None:
            # Before HELLO we cannot know the numbering: ask (the HELLO may have been lost on
            # the line); the shoe will send this again.
            self._stalled(frame.seq)
            return
        distance = (frame.seq - self.expected) & 0xFFFF
        if distance >= 0x8000:
            self._events.append(Retransmission(frame.seq))
            self._ack_due = (self.expected - 1) & 0xFFFF
            return
        if distance > 0:
            # A frame before it was lost on the line (the retransmission brings it), or the
            # shoe dropped it from a full queue (its HELLO says so): ask, so neither can stall.
            self._stalled(frame.seq)
            return
        self._hello_wanted = False
        self._last_stalled = None
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
