"""Reporting to the venue hub against a real Mosquitto: outbox, acks, exactly-once at the
recorder through broker restarts, network cuts and a SIGKILLed table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from contract.envelope import LEGACY_INCARNATION, Stream
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from houses.loaders import load_structure
from hub.recorder import Recorder
from hub.storage import MIGRATIONS
from tests.conftest import subscribed, wait_for

VENUE = "testvenue"


def _event(i):
    return {"type": "card", "hand": i // 20 + 1, "n": i % 20 + 1, "card": "As", "deck": "R1",
            "role": "board", "street": "flop", "t": float(i)}


def test_outbox_keeps_seq_across_restarts_and_deletes_only_on_ack(tmp_path):
    path = tmp_path / "outbox.db"
    box = Outbox(path, keep_acked=2)
    assert box.boot == 1
    assert [box.append(_event(i), 1000 + i) for i in range(5)] == [1, 2, 3, 4, 5]
    box.ack(3)
    assert box.acked_upto == 3 and box.pending_count() == 2
    assert box.oldest_kept() == 2  # two acknowledged rows kept for replays
    box.close()
    again = Outbox(path, keep_acked=2)
    assert again.boot == 2 and again.append(_event(9), 2000) == 6
    # Each start is an incarnation of its own, acknowledged on its own: the second's ack
    # does not cover what the first made (a recorder that holds 6 may lack 4 and 5).
    assert again.incarnation != box.incarnation
    assert again.identity.follows == box.incarnation and again.identity.since_seq == 6
    assert [row[4] for row in again.rows(3)] == [box.incarnation] * 2 + [again.incarnation]
    assert again.ack(99) == 3
    assert again.ack(99, box.incarnation) == 6  # an ack beyond what exists covers what exists
    assert again.ack(99, "f" * 32) == 6  # another device's incarnation: nothing changes
    assert again.span(box.incarnation) == (1, 5)  # its row 5 is kept for replays
    again.keep_acked = 0
    assert again.ack(6) == 6 and again.oldest_kept() is None
    again.close()
    third = Outbox(path)  # earlier starts, all acknowledged and gone, are forgotten
    assert third.span(box.incarnation) is None and third.span(again.incarnation) is None
    assert third.identity.follows == again.incarnation and third.identity.since_seq == 7
    assert third.identity.journal == box.identity.journal and third.acked_upto == 6


@pytest.fixture
def recorder(tmp_path, broker):
    from contract.schema import validate

    # Every envelope the recorder captures is checked against the AsyncAPI document; one
    # that breaks it is counted invalid and never stored, which the tests would see.
    rec = Recorder(tmp_path / "recorder.db", venue=VENUE, port=broker.port,
                   reorder_timeout=1.0, validate=lambda e: validate("Envelope", e)).start()
    assert rec.connected.wait(10)
    yield rec
    rec.stop()


def _listener(broker, topic, keep=lambda message: json.loads(message.payload)):
    """A paho client subscribed to ``topic`` (granted before this returns) and the list its
    messages go to, each as ``keep`` makes it."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    messages: list = []
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.on_message = lambda c, u, m: messages.append(keep(m))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    subscribed(client, topic)
    return client, messages


def _close(client):
    client.loop_stop()
    client.disconnect()


def _link(tmp_path, broker, table="t1", **kwargs):
    box = Outbox(tmp_path / f"{table}.db")
    link = TableLink(box, venue=VENUE, table=table, port=broker.port, **kwargs).start()
    assert wait_for(lambda: link.connected, 10)
    return box, link


def test_exactly_once_through_a_broker_restart(tmp_path, broker, recorder):
    box, link = _link(tmp_path, broker)
    total = 3000

    def produce():
        for i in range(total):
            box.append(_event(i), 1000 + i)
            link.notify()
            if i % 50 == 0:
                time.sleep(0.005)

    producer = threading.Thread(target=produce)
    producer.start()
    assert wait_for(lambda: recorder.upto.get("t1", 0) > 500, 30)
    broker.kill()  # mid-stream: everything the broker had in memory is gone
    assert wait_for(lambda: not link.connected, 15)
    broker.start()
    producer.join()
    assert wait_for(lambda: recorder.upto.get("t1", 0) == total, 60), recorder.stats
    assert recorder.seqs("t1") == list(range(1, total + 1))
    assert recorder.stats.invalid == 0
    assert wait_for(lambda: box.acked_upto == total, 10)
    got = recorder.envelopes("t1")
    assert all(e["data"]["n"] == (e["seq"] - 1) % 20 + 1 for e in got)  # nothing invented
    link.stop()


def test_thousands_of_events_while_the_broker_is_unreachable(tmp_path, broker, recorder):
    box, link = _link(tmp_path, broker)
    for i in range(100):
        box.append(_event(i), i)
        link.notify()
    assert wait_for(lambda: recorder.upto.get("t1", 0) == 100, 30)
    broker.kill()
    assert wait_for(lambda: not link.connected, 15)
    for i in range(100, 5100):
        box.append(_event(i), i)
        link.notify()
    published, sent = link.stats.published, link.stats.messages
    broker.start()
    try:
        assert wait_for(lambda: recorder.upto.get("t1", 0) == 5100, 90), recorder.stats
        assert recorder.seqs("t1") == list(range(1, 5101))
        flags = {e["seq"]: e["historical"] for e in recorder.envelopes("t1")}
        assert not flags[50] and flags[3000]  # the backlog is flagged historical
        # Each stored row is the envelope alone, as if it had come by itself.
        assert all(set(e) >= {"seq", "table", "data"} and "batch" not in e
                   for e in recorder.envelopes("t1"))
        # The backlog went several events a message: 5,000 events in a few hundred.
        assert link.stats.published - published >= 5000
        assert link.stats.messages - sent <= (link.stats.published - published) // 10
    finally:
        link.stop()


def test_a_table_sends_again_only_the_gap_the_recorder_names(tmp_path, broker, monkeypatch):
    """A replay request with to_seq: the link sends those rows again, then goes on where it
    was; without to_seq, everything after from_seq."""
    box, link = _link(tmp_path, broker, table="t6")
    watcher, seen = _listener(broker, f"pkr/v1/{VENUE}/tables/t6/private")
    asker, answers = _listener(broker, f"pkr/v1/{VENUE}/tables/t6/cmd-resp")
    try:
        for i in range(20):
            box.append(_event(i), i)
        link.notify()
        assert wait_for(lambda: len(seen) == 20, 10), [m.get("seq") for m in seen]
        asker.publish(f"pkr/v1/{VENUE}/tables/t6/cmd/replay",
                      json.dumps({"transaction": "gap", "from_seq": 5, "to_seq": 7}), qos=1)
        assert wait_for(lambda: answers, 10), seen
        assert answers[0]["ok"] and answers[0]["to_seq"] == 7
        box.append(_event(20), 20)  # a new event after the request: it follows the gap
        link.notify()
        def envelopes():  # the gap comes back as one batch
            return [e for m in seen for e in m.get("batch", [m])]

        assert wait_for(lambda: len(envelopes()) == 24, 10), envelopes()
        again = envelopes()[20:]
        assert [e["seq"] for e in again] == [5, 6, 7, 21], again
        assert [e["historical"] for e in again] == [True, True, True, False]
        assert [len(m.get("batch", [m])) for m in seen[20:]] == [3, 1]
        asker.publish(f"pkr/v1/{VENUE}/tables/t6/cmd/replay",
                      json.dumps({"transaction": "bad", "from_seq": 5, "to_seq": 99}), qos=1)
        assert wait_for(lambda: len(answers) == 2, 10)
        assert not answers[1]["ok"] and "to_seq 99" in answers[1]["error"]
        # A gap longer than one replay: the answer says how far this one goes.
        monkeypatch.setattr(link.sender, "max_gap_replay", 2)
        asker.publish(f"pkr/v1/{VENUE}/tables/t6/cmd/replay",
                      json.dumps({"transaction": "long", "from_seq": 10, "to_seq": 15}), qos=1)
        assert wait_for(lambda: len(answers) == 3 and len(envelopes()) == 26, 10), answers
        assert answers[2]["to_seq"] == 11
        assert [e["seq"] for e in envelopes()[24:]] == [10, 11]
    finally:
        link.stop()
        _close(watcher)
        _close(asker)


TABLE_PROCESS = r"""
import sys, time
sys.path.insert(0, {root!r})
from hardware.outbox import Outbox
from hardware.mqtt_link import TableLink
box = Outbox({db!r})
link = TableLink(box, venue={venue!r}, table="t9", port={port}).start()
start = box.last_seq
for i in range({count}):
    box.append({{"type": "card", "hand": 1, "n": start + i + 1, "card": "As", "role": "board",
                "street": "flop", "t": 0.0}}, 1)
    link.notify()
    time.sleep(0.001)
print("done", flush=True)
time.sleep(60)
"""


def _table_process(tmp_path, broker, count):
    script = TABLE_PROCESS.format(root=str(Path(__file__).resolve().parents[1]),
                                  db=str(tmp_path / "t9.db"), venue=VENUE, port=broker.port,
                                  count=count)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)


def test_a_sigkilled_table_resumes_without_loss_or_duplicates(tmp_path, broker, recorder):
    first = _table_process(tmp_path, broker, 4000)
    assert wait_for(lambda: recorder.upto.get("t9", 0) > 300, 30)
    os.kill(first.pid, signal.SIGKILL)  # mid-publish
    first.wait()
    import sqlite3

    with sqlite3.connect(tmp_path / "t9.db") as db:  # read only: opening an Outbox is a boot
        killed_at = db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()[0] - 1
    assert killed_at < 4000
    second = _table_process(tmp_path, broker, 500)
    try:
        total = killed_at + 500
        assert wait_for(lambda: recorder.upto.get("t9", 0) == total, 60), recorder.stats
        assert recorder.seqs("t9") == list(range(1, total + 1))
        ns = [e["data"]["n"] for e in recorder.envelopes("t9")]
        assert ns == list(range(1, total + 1))  # each event once, in order, none invented
        boots = {e["boot"] for e in recorder.envelopes("t9")}
        assert boots == {1, 2}
    finally:
        os.kill(second.pid, signal.SIGKILL)
        second.wait()


def test_status_birth_clean_stop_and_last_will(tmp_path, broker):
    watcher, seen = _listener(broker, f"pkr/v1/{VENUE}/tables/+/status")
    try:
        _box, link = _link(tmp_path, broker, table="t2")
        assert wait_for(lambda: any(s["state"] == "online" for s in seen), 10)
        link.stop()
        assert wait_for(lambda: seen[-1]["state"] == "offline", 10)
        process = _table_process(tmp_path, broker, 1)
        assert wait_for(lambda: seen[-1]["state"] == "online", 15)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        # keepalive 10 s: the broker gives the table 1.5 x that before its Last Will
        assert wait_for(lambda: seen[-1]["state"] == "lost", 30)
        assert seen[-1]["boot"] >= 1
        from contract.schema import validate

        for status in seen:
            validate("Status", status)
    finally:
        _close(watcher)


def test_commands_are_validated_answered_and_applied(tmp_path, broker):

    from contract.schema import validate

    applied = []

    def on_command(command):
        applied.append((command.name, command.fields()))
        return None if command.fields().get("seats") != [9] else "seat 9 is past this house's"

    box, link = _link(tmp_path, broker, table="t3", on_command=on_command)
    for i in range(5):
        box.append(_event(i), i)
    link.notify()
    root = f"pkr/v1/{VENUE}/tables/t3/"
    floor, answers = _listener(broker, root + "cmd-resp")
    try:
        sends = [("seating", b'{"transaction": "c1", "seats": [1, 2, 5]}'),
                 ("seating", b'{"transaction": "c1", "seats": [1, 2]}'),  # replayed
                 ("seating", b'{"transaction": "c2", "seats": "all"}'),
                 ("seating", b'{"transaction": "c3", "seats": [9]}'),  # the table refuses
                 ("seating", b'{"transaction": "c8", "seats": [99]}'),  # the contract does
                 ("warp", b'{"transaction": "c4"}'),
                 ("status", b'{not json'),
                 ("status", b'{"transaction": "c5", "pad": "' + b"x" * 5000 + b'"}'),
                 ("replay", b'{"transaction": "c6", "from_seq": 2}'),
                 ("status", b'{"transaction": "c7"}')]
        for name, payload in sends:
            floor.publish(root + f"cmd/{name}", payload, qos=1)
        assert wait_for(lambda: len(answers) == len(sends), 15), answers
        for answer in answers:
            validate("CommandResponse", answer)
        by_tx = {(a["transaction"], a["ok"]): a for a in answers}
        assert by_tx[("c1", True)]["command"] == "seating"
        assert "already handled" in by_tx[("c1", False)]["error"]
        assert by_tx[("c2", False)]["error"] == 'seats: "all" is not of type "array"'
        assert by_tx[("c3", False)]["error"] == "seat 9 is past this house's"
        assert by_tx[("c8", False)]["error"] == "seats/0: 99 is greater than the maximum of 10"
        assert "unknown command" in by_tx[("c4", False)]["error"]
        assert any(not a["ok"] and "JSON" in a["error"] for a in answers)
        assert any(not a["ok"] and "4096" in a["error"] for a in answers)
        assert by_tx[("c6", True)]["from_seq"] == 2
        assert by_tx[("c7", True)]["last_seq"] == 5
        # Only the valid, new commands reached the table.
        assert applied == [("seating", {"seats": [1, 2, 5]}), ("seating", {"seats": [9]})]
    finally:
        _close(floor)
        link.stop()


def test_the_state_snapshot_is_retained_for_late_joiners(tmp_path, broker):

    from contract.schema import validate
    from contract.snapshots import TableState
    from controller.inputs import ClockCommand, Setup
    from controller.table import Table
    from houses.loaders import load_profile

    table = Table(load_profile("tda-2024"), structure_loader=load_structure)
    table.handle(Setup("holdem", (1, 2, 3), 1, t=0.0))
    table.handle(ClockCommand("start", "tda-2024", t=0.0))
    box, link = _link(tmp_path, broker, table="t4")
    # A first subscriber sees the snapshot: then the broker holds it, retained.
    first, probe = _listener(broker, f"pkr/v1/{VENUE}/tables/t4/state")
    link.publish_state(TableState.of(table.state(), hub_link="ok", last_seq=box.last_seq,
                                     ts_ms=int(time.time() * 1000)).to_json())
    assert wait_for(lambda: probe, 10)
    _close(first)
    late, seen = _listener(broker, f"pkr/v1/{VENUE}/tables/t4/state",
                           lambda m: {"retain": m.retain, **json.loads(m.payload)})
    try:
        assert wait_for(lambda: seen, 10)
        assert seen[0]["retain"] and seen[0]["clock"]["level"] == 1
        validate("State", seen[0])
    finally:
        _close(late)
        link.stop()


def test_a_state_snapshot_is_stamped_with_the_moment_it_describes(tmp_path):
    """A press is stamped when the finger moved (a hold, seconds before it is recognised), and
    the core's time is its last input's: a snapshot describes the table at that moment, and
    its ``ts`` must say so, or the clock's time left reads seconds wrong against it."""
    import io

    from controller.inputs import Gesture
    from simulators.broker import free_port
    from tablectl.config import config_from_data
    from tablectl.daemon import Daemon

    now = [1000.0]
    config = config_from_data({
        "table": {"venue": "v", "id": "t1"}, "clock": {"mode": "standalone",
                                                      "structure": "tda-2024"},
        "shoe": {"backend": "none"}, "button": {"backend": "none"},
        "display": {"backend": "none"}, "buzzer": {"backend": "none"},
        "mqtt": {"port": free_port()},  # nobody listens: the snapshots are caught here
        "storage": {"data_dir": str(tmp_path)}}, "test")
    daemon = Daemon(config, out=io.StringIO(), clock=lambda: now[0]).start()
    published = []

    def snapshot():
        daemon.state.shown = None  # now, not only when something a viewer sees has changed
        daemon.state.publish()
        return published[-1]

    try:
        daemon.link.publish_state = published.append
        daemon.tick()
        now[0] += 3.0
        # A hold recognised 2 s after the finger went down, then a tap just now: two
        # snapshots of the table at two moments, which put the level's end at one moment.
        daemon.feed(Gesture("hold", t=daemon.now() - 2.0))
        on_hold = snapshot()
        daemon.feed(Gesture("tap", t=daemon.now()))
        on_tap = snapshot()
        assert on_hold["clock"]["remaining"] == pytest.approx(
            on_tap["clock"]["remaining"] + 2.0, abs=0.01)
        ends = [s["ts"] / 1000 + s["clock"]["remaining"] for s in (on_hold, on_tap)]
        assert ends[0] == pytest.approx(ends[1], abs=0.1)
    finally:
        daemon.stop()


def test_the_recorder_asks_for_a_replay_when_a_gap_stays_open(tmp_path, broker, recorder):

    from contract.envelope import envelope

    fake, requests = _listener(broker, f"pkr/v1/{VENUE}/tables/t5/cmd/replay")

    def send(seq):
        body = envelope(_event(seq), venue=VENUE, table="t5", seq=seq, boot=1, ts_ms=seq)
        fake.publish(f"pkr/v1/{VENUE}/tables/t5/private", json.dumps(body), qos=1)

    try:
        for seq in (1, 2, 4, 5):  # 3 was lost
            send(seq)
        assert wait_for(lambda: requests, 10)
        assert requests[0]["from_seq"] == 3 and requests[0]["transaction"]
        assert requests[0]["to_seq"] == 3  # only the gap: 4 and 5 are here
        assert recorder.upto["t5"] == 2
        send(3)
        assert wait_for(lambda: recorder.upto.get("t5") == 5, 10)
        assert recorder.seqs("t5") == [1, 2, 3, 4, 5]
    finally:
        _close(fake)


def test_a_recorder_without_its_session_asks_for_what_it_missed_at_once(tmp_path, broker):
    """Connected without a session, the recorder takes a table's first event above its count
    as events lost while it was away (one publisher's QoS 1 messages come in order), and asks
    for the gap at once, not after its reorder timeout (here a minute)."""
    from contract.envelope import envelope

    rec = Recorder(tmp_path / "fresh.db", venue=VENUE, port=broker.port,
                   reorder_timeout=60.0, client_id="recorder-fresh").start()
    assert rec.connected.wait(10)
    fake, requests = _listener(broker, f"pkr/v1/{VENUE}/tables/t7/cmd/replay")
    try:
        # The barrier: the recorder's subscription is in place once it stored another table's
        # first event (a CONNACK comes before the subscription; a crowded machine showed it).
        first = envelope(_event(1), venue=VENUE, table="t8", seq=1, boot=1, ts_ms=1)
        fake.publish(f"pkr/v1/{VENUE}/tables/t8/private", json.dumps(first), qos=1)
        assert wait_for(lambda: rec.upto.get("t8") == 1, 10)
        for seq in (3, 4):  # 1 and 2 went out before the recorder subscribed
            body = envelope(_event(seq), venue=VENUE, table="t7", seq=seq, boot=1, ts_ms=seq)
            fake.publish(f"pkr/v1/{VENUE}/tables/t7/private", json.dumps(body), qos=1)
        assert wait_for(lambda: requests, 10), "no request within the minute's timeout"
        assert (requests[0]["from_seq"], requests[0]["to_seq"]) == (1, 2)
    finally:
        _close(fake)
        rec.stop()


def test_the_recorder_on_postgresql_stores_each_event_once(tmp_path, broker, postgres):
    from hub.storage import open_storage

    rec = Recorder(postgres, venue=VENUE, port=broker.port, client_id="recorder-pg").start()
    assert rec.connected.wait(10)
    box, link = _link(tmp_path, broker, table="tp")
    try:
        for i in range(300):
            box.append(_event(i), i)
            link.notify()
        assert wait_for(lambda: rec.upto.get("tp", 0) == 300, 30)
        broker.kill()  # the table sends everything unacknowledged again after this
        broker.start()
        for i in range(300, 400):
            box.append(_event(i), i)
        link.notify()
        assert wait_for(lambda: rec.upto.get("tp", 0) == 400, 60)
        assert rec.seqs("tp") == list(range(1, 401))
    finally:
        link.stop()
        rec.stop()
    storage = open_storage(postgres)  # the schema is versioned, and reopening migrates nothing
    try:
        version = storage.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
        assert version == len(MIGRATIONS)
        assert storage.uptos() == {Stream("tp", box.incarnation): 400}
    finally:
        storage.close()


def test_a_recorder_started_after_the_tables_gets_what_they_sent_before(tmp_path, broker):
    """Nothing held the events for it (its first start): the tables' retained status, read
    through its new subscription, makes it ask each for what follows its count."""
    box, link = _link(tmp_path, broker, table="t6")
    try:
        for i in range(40):
            box.append(_event(i), 1000 + i)
        link.notify()
        assert wait_for(lambda: link.stats.published == 40, 10)  # to nobody
        rec = Recorder(tmp_path / "late.db", venue=VENUE, port=broker.port,
                       client_id="recorder-late", reorder_timeout=1.0).start()
        try:
            assert wait_for(lambda: rec.upto.get("t6") == 40, 15)
            assert rec.seqs("t6") == list(range(1, 41)) and rec.stats.duplicates == 0
            assert wait_for(lambda: box.acked_upto == 40, 10)
            requests = rec.stats.replay_requests
        finally:
            rec.stop()
        # Back with its session: it asks nobody again (the subscription is not new).
        again = Recorder(tmp_path / "late.db", venue=VENUE, port=broker.port,
                         client_id="recorder-late", reorder_timeout=1.0).start()
        try:
            assert again.connected.wait(10)
            # The barrier: the recorder has turned past its reorder timeout since it connected,
            # when a table heard through a new subscription would have been asked.
            since = time.monotonic()
            assert wait_for(lambda: again.stats.flushed_at > since + again.reorder_timeout
                            + 0.2, 15)
            assert again.stats.replay_requests == 0 and requests == 1
        finally:
            again.stop()
    finally:
        link.stop()


def test_a_table_takes_no_seat_past_its_house_size_from_its_configuration_or_a_command(
        tmp_path):
    """Mike's seats nine a table (seed 003): a table configured with seat 10 does not start,
    and a seating command with seat 10 from a tool other than the hub is refused, saying
    why."""
    import io

    from contract.commands import SeatingCommand
    from simulators.broker import free_port
    from tablectl.config import ConfigError, config_from_data
    from tablectl.daemon import Daemon

    def config(seats):
        return config_from_data({
            "table": {"venue": "v", "id": "t1", "profile": "mikes-poker-tables",
                      "seats": seats, "button": seats[0]},
            "shoe": {"backend": "none"}, "button": {"backend": "none"},
            "display": {"backend": "none"}, "buzzer": {"backend": "none"},
            "mqtt": {"port": free_port()}, "storage": {"data_dir": str(tmp_path)}}, "test")

    with pytest.raises(ConfigError, match="seat 10: mikes-poker-tables seats 9 a table"):
        Daemon(config([1, 5, 10]), out=io.StringIO()).start()
    daemon = Daemon(config([1, 5, 9]), out=io.StringIO()).start()
    try:
        refused = daemon.apply_command(SeatingCommand(seats=[1, 10]))
        assert refused is not None and "no seat past 9" in refused
        assert daemon.apply_command(SeatingCommand(seats=[1, 2])) is None
        assert daemon.table.seats == (1, 2)
    finally:
        daemon.stop()


def test_the_recorder_acknowledges_what_its_kept_session_delivers_before_the_suback(tmp_path):
    """With a kept session the broker delivers what waited before it answers the recorder's
    SUBSCRIBE: those rows are committed then, and their ack goes at once (a fresh clone's run
    saw a table wait for an ack that the recorder held back until the SUBACK, then dropped).
    A count committed while offline is acknowledged once the recorder is back."""
    from contract.mqtt import Connected, Disconnected, Received
    from contract.wire import encode
    from tests.test_hub import _envelope

    published: list[tuple[str, dict]] = []

    class Client:  # a recording stand-in for paho's client: no broker
        def subscribe(self, topic, qos=0):
            return 0, 7  # its SUBACK never comes in this test

        def publish(self, topic, payload=None, qos=0, retain=False):
            published.append((topic, json.loads(payload)))

    def envelope(seq):
        return encode({**_envelope(seq, "floor.called"), "venue": VENUE}).encode()

    rec = Recorder(tmp_path / "rec.db", venue=VENUE, ack_interval=0.01)
    rec.client = Client()
    rec._start_thread()
    try:
        rec.put(Connected(False, "Success", session_present=True))
        rec.put(Received(f"pkr/v1/{VENUE}/tables/t1/private", envelope(1), False))
        ack = (f"pkr/v1/{VENUE}/tables/t1/ack", {"upto_seq": 1,
                                                 "incarnation": LEGACY_INCARNATION})
        assert wait_for(lambda: ack in published, 5), published
        assert not rec.connected.is_set()  # the SUBACK is still to come
        rec.put(Disconnected("lost"))
        rec.put(Received(f"pkr/v1/{VENUE}/tables/t1/private", envelope(2), False))
        assert wait_for(lambda: rec.upto.get("t1") == 2, 5)  # committed while offline
        since = rec.stats.flushed_at
        assert wait_for(lambda: rec.stats.flushed_at > since, 5)  # that flush is over
        second = (ack[0], {**ack[1], "upto_seq": 2})
        assert second not in published
        rec.put(Connected(False, "Success", session_present=True))
        assert wait_for(lambda: second in published, 5), published
    finally:
        rec.stop()


def test_the_recorder_holds_no_write_lock_between_its_commits(tmp_path):
    """SQLite has one write lock, the recorder's and the floor's. The recorder writes the
    events it found new when its turn commits, not as each message comes: while it reads and
    checks the next messages, the floor may write (an alert, the seating). Written as they
    came, its thousand-message batches on a loaded machine held the lock for over 10 s."""
    import sqlite3

    from contract import topics
    from contract.envelope import envelope
    from contract.wire import encode

    def receive(seq: int) -> None:
        body = envelope({"type": "level", "hand": None, "level": seq, "sb": 100, "bb": 200,
                         "ante": 0, "t": float(seq)}, venue="v", table="t1", seq=seq, boot=1,
                        ts_ms=1_800_000_000_000 + seq)
        recorder._receive(topics.table("v", "t1", "private"), encode(body).encode(), False)

    recorder = Recorder(tmp_path / "hub.db", venue="v")
    recorder.setup()
    try:
        receive(1)  # (the table's first event: its journal kept, a write, committed here)
        recorder._flush(time.monotonic())
        for seq in (2, 3, 2):  # (the second 2: a duplicate, counted as one)
            receive(seq)
        floor = sqlite3.connect(tmp_path / "hub.db", timeout=0)
        floor.execute("BEGIN IMMEDIATE")  # the floor's write: the lock is free
        floor.rollback()
        assert recorder.stats.stored == 3 and recorder.stats.duplicates == 1
        recorder._flush(time.monotonic())
        assert [row[0] for row in floor.execute(
            "SELECT seq FROM events WHERE tbl = 't1' ORDER BY seq")] == [1, 2, 3]
        floor.close()
    finally:
        recorder.finish()
