"""The hub's storage (the recorder's events, the floor's alerts and log): SQLite by default,
PostgreSQL when given a URL; the same schema, created and migrated by version.

    open_storage("recorder.db")                                   # SQLite
    open_storage("postgresql://recorder@db.local/venue")          # PostgreSQL (psycopg 3)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from contract.envelope import LEGACY_INCARNATION, Stream, incarnation_of
from contract.wire import encode
from store.database import connect, migrate

# Each migration brings the schema from version i to i + 1; the same for both databases.
MIGRATIONS = [
    [
        "CREATE TABLE IF NOT EXISTS events (tbl TEXT NOT NULL, seq BIGINT NOT NULL, boot BIGINT,"
        " type TEXT, ts BIGINT, historical INTEGER, envelope TEXT NOT NULL,"
        " PRIMARY KEY (tbl, seq))",
        "CREATE TABLE IF NOT EXISTS tables (tbl TEXT PRIMARY KEY, upto BIGINT NOT NULL)",
    ],
    [
        # The floor's alerts with who acknowledged them, and what staff did through the hub.
        "CREATE TABLE IF NOT EXISTS alerts (id BIGINT PRIMARY KEY, tbl TEXT NOT NULL,"
        " kind TEXT NOT NULL, text TEXT NOT NULL, hand BIGINT, ts BIGINT NOT NULL,"
        " historical INTEGER NOT NULL, acked_by TEXT, acked_at BIGINT)",
        "CREATE TABLE IF NOT EXISTS floor_log (ts BIGINT NOT NULL, username TEXT NOT NULL,"
        " action TEXT NOT NULL, detail TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS events_by_type ON events (tbl, type, seq)",
        "CREATE INDEX IF NOT EXISTS events_by_ts ON events (ts)",
    ],
    [
        # The venue clock, kept at every change so that a hub restart resumes it; an alert
        # remembers the event that raised it, so that none is raised twice across restarts.
        "CREATE TABLE IF NOT EXISTS venue_clock (id INTEGER PRIMARY KEY, structure TEXT,"
        " elapsed DOUBLE PRECISION NOT NULL, running INTEGER NOT NULL,"
        " hand_for_hand INTEGER NOT NULL, saved_ms BIGINT NOT NULL)",
        "ALTER TABLE alerts ADD COLUMN seq BIGINT",
        "CREATE UNIQUE INDEX IF NOT EXISTS alerts_by_event ON alerts (tbl, seq)",
    ],
    [
        # The hub's own settings that must survive a restart (the room clock page's key).
        "CREATE TABLE IF NOT EXISTS hub_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    [
        # The bust-outs the floor made (a seating command a table applied): the room's list
        # of who went out when outlives a hub restart.
        "CREATE TABLE IF NOT EXISTS bustouts (tbl TEXT NOT NULL, seat INTEGER NOT NULL,"
        " hand BIGINT, ts BIGINT NOT NULL, username TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS bustouts_by_ts ON bustouts (ts)",
    ],
    [
        # A bust-out's undo lives at the hub: who gave the seat back, and when.
        "ALTER TABLE bustouts ADD COLUMN undone_by TEXT",
        "ALTER TABLE bustouts ADD COLUMN undone_at BIGINT",
    ],
    [
        # The tournament's roster (hub/roster.py), and who each bust-out put out in what place.
        "CREATE TABLE IF NOT EXISTS roster_players (id BIGINT PRIMARY KEY, name TEXT NOT NULL,"
        " registered_at BIGINT NOT NULL, entries INTEGER NOT NULL, add_ons INTEGER NOT NULL,"
        " tbl TEXT, seat INTEGER, out_at BIGINT, out_hand BIGINT, last_out_at BIGINT,"
        " last_out_hand BIGINT)",
        "ALTER TABLE bustouts ADD COLUMN player TEXT",
        "ALTER TABLE bustouts ADD COLUMN place INTEGER",
        "ALTER TABLE bustouts ADD COLUMN player_id BIGINT",
    ],
    [
        # Dealers by name: the badge-to-name list the floor keeps at the hub.
        "CREATE TABLE IF NOT EXISTS dealer_names (badge TEXT PRIMARY KEY, name TEXT NOT NULL)",
    ],
    [
        # An event is named by (table, incarnation, seq): a re-installed or restored table's
        # events are never taken for those held (docs/failure.md, "A re-installed or
        # restored table"). What was stored before is the legacy incarnation's. ``hub_ts`` is
        # when it happened by the hub's clock (the table's ``ts`` is only its claim: a Pi has
        # no battery clock): what retention and statistics go by.
        "CREATE TABLE events_by_incarnation (tbl TEXT NOT NULL, inc TEXT NOT NULL,"
        " seq BIGINT NOT NULL, boot BIGINT, type TEXT, ts BIGINT, historical INTEGER,"
        " envelope TEXT NOT NULL, hub_ts BIGINT NOT NULL, PRIMARY KEY (tbl, inc, seq))",
        f"INSERT INTO events_by_incarnation SELECT tbl, '{LEGACY_INCARNATION}', seq, boot,"
        " type, ts, historical, envelope, COALESCE(ts, 0) FROM events",
        "DROP TABLE events",
        "ALTER TABLE events_by_incarnation RENAME TO events",
        "CREATE INDEX events_by_type ON events (tbl, type, seq)",
        "CREATE INDEX events_by_hub_ts ON events (hub_ts)",
        # Each incarnation of each table: its journal, the one it follows, where it starts,
        # what the recorder holds of it, its journal's order among the table's journals, and
        # how far its clock is from the hub's (ms; NULL: not measured yet).
        "CREATE TABLE streams (tbl TEXT NOT NULL, inc TEXT NOT NULL, journal TEXT,"
        " follows TEXT, since_seq BIGINT NOT NULL, upto BIGINT NOT NULL,"
        " epoch INTEGER NOT NULL, first_seen BIGINT NOT NULL, clock_offset BIGINT,"
        " PRIMARY KEY (tbl, inc))",
        f"INSERT INTO streams SELECT tbl, '{LEGACY_INCARNATION}', NULL, NULL, 1, upto, 0, 0,"
        " NULL FROM tables",
        "DROP TABLE tables",
        "ALTER TABLE alerts ADD COLUMN inc TEXT",
        f"UPDATE alerts SET inc = '{LEGACY_INCARNATION}' WHERE seq IS NOT NULL",
        "DROP INDEX alerts_by_event",
        "CREATE UNIQUE INDEX alerts_by_event ON alerts (tbl, inc, seq)",
    ],
    [
        # A bust-out in the money carries its prize (hub/payout_cases.py).
        "ALTER TABLE bustouts ADD COLUMN prize BIGINT",
    ],
    [
        # The broadcast feed (hub/broadcast.py): when each table was featured, from and to
        # (NULL: it still is); the roster's names of a featured table's seats at each deal's
        # start (the deal named by its hand.started event); the broadcast operator's folds,
        # each at the feed's time it was tapped on.
        "CREATE TABLE broadcast_featured (tbl TEXT NOT NULL, since BIGINT NOT NULL,"
        " until BIGINT, username TEXT NOT NULL)",
        "CREATE TABLE broadcast_names (tbl TEXT NOT NULL, inc TEXT NOT NULL,"
        " seq BIGINT NOT NULL, names TEXT NOT NULL, ts BIGINT NOT NULL,"
        " PRIMARY KEY (tbl, inc, seq))",
        "CREATE TABLE broadcast_folds (tbl TEXT NOT NULL, inc TEXT NOT NULL,"
        " seq BIGINT NOT NULL, seat INTEGER NOT NULL, folded INTEGER NOT NULL,"
        " feed_ts BIGINT NOT NULL, ts BIGINT NOT NULL, username TEXT NOT NULL)",
        "CREATE INDEX broadcast_folds_by_deal ON broadcast_folds (tbl, inc, seq)",
    ],
    [
        # A roster player's table hand when drawn a seat (whether they have played since),
        # and a no-show: when removed, and the refund.
        "ALTER TABLE roster_players ADD COLUMN seated_hand BIGINT",
        "ALTER TABLE roster_players ADD COLUMN no_show_at BIGINT",
        "ALTER TABLE roster_players ADD COLUMN refund TEXT",
        # The alternates, in their order: entered as seats open during registration.
        "CREATE TABLE roster_alternates (position INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " added_at BIGINT NOT NULL)",
    ],
]

ROSTER_COLUMNS = ("id", "name", "registered_at", "entries", "add_ons", "table", "seat",
                  "out_at", "out_hand", "last_out_at", "last_out_hand", "seated_hand",
                  "no_show_at", "refund")

# The events a hand-history view is made of.
HISTORY_TYPES = ("hand.started", "hand.ended", "hand.record", "ruling", "irregularity")
# The events a deal's broadcast view is made of (hub/broadcast.py), hole cards and all.
BROADCAST_TYPES = ("hand.started", "card", "irregularity", "ruling", "board.resolved",
                   "hand.ended", "hand.record")


_INSERT_EVENT = ("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (tbl, inc, seq) DO NOTHING")


def event_row(table: str, seq: int, envelope: dict[str, Any], raw: str,
              hub_ts: int) -> tuple[Any, ...]:
    """An event's row (its incarnation is the envelope's), its time by the hub's clock."""
    return (table, incarnation_of(envelope), seq, envelope.get("boot"), envelope.get("type"),
            envelope.get("ts"), int(bool(envelope.get("historical"))), raw, hub_ts)


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
        migrate(self.execute, "schema_version", MIGRATIONS)
        self.commit()

    def insert(self, table: str, seq: int, envelope: dict[str, Any], raw: str,
               hub_ts: int) -> bool:
        """Store one event (its incarnation is the envelope's) with its time by the hub's
        clock; False if it was there."""
        cursor = self.execute(_INSERT_EVENT, event_row(table, seq, envelope, raw, hub_ts))
        return bool(cursor.rowcount)

    def insert_rows(self, rows: list[tuple[Any, ...]]) -> None:
        """Events (``event_row``'s) found new, stored at once: the recorder's, as it commits,
        so that it holds the database's write lock for this and the commit only."""
        if rows:
            self.db.cursor().executemany(self._sql(_INSERT_EVENT), rows)

    def has_event(self, table: str, incarnation: str, seq: int) -> bool:
        return self.execute("SELECT 1 FROM events WHERE tbl = ? AND inc = ? AND seq = ?",
                            (table, incarnation, seq)).fetchone() is not None

    def set_upto(self, stream: Stream, upto: int) -> None:
        self.execute("UPDATE streams SET upto = ? WHERE tbl = ? AND inc = ?",
                     (upto, stream.table, stream.incarnation))

    def uptos(self) -> dict[Stream, int]:
        return {Stream(str(t), str(i)): int(u)
                for t, i, u in self.execute("SELECT tbl, inc, upto FROM streams")}

    def table_uptos(self) -> dict[str, int]:
        """Each table's seq up to which the hub holds every event of its newest journal,
        following its incarnations (each starts where the one before ended): what a harness
        waits for."""
        held: dict[str, tuple[int, int]] = {}  # table -> (epoch, held up to)
        for table, epoch, since, upto in self.execute(
                "SELECT tbl, epoch, since_seq, upto FROM streams ORDER BY tbl, epoch, "
                "since_seq"):
            last_epoch, count = held.get(table, (epoch, 0))
            if epoch != last_epoch:
                count = 0  # a newer journal: its own seqs
            if since - 1 <= count:
                count = max(count, int(upto))
            held[table] = (epoch, count)
        return {table: count for table, (_, count) in held.items()}

    def streams(self) -> list[dict[str, Any]]:
        """Every incarnation of every table the hub knows, as ``save_stream`` keeps it."""
        keys = ("table", "incarnation", "journal", "follows", "since_seq", "upto", "epoch",
                "first_seen", "clock_offset")
        return [dict(zip(keys, row, strict=True)) for row in self.execute(
            "SELECT tbl, inc, journal, follows, since_seq, upto, epoch, first_seen, "
            "clock_offset FROM streams ORDER BY tbl, epoch, since_seq, first_seen")]

    def set_clock_offset(self, stream: Stream, offset_ms: int) -> int:
        """How far ``stream``'s table clock is from the hub's (hub minus table, ms): kept,
        and its events held so far moved onto the hub's clock; how many."""
        self.execute("UPDATE streams SET clock_offset = ? WHERE tbl = ? AND inc = ?",
                     (offset_ms, stream.table, stream.incarnation))
        cursor = self.execute("UPDATE events SET hub_ts = ts + ? WHERE tbl = ? AND inc = ? "
                              "AND ts IS NOT NULL", (offset_ms, stream.table,
                                                     stream.incarnation))
        return max(0, int(cursor.rowcount or 0))

    def save_stream(self, stream: Stream, *, journal: str | None, follows: str | None,
                    since_seq: int, epoch: int, first_seen: int) -> None:
        """An incarnation heard of (its status, or its first event): what is known of it
        now. Its count is ``set_upto``'s; a journal learnt later is added."""
        self.execute(
            "INSERT INTO streams (tbl, inc, journal, follows, since_seq, upto, epoch, "
            "first_seen) VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (tbl, inc) DO "
            "UPDATE SET journal = COALESCE(excluded.journal, streams.journal), follows = "
            "COALESCE(excluded.follows, streams.follows), since_seq = excluded.since_seq, "
            "epoch = excluded.epoch",
            (stream.table, stream.incarnation, journal, follows, since_seq, epoch, first_seen))

    def seqs(self, table: str) -> list[int]:
        """The table's seqs held, by its journals' order then seq."""
        return [int(r[0]) for r in self.execute(
            "SELECT e.seq FROM events e LEFT JOIN streams s ON s.tbl = e.tbl AND s.inc = e.inc "
            "WHERE e.tbl = ? ORDER BY COALESCE(s.epoch, 0), e.seq", (table,))]

    def envelopes(self, table: str) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.execute(
            "SELECT e.envelope FROM events e LEFT JOIN streams s ON s.tbl = e.tbl AND "
            "s.inc = e.inc WHERE e.tbl = ? ORDER BY COALESCE(s.epoch, 0), e.seq", (table,))]

    def first_seq_from(self, stream: Stream, seq: int) -> int | None:
        """The first seq at or after ``seq`` that the stream's events hold (None: none)."""
        row = self.execute("SELECT MIN(seq) FROM events WHERE tbl = ? AND inc = ? AND seq >= ?",
                           (stream.table, stream.incarnation, seq)).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def raw_envelopes(self, stream: Stream, first: int, last: int) -> list[tuple[int, str]]:
        """The stored JSON of the stream's events ``first``..``last``, by seq."""
        return [(int(r[0]), str(r[1])) for r in self.execute(
            "SELECT seq, envelope FROM events WHERE tbl = ? AND inc = ? AND seq BETWEEN ? AND ? "
            "ORDER BY seq", (stream.table, stream.incarnation, first, last))]

    def hand_history(self, table: str, hands: int) -> list[tuple[int, dict[str, Any]]]:
        """The envelopes of the table's last ``hands`` hands that a history is made of, oldest
        first, each with its journal's order among the table's (a re-installed table numbers
        its hands from 1 again: its new hands are the last) and its ``ts`` by the hub's clock.
        Private: the caller filters them for the viewer's role."""
        marks = ", ".join("?" for _ in HISTORY_TYPES)
        limit = hands * 12  # a hand is a few of these events, an irregular one a dozen
        rows = self.execute(
            "SELECT COALESCE(s.epoch, 0), e.envelope, e.hub_ts FROM events e LEFT JOIN "
            f"streams s ON s.tbl = e.tbl AND s.inc = e.inc WHERE e.tbl = ? AND e.type IN "
            f"({marks}) "
            "ORDER BY COALESCE(s.epoch, 0) DESC, e.seq DESC LIMIT ?",
            (table, *HISTORY_TYPES, limit)).fetchall()
        # Each at its time by the hub's clock (a table's own may have been wrong).
        envelopes = [(int(epoch), {**json.loads(raw), "ts": int(hub_ts)})
                     for epoch, raw, hub_ts in reversed(rows)]
        numbers = sorted({(epoch, e["hand"]) for epoch, e in envelopes
                          if e.get("hand") is not None})
        if len(rows) == limit:
            numbers = numbers[1:]  # the oldest may have been cut: no half hands
        keep = set(numbers[-hands:])
        return [(epoch, e) for epoch, e in envelopes if (epoch, e.get("hand")) in keep]

    # -- the broadcast feed (hub/broadcast.py)
    def released(self, table: str, cutoff: int) -> dict[str, tuple[int, int | None]]:
        """Each of the table's incarnations: its journal's order, and the first seq whose
        event the hub's clock puts after ``cutoff`` (None: none is): the events before it are
        the prefix the feed may show, whatever order the hub's times of the later ones."""
        found: dict[str, tuple[int, int | None]] = {}
        for inc, epoch in self.execute("SELECT inc, epoch FROM streams WHERE tbl = ?",
                                       (table,)).fetchall():
            row = self.execute("SELECT MIN(seq) FROM events WHERE tbl = ? AND inc = ? AND "
                               "hub_ts > ?", (table, inc, cutoff)).fetchone()
            found[str(inc)] = (int(epoch), None if row[0] is None else int(row[0]))
        return found

    def deal_events(self, table: str, released: dict[str, tuple[int, int | None]],
                    limit: int) -> list[tuple[int, dict[str, Any]]]:
        """The last ``limit`` events of the types a broadcast deal is made of, within each
        incarnation's released prefix (``released``), oldest first: (journal order, the
        envelope with its ``incarnation``, ``seq`` and ``ts`` by the hub's clock)."""
        if not released:
            return []
        marks = ", ".join("?" for _ in BROADCAST_TYPES)
        bounds, args = [], []
        for inc, (_, first_unreleased) in sorted(released.items()):
            bounds.append("(e.inc = ? AND e.seq < ?)")
            args += [inc, 2**62 if first_unreleased is None else first_unreleased]
        rows = self.execute(
            "SELECT COALESCE(s.epoch, 0), e.inc, e.envelope, e.hub_ts FROM events e LEFT JOIN "
            "streams s ON s.tbl = e.tbl AND s.inc = e.inc WHERE e.tbl = ? AND e.type IN "
            f"({marks}) AND ({' OR '.join(bounds)}) "
            "ORDER BY COALESCE(s.epoch, 0) DESC, e.seq DESC LIMIT ?",
            (table, *BROADCAST_TYPES, *args, limit)).fetchall()
        return [(int(epoch), {**json.loads(raw), "incarnation": str(inc), "ts": int(hub_ts)})
                for epoch, inc, raw, hub_ts in reversed(rows)]

    def one_deal(self, table: str, inc: str, epoch: int, start_seq: int,
                 before_seq: int) -> list[tuple[int, dict[str, Any]]]:
        """The events of the deal ``start_seq`` starts, up to ``before_seq`` (as
        ``deal_events``; a later deal's with them, if any: the caller stops at its start)."""
        marks = ", ".join("?" for _ in BROADCAST_TYPES)
        rows = self.execute(
            f"SELECT envelope, hub_ts FROM events WHERE tbl = ? AND inc = ? AND type IN "
            f"({marks}) AND seq >= ? AND seq < ? ORDER BY seq LIMIT 2000",
            (table, inc, *BROADCAST_TYPES, start_seq, before_seq)).fetchall()
        return [(epoch, {**json.loads(raw), "incarnation": inc, "ts": int(hub_ts)})
                for raw, hub_ts in rows]

    def deal_over(self, table: str, inc: str, start_seq: int) -> bool:
        """Whether the deal that ``start_seq`` started has ended by now (its end, or a later
        deal's start, stored, whenever that was)."""
        row = self.execute("SELECT MIN(seq) FROM events WHERE tbl = ? AND inc = ? AND seq > ? "
                           "AND type IN ('hand.ended', 'hand.started')",
                           (table, inc, start_seq)).fetchone()
        return row[0] is not None

    def featured_periods(self) -> list[dict[str, Any]]:
        return [{"table": t, "since": int(s), "until": None if u is None else int(u),
                 "by": b} for t, s, u, b in self.execute(
                     "SELECT tbl, since, until, username FROM broadcast_featured "
                     "ORDER BY since").fetchall()]

    def feature(self, table: str, featured: bool, ts: int, user: str) -> None:
        if featured:
            self.execute("INSERT INTO broadcast_featured VALUES (?, ?, NULL, ?)",
                         (table, ts, user))
        else:
            self.execute("UPDATE broadcast_featured SET until = ? WHERE tbl = ? AND until IS "
                         "NULL", (ts, table))

    def save_deal_names(self, table: str, inc: str, seq: int, names: dict[str, str],
                        ts: int) -> None:
        self.execute("INSERT INTO broadcast_names VALUES (?, ?, ?, ?, ?) ON CONFLICT "
                     "(tbl, inc, seq) DO NOTHING", (table, inc, seq, encode(names), ts))

    def deal_names(self, table: str, deals: list[tuple[str, int]]) -> dict[tuple[str, int],
                                                                          dict[str, str]]:
        found: dict[tuple[str, int], dict[str, str]] = {}
        for inc, seq in deals:
            row = self.execute("SELECT names FROM broadcast_names WHERE tbl = ? AND inc = ? "
                               "AND seq = ?", (table, inc, seq)).fetchone()
            if row is not None:
                found[(inc, seq)] = json.loads(row[0])
        return found

    def save_fold(self, table: str, inc: str, seq: int, seat: int, folded: bool,
                  feed_ts: int, ts: int, user: str) -> None:
        self.execute("INSERT INTO broadcast_folds VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (table, inc, seq, seat, int(folded), feed_ts, ts, user))

    def deal_folds(self, table: str, inc: str, seq: int,
                   until_feed_ts: int) -> dict[int, bool]:
        """Each seat's fold as the operator last tapped it at a feed time up to
        ``until_feed_ts``."""
        folds: dict[int, bool] = {}
        for seat, folded in self.execute(
                "SELECT seat, folded FROM broadcast_folds WHERE tbl = ? AND inc = ? AND seq = ? "
                "AND feed_ts <= ? ORDER BY feed_ts, ts", (table, inc, seq, until_feed_ts)):
            folds[int(seat)] = bool(folded)
        return folds

    # -- alerts and the floor's log
    def save_alert(self, alert: dict[str, Any]) -> None:
        self.execute(
            "INSERT INTO alerts (id, tbl, kind, text, hand, ts, historical, acked_by, acked_at,"
            " seq, inc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE "
            "SET acked_by = excluded.acked_by, acked_at = excluded.acked_at",
            (alert["id"], alert["table"], alert["kind"], alert["text"], alert["hand"],
             alert["ts"], int(bool(alert["historical"])), alert["acked_by"],
             alert["acked_at"], alert.get("seq"), alert.get("incarnation")))

    def acknowledge_open(self, table: str, user: str, ts: int, below_id: int) -> int:
        """Close the alerts of a table still open in the database with an id below
        ``below_id`` (those past the floor view's cap); how many were."""
        cursor = self.execute("UPDATE alerts SET acked_by = ?, acked_at = ? WHERE tbl = ? AND "
                              "acked_by IS NULL AND id < ?", (user, ts, table, below_id))
        return max(0, int(cursor.rowcount))

    def alerts(self, since_ts: int) -> list[dict[str, Any]]:
        """Alerts still open, and those raised since ``since_ts``."""
        rows = self.execute(
            "SELECT id, tbl, kind, text, hand, ts, historical, acked_by, acked_at, seq, inc "
            "FROM alerts WHERE acked_by IS NULL OR ts >= ? ORDER BY id", (since_ts,)).fetchall()
        keys = ("id", "table", "kind", "text", "hand", "ts", "historical", "acked_by",
                "acked_at", "seq", "incarnation")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def alerted_events(self, since_ts: int) -> set[tuple[str, str, int]]:
        """The (table, incarnation, seq) of every event that raised an alert since
        ``since_ts``."""
        return {(str(t), str(i), int(q)) for t, i, q in self.execute(
            "SELECT tbl, inc, seq FROM alerts WHERE seq IS NOT NULL AND ts >= ?", (since_ts,))}

    def events_since(self, since_ts: int, types: tuple[str, ...],
                     until_ts: int = 2**63 - 1) -> list[dict[str, Any]]:
        """Stored envelopes of the given types from ``since_ts`` to ``until_ts``, each
        table's in order (the floor's catch-up after a restart, the statistics)."""
        return list(self._by_hub_time(self.db.cursor(), since_ts, types, until_ts))

    def stream_events(self, since_ts: int, types: tuple[str, ...],
                      until_ts: int = 2**63 - 1) -> Iterator[dict[str, Any]]:
        """As ``events_since``, one at a time: a month of a venue's events is never in memory
        at once (PostgreSQL: a server-side cursor; SQLite's cursor reads as it goes)."""
        if self.p == "%s":  # psycopg: a named cursor fetches in batches
            with self.db.cursor(name="stream_events") as cursor:
                cursor.itersize = 2000
                yield from self._by_hub_time(cursor, since_ts, types, until_ts)
            return
        yield from self._by_hub_time(self.db.cursor(), since_ts, types, until_ts)

    def _by_hub_time(self, cursor: Any, since_ts: int, types: tuple[str, ...],
                     until_ts: int) -> Iterator[dict[str, Any]]:
        """Envelopes of the given types that happened (by the hub's clock) from ``since_ts``
        to ``until_ts``, each table's journals in order, each by seq; their ``ts`` is the
        hub's time (a table whose clock was off files its hands when they were dealt)."""
        marks = ", ".join("?" for _ in types)
        cursor.execute(self._sql(
            "SELECT e.envelope, e.hub_ts FROM events e LEFT JOIN streams s ON s.tbl = e.tbl "
            f"AND s.inc = e.inc WHERE e.hub_ts >= ? AND e.hub_ts <= ? AND e.type IN ({marks}) "
            "ORDER BY e.tbl, COALESCE(s.epoch, 0), e.seq"),
            (since_ts, until_ts, *types))
        for raw, hub_ts in cursor:
            envelope = json.loads(raw)
            envelope["ts"] = int(hub_ts)
            yield envelope

    def save_bustout(self, bust: dict[str, Any]) -> None:
        self.execute("INSERT INTO bustouts (tbl, seat, hand, ts, username, player, place, "
                     "player_id, prize) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (bust["table"], bust["seat"], bust["hand"], bust["ts"], bust["by"],
                      bust.get("player"), bust.get("place"), bust.get("player_id"),
                      bust.get("prize")))

    def bustout_undone(self, bust: dict[str, Any]) -> None:
        self.execute("UPDATE bustouts SET undone_by = ?, undone_at = ? WHERE tbl = ? AND "
                     "seat = ? AND ts = ?", (bust["undone_by"], bust["undone_at"],
                                             bust["table"], bust["seat"], bust["ts"]))

    def bustouts(self, since_ts: int, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` bust-outs since ``since_ts``, oldest first."""
        rows = self.execute("SELECT tbl, seat, hand, ts, username, undone_by, undone_at, "
                            "player, place, player_id, prize FROM bustouts WHERE ts >= ? "
                            "ORDER BY "
                            "ts DESC LIMIT ?", (since_ts, limit)).fetchall()
        return [{"table": t, "seat": int(s), "hand": None if h is None else int(h),
                 "ts": int(ts), "by": u, "undone_by": ub,
                 "undone_at": None if ua is None else int(ua), "player": pl,
                 "place": None if pc is None else int(pc),
                 "player_id": None if pid is None else int(pid),
                 "prize": None if pz is None else int(pz)}
                for t, s, h, ts, u, ub, ua, pl, pc, pid, pz in reversed(rows)]

    def save_player(self, player: dict[str, Any]) -> None:
        """One roster player as it is now (added or changed)."""
        values = tuple(player[k] for k in ROSTER_COLUMNS)
        self.execute(
            "INSERT INTO roster_players (id, name, registered_at, entries, add_ons, tbl, seat,"
            " out_at, out_hand, last_out_at, last_out_hand, seated_hand, no_show_at, refund)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
            " entries = excluded.entries, add_ons = excluded.add_ons, tbl = excluded.tbl,"
            " seat = excluded.seat, out_at = excluded.out_at, out_hand = excluded.out_hand,"
            " last_out_at = excluded.last_out_at, last_out_hand = excluded.last_out_hand,"
            " seated_hand = excluded.seated_hand, no_show_at = excluded.no_show_at,"
            " refund = excluded.refund",
            values)

    def roster_players(self) -> list[dict[str, Any]]:
        rows = self.execute("SELECT id, name, registered_at, entries, add_ons, tbl, seat, "
                            "out_at, out_hand, last_out_at, last_out_hand, seated_hand, "
                            "no_show_at, refund FROM roster_players "
                            "ORDER BY id").fetchall()
        return [dict(zip(ROSTER_COLUMNS, row, strict=True)) for row in rows]

    def save_alternates(self, alternates: list[dict[str, Any]]) -> None:
        """The alternates list as it is now, in its order."""
        self.execute("DELETE FROM roster_alternates")
        for position, alternate in enumerate(alternates, start=1):
            self.execute("INSERT INTO roster_alternates VALUES (?, ?, ?)",
                         (position, alternate["name"], alternate["added_at"]))

    def roster_alternates(self) -> list[dict[str, Any]]:
        rows = self.execute("SELECT name, added_at FROM roster_alternates "
                            "ORDER BY position").fetchall()
        return [{"name": str(name), "added_at": int(added)} for name, added in rows]

    def name_dealer(self, badge: str, name: str) -> None:
        if name:
            self.execute("INSERT INTO dealer_names VALUES (?, ?) ON CONFLICT (badge) DO UPDATE "
                         "SET name = excluded.name", (badge, name))
        else:
            self.execute("DELETE FROM dealer_names WHERE badge = ?", (badge,))

    def dealer_names(self) -> dict[str, str]:
        return {str(b): str(n) for b, n in
                self.execute("SELECT badge, name FROM dealer_names").fetchall()}

    def delete_player(self, player_id: int) -> None:
        """An entrant entered by mistake, gone from the roster."""
        self.execute("DELETE FROM roster_players WHERE id = ?", (player_id,))

    def clear_roster(self) -> int:
        self.execute("DELETE FROM roster_alternates")
        return max(0, int(self.execute("DELETE FROM roster_players").rowcount))

    def save_clock(self, saved: dict[str, Any], now_ms: int) -> None:
        self.execute("INSERT INTO venue_clock VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO "
                     "UPDATE SET structure = excluded.structure, elapsed = excluded.elapsed, "
                     "running = excluded.running, hand_for_hand = excluded.hand_for_hand, "
                     "saved_ms = excluded.saved_ms",
                     (saved["structure"], float(saved["elapsed"]), int(bool(saved["running"])),
                      int(bool(saved["hand_for_hand"])), now_ms))

    def setting(self, name: str) -> str | None:
        row = self.execute("SELECT value FROM hub_settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_setting(self, name: str, value: str) -> None:
        self.execute("INSERT INTO hub_settings VALUES (?, ?) ON CONFLICT (name) DO UPDATE "
                     "SET value = excluded.value", (name, value))

    def saved_clock(self) -> tuple[dict[str, Any], int] | None:
        """The venue clock as last kept, and when (UTC ms); None if the floor never set one."""
        row = self.execute("SELECT structure, elapsed, running, hand_for_hand, saved_ms "
                           "FROM venue_clock WHERE id = 1").fetchone()
        if row is None:
            return None
        return ({"structure": row[0], "elapsed": float(row[1]), "running": bool(row[2]),
                 "hand_for_hand": bool(row[3])}, int(row[4]))

    def max_alert_id(self) -> int:
        row = self.execute("SELECT MAX(id) FROM alerts").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def log(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        self.execute("INSERT INTO floor_log VALUES (?, ?, ?, ?)",
                     (ts, user, action, encode(detail)))

    def floor_log(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self.execute("SELECT ts, username, action, detail FROM floor_log "
                            "ORDER BY ts DESC LIMIT ?", (limit,)).fetchall()
        return [{"ts": int(r[0]), "user": r[1], "action": r[2], "detail": json.loads(r[3])}
                for r in rows]

    def purge(self, before_ts: int,
              delivered: Mapping[Stream, int] | None = None) -> dict[str, int]:
        """Retention: delete events, acknowledged alerts and log lines older than
        ``before_ts`` (UTC ms; an event by when it happened on the hub's clock, whatever a
        table's clock said). Each table's acknowledged counts stay: a table replaying old
        events after a purge is not asked for them again. With ``delivered`` (the venue sends
        to a group: stream by stream, each a table's incarnation, the seq up to which the
        group's centre holds its events) an event is deleted only once the centre holds it
        (a stream not named: none of it); ``kept_for_uplink`` counts the older ones kept for
        that."""
        counts: dict[str, int] = {}
        if delivered is None:
            counts["events"] = int(self.execute("DELETE FROM events WHERE hub_ts < ?",
                                                (before_ts,)).rowcount or 0)
        else:
            counts["events"] = sum(
                int(self.execute("DELETE FROM events WHERE tbl = ? AND inc = ? AND hub_ts < ? "
                                 "AND seq <= ?", (stream.table, stream.incarnation, before_ts,
                                                  upto)).rowcount or 0)
                for stream, upto in sorted(delivered.items()) if upto > 0)
            counts["kept_for_uplink"] = int(self.execute(
                "SELECT COUNT(*) FROM events WHERE hub_ts < ?", (before_ts,)).fetchone()[0])
        for name, text in (("alerts", "DELETE FROM alerts WHERE acked_by IS NOT NULL AND ts < ?"),
                           ("floor_log", "DELETE FROM floor_log WHERE ts < ?"),
                           ("bustouts", "DELETE FROM bustouts WHERE ts < ?"),
                           ("broadcast_names", "DELETE FROM broadcast_names WHERE ts < ?"),
                           ("broadcast_folds", "DELETE FROM broadcast_folds WHERE ts < ?")):
            counts[name] = int(self.execute(text, (before_ts,)).rowcount or 0)
        self.commit()
        return counts

    # -- the group's uplink (``group.uplink``: a venue's events read from here)
    def uplink_streams(self) -> dict[Stream, tuple[int, int]]:
        """Each table's incarnations: its first seq, and the seq up to which the recorder
        holds it without a gap (what the uplink may send)."""
        return {Stream(str(t), str(i)): (int(since), int(upto)) for t, i, since, upto in
                self.execute("SELECT tbl, inc, since_seq, upto FROM streams")}

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()


def open_storage(location: str, *, passed_between_threads: bool = False) -> Storage:
    return Storage(*connect(location, passed_between_threads=passed_between_threads))
