"""The table's durable outbox: every event is committed here before it is published.

SQLite in WAL mode with ``synchronous=FULL``: once ``append`` returns, the event survives a
power cut. ``seq`` never resets (it continues across restarts); ``boot`` counts the starts. A
row is deleted only once the hub's recorder has acknowledged it (``ack``), never on the broker's
PUBACK alone; the newest acknowledged rows are kept a while longer so that a recorder that lost
them can ask for a replay.

Identity: the journal has a random id made when it is created (``journal``), and every start
makes a new random **incarnation** that the events committed from then on carry (with the
incarnation it follows, and the seq it starts at). ``(table, incarnation, seq)`` names an
event: a re-installed table (a new journal from seq 1), a table restored from a backup (an
old journal going on from an earlier seq) and a second daemon under the same name all make
events no recorder can take for ones it holds. The recorder acknowledges each incarnation's
count on its own; an outbox from an earlier release keeps its rows as the legacy incarnation.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.envelope import LEGACY_INCARNATION
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
CREATE TABLE IF NOT EXISTS identity (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS incarnations (id TEXT PRIMARY KEY, first_seq INTEGER NOT NULL,
    acked_upto INTEGER NOT NULL, follows TEXT);
"""

# A row made by an earlier release, without an incarnation column, is the legacy incarnation's.
ROW_INCARNATION = (f"ALTER TABLE outbox ADD COLUMN incarnation TEXT NOT NULL "
                   f"DEFAULT '{LEGACY_INCARNATION}'")

Row = tuple[int, int, int, dict[str, Any], str]  # seq, ts_ms, boot, event, incarnation

# Acknowledged rows kept for a hub that lost them (its database restored from a backup): about
# a week of a busy table's dealing (1,000 events an hour), 40-60 MB on the card.
KEEP_ACKED = 200_000


def new_id() -> str:
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Incarnation:
    """This start of the journal: what the table's status says of it."""

    journal: str
    incarnation: str
    follows: str | None  # the incarnation before it in this journal (None: a new journal)
    since_seq: int  # its first seq


# Snapshots kept: the newest, and the one before it with the journal lines after it, to fall
# back to when the newest cannot be restored (tablectl/daemon.py).
KEEP_SNAPSHOTS = 2


class Outbox:
    def __init__(self, path: Path | str, *, keep_acked: int = KEEP_ACKED) -> None:
        self.path = str(path)
        self.keep_acked = keep_acked
        self._local = threading.local()
        db = self._db()
        with db:
            db.executescript(SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(outbox)")}
            if "incarnation" not in columns:
                db.execute(ROW_INCARNATION)
            legacy = db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
            db.execute("INSERT OR IGNORE INTO meta VALUES ('boot', 0), ('next_seq', 1), "
                       "('acked_upto', 0)")
            db.execute("UPDATE meta SET value = value + 1 WHERE key = 'boot'")
            if db.execute("SELECT value FROM identity WHERE key = 'journal'").fetchone() is None:
                db.execute("INSERT INTO identity VALUES ('journal', ?)", (new_id(),))
                if legacy is not None:  # an outbox of an earlier release: its rows go on
                    db.execute("INSERT INTO incarnations VALUES (?, 1, ?, NULL)",
                               (LEGACY_INCARNATION, self._meta("acked_upto")))
            self.identity = self._new_incarnation(db)
        self.boot = self._meta("boot")
        self.incarnation = self.identity.incarnation
        # The events' clock: the wall clock read once at this start, then the monotonic clock.
        # A Pi has no battery clock (before NTP it reads its last shutdown, or 1970) and NTP
        # then steps it: an incarnation's stamps never jump, so the hub can move them all
        # onto its own clock by one offset (measured by a status round trip).
        self._anchor = (time.time(), time.monotonic())

    def now_ms(self) -> int:
        """Now, on the clock this incarnation stamps its events with (UTC ms)."""
        wall, mono = self._anchor
        return int((wall + time.monotonic() - mono) * 1000)

    def _new_incarnation(self, db: sqlite3.Connection) -> Incarnation:
        journal = str(db.execute("SELECT value FROM identity WHERE key = 'journal'")
                      .fetchone()[0])
        next_seq = self._meta("next_seq")
        before = db.execute("SELECT id FROM incarnations ORDER BY first_seq DESC, rowid DESC "
                            "LIMIT 1").fetchone()
        follows = None if before is None else str(before[0])
        incarnation = new_id()
        db.execute("INSERT INTO incarnations VALUES (?, ?, ?, ?)",
                   (incarnation, next_seq, next_seq - 1, follows))
        # An earlier start whose rows are all acknowledged and gone is forgotten.
        kept = {str(r[0]) for r in db.execute("SELECT DISTINCT incarnation FROM outbox")}
        for name, _, end, acked in self._spans(db):
            if name != incarnation and acked >= end and name not in kept:
                db.execute("DELETE FROM incarnations WHERE id = ?", (name,))
        return Incarnation(journal, incarnation, follows, next_seq)

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.isolation_level = "DEFERRED"
            self._local.db = db
        return db

    def _spans(self, db: sqlite3.Connection) -> list[tuple[str, int, int, int]]:
        """Each incarnation the outbox remembers, oldest first: (id, first seq, last seq,
        acknowledged up to); an incarnation's seqs run up to the next one's first."""
        rows = db.execute("SELECT id, first_seq, acked_upto FROM incarnations "
                          "ORDER BY first_seq, rowid").fetchall()
        last = self._meta("next_seq") - 1
        return [(str(name), int(first), (int(rows[i + 1][1]) - 1 if i + 1 < len(rows) else last),
                 int(acked)) for i, (name, first, acked) in enumerate(rows)]

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
                db.execute("INSERT INTO outbox (seq, ts, boot, event, incarnation) "
                           "VALUES (?, ?, ?, ?, ?)",
                           (seq, ts_ms, self.boot, encode(event), self.incarnation))
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

    def rows(self, after: int, limit: int = 500) -> list[Row]:
        """Rows with seq > after, in order: (seq, ts_ms, boot, event, incarnation)."""
        cursor = self._db().execute(
            "SELECT seq, ts, boot, event, incarnation FROM outbox WHERE seq > ? ORDER BY seq "
            "LIMIT ?", (after, limit))
        return [(seq, ts, boot, decode(text), incarnation)
                for seq, ts, boot, text, incarnation in cursor]

    @property
    def acked_upto(self) -> int:
        """Every row up to this seq is acknowledged (each by its own incarnation's count)."""
        for _, _, end, acked in self._spans(self._db()):
            if acked < end:
                return acked
        return self.last_seq

    @property
    def last_seq(self) -> int:
        return self._meta("next_seq") - 1

    def spans(self) -> list[dict[str, Any]]:
        """What the outbox keeps of each incarnation it remembers, oldest first, as its
        status says it (``Status.kept``): a hub whose count is below ``acked_upto`` lost what
        it had acknowledged, and asks for it again."""
        return [{"incarnation": name, "first_seq": first, "last_seq": end, "acked_upto": acked}
                for name, first, end, acked in self._spans(self._db())]

    def span(self, incarnation: str) -> tuple[int, int] | None:
        """The first and last seq of ``incarnation`` (None: not one this outbox remembers)."""
        for name, first, end, _ in self._spans(self._db()):
            if name == incarnation:
                return first, end
        return None

    def ack(self, upto: int, incarnation: str | None = None) -> int:
        """The recorder holds every seq of ``incarnation`` (None: this start's) up to
        ``upto``; returns the outbox's acknowledged mark. An ack for an incarnation this
        outbox does not know (another daemon's under the same name) changes nothing."""
        name = self.incarnation if incarnation is None else incarnation
        db = self._db()
        with db:
            for known, _, end, acked in self._spans(db):
                # An ack for what this incarnation never made is the recorder's error.
                if known == name and min(upto, end) > acked:
                    db.execute("UPDATE incarnations SET acked_upto = ? WHERE id = ?",
                               (min(upto, end), name))
            current = self.acked_upto
            db.execute("UPDATE meta SET value = ? WHERE key = 'acked_upto'", (current,))
            db.execute("DELETE FROM outbox WHERE seq <= ?", (current - self.keep_acked,))
        return current

    def pending_count(self) -> int:
        return int(self._db().execute("SELECT COUNT(*) FROM outbox WHERE seq > ?",
                                      (self.acked_upto,)).fetchone()[0])

    def oldest_kept(self, incarnation: str | None = None) -> int | None:
        """The oldest row kept (of ``incarnation``, when named)."""
        if incarnation is None:
            row = self._db().execute("SELECT MIN(seq) FROM outbox").fetchone()
        else:
            row = self._db().execute("SELECT MIN(seq) FROM outbox WHERE incarnation = ?",
                                     (incarnation,)).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
