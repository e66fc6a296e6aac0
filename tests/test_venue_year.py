"""A venue's year (issue 44), with real processes: what happens to every venue sooner or later
must lose no event silently.

A re-installed table (item 1) on the way to the group: its new journal starts again at seq 1
under a new incarnation, the seqs its old journal had made too, and each start of a journal
is an incarnation from the seq it had reached. Here a table (its outbox and MQTT link, a
process each run) deals on one card over two starts, is re-installed on a new card and deals
on; a real Mosquitto and ``tablectl hub`` record it, the venue's uplink (stopped and started
between the two cards) sends it through the group's NATS cluster, and the central recorder
holds every event of both journals exactly once, as the hub holds it, and asks for nothing:
no start past seq 1 taken for a gap.

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

from contract.envelope import LEGACY_INCARNATION, Stream, incarnation_of
from group.centre import GroupStorage
from hub.storage import open_storage
from store.uplink_state import delivered, open_state, save
from tests.bench.multi_venue import Group, record
from tests.conftest import hub_config_file, wait_for

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
    return hub_config_file(
        tmp_path, VENUE, broker_port, db,
        'retention_days = 90\n[group]\ncluster = ["127.0.0.1:4222"]\n'  # (never connected)
        f'[uplink]\nstate = {json.dumps(str(state))}\n')


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
    save(uplink_state, [(Stream("t1", LEGACY_INCARNATION), 10, 0)])
    uplink_state.commit()
    uplink_state.close()

    # The hub's retention (at its start): only what the centre holds goes.
    hub_log = tmp_path / "hub.log"
    with hub_log.open("w") as log_file:
        hub = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                                str(_hub_config(tmp_path, broker.port, db, state))],
                               stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        # The barrier: the purge has run, and the hub says it is up. (The floor's first turn
        # purges while the hub still starts its dashboard: a SIGTERM then, before the hub
        # handles signals, ended it with nothing said.)
        deadline = time.monotonic() + 30
        while _seqs(db, "t1")[:1] != [11] or "hub for venue" not in hub_log.read_text():
            assert hub.poll() is None and time.monotonic() < deadline, (
                _seqs(db, "t1"), hub_log.read_text())
            time.sleep(0.1)
        assert _seqs(db, "t1") == list(range(11, 41))
        assert _seqs(db, "t2") == list(range(1, 21))
    finally:
        hub.send_signal(signal.SIGTERM)
        hub.wait(30)
    said = hub_log.read_text()
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
        # (the centre's answers to the last, counted: then the uplink stops)
        assert wait_for(lambda: delivered(str(state)) == {
            Stream("t1", LEGACY_INCARNATION): 45, Stream("t2", LEGACY_INCARNATION): 20}, 10)
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


# A table's run: its outbox on ``card`` and its MQTT link, ``levels`` level events appended;
# it ends once the hub acknowledged all of them, printing the incarnation it made them under.
RUN = r"""
import sys, time
sys.path.insert(0, {root!r})
from hardware.outbox import Outbox
from hardware.mqtt_link import TableLink
outbox = Outbox({card!r})
link = TableLink(outbox, venue={venue!r}, table="t1", port={port}).start()
for n in range({levels}):
    outbox.append({{"type": "level", "hand": None, "level": n + 1, "sb": 100, "bb": 200,
                    "ante": 0, "t": float(n)}}, int(time.time() * 1000))
    link.notify()
until = time.monotonic() + 120
while outbox.acked_upto < outbox.last_seq and time.monotonic() < until:
    time.sleep(0.05)
link.stop()
print(outbox.incarnation if outbox.acked_upto == outbox.last_seq else "unacknowledged")
"""


def _deal(card: Path, port: int, levels: int, hub_log: Path) -> str:
    """One run of table t1 on ``card``: the incarnation its events were made under."""
    script = RUN.format(root=str(Path(__file__).resolve().parents[1]), card=str(card),
                        venue=VENUE, port=port, levels=levels)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=180)
    assert run.returncode == 0 and run.stdout.strip() != "unacknowledged", (
        card.name, run.stdout, run.stderr[-2000:], hub_log.read_text()[-3000:])
    return run.stdout.strip()


def _outbox_events(card: Path) -> set[tuple[str, int]]:
    with sqlite3.connect(card) as outbox:
        return {(str(i), int(q)) for i, q in outbox.execute("SELECT incarnation, seq FROM outbox")}


def test_a_reinstalled_table_s_two_journals_reach_the_centre_once_each(tmp_path, postgres,
                                                                        broker):
    group = Group(tmp_path, [VENUE], postgres)
    db = group.hub_db(VENUE)
    state = tmp_path / f"{VENUE}-uplink.db"
    hub_log = tmp_path / "hub.log"
    with hub_log.open("w") as said:  # (the child has its own)
        hub = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                                str(_hub_config(tmp_path, broker.port, db, state))],
                               stdout=said, stderr=said, text=True)
    card, new_card = tmp_path / "t1.db", tmp_path / "t1-new.db"
    group.start()
    central = None
    try:
        group.start_central()
        group.start_uplink(VENUE)
        central = GroupStorage(postgres)
        first = _deal(card, broker.port, 12, hub_log)  # seqs 1-12
        second = _deal(card, broker.port, 8, hub_log)  # the daemon started again: 13-20
        group.stop_uplinks()  # (its counts kept, stream by stream)
        reinstalled = _deal(new_card, broker.port, 15, hub_log)  # a new card: 1-15 again
        group.start_uplink(VENUE)
        made = _outbox_events(card) | _outbox_events(new_card)
        assert len({first, second, reinstalled}) == 3 and len(made) == 35

        def held() -> list[tuple[str, int]]:
            central.commit()  # (each read sees the recorder's commits since the last)
            return sorted((incarnation_of(e), e["seq"]) for e in central.envelopes(VENUE, "t1"))

        assert wait_for(lambda: held() == sorted(made), 60), (
            sorted(made - set(held())), group.log_tail(f"uplink-{VENUE}", 20),
            group.log_tail("central", 20))
        assert {(inc, seq) for inc, seq in made if seq <= 12} == {
            (first, seq) for seq in range(1, 13)} | {(reinstalled, seq) for seq in range(1, 13)}
        # As the hub holds them, each once.
        hub_db = open_storage(db)
        try:
            there = {(incarnation_of(e), e["seq"]): e for e in hub_db.envelopes("t1")}
        finally:
            hub_db.close()
        here = central.envelopes(VENUE, "t1")
        assert len(here) == len(there) == 35
        assert all(there[incarnation_of(e), e["seq"]] == e for e in here)
        central.close()
        central = None
        group.stop_uplinks()
        counts = group.stop_central()
    finally:
        if central is not None:
            central.close()
        group.stop()
        hub.send_signal(signal.SIGTERM)
        hub.wait(30)
    log = (tmp_path / f"uplink-{VENUE}.log").read_text()
    assert "no longer holds" not in log, log[-3000:]  # a start past seq 1 is no gap
    assert counts["asked_again"] == 0 and counts["stored"] == 35, counts
