"""The uplink's state file (``uplink.state``): what the group's centre holds of each table
(``sent``: every seq up to it answered after the centre's commit) and what the venue lost for
good before it was sent (``gone``). Written by the uplink (``hub.uplink``); read by the hub's
retention (``hub.service``), which deletes no event the centre does not hold yet."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = ("CREATE TABLE IF NOT EXISTS sent (tbl TEXT PRIMARY KEY, upto INTEGER NOT NULL)",
          "CREATE TABLE IF NOT EXISTS gone (tbl TEXT PRIMARY KEY, upto INTEGER NOT NULL)")


def open_state(path: str) -> sqlite3.Connection:
    """The uplink's own connection (WAL: the hub reads it while the uplink writes)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    for statement in SCHEMA:
        db.execute(statement)
    db.commit()
    return db


def delivered(path: str) -> dict[str, int] | None:
    """Table by table, the seq up to which the group's centre holds the venue's events (and
    the lost ones before it); None when there is no state file (an uplink that never ran, or
    whose file was lost: the centre may hold nothing)."""
    if not Path(path).exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        found = {str(t): int(u) for t, u in db.execute("SELECT tbl, upto FROM sent")}
    except sqlite3.OperationalError:  # (created, its tables not yet)
        return {}
    finally:
        db.close()
    return found
