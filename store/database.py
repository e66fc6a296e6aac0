"""A database on SQLite or PostgreSQL, its schema brought to its last version: the venue hub's
(``hub.storage``) and the group's centre's (``group.centre``).

    connect("recorder.db")                                   # SQLite
    connect("postgresql://recorder@db.local/venue")          # PostgreSQL (psycopg 3)
"""

from __future__ import annotations

import sqlite3
from typing import Any


def migrate(execute: Any, version_table: str, migrations: list[list[str]]) -> None:
    """Bring a schema to its last version: the migrations after the one ``version_table``
    records, each recorded as it is done (``execute`` takes "?" parameters)."""
    execute(f"CREATE TABLE IF NOT EXISTS {version_table} (version INTEGER NOT NULL)")
    row = execute(f"SELECT MAX(version) FROM {version_table}").fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    for number, statements in enumerate(migrations[version:], start=version + 1):
        for statement in statements:
            execute(statement)
        execute(f"INSERT INTO {version_table} VALUES (?)", (number,))


def connect(location: str, *, passed_between_threads: bool = False) -> tuple[Any, str]:
    """A database connection and its driver's parameter marker: PostgreSQL for a
    ``postgresql://`` URL (psycopg 3), else a SQLite file (WAL, every commit on disk).
    ``passed_between_threads``: used by one thread at a time, but not always the same one (a
    streamed answer, read on whichever of the web server's threads is free; psycopg's
    connections allow it anyway, SQLite's must be told)."""
    if location.startswith(("postgresql://", "postgres://")):
        import psycopg

        return psycopg.connect(location), "%s"
    db = sqlite3.connect(location.removeprefix("sqlite:///"), timeout=30,
                         check_same_thread=not passed_between_threads)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db, "?"
