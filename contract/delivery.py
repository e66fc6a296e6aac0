"""Delivery without I/O: what a table's link and a venue's uplink send, and when. Fed the rows
to send, the broker's PUBACKs, the recorder's requests and the connection's ups and downs,
each sender says which messages to publish (their payloads, ready) and which rows may be
dropped; the MQTT, NATS and database shells around them are ``hardware/mqtt_link.py`` and
``group/uplink.py``. So the rules can be driven through loss, duplication, reordering and
restarts in milliseconds, with the recorder's own pure rules (``hub/ledger.py``,
``group/gaps.py``), in ``tests/test_delivery.py``.

``OutboxSender`` (a table's link to its venue's recorder): the outbox's rows in ``seq`` order,
at most ``max_inflight`` messages the broker has not acknowledged, each to ``private`` (whole)
and ``events`` (public view), QoS 1. A row may be dropped only once the recorder's ``ack``
covers it, never on a PUBACK. A connection starts again from the acknowledged count: what was
unacknowledged goes again, the backlog (up to the last row at connect) flagged ``historical``
and sent several events a message, live rows one a message. A replay request with ``to_seq``
(a gap the recorder found) sends that gap ahead of what comes next; without, everything after
``from_seq``.

``UplinkSender`` (a venue's uplink to the group's central recorder, through the cluster): each
stream's recorded events (a stream is a table's incarnation, ``(table, incarnation)``: its
seqs run from its first, which need not be 1), in order and without a gap, in batches, at most
``window`` messages in flight and ``per_table`` of them for one stream. A stream's count moves
only when the central recorder has answered its messages in order (it answers after its
commit); a message not answered within ``answer_timeout`` (a multiple of the answers' recent
delay, 1 s at least), and everything in flight when the connection drops, goes again from the
stream's count (core NATS keeps nothing for anybody). The central recorder's request to send
again moves a count back; the counts are reported to the centre every ``report_seconds``.

Neither sender holds a database: reading rows is a function passed to ``pump`` (and
``replay``), called there and nowhere else. Feeding the rows in instead would turn each
read-ahead into a request and an answer with the same reads; a test passes a list's slice.
Each message is named by a number of the sender's own (a shell maps paho's ``mid`` to it, or
puts it in the reply subject), so an acknowledgement needs no client.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from contract.envelope import envelope
from contract.wire import encode

# ---------------------------------------------------------------------- a table's link

MAX_GAP_REPLAY = 2000  # rows of one gap sent again per request (the recorder asks again)
BATCH_EVENTS = 50  # backlog events a message at most (the contract allows 100)
MAX_BATCH_BYTES = 128 * 1024  # a consumer takes messages of up to 256 kB
READ_AHEAD = 500  # outbox rows a read: one query per few hundred rows, not per PUBACK

Row = tuple[int, int, int, dict[str, Any], str]  # an outbox row: seq, ts_ms, boot, event,
# and the incarnation that made it
# An event's public view, or None when all of it is private: ``contract.views.public_event``,
# passed in so that the uplink and the central recorder, which import this module, start
# without the core's event classes (36 ms of CPU each; five uplinks start at once).
PublicView = Callable[[dict[str, Any]], dict[str, Any] | None]
RowReader = Callable[[int, int], list[Row]]  # (after, limit): rows with seq > after, in order


@dataclass(frozen=True, slots=True)
class TableMessage:
    """One message on ``private`` and, unless every event is private, one on ``events``.
    ``number`` names it for ``OutboxSender.puback``."""

    number: int
    private: str
    public: str | None
    seqs: tuple[int, ...]
    historical: int  # how many of its events are flagged historical


def _message(envelopes: list[dict[str, Any]]) -> str:
    """One envelope as itself; several as a batch (``EnvelopeBatch`` in the contract)."""
    return encode(envelopes[0]) if len(envelopes) == 1 else encode({"v": 1,
                                                                    "batch": envelopes})


class OutboxSender:
    def __init__(self, *, venue: str, table: str, public_view: PublicView,
                 max_inflight: int = 16, max_gap_replay: int = MAX_GAP_REPLAY,
                 read_ahead: int = READ_AHEAD) -> None:
        self.venue = venue
        self.table = table
        self.public_view = public_view
        self.max_inflight = max_inflight
        self.max_gap_replay = max_gap_replay
        self.read_ahead = read_ahead
        self.connected = False
        self._inflight: dict[int, int] = {}  # message number -> its last seq
        self._numbered = 0
        self._sent_upto = 0
        self._buffer: deque[Row] = deque()  # rows read ahead
        self._backlog_upto = 0

    @property
    def in_flight(self) -> int:
        """Messages the broker has not acknowledged yet."""
        return len(self._inflight)

    def connect(self, acked_upto: int, last_seq: int) -> None:
        """Connected: everything above the recorder's count goes again, what the outbox holds
        now as the backlog."""
        self.connected = True
        self._inflight.clear()
        self._buffer.clear()
        self._sent_upto = acked_upto
        self._backlog_upto = last_seq

    def disconnect(self) -> None:
        self.connected = False
        self._inflight.clear()

    def puback(self, number: int) -> bool:
        """The broker holds message ``number``: its place in the window is free (its rows stay
        in the outbox). False: not a message of this connection."""
        return self._inflight.pop(number, None) is not None

    def acked(self, upto: int) -> int:
        """The recorder holds every seq up to ``upto``: the outbox may drop the rows up to the
        returned seq (it keeps the newest for replays). A PUBACK drops nothing: the broker is
        not the recorder."""
        return upto

    def pump(self, read: RowReader) -> list[TableMessage]:
        """The messages to publish now, in order (none while disconnected)."""
        messages: list[TableMessage] = []
        if not self.connected:
            return messages
        while len(self._inflight) < self.max_inflight:
            if not self._buffer:
                self._buffer.extend(read(self._sent_upto, self.read_ahead))
                if not self._buffer:
                    break
            rows = [self._buffer.popleft()]
            if rows[0][0] <= self._backlog_upto:
                # The backlog after an outage goes several events to a message: far fewer
                # messages for the broker and both ends (live events stay one a message).
                if not self._buffer:
                    self._buffer.extend(read(max(self._sent_upto, rows[0][0]),
                                             self.read_ahead))
                while (self._buffer and len(rows) < BATCH_EVENTS
                       and self._buffer[0][0] == rows[-1][0] + 1
                       and self._buffer[0][0] <= self._backlog_upto):
                    rows.append(self._buffer.popleft())
            self._publish(rows, messages)
        return messages

    def _publish(self, rows: list[Row], messages: list[TableMessage]) -> None:
        """One message for ``rows`` (consecutive): a single envelope, or a batch of the
        backlog's (halved until it fits)."""
        private, public = [], []
        for seq, ts, boot, event, incarnation in rows:
            historical = seq <= self._backlog_upto
            private.append(envelope(event, venue=self.venue, table=self.table, seq=seq,
                                    boot=boot, ts_ms=ts, historical=historical,
                                    incarnation=incarnation))
            shown = self.public_view(event)
            if shown is not None:
                public.append(envelope(shown, venue=self.venue, table=self.table, seq=seq,
                                       boot=boot, ts_ms=ts, historical=historical,
                                       incarnation=incarnation))
        text = _message(private)
        if len(rows) > 1 and len(text) > MAX_BATCH_BYTES:
            half = len(rows) // 2
            self._publish(rows[:half], messages)
            self._publish(rows[half:], messages)
            return
        last = rows[-1][0]
        self._numbered += 1
        messages.append(TableMessage(
            self._numbered, text, _message(public) if public else None,
            tuple(seq for seq, *_ in rows), sum(seq <= self._backlog_upto for seq, *_ in rows)))
        self._inflight[self._numbered] = last
        self._sent_upto = max(self._sent_upto, last)  # a gap's rows come before the rest

    def replay(self, from_seq: int, to_seq: int | None, *, oldest: int | None, last: int,
               read: RowReader) -> tuple[str | None, dict[str, Any]]:
        """A replay request (``oldest``: the outbox's oldest row kept, ``last``: its last):
        send again from ``from_seq`` to ``to_seq`` (a gap the recorder found, at most
        ``max_gap_replay`` rows), then on from where the link had got; without ``to_seq``,
        everything after it again. Returns the error (None: done) and what the answer says."""
        if from_seq < 1 or from_seq > last + 1:
            return f"from_seq {from_seq} is outside 1..{last + 1}", {"last_seq": last}
        if to_seq is not None and not from_seq <= to_seq <= last:
            return f"to_seq {to_seq} is outside {from_seq}..{last}", {"last_seq": last}
        if oldest is None or from_seq < oldest:
            return (f"events before seq {oldest or last + 1} are no longer kept",
                    {"oldest": oldest or last + 1, "last_seq": last})
        if to_seq is None:
            self._sent_upto = min(self._sent_upto, from_seq - 1)
            self._buffer.clear()
            self._backlog_upto = max(self._backlog_upto, last)
            return None, {"from_seq": from_seq, "last_seq": last}
        # Only the gap, ahead of what was to be sent next (what is not sent yet comes anyway).
        sent = min(to_seq, self._sent_upto)
        upto = min(sent, from_seq + self.max_gap_replay - 1)
        if upto >= from_seq:
            self._buffer.extendleft(reversed(read(from_seq - 1, upto - from_seq + 1)))
            self._backlog_upto = max(self._backlog_upto, upto)
        # What this request covers: the whole gap, unless it was longer than one replay.
        return None, {"from_seq": from_seq, "to_seq": upto if upto < sent else to_seq,
                      "last_seq": last}


# ---------------------------------------------------------------------- a venue's uplink

UPLINK_BATCH_EVENTS = 100  # the contract's EnvelopeBatch maxItems
UPLINK_BATCH_BYTES = 120_000  # the contract's EnvelopeBatch: at most 128 kB, with the wrapper
COUNTS_PER_MESSAGE = 500  # the contract's UplinkCounts: streams a message
REPORT_MESSAGES = 4  # UplinkCounts messages a report at most: more streams take turns

# A table's incarnation, (table, incarnation): what the uplink counts (``contract.envelope.Stream``
# is one). Its seqs run without a gap from its first (``since``), which need not be 1.
StreamKey = tuple[str, str]
S = TypeVar("S", bound=StreamKey)
# (stream, first, last): the stored JSON of the stream's events first..last, by seq
RawReader = Callable[[S, int, int], list[tuple[int, str]]]
# (stream, seq): the first seq at or after it that the hub's database holds (None: none)
FirstHeld = Callable[[S, int], int | None]


@dataclass(frozen=True, slots=True)
class UplinkMessage(Generic[S]):
    """One message on ``stream``'s table's ``private`` topic: an envelope, or an
    ``EnvelopeBatch``, of that incarnation's events."""

    number: int
    stream: S
    payload: str
    first_seq: int
    last_seq: int

    @property
    def table(self) -> str:
        return self.stream[0]


@dataclass
class UplinkStats:
    messages: int = 0
    events: int = 0
    acknowledged: int = 0  # events the central recorder holds
    sent_again: int = 0  # events the central recorder asked for again
    unanswered: int = 0  # messages sent again: no answer in time, or the connection lost


@dataclass
class _InFlight:
    last_seq: int
    number: int
    sent_at: float
    done: bool = False


class UplinkSender(Generic[S]):
    # An answer's delay, smoothed: the timeout is ``answer_factor`` times it, ``answer_floor``
    # at least, doubled at each expiry that found a message unanswered (up to
    # ``answer_backoff_cap`` times) and back to once at the next answer in time. Under a
    # backlog the centre answers later as its queue grows, and so the timeout; a late answer
    # still teaches the delay (the message is sent again all the same); a centre that stalls
    # is not flooded with copies; a message lost with a node goes again after about the floor.
    answer_floor = 1.0
    answer_factor = 4.0
    answer_backoff_cap = 16.0
    late_kept = 4096  # expired messages whose late answer may still teach the delay

    def __init__(self, *, window: int = 64, per_table: int = 4,
                 report_seconds: float = 2.0) -> None:
        self.window = window  # messages in flight to the centre
        self.per_table = per_table  # of them for one stream (a venue's tables share the link)
        self.report_seconds = report_seconds
        self.stats = UplinkStats()
        self.connected = False
        self.delay = 0.0  # the centre's answers' recent delay, seconds
        self.backoff = 1.0  # the timeout's multiplier: doubled at each expiry, reset by answers
        self.refused: dict[S, str] = {}  # streams the centre refused, and why: parked
        self._expired: dict[int, float] = {}  # number -> sent_at, of messages sent again
        # Per stream: held by the centre, without a gap (from the stream's first seq: what
        # comes before it is another incarnation's).
        self.sent: dict[S, int] = {}
        self.since: dict[S, int] = {}  # per stream: its first seq, as the hub says
        self._unsaved: set[S] = set()  # ``sent`` or ``gone`` moved since ``saved``
        self._queued: dict[S, int] = {}  # per stream: the last seq handed to publish
        self._flight: dict[S, deque[_InFlight]] = {}
        self._by_number: dict[int, S] = {}
        self._numbered = 0
        # Per stream: the seq up to which the venue's events are gone for good (the hub's
        # database lost them before they were sent): never sent, said to the centre.
        self.gone: dict[S, int] = {}
        self._last_report = -math.inf
        self._reported_last: S | None = None  # where the next report's turn begins
        # The streams behind the hub's counts, found at the last look at them (``pump``):
        # looked at again when the counts are new or a stream's count went back.
        self._scanned: Mapping[S, int] | None = None
        self._behind: list[S] = []

    def load(self, sent: Mapping[S, int],
             gone: Mapping[S, int] | None = None) -> None:
        """The counts saved before (``sent``) and the gaps found before (``gone``), at start:
        sent again from there."""
        self.gone = dict(gone or {})
        self.sent = {stream: max(count, self.gone.get(stream, 0))
                     for stream, count in {**self.gone, **sent}.items()}
        self._queued = dict(self.sent)
        self._scanned = None

    @property
    def dirty(self) -> bool:
        """``sent`` or ``gone`` moved since ``saved``."""
        return bool(self._unsaved)

    def unsaved(self) -> list[tuple[S, int, int]]:
        """What moved since ``saved``, for the state file: (stream, sent, gone)."""
        return [(stream, self.sent.get(stream, 0), self.gone.get(stream, 0))
                for stream in sorted(self._unsaved)]

    def saved(self) -> None:
        """The shell saved what ``unsaved`` gave."""
        self._unsaved.clear()

    def connect(self) -> None:
        """Connected: the counts go to the centre at once (a new session may have lost some)."""
        self.connected = True
        self._last_report = -math.inf

    def disconnect(self) -> None:
        """What was in flight goes again from each stream's count, on the next connection
        (an answer that still comes for it is taken: its number is forgotten)."""
        self.connected = False
        for stream in list(self._flight):
            self._again(stream)

    @property
    def answer_timeout(self) -> float:
        return max(self.answer_floor, self.answer_factor * self.delay) * self.backoff

    def expire(self, now: float) -> list[S]:
        """The streams whose oldest unanswered message is older than ``answer_timeout``: what
        they have in flight goes again from their counts, and the timeout doubles. Returns
        them."""
        late = now - self.answer_timeout
        expired = [stream for stream, flight in self._flight.items()
                   if any(not entry.done and entry.sent_at < late for entry in flight)]
        for stream in expired:
            self._again(stream)
        if expired:
            self.backoff = min(self.backoff * 2, self.answer_backoff_cap)
        return expired

    def _again(self, stream: S) -> None:
        flight = self._flight.pop(stream, None)
        if not flight:
            return
        for entry in flight:
            self._by_number.pop(entry.number, None)
            if not entry.done:
                self.stats.unanswered += 1
                self._expired[entry.number] = entry.sent_at
        while len(self._expired) > self.late_kept:  # the oldest first (insertion order)
            del self._expired[next(iter(self._expired))]
        self._queued[stream] = self.sent.get(stream, 0)
        self._scanned = None

    def refuse(self, number: int, reason: str) -> S | None:
        """The centre refused message ``number`` (the contract does not allow what it carried):
        its stream is parked, nothing of it counted or sent again until the uplink starts
        again (someone must mend the cause: a venue ahead of the centre's contract, a wrong
        venue id). Returns the stream, the first time only."""
        stream = self._by_number.get(number)
        if stream is None or stream in self.refused:
            return None
        self.refused[stream] = reason
        self._again(stream)
        return stream

    @property
    def in_flight(self) -> int:
        return len(self._by_number)

    def puback(self, number: int, now: float = 0.0) -> None:
        """The centre holds message ``number``: the stream's count moves over every message
        of it held in order. (``now``: when the answer came, for ``answer_timeout``.)"""
        stream = self._by_number.pop(number, None)
        if stream is None:
            sent_at = self._expired.pop(number, None)
            if sent_at is not None and now:  # late, and sent again: it still says the delay
                self.delay += 0.2 * (max(0.0, now - sent_at) - self.delay)
            return
        flight = self._flight[stream]
        for entry in flight:
            if entry.number == number:
                entry.done = True
                if now:
                    self.delay += 0.2 * (max(0.0, now - entry.sent_at) - self.delay)
                    self.backoff = 1.0
        while flight and flight[0].done:
            entry = flight.popleft()
            self.stats.acknowledged += entry.last_seq - self.sent.get(stream, 0)
            self.sent[stream] = entry.last_seq
            self._unsaved.add(stream)
        if not flight:
            del self._flight[stream]

    def resend(self, asked: Mapping[S, int]) -> list[tuple[S, int, int]]:
        """The central recorder lacks some streams' events after a seq (``asked``): move their
        counts back to it, so they are sent again. A stream with messages still in flight is
        left for the recorder's next request. Returns those moved back: (stream, the seq they
        go again after, how many events)."""
        again: list[tuple[S, int, int]] = []
        for stream, upto in sorted(asked.items()):
            # (what is gone cannot come again, nor what is before the stream's first seq)
            upto = max(upto, self.gone.get(stream, 0), self.since.get(stream, 1) - 1)
            count = self.sent.get(stream, 0)
            if upto >= count or self._flight.get(stream) or stream in self.refused:
                continue
            self.stats.sent_again += count - upto
            self.stats.acknowledged -= count - upto
            self.sent[stream] = self._queued[stream] = upto
            self._unsaved.add(stream)
            self._scanned = None
            again.append((stream, upto, count - upto))
        return again

    def _skip(self, stream: S, last: int) -> None:
        """The venue's events of ``stream`` up to ``last`` are gone for good: counted as the
        centre's from the moment nothing before them is in flight (the centre's answers to
        what is in flight move the count over them: a gap is the next thing after them)."""
        self.gone[stream] = max(self.gone.get(stream, 0), last)
        self._queued[stream] = max(self._queued.get(stream, 0), last)
        self._unsaved.add(stream)
        if not self._flight.get(stream) and self.sent.get(stream, 0) < last:
            self.sent[stream] = last

    def _start(self, stream: S, first: int) -> None:
        """The hub says ``stream``'s seqs start at ``first``: nothing before it is the
        stream's to send (another incarnation's, or none), nor lost."""
        self.since[stream] = first
        if not self._flight.get(stream) and self.sent.get(stream, 0) < first - 1:
            self.sent[stream] = first - 1  # (not saved: the hub says it again at each start)
        self._queued[stream] = max(self._queued.get(stream, 0), self.sent.get(stream, 0))

    def reports(self, now: float) -> list[dict[str, Any]]:
        """The counts for the central recorder (``UplinkCounts``), every ``report_seconds``
        while connected (none between): each stream of which the centre holds something and
        that the hub was read for since the start, with its first seq and what of it is
        gone; up to ``REPORT_MESSAGES`` messages of ``COUNTS_PER_MESSAGE`` streams, the
        streams taking turns when there are more."""
        if not self.connected or now - self._last_report < self.report_seconds:
            return []
        self._last_report = now
        # (a stream of the state file is said once the hub is read: with where it starts)
        streams = sorted(s for s, n in self.sent.items() if s in self.since and n >= self.since[s])
        most = COUNTS_PER_MESSAGE * REPORT_MESSAGES
        if len(streams) > most:  # from after the last reported, round again at the end
            after = self._reported_last
            turn = 0 if after is None else bisect.bisect_right(streams, after)
            streams = (streams[turn:] + streams[:turn])[:most]
            self._reported_last = streams[-1]
        reports = []
        for i in range(0, len(streams), COUNTS_PER_MESSAGE):
            entries = []
            for stream in streams[i:i + COUNTS_PER_MESSAGE]:
                since, gone = self.since.get(stream, 1), self.gone.get(stream, 0)
                entries.append({"table": stream[0], "incarnation": stream[1],
                                "upto": self.sent[stream], **({"since": since} if since > 1
                                                               else {}),
                                **({"gone": gone} if gone > 0 else {})})
            reports.append({"v": 1, "streams": entries})
        return reports

    def pump(self, uptos: Mapping[S, int], read: RawReader[S], first_held: FirstHeld[S],
             now: float = 0.0, starts: Mapping[S, int] | None = None,
             ) -> tuple[list[UplinkMessage[S]], list[tuple[S, int, int]]]:
        """The messages to publish now, for the streams the hub has recorded up to ``uptos``
        without a gap from their first seqs (``starts``; 1 for a stream not named); and the
        gaps found in the hub's database, (stream, first, last) seqs it counted as recorded
        but no longer holds (``first_held`` finds where a stream goes on). Such a gap is gone
        for good: never sent, said to the centre (``gone`` in the reports), each returned
        once, and the stream goes on after it (a venue whose early rows were deleted by
        retention, or by hand, before they were sent). Pass the same mappings until the hub
        is read again: only then are all the streams looked at again."""
        messages: list[UplinkMessage[S]] = []
        gaps: list[tuple[S, int, int]] = []
        if not self.connected:
            return messages, gaps
        if uptos is not self._scanned:
            self._scanned = uptos
            for stream in uptos:
                first = 1 if starts is None else starts.get(stream, 1)
                if self.since.get(stream) != first:
                    self._start(stream, first)
            self._behind = sorted(stream for stream, upto in uptos.items()
                                  if upto > self._queued.get(stream, 0)
                                  and stream not in self.refused)
        for stream in self._behind:
            upto = uptos[stream]
            flight = self._flight.get(stream) or deque()
            while (len(self._by_number) < self.window and len(flight) < self.per_table
                   and self._queued.get(stream, 0) < upto):
                first = self._queued.get(stream, 0) + 1
                rows = read(stream, first, min(upto, first + UPLINK_BATCH_EVENTS - 1))
                if not rows or rows[0][0] != first:
                    held = first_held(stream, first)
                    last = upto if held is None or held > upto else held - 1
                    self._skip(stream, last)
                    gaps.append((stream, first, last))
                    continue
                chosen: list[tuple[int, str]] = []
                size = 0
                for seq, raw in rows:
                    if chosen and (seq != chosen[-1][0] + 1
                                   or size + len(raw) > UPLINK_BATCH_BYTES):
                        break
                    chosen.append((seq, raw))
                    size += len(raw) + 1
                payload = (chosen[0][1] if len(chosen) == 1
                           else '{"v":1,"batch":[' + ",".join(r for _, r in chosen) + "]}")
                last = chosen[-1][0]
                self._numbered += 1
                messages.append(UplinkMessage(self._numbered, stream, payload, first, last))
                flight.append(_InFlight(last, self._numbered, now))
                self._flight[stream] = flight
                self._by_number[self._numbered] = stream
                self._queued[stream] = last
                self.stats.messages += 1
                self.stats.events += len(chosen)
        self._behind = [stream for stream in self._behind
                        if self._queued.get(stream, 0) < uptos[stream]
                        and stream not in self.refused]
        return messages, gaps
