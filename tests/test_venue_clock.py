"""The venue clock: the hub's authority over the tournament clock, followed by a table daemon
through a real broker."""

from __future__ import annotations

import json

import pytest

from contract.schema import validate
from contract.wire import encode
from hub.venue_clock import VenueClock, VenueClockService
from tablectl.config import config_from_data
from tablectl.daemon import Daemon
from tests.conftest import subscribed, wait_for


class Tick:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_clock_runs_pauses_adds_time_and_jumps_levels():
    tick = Tick()
    clock = VenueClock(tick)
    clock.apply("start", "corner-pocket")
    tick.now = 100.0
    assert clock.state() == {"structure": "corner-pocket", "elapsed": 100.0, "running": True,
                             "hand_for_hand": False, "level": 1, "on_break": False,
                             "remaining": 800.0}
    clock.apply("pause")
    tick.now = 500.0
    assert clock.state()["elapsed"] == 100.0 and not clock.state()["running"]
    clock.apply("resume")
    tick.now = 510.0
    clock.apply("add", 60)
    assert clock.state()["elapsed"] == 50.0
    tick.now = 910.0  # running since the resume: the added minute still counts
    assert clock.state()["elapsed"] == 450.0
    clock.apply("add", 60)
    assert clock.state()["elapsed"] == 390.0
    clock.apply("add", 3600)  # never back past the start of the current level
    assert clock.state()["elapsed"] == 0.0
    clock.apply("level", 3)
    assert clock.state()["elapsed"] == 1800.0
    tick.now = 1010.0
    clock.apply("add", 3600)  # level 3 gets its full time back, no more
    assert clock.state()["elapsed"] == 1800.0
    with pytest.raises(ValueError, match="level 99"):
        clock.apply("level", 99)


def test_the_floor_starts_a_scheduled_break_early_and_ends_it_early():
    tick = Tick()
    clock = VenueClock(tick)
    clock.apply("start", "tda-2024")  # a 10-minute break after every fourth level
    tick.now = 300.0
    with pytest.raises(ValueError, match="not on a break"):
        clock.apply("break", "end")
    clock.apply("break", "start")
    state = clock.state()
    assert state["on_break"] and state["level"] is None and state["remaining"] == 600.0
    with pytest.raises(ValueError, match="on a break already"):
        clock.apply("break", "start")
    tick.now = 360.0
    clock.apply("break", "end")
    state = clock.state()
    assert state["level"] == 5 and not state["on_break"] and state["running"]
    with pytest.raises(ValueError, match="'start' or 'end'"):
        clock.apply("break", "lunch")


def test_a_table_follows_the_hubs_clock(tmp_path, broker):
    service = VenueClockService(venue="v1", port=broker.port, interval=0.5).start()
    assert service.connected.wait(10)
    service.apply("start", "corner-pocket")
    service.apply("level", 4)
    config = config_from_data({
        "table": {"venue": "v1", "id": "t1"}, "clock": {"mode": "venue"},
        "shoe": {"backend": "none"}, "button": {"backend": "none"},
        "display": {"backend": "none"}, "buzzer": {"backend": "none"},
        "mqtt": {"port": broker.port}, "storage": {"data_dir": str(tmp_path)}}, "test")
    daemon = Daemon(config).start()
    try:
        def level():
            daemon.loop(until=lambda: True)  # one turn of the main loop
            while not daemon.queue.empty():
                daemon.loop(until=lambda: daemon.queue.empty())
            return daemon.table.clock.current_level() if daemon.table.clock else None

        assert wait_for(lambda: level() == 4), "the table did not take the hub's level"
        service.apply("pause")
        assert wait_for(lambda: (level(), daemon.table.clock.paused) == (4, True))
        service.apply("level", 6)
        assert wait_for(lambda: level() == 6)
        events = daemon.outbox.rows(0, 1000)
        synced = [e for _, _, _, e, _ in events
                  if e["type"] == "clock" and e["state"] == "synced"]
        assert synced and synced[-1]["structure"] == "corner-pocket"
        service.apply("stop")
        assert wait_for(lambda: level() is not None and daemon.table.clock.stopped)
        # The barrier: three more publications of the stopped clock reached the table.
        readings = daemon.venue_clock_readings
        assert wait_for(lambda: level() is not None
                        and daemon.venue_clock_readings >= readings + 3)
        stopped = [e for _, _, _, e, _ in daemon.outbox.rows(0, 1000)
                   if e["type"] == "clock" and e["state"] == "stopped"]
        assert len(stopped) == 1, "the table reported the hub's stopped clock more than once"
    finally:
        daemon.stop()
        service.stop()


def test_floor_commands_to_the_clock_are_validated(broker):
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    service = VenueClockService(venue="v2", port=broker.port).start()
    assert service.connected.wait(10)
    answers: list[dict] = []
    states: list[dict] = []
    floor = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    floor.on_message = lambda c, u, m: (answers if m.topic.endswith("cmd-resp")
                                        else states).append(json.loads(m.payload))
    floor.connect("127.0.0.1", broker.port)
    floor.loop_start()
    subscribed(floor, "pkr/v1/v2/hub/cmd-resp", "pkr/v1/v2/clock")
    try:
        bodies = ({"transaction": "a", "action": "pause"},
                  {"transaction": "b", "action": "start", "value": "lppl"},
                  {"transaction": "b", "action": "pause"},
                  {"transaction": "c", "action": "warp"},
                  {"action": "pause"},
                  {"transaction": "d", "action": "stop"})
        for body in bodies:
            floor.publish("pkr/v1/v2/hub/cmd/clock", json.dumps(body), qos=1)
        assert wait_for(lambda: len(answers) == 6)
        assert [a["ok"] for a in answers] == [False, True, False, False, False, True]
        assert "start one" in answers[0]["error"]
        assert answers[1]["structure"] == "lppl"
        assert "already handled" in answers[2]["error"]
        assert "\"warp\" is not one of" in answers[3]["error"]
        assert answers[5]["structure"] is None
        assert wait_for(lambda: states and states[-1]["structure"] is None)
        # The well-formed commands, every answer and every clock state keep to the contract.
        for body in bodies[:3] + bodies[5:]:
            validate("HubClockCommand", body)
        for answer in answers:
            validate("HubClockResponse", answer)
        assert {s["structure"] for s in states} >= {"lppl", None}
        for state in states:
            validate("VenueClock", state)
    finally:
        floor.loop_stop()
        floor.disconnect()
        service.stop()


def test_tablectl_clock_commands_reach_the_venue_clock(broker):
    import subprocess
    import sys

    service = VenueClockService(venue="v3", port=broker.port).start()
    assert service.connected.wait(10)
    try:
        def clock(*args):
            return subprocess.run([sys.executable, "-m", "tablectl.cli", "clock", *args,
                                   "--venue", "v3", "--port", str(broker.port)],
                                  capture_output=True, text=True, timeout=30)

        started = clock("start", "tda-2024")
        assert started.returncode == 0, started.stderr
        assert json.loads(started.stdout)["structure"] == "tda-2024"
        jumped = clock("level", "5")
        assert json.loads(jumped.stdout)["elapsed"] >= 4 * 1200 + 600
        refused = clock("level", "99")
        assert refused.returncode == 1 and "level 99" in refused.stdout
    finally:
        service.stop()


def _venue_table(tmp_path, broker):
    """A table on the venue's clock, its wall clock and its monotonic one held still by the
    test: the clock's reading is read back at once on a busy machine as on an idle one (0.1 s
    passing between them once read 150.6)."""
    wall = Tick()
    wall.now = 1_800_000_000.0
    config = config_from_data({
        "table": {"venue": "v1", "id": "t1"}, "clock": {"mode": "venue"},
        "shoe": {"backend": "none"}, "button": {"backend": "none"},
        "display": {"backend": "none"}, "buzzer": {"backend": "none"},
        "mqtt": {"port": broker.port}, "storage": {"data_dir": str(tmp_path)}}, "test")
    mono = Tick()
    mono.now = 5_000.0
    return wall, Daemon(config, wall=wall, clock=mono).start()


def test_a_reading_counts_from_when_the_hub_took_it(tmp_path, broker):
    # A reading queued by the broker while a table was cut off, or slow on a lossy link, is
    # as old as it says: the table adds its age, and drops one older than a reading it has
    # followed (a queue of them after a cut set the clock back by the cut's length).
    wall, daemon = _venue_table(tmp_path, broker)
    try:
        def follow(elapsed, at, running=True):
            # Through the link's own check of the payload, as the broker would hand it in.
            daemon.link._venue_clock(encode({"structure": "corner-pocket", "elapsed": elapsed,
                                             "running": running, "hand_for_hand": False,
                                             **({} if at is None else {"at": at})}), False)
            while not daemon.queue.empty():
                daemon.loop(until=lambda: daemon.queue.empty())
            return round(daemon.table.clock.elapsed(daemon.now()), 1)

        assert follow(100.0, wall.now - 3.0) == 103.0  # three seconds in the broker's queue
        wall.now += 20
        assert follow(150.0, wall.now - 0.5) == 150.5
        assert follow(131.0, wall.now - 20.0) == 150.5  # older than the last one: dropped
        wall.now += 5
        assert follow(140.0, wall.now - 0.5, running=False) == 140.0  # paused: no age added
        # the same moment again: a second publication (a floor command in the same ms)
        assert follow(141.0, wall.now - 0.5, running=False) == 141.0
        assert follow(160.0, wall.now - 7200.0) == 160.0  # the hub's wall clock hours off
        wall.now += 5
        assert follow(170.0, None) == 170.0  # a hub that does not say when
    finally:
        daemon.stop()


def test_a_table_follows_the_newest_change_of_the_clock_never_an_older_one(tmp_path, broker):
    # A table that joins after several changes of the venue clock: each reading says its
    # version (the hub's incarnation, the revision of its clock), and a reading published
    # before a change and delivered after it (a broker's redelivery, a retained message, a
    # queue after a cut) is dropped, whatever its time says; a later change is followed though
    # the hub's wall clock stepped back. Before, readings were ordered by their time alone:
    # one from more than ten minutes before, or from the same millisecond as the change,
    # set the table's clock back to a level the hub had left.
    wall, daemon = _venue_table(tmp_path, broker)
    try:
        def follow(elapsed, at, revision, incarnation="hub-1", retained=False):
            daemon.link._venue_clock(encode({
                "structure": "corner-pocket", "elapsed": elapsed, "running": True,
                "hand_for_hand": False, "at": at, "incarnation": incarnation,
                "revision": revision}), retained)
            while not daemon.queue.empty():
                daemon.loop(until=lambda: daemon.queue.empty())
            return round(daemon.table.clock.elapsed(daemon.now()), 1)

        # Joining: the retained reading, the clock's seventh change.
        assert follow(300.0, wall.now - 1.0, 7, retained=True) == 301.0
        # The first change's reading, published twelve minutes before and delivered now.
        assert follow(100.0, wall.now - 720.0, 1) == 301.0
        wall.now += 5
        assert follow(400.0, wall.now, 9) == 400.0  # two changes in one millisecond...
        assert follow(120.0, wall.now, 8) == 400.0  # ...delivered the other way round
        wall.now += 5
        assert follow(405.0, wall.now, 9) == 405.0  # a republication of the newest
        # NTP set the hub's wall clock five minutes back (too far from the table's for the
        # reading's age to count): a later change, taken as of now.
        assert follow(500.0, wall.now - 300.0, 10) == 500.0
        wall.now += 5
        assert follow(505.0, wall.now - 300.0, 10) == 505.0  # and it goes on from there
        # A restarted hub: another incarnation, counted from its own start, ordered by time.
        assert follow(510.0, wall.now, 1, incarnation="hub-2") == 510.0
        assert follow(200.0, wall.now - 2.0, 11) == 510.0  # the old hub's, older in time
    finally:
        daemon.stop()
