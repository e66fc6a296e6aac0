"""What the group's centre holds of each venue's tables, and what it asks a venue's uplink to
send again. No I/O: fed the seqs the centre stored and the counts the uplinks report, with the
time passed in, it says which tables to ask for (the central recorder, ``hub.group``, is the
NATS shell around it).

Why it is needed: the central recorder answers an uplink's message once its rows are
committed, and only then does the uplink count it delivered; what the central database loses
after that (restored from a backup older than the answers) would otherwise be lost for good.
So every uplink reports its counts, and a table on which the centre is behind, with no
progress for ``patience`` seconds, is asked for again from the first seq the centre lacks.
The centre stores each ``(venue, table, seq)`` once, so asking too early costs only
duplicates, never a row twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

PATIENCE_S = 3.0  # no progress this long while behind the uplink's count: ask again
MAX_TABLES_PER_VENUE = 5000  # what a venue's reports can make the centre remember


@dataclass
class _Table:
    upto: int = 0  # every seq up to this one held
    beyond: set[int] = field(default_factory=set)  # held after a gap
    progressed: float = -math.inf  # when upto last moved (or the table was first seen)
    asked: float = -math.inf


class CentralHoldings:
    def __init__(self, patience: float = PATIENCE_S) -> None:
        self.patience = patience
        self._venues: dict[str, dict[str, _Table]] = {}

    def _table(self, venue: str, table: str, now: float) -> _Table | None:
        tables = self._venues.setdefault(venue, {})
        held = tables.get(table)
        if held is None:
            if len(tables) >= MAX_TABLES_PER_VENUE:
                return None
            held = tables[table] = _Table(progressed=now)
        return held

    def load(self, venue: str, table: str, upto: int, now: float) -> None:
        """What the centre's database holds without a gap, at start."""
        held = self._table(venue, table, now)
        if held is not None:
            held.upto = max(held.upto, upto)

    def held(self, venue: str, table: str, seqs: Iterable[int], now: float) -> bool:
        """The centre holds these seqs now (stored, or found stored already); whether a gap
        remains before the highest it holds."""
        held = self._table(venue, table, now)
        if held is None:
            return False
        held.beyond.update(s for s in seqs if s > held.upto)
        before = held.upto
        while held.upto + 1 in held.beyond:
            held.upto += 1
            held.beyond.discard(held.upto)
        if held.upto != before:
            held.progressed = now
        return bool(held.beyond)

    def gone(self, venue: str, table: str, upto: int, now: float) -> None:
        """The venue's events of ``table`` up to ``upto`` are gone for good (its uplink says
        so: its hub lost them before sending): held as far as the centre goes, so the table
        is not asked for what cannot come. (A table need not start at seq 1.)"""
        held = self._table(venue, table, now)
        if held is None or upto <= held.upto:
            return
        held.upto = upto
        held.beyond = {seq for seq in held.beyond if seq > upto}
        while held.upto + 1 in held.beyond:
            held.upto += 1
            held.beyond.discard(held.upto)
        held.progressed = now

    def upto(self, venue: str, table: str) -> int:
        held = self._venues.get(venue, {}).get(table)
        return 0 if held is None else held.upto

    def to_ask(self, venue: str, counts: Mapping[str, int], now: float) -> dict[str, int]:
        """The tables to ask ``venue``'s uplink for again, each with the seq up to which the
        centre holds it (the uplink sends from the next): those its uplink says the centre
        answered further than the centre holds without a gap, with no progress for
        ``patience`` seconds and not asked within them."""
        asks: dict[str, int] = {}
        for table, count in counts.items():
            held = self._table(venue, table, now)
            if (held is None or count <= held.upto or now - held.progressed < self.patience
                    or now - held.asked < self.patience):
                continue
            held.asked = now
            asks[table] = held.upto
        return asks
