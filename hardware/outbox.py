"""The table's durable outbox: every event is committed here before it is published.

SQLite in WAL mode with ``synchronous=FULL``: once ``append`` returns, the event survives a
power cut. ``seq`` never resets (it continues across restarts); ``boot`` counts the starts. A
row is deleted only once the hub's recorder has acknowledged it (``ack``), never on the broker's
PUBACK alone; the newest acknowledged rows are kept a while longer so that a recorder that lost
them can ask for a replay.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from contract.wire import decode, encode

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    boot INTEGER NOT NULL,
    event TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (id INTEGER PRIMARY KEY, line TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY AUTOINCREMENT,
    upto INTEGER NOT NULL, state TEXT NOT NULL, digest TEXT NOT NULL, ts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_quarantine (id INTEGER PRIMARY KEY, upto INTEGER NOT NULL,
    state TEXT NOT NULL, reason TEXT NOT NULL, ts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS quarantine (id INTEGER PRIMARY KEY, line TEXT NOT NULL,
    reason TEXT NOT NULL, ts INTEGER NOT NULL);
"""


# Snapshots kept: the newest, and the one before it with the journal lines after it, to fall
# back to when the newest cannot be restored (tablectl/daemon.py).
KEEP_SNAPSHOTS = 2


class Outbox:
    def __init__(self, path: Path | str, *, keep_acked: int = 10000) -> None:
        self.path = str(path)
        self.keep_acked = keep_acked
        self._local = threading.local()
        db = self._db()
        with db:
            db.executescript(SCHEMA)
            db.execute("INSERT OR IGNORE INTO meta VALUES ('boot', 0), ('next_seq', 1), "
                       "('acked_upto', 0)")
            db.execute("UPDATE meta SET value = value + 1 WHERE key = 'boot'")
        self.boot = self._meta("boot")

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.isolation_level = "DEFERRED"
            self._local.db = db
        return db

    def _meta(self, key: str) -> int:
        row = self._db().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0])

    def append(self, event: dict[str, Any], ts_ms: int) -> int:
        """Commit an event with no journal line (a producer that is not the table core);
        returns its seq."""
        return self.record(None, [event], ts_ms)

    def record(self, line: dict[str, Any] | None, events: list[dict[str, Any]],
               ts_ms: int) -> int:
        """Commit one core input (the journal) and the events it caused, atomically: after a
        crash, replaying the journal rebuilds the core without any event twice or missing.
        Returns the seq of the last event."""
        db = self._db()
        with db:
            seq = int(db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()[0])
            if line is not None:
                db.execute("INSERT INTO journal (line) VALUES (?)", (encode(line),))
            for event in events:
                db.execute("INSERT INTO outbox VALUES (?, ?, ?, ?)",
                           (seq, ts_ms, self.boot, encode(event)))
                seq += 1
            db.execute("UPDATE meta SET value = ? WHERE key = 'next_seq'", (seq,))
        return seq - 1

    def journal(self) -> list[dict[str, Any]]:
        """The journal's lines as kept (``journal_lines``), decoded."""
        return [decode(line) for _, line in self.journal_lines()]

    def journal_lines(self, after: int = 0, limit: int = -1) -> list[tuple[int, str]]:
        """The journal as kept: (id, JSON text), oldest first, the lines with an id past
        ``after`` (at most ``limit`` of them; -1: all). Ids only grow. Not the table's whole
        history once it has snapshots: the lines the older kept snapshot covers are deleted
        (``write_snapshot``); a start replays those after the newest (``snapshots``)."""
        return [(int(i), str(line)) for i, line in self._db().execute(
            "SELECT id, line FROM journal WHERE id > ? ORDER BY id LIMIT ?", (after, limit))]

    def write_snapshot(self, state: dict[str, Any], ts_ms: int,
                       upto: int | None = None) -> int:
        """Commit a snapshot of the table's state that covers the journal up to line ``upto``
        (None: every line journaled so far) and compact the journal behind it, atomically:
        the newest KEEP_SNAPSHOTS snapshots are kept, and the journal lines after the older
        of them, so that a start that cannot read the newest falls back to the one before
        and replays its lines. Returns the number of journal lines deleted."""
        import hashlib

        text = encode(state)
        db = self._db()
        with db:
            if upto is None:
                upto = int(db.execute("SELECT COALESCE(MAX(id), 0) FROM journal")
                           .fetchone()[0])
            db.execute("INSERT INTO snapshot (upto, state, digest, ts) VALUES (?, ?, ?, ?)",
                       (upto, text, hashlib.sha256(text.encode()).hexdigest(), ts_ms))
            db.execute("DELETE FROM snapshot WHERE id NOT IN (SELECT id FROM snapshot "
                       "ORDER BY id DESC LIMIT ?)", (KEEP_SNAPSHOTS,))
            if db.execute("SELECT COUNT(*) FROM snapshot").fetchone()[0] < KEEP_SNAPSHOTS:
                return 0
            behind = int(db.execute("SELECT MIN(upto) FROM snapshot").fetchone()[0])
            return db.execute("DELETE FROM journal WHERE id <= ?", (behind,)).rowcount

    def snapshots(self) -> list[tuple[int, int, str, bool]]:
        """The snapshots kept, newest first: (id, the last journal line it covers, its JSON
        text, whether the text is the one written: its SHA-256 digest matches)."""
        import hashlib

        return [(int(i), int(upto), str(text),
                 hashlib.sha256(str(text).encode()).hexdigest() == digest)
                for i, upto, text, digest in self._db().execute(
                    "SELECT id, upto, state, digest FROM snapshot ORDER BY id DESC")]

    def quarantine_snapshot(self, snapshot_id: int, reason: str, ts_ms: int) -> None:
        """Set aside a snapshot that cannot be restored (and why), for whoever investigates:
        the next start does not try it again."""
        db = self._db()
        with db:
            db.execute("INSERT OR REPLACE INTO snapshot_quarantine SELECT id, upto, state, ?, "
                       "? FROM snapshot WHERE id = ?", (reason, ts_ms, snapshot_id))
            db.execute("DELETE FROM snapshot WHERE id = ?", (snapshot_id,))

    def quarantined_snapshots(self) -> list[dict[str, Any]]:
        return [{"id": int(i), "upto": int(upto), "reason": reason, "ts": int(ts)}
                for i, upto, reason, ts in self._db().execute(
                    "SELECT id, upto, reason, ts FROM snapshot_quarantine ORDER BY id")]

    def quarantine(self, line_id: int, reason: str, ts_ms: int) -> None:
        """Take a journal line that cannot be replayed out of the journal, keeping it (and
        why) for whoever investigates: the table must not crash on it at every start."""
        db = self._db()
        with db:
            db.execute("INSERT OR REPLACE INTO quarantine SELECT id, line, ?, ? FROM journal "
                       "WHERE id = ?", (reason, ts_ms, line_id))
            db.execute("DELETE FROM journal WHERE id = ?", (line_id,))

    def quarantined(self) -> list[dict[str, Any]]:
        return [{"id": int(i), "line": line, "reason": reason, "ts": int(ts)}
                for i, line, reason, ts in self._db().execute(
                    "SELECT id, line, reason, ts FROM quarantine ORDER BY id")]

    def rows(self, after: int, limit: int = 500) -> list[tuple[int, int, int, dict[str, Any]]]:
        """Rows with seq > after, in order: (seq, ts_ms, boot, event)."""
        cursor = self._db().execute(
            "SELECT seq, ts, boot, event FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit))
        return [(seq, ts, boot, decode(text)) for seq, ts, boot, text in cursor]

    @property
    def acked_upto(self) -> int:
        return self._meta("acked_upto")

    @property
    def last_seq(self) -> int:
        return self._meta("next_seq") - 1

    def ack(self, upto: int) -> int:
        """The recorder holds every seq up to ``upto``; returns the new acked mark."""
        db = self._db()
        with db:
            current = int(db.execute(
                "SELECT value FROM meta WHERE key = 'acked_upto'").fetchone()[0])
            last = int(db.execute("SELECT value FROM meta WHERE key = 'next_seq'")
                       .fetchone()[0]) - 1
            upto = min(upto, last)  # an ack for what was never sent is the recorder's error
            if upto > current:
                db.execute("UPDATE meta SET value = ? WHERE key = 'acked_upto'", (upto,))
                current = upto
            db.execute("DELETE FROM outbox WHERE seq <= ?", (current - self.keep_acked,))
        return current

    def pending_count(self) -> int:
        return int(self._db().execute("SELECT COUNT(*) FROM outbox WHERE seq > ?",
                                      (self.acked_upto,)).fetchone()[0])

    def oldest_kept(self) -> int | None:
        row = self._db().execute("SELECT MIN(seq) FROM outbox").fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
