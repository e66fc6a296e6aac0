"""The uplink's state file (``uplink.state``): stream by stream (a table's incarnation), what
the group's centre holds of it (``upto``: every seq up to it answered after the centre's
commit) and what the venue lost for good before it was sent (``gone``). Written by the uplink
(``group.uplink``); read by the hub's retention (``hub.service``), which deletes no event the
centre does not hold yet.

A file of an earlier release counted tables (``sent`` and ``gone``, by table): its counts are
the legacy incarnation's, the one a hub's events from before incarnations are kept under. The
uplink moves them into ``streams`` when it opens the file; until then the hub reads them there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from contract.envelope import LEGACY_INCARNATION, Stream

SCHEMA = ("CREATE TABLE IF NOT EXISTS streams (tbl TEXT NOT NULL, inc TEXT NOT NULL, "
          "upto INTEGER NOT NULL, gone INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, inc))",)
LEGACY_TABLES = ("sent", "gone")  # an earlier release's, by table


def open_state(path: str) -> sqlite3.Connection:
    """The uplink's own connection (WAL: the hub reads it while the uplink writes); an earlier
    release's counts moved to the legacy incarnation's."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    with db:
        for statement in SCHEMA:
            db.execute(statement)
        found = _legacy(db)
        if found:
            save(db, [(Stream(table, LEGACY_INCARNATION), upto, gone)
                      for table, (upto, gone) in sorted(found.items())])
        for name in LEGACY_TABLES:
            db.execute(f"DROP TABLE IF EXISTS {name}")
    return db


def _legacy(db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """An earlier release's counts, table by table: (sent, gone)."""
    names = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    sent = ({str(t): int(u) for t, u in db.execute("SELECT tbl, upto FROM sent")}
            if "sent" in names else {})
    gone = ({str(t): int(u) for t, u in db.execute("SELECT tbl, upto FROM gone")}
            if "gone" in names else {})
    return {table: (max(sent.get(table, 0), gone.get(table, 0)), gone.get(table, 0))
            for table in {*sent, *gone}}


def save(db: sqlite3.Connection, counts: list[tuple[Stream, int, int]]) -> None:
    """Streams' counts as they are now: (stream, upto, gone); the caller commits."""
    db.executemany("INSERT INTO streams VALUES (?, ?, ?, ?) ON CONFLICT (tbl, inc) DO UPDATE "
                   "SET upto = excluded.upto, gone = excluded.gone",
                   [(s.table, s.incarnation, upto, gone) for s, upto, gone in counts])


def load(db: sqlite3.Connection) -> tuple[dict[Stream, int], dict[Stream, int]]:
    """What the file holds: stream by stream, the centre's count, and what is gone (those
    with a gap only)."""
    sent: dict[Stream, int] = {}
    gone: dict[Stream, int] = {}
    for table, incarnation, upto, lost in db.execute("SELECT tbl, inc, upto, gone FROM streams"):
        stream = Stream(str(table), str(incarnation))
        sent[stream] = int(upto)
        if lost:
            gone[stream] = int(lost)
    return sent, gone


def delivered(path: str) -> Mapping[Stream, int] | None:
    """Stream by stream, the seq up to which the group's centre holds the venue's events (and
    the lost ones before it); None when there is no state file (an uplink that never ran, or
    whose file was lost: the centre may hold nothing)."""
    if not Path(path).exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        found = {Stream(table, LEGACY_INCARNATION): upto
                 for table, (upto, _) in _legacy(db).items()}
        names = {str(r[0]) for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "streams" in names:
            found.update(load(db)[0])
    finally:
        db.close()
    return found
