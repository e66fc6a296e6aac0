"""A venue's year (issue 44, items 1, 3 and 4), with real processes: a table re-installed on a
new card, a table restored from a backup of its card, and two devices under one table's name
each made events the hub took for ones it held (the key was ``table:seq``), acknowledged, and
the tables dropped: 36 of 42 events lost after a re-install, 40 of 42 after a restore.

Here each table is a process of its own (the daemon's outbox and MQTT link, dealing hands),
with a real Mosquitto and a real ``tablectl hub``. Every event each journal made must be in the
hub's database exactly once, under its incarnation; the floor is told what happened (one alert
each: a new journal, a journal gone back, two devices); the hand history ends with the newest
journal's hands.

And a hub whose database is restored from last night's backup: what the tables had sent since
was gone for good (120 events), as nothing asked them again. Now each table's status says what
the recorder had acknowledged of it, the recorder asks each table online for its status at its
start, and asks again for what its database lacks.

And a table whose clock is a year behind (a Pi before NTP): its events were deleted by the
hub's retention minutes after they were dealt, and filed a year back by the statistics. Now
the hub measures each table's clock, flags it, and files its events by the hub's clock.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hub.storage import open_storage
from tests.conftest import hub_config_file, wait_for

VENUE = "v"
ROOT = Path(__file__).resolve().parents[1]

# A table: the daemon's own outbox and link, dealing ``hands`` hands from the journal's next
# hand number (a restored journal deals again the numbers its copy had not reached), ``pause``
# seconds apart; it stops cleanly once the hub has acknowledged every row.
TABLE = r"""
import sys, time
sys.path.insert(0, {root!r})
_wall = time.time
time.time = lambda: _wall() + {clock_off}  # a Pi without a battery clock, before NTP
from hardware.outbox import Outbox
from hardware.mqtt_link import TableLink
box = Outbox({db!r})
link = TableLink(box, venue={venue!r}, table="t1", port={port}).start()
hand = max([row[3]["hand"] or 0 for row in box.rows(0, 100000)], default=0)
for _ in range({hands}):
    hand += 1
    for event in ({{"type": "hand.started", "game": "holdem", "button": 1, "seats": [1, 2],
                    "level": 1}}, {{"type": "hand.ended", "outcome": "complete", "board": [],
                                  "level": 1}}):
        box.append({{**event, "hand": hand, "t": float(hand)}}, box.now_ms())
        link.notify()
    time.sleep({pause})
deadline = time.monotonic() + 60
while box.acked_upto < box.last_seq and time.monotonic() < deadline:
    time.sleep(0.05)
print("acked" if box.acked_upto == box.last_seq else "not acked", box.incarnation, flush=True)
time.sleep({linger})
link.stop()
"""


def _table(db: Path, port: int, hands: int, pause: float = 0.0, linger: float = 0.0,
           clock_off: float = 0.0) -> subprocess.Popen[str]:
    script = TABLE.format(root=str(ROOT), db=str(db), venue=VENUE, port=port, hands=hands,
                          pause=pause, linger=linger, clock_off=clock_off)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def _finished(process: subprocess.Popen[str]) -> str:
    out, _ = process.communicate(timeout=90)
    assert out.startswith("acked "), out
    return out.split()[1]


def _acked(process: subprocess.Popen[str]) -> str:
    """A table that stays on: its line once the hub has acknowledged all it made."""
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("acked "), line
    return line.split()[1]


def _made(db: Path) -> set[tuple[str, int, str, int]]:
    """What a table's outbox holds: (incarnation, seq, type, hand) of every row."""
    with sqlite3.connect(db) as outbox:
        return {(inc, seq, json.loads(event)["type"], json.loads(event)["hand"])
                for inc, seq, event in outbox.execute(
                    "SELECT incarnation, seq, event FROM outbox")}


# Seconds to wait for what a hub process just started does: on a loaded machine its start
# (imports, the database) alone took more than 20 s.
HUB_DEADLINE = 60.0


def _hub(tmp_path: Path, port: int, db: str, retention: str = "") -> subprocess.Popen[str]:
    config = hub_config_file(tmp_path, VENUE, port, db, retention)
    return subprocess.Popen([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                             str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def _stop(hub: subprocess.Popen[str]) -> str:
    hub.send_signal(signal.SIGTERM)
    try:
        _, err = hub.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        hub.kill()
        _, err = hub.communicate()
    return err


def _stored(db: str) -> set[tuple[str, int, str, int]]:
    storage = open_storage(db)
    try:
        return {(inc, int(seq), kind, json.loads(raw)["hand"]) for inc, seq, kind, raw in
                storage.execute("SELECT inc, seq, type, envelope FROM events WHERE tbl = 't1'")}
    finally:
        storage.rollback()
        storage.close()


def _alerts(db: str) -> list[str]:
    storage = open_storage(db)
    try:
        return [str(kind) for (kind,) in storage.execute(
            "SELECT kind FROM alerts WHERE tbl = 't1' ORDER BY id")]
    finally:
        storage.rollback()
        storage.close()


def _floor_log(db: str) -> list[dict[str, object]]:
    storage = open_storage(db)
    try:
        return storage.floor_log()
    finally:
        storage.rollback()
        storage.close()


def _copy(source: Path, target: Path) -> None:
    """A card's image: the outbox's database with its write-ahead log, as they are."""
    for suffix in ("", "-wal", "-shm"):
        target.with_name(target.name + suffix).unlink(missing_ok=True)
        if source.with_name(source.name + suffix).exists():
            shutil.copyfile(source.with_name(source.name + suffix),
                            target.with_name(target.name + suffix))


def test_a_reinstalled_a_restored_and_a_doubled_table_lose_nothing(tmp_path, broker):
    db = str(tmp_path / "hub.db")
    hub = _hub(tmp_path, broker.port, db)
    card, backup, new_card = (tmp_path / "t1.db", tmp_path / "backup.db",
                              tmp_path / "t1-new.db")
    made: set[tuple[str, int, str, int]] = set()
    try:
        # The table deals three hands; its card is backed up; it deals three more.
        _finished(_table(card, broker.port, 3))
        _copy(card, backup)
        _finished(_table(card, broker.port, 3))
        made |= _made(card)
        assert wait_for(lambda: _stored(db) == made, HUB_DEADLINE), \
            "the hub missed the first journal"
        # Its card dies; the backup goes in: the journal goes on from hand 3 again.
        _copy(backup, card)
        restored = _finished(_table(card, broker.port, 2))
        made |= _made(card)
        # Re-installed on a new card: a new journal, from seq 1 and hand 1.
        _finished(_table(new_card, broker.port, 2))
        made |= _made(new_card)
        # The old card, put back by mistake, runs while the new one is on: two devices. The
        # new one stays on until the hub has said so (on a loaded machine, the old card's
        # process could otherwise start after the new one had ended).
        running = _table(new_card, broker.port, 4, pause=0.3, linger=HUB_DEADLINE)
        try:
            _acked(running)
            old = _table(card, broker.port, 4, pause=0.3)
            assert wait_for(lambda: "two_tables_one_name" in _alerts(db), HUB_DEADLINE), \
                _alerts(db)
        finally:
            running.kill()
            running.communicate()
        _finished(old)
        made |= _made(card) | _made(new_card)

        assert len({(inc, seq) for inc, seq, _, _ in made}) == len(made) == 36
        assert wait_for(lambda: _stored(db) == made, HUB_DEADLINE), sorted(made - _stored(db))
        assert {"journal_restored", "journal_new", "two_tables_one_name"} <= set(_alerts(db)), \
            _alerts(db)
        alerts = _alerts(db)
        assert alerts.count("journal_restored") == alerts.count("journal_new") == 1, alerts
        assert restored in {inc for inc, *_ in made}
        # The history ends with the newest journal's hands (numbered from 1 again).
        storage = open_storage(db)
        try:
            last = storage.hand_history("t1", 6)
        finally:
            storage.close()
        newest = {(e["incarnation"], e["hand"]) for _, e in last}
        assert newest == {(inc, hand) for inc, _, _, hand in _made(new_card)
                          if hand > 0} and {h for _, h in newest} == {1, 2, 3, 4, 5, 6}
    finally:
        _stop(hub)


def test_a_hub_restored_from_a_backup_gets_back_what_the_tables_had_sent_since(tmp_path,
                                                                                 broker):
    db, backup, card = str(tmp_path / "hub.db"), tmp_path / "hub-backup.db", tmp_path / "t1.db"
    hub = _hub(tmp_path, broker.port, db)
    table = None
    try:
        _finished(_table(card, broker.port, 3))  # last night's hands
        assert wait_for(lambda: _stored(db) == _made(card), HUB_DEADLINE)
        _stop(hub)
        _copy(Path(db), backup)  # the night's backup
        hub = _hub(tmp_path, broker.port, db)
        # Today: the table deals on (and stays on); the hub records it all, acknowledged.
        table = _table(card, broker.port, 60, linger=60)
        _acked(table)
        made = _made(card)
        assert len(made) == 126 and wait_for(lambda: _stored(db) == made, HUB_DEADLINE)
        # The hub's disk dies; its database comes back from the night's backup.
        _stop(hub)
        _copy(backup, Path(db))
        assert len(_stored(db)) == 6
        hub = _hub(tmp_path, broker.port, db)
        assert wait_for(lambda: _stored(db) == made, HUB_DEADLINE), len(_stored(db))
    finally:
        err = _stop(hub)
        if table is not None:
            table.kill()
            table.wait()
    assert "that it had acknowledged (restored from a backup?): asking the table" in err, err


def test_a_table_with_a_wrong_clock_is_flagged_and_its_hands_kept_and_filed_when_dealt(
        tmp_path, broker):
    """A Pi without a battery clock, before NTP, reads its last shutdown time: a year behind.
    Its events were stamped a year ago, and the hub's retention (90 days) deleted them all at
    its next start, minutes after they were dealt; the statistics filed them a year back."""
    from hub.reports import Reports

    db, card = str(tmp_path / "hub.db"), tmp_path / "t1.db"
    retention = "retention_days = 90\n"
    hub = _hub(tmp_path, broker.port, db, retention)
    try:
        _finished(_table(card, broker.port, 3, clock_off=-365 * 86400.0))
        made = _made(card)
        assert wait_for(lambda: _stored(db) == made, HUB_DEADLINE)
        assert wait_for(lambda: "table_clock_off" in _alerts(db), 30), _alerts(db)
        said = _stop(hub)
        assert "t1's clock is 365 days behind the hub's (it read " in said, said
        storage = open_storage(db)  # a floor log line from long ago: gone once it has purged
        storage.log(1000, "maria", "acknowledge", {"alert": 1})
        storage.commit()
        storage.close()
        hub = _hub(tmp_path, broker.port, db, retention)  # its retention purges at the start
        assert wait_for(lambda: not _floor_log(db), HUB_DEADLINE), \
            "the hub's retention did not run"
        assert _stored(db) == made
        figures = Reports(db).statistics()  # the last twelve hours, by the hub's clock
        assert figures["hands"] == 3 and figures["tables"][0]["table"] == "t1", figures
        storage = open_storage(db)
        try:  # the history shows them dealt within the hour, not a year ago
            dealt = [e["ts"] for _, e in storage.hand_history("t1", 3)]
        finally:
            storage.close()
        assert len(dealt) == 6 and min(dealt) > (time.time() - 3600) * 1000, dealt
    finally:
        _stop(hub)
