"""The floor's statistics from what the recorder stored: hands per hour per table and per
dealer, irregularities by kind per dealer and per table, hand durations; and the hands as CSV.
Pure: stored envelopes (public events: ``hand.started``, ``hand.ended``, ``irregularity``) in,
figures out.

A table's dealing time is the sum of its hands' *slots*: from a hand's start to the next hand's
start at that table (the last hand: to its end). A gap longer than ``BREAK_GAP_MS`` (a break,
a table standing empty) counts only the hand itself. A dealer's time is the slots of the hands
they dealt, so hands per hour compare dealers by their own pace, breaks left out.
"""

from __future__ import annotations

import io
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hub.spreadsheet import cells, csv_writer

STATS_TYPES = ("hand.started", "hand.ended", "irregularity")
BREAK_GAP_MS = 10 * 60 * 1000
# Hand durations are counted in these bins (seconds; the last is "and longer").
DURATION_BINS = (30, 60, 90, 120, 180, 240, 300, 600)
NO_DEALER = "(none)"


@dataclass
class Hand:
    table: str
    hand: int
    dealer: str
    started: int  # UTC ms
    ended: int | None = None
    outcome: str | None = None
    slot_ms: int = 0
    irregularities: tuple[str, ...] = ()

    @property
    def seconds(self) -> float | None:
        return None if self.ended is None else round((self.ended - self.started) / 1000, 1)


def _table_of(stored: dict[str, Any]) -> str:
    return str(stored.get("table"))


def hands_by_table(envelopes: Iterable[dict[str, Any]]) -> Iterator[list[Hand]]:
    """Each table's hands, a table at a time, from envelopes in (table, seq) order (as the
    storage streams them): only one table's hands are held at once, never the period's
    events. Every hand started, with its end, outcome, irregularities and slot. A misdeal's
    redeal is a hand of its own (it was dealt)."""
    for table, stored_events in itertools.groupby(envelopes, key=_table_of):
        current: Hand | None = None
        kinds: list[str] = []
        played: list[Hand] = []
        for stored in stored_events:
            kind, ts = stored.get("type"), stored.get("ts")
            if not isinstance(ts, int):
                continue
            if kind == "hand.started":
                current = Hand(table, int(stored.get("hand") or 0),
                               str(stored.get("dealer") or NO_DEALER), ts)
                kinds = []
                played.append(current)
            elif current is None:
                continue  # the window opened in the middle of a hand
            elif kind == "irregularity":
                kinds.append(str((stored.get("data") or {}).get("kind", "unknown")))
                current.irregularities = tuple(kinds)
            elif kind == "hand.ended" and current.ended is None:
                current.ended = ts
                current.outcome = str((stored.get("data") or {}).get("outcome", ""))
        for hand, following in zip(played, [*played[1:], None], strict=True):
            end = hand.ended if hand.ended is not None else hand.started
            slot = (following.started if following is not None else end) - hand.started
            hand.slot_ms = slot if slot <= BREAK_GAP_MS else end - hand.started
        yield played


def _in_order(envelopes: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    # A list may come in any order (tests, callers); a stream is in the storage's order.
    if isinstance(envelopes, list):
        return sorted(envelopes, key=lambda e: (_table_of(e), int(e.get("seq", 0))))
    return envelopes


def hands_of(envelopes: Iterable[dict[str, Any]]) -> list[Hand]:
    """Every hand started in the envelopes (see ``hands_by_table``)."""
    return [hand for hands in hands_by_table(_in_order(envelopes)) for hand in hands]


class _Rate:
    """Hands and dealing time of a table or a dealer, summed as hands go by."""

    __slots__ = ("hands", "slot_ms")

    def __init__(self) -> None:
        self.hands = 0
        self.slot_ms = 0

    def add(self, hand: Hand) -> None:
        self.hands += 1
        self.slot_ms += hand.slot_ms

    def figures(self) -> dict[str, Any]:
        hours = self.slot_ms / 3_600_000
        return {"hands": self.hands, "hours": round(hours, 3),
                "hands_per_hour": round(self.hands / hours, 1) if hours > 0 else None}


def statistics(envelopes: Iterable[dict[str, Any]], start_ms: int,
               end_ms: int) -> dict[str, Any]:
    """The figures for the hands started from ``start_ms`` to ``end_ms``. Summed as each
    table's hands go by: what is held is a table's hands, the counts, and the durations."""
    tables: dict[str, _Rate] = defaultdict(_Rate)
    dealers: dict[str, _Rate] = defaultdict(_Rate)
    by_table: Counter[tuple[str, str]] = Counter()
    by_dealer: Counter[tuple[str, str]] = Counter()
    durations: list[float] = []
    total = 0
    for hands in hands_by_table(_in_order(envelopes)):
        for hand in hands:
            if not start_ms <= hand.started <= end_ms:
                continue
            total += 1
            tables[hand.table].add(hand)
            dealers[hand.dealer].add(hand)
            for kind in hand.irregularities:
                by_table[(hand.table, kind)] += 1
                by_dealer[(hand.dealer, kind)] += 1
            if (seconds := hand.seconds) is not None:
                durations.append(seconds)
    durations.sort()
    bins = [0] * (len(DURATION_BINS) + 1)
    for seconds in durations:
        bins[next((i for i, edge in enumerate(DURATION_BINS) if seconds < edge),
                  len(DURATION_BINS))] += 1

    def percentile(share: float) -> float | None:
        return durations[min(len(durations) - 1, int(share * len(durations)))] \
            if durations else None

    return {
        "from": start_ms, "to": end_ms, "hands": total,
        "tables": [{"table": name, **rate.figures()} for name, rate in sorted(tables.items())],
        "dealers": [{"dealer": name, **rate.figures()}
                    for name, rate in sorted(dealers.items())],
        "irregularities": {
            "kinds": sorted({kind for _, kind in by_table}),
            "by_table": [{"table": t, "kind": k, "count": n}
                         for (t, k), n in sorted(by_table.items())],
            "by_dealer": [{"dealer": d, "kind": k, "count": n}
                          for (d, k), n in sorted(by_dealer.items())],
        },
        "durations": {
            "bins": [{"from": lower, "to": upper, "hands": count} for lower, upper, count in
                     zip((0, *DURATION_BINS), (*DURATION_BINS, None), bins, strict=True)],
            "median": percentile(0.5), "p90": percentile(0.9),
        },
    }


CSV_COLUMNS = ("table", "hand", "dealer", "started_utc", "seconds", "outcome",
               "irregularities", "dealer_name")


def hands_csv_rows(envelopes: Iterable[dict[str, Any]], start_ms: int, end_ms: int,
                   dealer_names: Mapping[str, str] | None = None) -> Iterator[str]:
    """The CSV a piece at a time (the header, then a table's rows), to stream: one row a hand
    started in the period, for a spreadsheet in any locale (hub/spreadsheet.py: no text able
    to start a formula, numbers as numbers); each dealer's badge with the name the floor gave
    it (``dealer_names``), last (a column added after the others)."""
    names = dealer_names or {}
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(cells(CSV_COLUMNS))
    for hands in hands_by_table(_in_order(envelopes)):
        for hand in hands:
            if start_ms <= hand.started <= end_ms:
                writer.writerow(cells((hand.table, hand.hand, hand.dealer,
                                       _utc(hand.started), hand.seconds, hand.outcome or "",
                                       ";".join(hand.irregularities),
                                       names.get(hand.dealer, ""))))
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    if out.tell():
        yield out.getvalue()


def hands_csv(envelopes: Iterable[dict[str, Any]], start_ms: int, end_ms: int,
              dealer_names: Mapping[str, str] | None = None) -> str:
    """The whole CSV as one text (``hands_csv_rows`` streams it)."""
    return "".join(hands_csv_rows(envelopes, start_ms, end_ms, dealer_names))


def _utc(ms: int) -> str:
    """ISO UTC, or the milliseconds themselves past what a calendar holds (the contract
    allows a ts up to 2^53 - 1, the year 287,396)."""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(
            timespec="seconds").replace("+00:00", "Z")
    except (ValueError, OverflowError, OSError):
        return str(ms)
