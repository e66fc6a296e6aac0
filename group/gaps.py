"""What the group's centre holds of each venue's streams, and what it asks a venue's uplink to
send again. No I/O: fed the seqs the centre stored and the counts the uplinks report, with the
time passed in, it says which streams to ask for (the central recorder, ``group.centre``, is the
NATS shell around it).

A stream is one incarnation of a venue's table (``contract.envelope.Stream``): its seqs run
without a gap from its first, which need not be 1 (a table's journal starts a new incarnation
at each start, from the seq it had reached; a re-installed table starts again at 1 under a new
one).

Why it is needed: the central recorder answers an uplink's message once its rows are
committed, and only then does the uplink count it delivered; what the central database loses
after that (restored from a backup older than the answers) would otherwise be lost for good.
So every uplink reports its counts, and a stream on which the centre is behind, with no
progress for ``patience`` seconds, is asked for again from the first seq the centre lacks.
The centre stores each ``(venue, table, incarnation, seq)`` once, so asking too early costs
only duplicates, never a row twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from contract.envelope import Stream

PATIENCE_S = 3.0  # no progress this long while behind the uplink's count: ask again
# What a venue's reports can make the centre remember: each table starts an incarnation at
# each start of its daemon (a venue of 200 tables started daily makes 73,000 a year). Past
# it, a new stream is stored all the same but not compared with its uplink's count.
MAX_STREAMS_PER_VENUE = 200_000


class _Held:
    __slots__ = ("asked", "beyond", "loaded_first", "progressed", "run", "upto")

    def __init__(self, now: float) -> None:
        self.upto = 0  # every seq up to this one held (or before the stream's first)
        self.beyond: set[int] | None = None  # held after a gap
        self.run: tuple[int, int] | None = None  # a run of seqs held after a gap, first to last
        # At start, the first seq the database held of the stream, until its uplink says where
        # the stream starts: the database may lack its first events too (lost in a restore,
        # the newer ones stored since), and then what it held from here is after a gap.
        self.loaded_first: int | None = None
        self.progressed = now  # when upto last moved (or the stream was first seen)
        self.asked = -math.inf

    def close_up(self) -> None:
        """``upto`` over what is held right after it."""
        moved = True
        while moved:
            moved = False
            if self.run is not None and self.upto + 1 >= self.run[0]:
                self.upto, self.run, moved = max(self.upto, self.run[1]), None, True
            while self.beyond and self.upto + 1 in self.beyond:
                self.upto += 1
                moved = True
        if self.beyond:
            self.beyond = {seq for seq in self.beyond if seq > self.upto} or None


class CentralHoldings:
    def __init__(self, patience: float = PATIENCE_S) -> None:
        self.patience = patience
        self._venues: dict[str, dict[Stream, _Held]] = {}

    def _held(self, venue: str, stream: Stream, now: float) -> _Held | None:
        streams = self._venues.setdefault(venue, {})
        held = streams.get(stream)
        if held is None:
            if len(streams) >= MAX_STREAMS_PER_VENUE:
                return None
            held = streams[stream] = _Held(now)
        return held

    def load(self, venue: str, stream: Stream, upto: int, now: float,
             first: int | None = None) -> None:
        """What the centre's database holds without a gap, at start: from ``first`` (the
        first seq it holds of the stream, when known) to ``upto``. Held from the stream's
        start until its uplink says where the stream starts (``starts``)."""
        held = self._held(venue, stream, now)
        if held is not None and upto > held.upto:
            held.upto = upto
            held.loaded_first = first if first is not None and first > 1 else None

    def held(self, venue: str, stream: Stream, seqs: Iterable[int], now: float) -> bool:
        """The centre holds these seqs now (stored, or found stored already); whether a gap
        remains before the highest it holds."""
        held = self._held(venue, stream, now)
        if held is None:
            return False
        before = held.upto
        held.beyond = (held.beyond or set()) | {s for s in seqs if s > held.upto}
        held.close_up()
        if held.upto != before:
            held.progressed = now
        return bool(held.beyond) or held.run is not None

    def starts(self, venue: str, stream: Stream, first: int, now: float) -> None:
        """The venue's ``stream`` starts at seq ``first`` (its uplink says so): nothing before
        it is to be asked for. A stream loaded at start from a later seq than that lacks
        what comes between: what it held is then after a gap, and the rest is asked for."""
        held = self._held(venue, stream, now)
        if held is not None and held.loaded_first is not None:
            loaded_first, held.loaded_first = held.loaded_first, None
            if first < loaded_first <= held.upto:
                held.run = (loaded_first, held.upto)
                held.upto = first - 1
        self.gone(venue, stream, first - 1, now)

    def gone(self, venue: str, stream: Stream, upto: int, now: float) -> None:
        """The venue's events of ``stream`` up to ``upto`` are gone for good (its uplink says
        so: its hub lost them before sending): held as far as the centre goes, so the stream
        is not asked for what cannot come."""
        held = self._held(venue, stream, now)
        if held is None or upto <= held.upto:
            return
        held.upto = upto
        held.close_up()
        held.progressed = now

    def upto(self, venue: str, stream: Stream) -> int:
        held = self._venues.get(venue, {}).get(stream)
        return 0 if held is None else held.upto

    def to_ask(self, venue: str, counts: Mapping[Stream, int],
               now: float) -> dict[Stream, int]:
        """The streams to ask ``venue``'s uplink for again, each with the seq up to which the
        centre holds it (the uplink sends from the next): those its uplink says the centre
        answered further than the centre holds without a gap, with no progress for
        ``patience`` seconds and not asked within them."""
        asks: dict[Stream, int] = {}
        for stream, count in counts.items():
            held = self._held(venue, stream, now)
            if (held is None or count <= held.upto or now - held.progressed < self.patience
                    or now - held.asked < self.patience):
                continue
            held.asked = now
            asks[stream] = held.upto
        return asks
