"""A venue's year (issue 44), with real processes: what happens to every venue sooner or later
must lose no event silently.

Retention and the uplink (item 2): the hub's retention purge deleted by timestamp what the
venue's uplink had not sent to the group, and an uplink then waited for ever on the first row
the hub no longer had (also whenever its state file was lost). Here a real ``tablectl hub``
with a 90-day retention keeps every old event its group's centre does not hold (and says so),
deleting only what the centre holds; then the uplink, its state file lost and some early rows
of a table deleted by hand, sends what the hub has, says each gap once, tells the centre, which
holds the tables from there without asking for what cannot come, and goes on with new events.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hub.group import GroupStorage
from hub.storage import open_storage
from hub.uplink_state import open_state
from simulators.broker import free_port
from tests.bench.multi_venue import Group, record

VENUE = "v"


def _level(seq: int) -> dict[str, object]:
    return {"type": "level", "hand": None, "level": seq, "sb": 100, "bb": 200, "ante": 0,
            "t": float(seq)}


def _seqs(db: str, table: str) -> list[int]:
    storage = open_storage(db)
    try:
        return storage.seqs(table)
    finally:
        storage.close()


def _hub_config(tmp_path: Path, broker_port: int, db: str, state: Path) -> Path:
    from hub import auth

    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    config = tmp_path / "hub.toml"
    config.write_text(
        f'[venue]\nid = "{VENUE}"\n[mqtt]\nport = {broker_port}\n'
        f'[storage]\ndb = {json.dumps(db)}\nretention_days = 90\n'
        f'[dashboard]\nlisten = "127.0.0.1:{free_port()}"\nusers = {json.dumps(str(users))}\n'
        '[group]\ncluster = ["127.0.0.1:4222"]\n'  # (the hub never connects to it)
        f'[uplink]\nstate = {json.dumps(str(state))}\n')
    config.chmod(0o600)
    return config


def test_retention_keeps_what_the_group_lacks_and_the_uplink_goes_on_past_what_is_gone(
        tmp_path, postgres, broker):
    group = Group(tmp_path, [VENUE], postgres)
    db = group.hub_db(VENUE)
    hub_db = open_storage(db)
    # A year ago (the envelopes' ts: 2023): t1's 40 events and t2's 20, recorded at the venue.
    record(hub_db, VENUE, "t1", [_level(n) for n in range(1, 41)], 1)
    record(hub_db, VENUE, "t2", [_level(n) for n in range(1, 21)], 1)
    hub_db.commit()
    hub_db.close()
    state = tmp_path / f"{VENUE}-uplink.db"
    uplink_state = open_state(str(state))  # the centre held t1 up to 10, nothing of t2
    uplink_state.execute("INSERT INTO sent VALUES ('t1', 10)")
    uplink_state.commit()
    uplink_state.close()

    # The hub's retention (at its start): only what the centre holds goes.
    hub = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                            str(_hub_config(tmp_path, broker.port, db, state))],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while _seqs(db, "t1")[:1] != [11]:  # the barrier: the purge has run
            assert hub.poll() is None and time.monotonic() < deadline, _seqs(db, "t1")
            time.sleep(0.1)
        assert _seqs(db, "t1") == list(range(11, 41))
        assert _seqs(db, "t2") == list(range(1, 21))
    finally:
        hub.send_signal(signal.SIGTERM)
        _, said = hub.communicate(timeout=30)
    assert "retention keeps 50 events older than 90 days: the group's centre does not hold" \
        in said, said

    # The uplink's state file lost; t2's first five deleted by hand (an older purge).
    state.unlink()
    with sqlite3.connect(db) as raw:
        raw.execute("DELETE FROM events WHERE tbl = 't2' AND seq <= 5")
    group.start()
    try:
        group.start_central()
        group.start_uplink(VENUE)
        central = GroupStorage(postgres)

        def held(table: str) -> list[int]:
            central.commit()
            return [e["seq"] for e in central.envelopes(VENUE, table)]

        deadline = time.monotonic() + 30
        while held("t1") != list(range(11, 41)) or held("t2") != list(range(6, 21)):
            assert time.monotonic() < deadline, (held("t1"), held("t2"),
                                                 group.log_tail(f"uplink-{VENUE}", 20))
            time.sleep(0.1)
        # New events go on after the gaps.
        hub_db = open_storage(db)
        record(hub_db, VENUE, "t1", [_level(n) for n in range(41, 46)], 41)
        hub_db.commit()
        hub_db.close()
        deadline = time.monotonic() + 30
        while held("t1") != list(range(11, 46)):
            assert time.monotonic() < deadline, (held("t1"),
                                                 group.log_tail(f"uplink-{VENUE}", 20))
            time.sleep(0.1)
        central.close()
        uplink = group.stop_uplinks()[VENUE]
        counts = group.stop_central()
    finally:
        group.stop()
    log = (tmp_path / f"uplink-{VENUE}.log").read_text()
    for table, first, last in (("t1", 1, 10), ("t2", 1, 5)):
        line = f"no longer holds {table}'s events {first}-{last}"
        assert log.count(line) == 1, log[-3000:]
    assert counts["asked_again"] == 0, counts  # the centre asked for nothing that is gone
    assert uplink["held"] >= 35 + 15, uplink
