"""The recorder's storage: SQLite by default, PostgreSQL when given a URL; the same schema,
created and migrated by version.

    open_storage("recorder.db")                                   # SQLite
    open_storage("postgresql://recorder@db.local/venue")          # PostgreSQL (psycopg 3)
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# Each migration brings the schema from version i to i + 1; the same for both databases.
MIGRATIONS = [
    [
        "CREATE TABLE IF NOT EXISTS events (tbl TEXT NOT NULL, seq BIGINT NOT NULL, boot BIGINT,"
        " type TEXT, ts BIGINT, historical INTEGER, envelope TEXT NOT NULL,"
        " PRIMARY KEY (tbl, seq))",
        "CREATE TABLE IF NOT EXISTS tables (tbl TEXT PRIMARY KEY, upto BIGINT NOT NULL)",
    ],
]


class Storage:
    def __init__(self, connection: Any, placeholder: str) -> None:
        self.db = connection
        self.p = placeholder  # the driver's parameter marker: "?" for sqlite3, "%s" for psycopg
        self._migrate()

    def _sql(self, text: str) -> str:
        return text.replace("?", self.p)

    def execute(self, text: str, args: tuple[Any, ...] = ()) -> Any:
        return self.db.execute(self._sql(text), args)

    def _migrate(self) -> None:
        self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = self.execute("SELECT MAX(version) FROM schema_version").fetchone()
        version = int(row[0]) if row and row[0] is not None else 0
        for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in statements:
                self.execute(statement)
            self.execute("INSERT INTO schema_version VALUES (?)", (number,))
        self.commit()

    def insert(self, table: str, seq: int, envelope: dict[str, Any], raw: str) -> bool:
        """Store one event; False if ``(table, seq)`` was already there."""
        cursor = self.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tbl, seq) DO NOTHING",
            (table, seq, envelope.get("boot"), envelope.get("type"), envelope.get("ts"),
             int(bool(envelope.get("historical"))), raw))
        return bool(cursor.rowcount)

    def set_upto(self, table: str, upto: int) -> None:
        self.execute("INSERT INTO tables VALUES (?, ?) ON CONFLICT (tbl) DO UPDATE "
                     "SET upto = excluded.upto", (table, upto))

    def uptos(self) -> dict[str, int]:
        return {str(t): int(u) for t, u in self.execute("SELECT tbl, upto FROM tables")}

    def seqs(self, table: str) -> list[int]:
        return [int(r[0]) for r in self.execute(
            "SELECT seq FROM events WHERE tbl = ? ORDER BY seq", (table,))]

    def envelopes(self, table: str) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.execute(
            "SELECT envelope FROM events WHERE tbl = ? ORDER BY seq", (table,))]

    def commit(self) -> None:
        self.db.commit()

    def close(self) -> None:
        self.db.close()


def open_storage(location: str) -> Storage:
    if location.startswith(("postgresql://", "postgres://")):
        import psycopg

        return Storage(psycopg.connect(location), "%s")
    path = location.removeprefix("sqlite:///")
    db = sqlite3.connect(path, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return Storage(db, "?")
