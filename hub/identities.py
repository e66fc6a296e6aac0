"""Which table is which: the incarnations of each table the hub has heard of, and what their
statuses say about the device behind a name. No I/O (the recorder is its shell and keeps them
in the database's ``streams``).

Every start of a table's journal is an incarnation (``hardware/outbox.py``); its online status
names the journal, the incarnation it follows and its first seq. From those the hub tells:

- a **new journal** under a known name (a new card, a re-install): its seqs start again at 1;
- a journal that **went back** (restored from a backup, or a copied card): a second successor
  of one incarnation, or one that starts below what the hub holds of the one it follows;
- **two devices** under one name: an incarnation already heard comes online again after
  another that does not follow it.

Nothing is lost in any of these (events are named by incarnation), but the floor must know:
each is said once, as an alert's kind and text. An ``epoch`` orders a table's journals (and the
branches a restored copy starts) so that the newest hands come last in a history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from contract.envelope import LEGACY_INCARNATION, Stream

News = list[tuple[str, str]]  # (alert kind, text)
# A table clock this far from the hub's is flagged (more than a network's delay, less than
# anything that would misfile a hand).
CLOCK_OFF_MS = 120_000


def _span(ms: int) -> str:
    """A duration as a floor manager reads it: the two largest units."""
    minutes = round(ms / 60_000)
    days, hours, minutes = minutes // 1440, minutes // 60 % 24, minutes % 60
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in
             ((days, "day"), (hours, "hour"), (minutes, "minute")) if n]
    return " ".join(parts[:2]) or "under a minute"


@dataclass
class Known:
    journal: str | None  # None: heard of only through its events
    follows: str | None
    since_seq: int
    epoch: int
    clock_offset: int | None = None  # hub minus table, ms (None: not measured)


class TableIdentities:
    def __init__(self) -> None:
        self.streams: dict[Stream, Known] = {}
        self.newest: dict[str, Stream] = {}  # each table's incarnation heard of last
        self._online: dict[str, Stream] = {}
        self._said: set[tuple[str, ...]] = set()

    def load(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """What the database kept, oldest first within each table."""
        for row in rows:
            stream = Stream(str(row["table"]), str(row["incarnation"]))
            offset = row.get("clock_offset")
            self.streams[stream] = Known(row["journal"], row["follows"], int(row["since_seq"]),
                                         int(row["epoch"]),
                                         None if offset is None else int(offset))
            self.newest[stream.table] = stream

    def _epoch(self, table: str) -> int:
        return max((k.epoch for s, k in self.streams.items() if s.table == table), default=0)

    def heard(self, stream: Stream, since_seq: int = 1) -> bool:
        """``stream`` heard of without its own status (an event of it, or a span another
        status says its table keeps, which gives ``since_seq``, its first seq): True if it is
        new to the hub (to be kept). Its first seq matters to the uplink: below it is no gap."""
        if stream in self.streams:
            return False
        epoch = 0 if stream.incarnation == LEGACY_INCARNATION else self._epoch(stream.table)
        self.streams[stream] = Known(None, None, since_seq, epoch)
        self.newest.setdefault(stream.table, stream)
        return True

    def status(self, stream: Stream, *, journal: str | None, follows: str | None,
               since_seq: int, online: bool, held: Mapping[Stream, int]) -> News:
        """A status naming ``stream``; ``held``: what the recorder holds of each incarnation.
        Returns what the floor must be told."""
        table = stream.table
        others = {s: k for s, k in self.streams.items() if s.table == table and s != stream}
        news: News = []
        known = self.streams.get(stream)
        if known is None or known.journal is None:
            before = None if follows is None else Stream(table, follows)
            epoch = self._epoch(table)
            if before is not None and before in others:
                epoch = others[before].epoch
                successors = [s for s, k in others.items() if k.follows == follows]
                if successors or held.get(before, 0) > since_seq - 1:
                    epoch = self._epoch(table) + 1  # a branch of its own
                    news += self._say(("journal_restored", table, stream.incarnation), (
                        f"{table}'s journal went back to an earlier copy (restored from a "
                        f"backup, or a copied card): it goes on from seq {since_seq}, while the "
                        f"hub holds the old one to seq "
                        f"{max([held.get(before, 0), *(held.get(s, 0) for s in successors)])}."
                        " Both are kept apart, nothing is lost. If the old device still "
                        f"runs as {table}, stop one of the two."))
            elif follows is None and any(k.journal != journal for k in others.values()):
                epoch += 1
                news += self._say(("journal_new", table, stream.incarnation), (
                    f"{table} came back with a new journal (a new card, or a re-install): its "
                    f"events count from seq {since_seq} again and are kept apart from the old "
                    "journal's, nothing is lost. If nobody re-installed it, another device "
                    f"runs under its name: find it and stop it."))
            elif journal is not None:
                same = [k.epoch for k in others.values() if k.journal == journal]
                epoch = max(same, default=epoch)
            if known is not None and known.journal is None:
                epoch = known.epoch if not news else epoch
            offset = None if known is None else known.clock_offset
            self.streams[stream] = Known(journal, follows, since_seq, epoch, offset)
            self.newest[table] = stream
        if online:
            current = self._online.get(table)
            self._online[table] = stream
            mine = self.streams[stream]
            if (current is not None and current != stream and known is not None
                    and known.journal is not None and mine.follows != current.incarnation):
                pair = sorted((stream.incarnation, current.incarnation))
                news += self._say(("two_tables_one_name", table, *pair), (
                    f"two devices answer as {table} (incarnations {pair[0][:8]} and "
                    f"{pair[1][:8]}): they take the table's connection from each other. The "
                    "events of both are kept. Find the device that should not run as "
                    f"{table} and stop it."))
        return news

    def clock(self, stream: Stream, offset_ms: int, table_ms: int) -> News:
        """How far ``stream``'s clock is from the hub's (hub minus table, ms; ``table_ms``:
        what it read): kept, and said once when it is ``CLOCK_OFF_MS`` or more."""
        known = self.streams.get(stream)
        if known is not None:
            known.clock_offset = offset_ms
        if abs(offset_ms) < CLOCK_OFF_MS:
            return []
        reading = datetime.fromtimestamp(max(0, table_ms) / 1000, UTC)
        return self._say(("table_clock_off", stream.table, stream.incarnation), (
            f"{stream.table}'s clock is {_span(abs(offset_ms))} "
            f"{'behind' if offset_ms > 0 else 'ahead of'} the hub's (it read "
            f"{reading:%Y-%m-%d %H:%M} UTC): its events are filed by the hub's clock, nothing "
            "is lost. Set its time: on the table's Pi, `timedatectl` must say \"System clock "
            "synchronized: yes\" (NTP must reach a time server)."))

    def _say(self, key: tuple[str, ...], text: str) -> News:
        if key in self._said:
            return []
        self._said.add(key)
        return [(key[0], text)]
