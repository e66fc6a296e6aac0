"""Hostile input and restarts (issue 11): nothing a peer, a floor user or the operating system
sends stops a table or the hub, and a hub restart loses neither the clock nor an alert.

Each case ends with a liveness check against the real parts: a fresh event still recorded and
acknowledged, the floor still raising alerts, the dashboard's API still answering strict JSON.
"""

from __future__ import annotations

import io
import json
import math
import os
import threading
import time
import urllib.request

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from contract import supervise
from contract.envelope import LEGACY_INCARNATION, envelope
from contract.schema import ContractError, receive, validate
from contract.wire import MAX_DEPTH, WireError, decode, encode
from controller.clock import MAX_CLOCK_SECONDS, StructureError
from controller.inputs import InputError, parse_input
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from houses.loaders import house_structure
from hub import auth
from hub.alerts import MAX_OPEN_ALERTS_PER_TABLE, alert_of
from hub.floor import FloorView
from hub.service import FloorService
from hub.venue_clock import VenueClock
from tablectl.config import config_from_data
from tablectl.daemon import Daemon
from tablectl.hub_app import Hub, HubSettings
from tests.conftest import wait_for
from tests.schema_strategies import mutated, valid

VENUE = "hostile"


# ---------------------------------------------------------------------------- strict JSON

@pytest.mark.parametrize("payload", [
    b'{"elapsed": NaN}', b'{"elapsed": Infinity}', b'{"elapsed": -Infinity}',
    b'{"elapsed": 1e400}', b'{"seq": 100000000000000000000000}', b'{"seq": 1e308}',
    b'{"last_seq": -9.1e15}',
    b'{"text": "a\\u0000b"}', b'{"text": "\\ud800"}', '{"seq": 1}'.encode("utf-16"),
    b"\xff\xfe", b"[" * 5000 + b"]" * 5000, b'{"x": "' + b"y" * 300_000 + b'"}',
    b'{"x": 1', b"",
])
def test_strict_json_refuses_what_pythons_json_lets_through(payload):
    with pytest.raises(WireError):
        decode(payload)


def _strict_by_hooks(text: str) -> bool:
    """The rules said plainly, as a second reading to check the walk against: the parser's
    number hooks and a recursive look at every value."""
    def number(token: str) -> float:
        value = float(token) if any(c in token for c in ".eE") else int(token)
        if not (math.isfinite(value) and abs(value) <= 2**53 - 1):
            raise ValueError(token)
        return value

    def fine(value: object, depth: int) -> bool:
        if isinstance(value, str):
            return "\x00" not in value and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
        if isinstance(value, dict):
            return depth < MAX_DEPTH and all(fine(k, depth + 1) and fine(v, depth + 1)
                                             for k, v in value.items())
        if isinstance(value, list):
            return depth < MAX_DEPTH and all(fine(v, depth + 1) for v in value)
        return True

    try:
        return fine(json.loads(text, parse_int=number, parse_float=number,
                               parse_constant=number), 0)
    except (ValueError, RecursionError):
        return False


_json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.text(max_size=5)
    | st.integers(min_value=-2**60, max_value=2**60) | st.sampled_from(["\ud800", "a\x00b"])
    | st.sampled_from([2**53 - 1, 2**53, -(2**53 - 1), -(2**53), 1e15, 9.1e15, 1e308]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(value=_json_values, nesting=st.integers(min_value=0, max_value=36))
def test_strict_json_refuses_exactly_what_the_rules_say(value, nesting):
    text = "[" * nesting + json.dumps(value) + "]" * nesting  # NaN and Infinity included
    try:
        decoded = decode(text)
    except WireError:
        assert not _strict_by_hooks(text), text[:200]
    else:
        assert _strict_by_hooks(text), text[:200]
        assert json.dumps(decoded) == json.dumps(json.loads(text))


def test_strict_json_reads_the_contract_and_never_writes_nan():
    assert decode(b'{"seq": 9007199254740991, "t": 1.5, "s": "\\u00e9"}') == {
        "seq": 9007199254740991, "t": 1.5, "s": "é"}
    nested = json.dumps(json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH))
    assert decode(nested)
    with pytest.raises(ValueError):
        encode({"remaining": math.inf})
    # A number within what the wire carries, past what the schema allows.
    with pytest.raises(ContractError, match="not a VenueClock"):
        receive("VenueClock", b'{"structure": "tda-2024", "elapsed": 1e15, "running": true, '
                              b'"hand_for_hand": false}')
    with pytest.raises(ContractError, match="out of range"):  # past any integer: the wire
        receive("VenueClock", b'{"structure": "tda-2024", "elapsed": 1e300, "running": true, '
                              b'"hand_for_hand": false}')


# ---------------------------------------------------------------------------- numbers, names

@pytest.mark.parametrize("value", [-1e300, 1e300, True, "10", None, MAX_CLOCK_SECONDS * 2])
def test_the_venue_clock_refuses_non_finite_and_out_of_range_time(value):
    clock = VenueClock(lambda: 100.0)
    clock.apply("start", "tda-2024")
    with pytest.raises(ValueError):
        clock.apply("add", value)
    with pytest.raises(ValueError):
        clock.apply("level", value)
    state = clock.state()
    assert state["elapsed"] == 0.0 and state["level"] == 1
    encode(state)  # still strict JSON


@pytest.mark.parametrize("elapsed", [1e300, -1.0, MAX_CLOCK_SECONDS + 1])
def test_a_clock_sync_out_of_range_never_reaches_the_core(elapsed):
    with pytest.raises(InputError, match="elapsed"):
        parse_input({"type": "clock", "action": "sync", "structure": "tda-2024",
                     "elapsed": elapsed, "running": True})


@pytest.mark.parametrize("name", ["/etc/passwd", "../../etc/hostname", "tda-2024.toml",
                                  "users", "a b", "", "x" * 65])
def test_a_structure_is_asked_for_by_name_never_by_path(tmp_path, name):
    (tmp_path / "users.toml").write_text('[users.sam]\nrole = "floor"\n')
    with pytest.raises(StructureError) as refused:
        house_structure(name, tmp_path if name == "users" else None)
    assert "role" not in str(refused.value)  # nothing of another file's values is told
    if name != "users":  # a name, but of no structure
        with pytest.raises(InputError, match="structure"):
            parse_input({"type": "clock", "action": "start", "structure": name or "/"})


def test_a_fifo_in_the_structures_directory_is_never_opened(tmp_path):
    os.mkfifo(tmp_path / "house.toml")
    (tmp_path / "ours.toml").write_text(
        'title = "Ours"\n[[schedule]]\nlevel = 1\nsb = 5\nbb = 10\nminutes = 20\n')
    assert isinstance(_load_within("house", tmp_path), StructureError)
    assert house_structure("ours", tmp_path).periods[0].bb == 10


def test_a_fifo_swapped_in_after_the_name_was_checked_is_never_read(tmp_path, monkeypatch):
    """The race: the name was a regular file when looked at, a FIFO when opened (a FIFO's
    open waits for a writer: hub threads hung and the venue clock froze). The opened
    descriptor is what is checked; the built-in structure of that name is taken instead."""
    from pathlib import Path

    os.mkfifo(tmp_path / "tda-2024.toml")
    looked = Path.is_file  # the name looked like a regular file:
    monkeypatch.setattr(Path, "is_file", lambda self: str(self).startswith(str(tmp_path))
                        or looked(self))
    assert _load_within("tda-2024", tmp_path).title.startswith("TDA-style")  # the built-in
    (tmp_path / "linked.toml").symlink_to(tmp_path / "elsewhere.toml")
    (tmp_path / "elsewhere.toml").write_text(
        'title = "Elsewhere"\n[[schedule]]\nlevel = 1\nsb = 5\nbb = 10\nminutes = 20\n')
    assert isinstance(_try_load("linked", tmp_path), StructureError)  # a link is not followed


def test_a_house_structure_is_named_by_its_file(tmp_path):
    """turbo.toml copied from tda-2024.toml kept `name = "tda-2024"` inside: the hub ran one
    structure and the tables another. One name, the file's: a name inside that differs is
    said, with what to do; without it, the structure is turbo."""
    from importlib import resources

    text = (resources.files("houses") / "structures" / "tda-2024.toml").read_text()
    (tmp_path / "turbo.toml").write_text(text.replace("minutes = 20", "minutes = 1"))
    refused = _try_load("turbo", tmp_path)
    assert isinstance(refused, StructureError)
    assert "'tda-2024' is not this structure's name 'turbo'" in str(refused)
    (tmp_path / "turbo.toml").write_text(
        text.replace("minutes = 20", "minutes = 1").replace('name = "tda-2024"\n', ""))
    turbo = house_structure("turbo", tmp_path)
    assert turbo.name == "turbo" and turbo.periods[0].seconds == 60


def test_a_table_reads_the_houses_structures_by_name_from_its_configured_directory(tmp_path):
    structures = tmp_path / "structures"
    structures.mkdir()
    (structures / "house.toml").write_text(
        'title = "House"\n[[schedule]]\nlevel = 1\nsb = 25\nbb = 50\nminutes = 30\n')
    config = _table_config(tmp_path, clock={"structures": str(structures)})
    daemon = Daemon(config, out=io.StringIO()).start()
    try:
        daemon.feed(parse_input({"type": "clock", "structure": "house", "t": daemon.now()}))
        assert daemon.table.clock.structure.periods[0].bb == 50
        assert daemon.feed(parse_input({"type": "clock", "structure": "missing",
                                        "t": daemon.now()})) == []  # refused, said
    finally:
        daemon.stop()


def _load_within(name, directory, seconds=10.0):
    """house_structure (or its error) in a thread: a FIFO's open would block it for ever."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(_try_load(name, directory)),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "loading the structure blocked"
    return result[0]


def _try_load(name, directory):
    try:
        return house_structure(name, directory)
    except StructureError as exc:
        return exc


# ---------------------------------------------------------------------------- the journal

def _table_config(tmp_path, **more):
    data = {"table": {"venue": VENUE, "id": "t1"}, "shoe": {"backend": "none"},
            "button": {"backend": "none"}, "display": {"backend": "terminal"},
            "buzzer": {"backend": "none"}, "mqtt": {"enabled": False},
            "storage": {"data_dir": str(tmp_path)}}
    for key, value in more.items():
        data.setdefault(key, {}).update(value)
    return config_from_data(data, "test")


def test_a_journal_line_that_cannot_be_replayed_is_quarantined_and_the_table_carries_on(
        tmp_path):
    box = Outbox(tmp_path / "t1.db")
    box.record({"type": "setup", "game": "holdem", "seats": [1, 2, 3], "button": 1, "t": 0.0},
               [], 1)
    box.record({"type": "clock", "action": "start", "structure": "tda-2024", "t": 1.0}, [], 1)
    db = box._db()
    with db:  # what an older version wrote: an infinite reading, a path, garbage
        for line in ('{"type":"clock","action":"sync","structure":"tda-2024",'
                     '"elapsed":Infinity,"running":true,"t":2.0}',
                     '{"type":"clock","action":"start","structure":"/etc/passwd","t":3.0}',
                     "not json at all"):
            db.execute("INSERT INTO journal (line) VALUES (?)", (line,))
    box.close()
    out = io.StringIO()
    daemon = Daemon(_table_config(tmp_path), out=out).start()
    try:
        assert [reason.split(":")[0] for _, reason in daemon.quarantined] == [
            "WireError", "InputError", "WireError"]
        assert len(daemon.outbox.quarantined()) == 3
        rows = [r for r in daemon.outbox.rows(0, 1000) if r[3]["type"] == "journal.quarantined"]
        assert [e["line"] for _, _, _, e, _ in rows] == [3, 4, 5]
        for seq, ts, boot, event, incarnation in rows:  # as the hub receives it: an alert
            message = envelope(event, venue=VENUE, table="t1", seq=seq, boot=boot, ts_ms=ts,
                               incarnation=incarnation)
            validate("Envelope", message)
            assert alert_of(message)[0] == "journal_quarantined"
        daemon.tick()  # the screen code runs on the clock that did resume
        assert daemon.table.clock is not None and daemon.table.clock.structure.name == "tda-2024"
    finally:
        daemon.stop()
    again = Daemon(_table_config(tmp_path), out=io.StringIO()).start()  # no crash loop
    try:
        assert again.quarantined == [] and again.table.clock is not None
    finally:
        again.stop()
    from tablectl.doctor import WARN, check_journal

    check = check_journal(_table_config(tmp_path))
    assert check.result == WARN and "3 journal line(s)" in check.detail
    assert check_journal(_table_config(tmp_path / "elsewhere")).result != WARN


# ---------------------------------------------------------------------------- supervision

def test_a_worker_that_dies_marks_the_process_failed_with_its_name():
    died = threading.Event()
    seen: list[str] = []

    def crash() -> None:
        raise RuntimeError("the disk is gone")

    supervise.start_worker(crash, "test-worker",
                           on_death=lambda name, exc: (seen.append(f"{name}: {exc}"),
                                                       died.set()))
    assert died.wait(5) and seen == ["test-worker: the disk is gone"]
    assert not supervise.FAILED.is_set()  # only the default marks the process


def test_tablectl_hub_tells_systemd_it_is_ready_and_pings_the_watchdog_only_while_healthy(
        tmp_path, broker):
    import signal
    import socket
    import subprocess
    import sys

    from simulators.broker import free_port

    users = tmp_path / "users.toml"
    auth.save_user(users, "sam", "supervisor", "sam-password")
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(20)
    process = subprocess.Popen(
        [sys.executable, "-m", "tablectl.cli", "hub", "--venue", VENUE, "--port",
         str(broker.port), "--users", str(users), "--db", str(tmp_path / "hub.db"),
         "--http", f"127.0.0.1:{free_port()}"],
        env={**os.environ, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "1000000"},
        stderr=subprocess.DEVNULL)
    try:
        said = [sock.recv(256).decode() for _ in range(3)]
        assert said[0] == "READY=1" and said[1:] == ["WATCHDOG=1", "WATCHDOG=1"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
        sock.close()


def test_a_stuck_floor_worker_is_unhealthy(tmp_path, broker):
    hub = _hub(tmp_path, broker)
    release = threading.Event()
    try:
        assert hub.unhealthy() is None
        hub.worker.submit(lambda service: release.wait())  # the floor's worker hangs
        assert "the floor did not answer" in (hub.unhealthy(timeout=0.5) or "")
        release.set()
        assert wait_for(lambda: hub.unhealthy(timeout=0.5) is None, 10)
    finally:
        release.set()
        hub.stop()


# ---------------------------------------------------------------------------- the floor's state

def test_one_tables_flood_of_alerts_is_capped_and_counted(monkeypatch):
    from hub import alerts as alerts_module

    monkeypatch.setattr(alerts_module, "MAX_ALERTED_REMEMBERED", 1000)
    floor = FloorView(VENUE)
    for seq in range(1, 3001):
        floor.on_event("t1", {"seq": seq, "type": "floor.called", "ts": seq, "hand": 1,
                              "data": {}}, seq)
    floor.on_event("t2", {"seq": 1, "type": "floor.called", "ts": 5, "hand": 1, "data": {}}, 5)
    snapshot = floor.snapshot(10_000)
    mine = [a for a in snapshot["alerts"] if a["table"] == "t1"]
    assert len(mine) == MAX_OPEN_ALERTS_PER_TABLE and min(a["seq"] for a in mine) == 2951
    assert floor.tables["t1"].alerts_hidden == 3000 - MAX_OPEN_ALERTS_PER_TABLE
    assert [a["table"] for a in snapshot["alerts"]].count("t2") == 1
    assert len(encode(snapshot)) < 100_000
    # the newest kept
    assert len(floor.alerted) == 1000 and ("t2", LEGACY_INCARNATION, 1) in floor.alerted


# ---------------------------------------------------------------------------- the hub, live

def _hub(tmp_path, broker, db=None):
    users = tmp_path / "users.toml"
    if not users.exists():
        auth.save_user(users, "sam", "supervisor", "sam-password")
    hub = Hub(HubSettings(venue=VENUE, db=db or str(tmp_path / "hub.db"), users=str(users),
                          port=broker.port, http_port=0, reorder_timeout=1.0)).start()
    assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
    return hub


def _client(broker):
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    return client


def _api_state(hub):
    with urllib.request.urlopen(hub.url + "/login") as page:  # the server answers
        assert page.status == 200
    return decode(encode(hub.call(FloorService.snapshot)))  # strict JSON both ways


def _alive(hub, box, link, marker_hand):
    """Liveness: a fresh event from a real table link is recorded and acknowledged, and the
    floor raises its alert."""
    hub_errors = hub.worker.errors
    box.append({"type": "floor.called", "hand": marker_hand, "t": 1.0},
               int(time.time() * 1000))
    link.notify()
    last = box.last_seq
    assert wait_for(lambda: box.acked_upto >= last, 15), "the recorder stopped acknowledging"
    assert wait_for(lambda: any(a.hand == marker_hand and a.kind == "floor_called"
                                for a in hub.floor.alerts.values()), 15), \
        "the floor stopped raising alerts"
    assert hub.worker.errors == hub_errors
    assert not supervise.FAILED.is_set(), supervise.failures
    _api_state(hub)


# Each consumed topic with the schema its messages keep to.
_SCHEMA_OF = {"tables/t9/events": ("PublicEnvelope", "PublicEnvelopeBatch"),
              "tables/t9/private": ("Envelope", "EnvelopeBatch"),
              "tables/t9/state": ("State",), "tables/t9/status": ("Status",),
              "tables/t9/cmd-resp": ("CommandResponse",), "clock": ("VenueClock",),
              "hub/cmd/clock": ("HubClockCommand",), "tables/t9/ack": ("Ack",)}
_BAD_TOPICS = ["tables/t.evil/events", "tables/t9/events/extra", "tables/" + "x" * 40 + "/state"]
_BYTES = [b"\xff\xfe\x00{", '{"seq": 1}'.encode("utf-16"), b"[" * 5000 + b"]" * 5000,
          b'{"a":"' + b"\x00" * 10 + b'"}', b"x" * 1_000_000, b"", b"null", b"[]",
          b'{"seq": 1e400, "ts": "soon"}', b'{"elapsed": NaN}', b'{"a": 1, "a": 2}']


def _raw(value) -> bytes:
    # NaN and Infinity written the way a careless peer writes them.
    return json.dumps(value, allow_nan=True).encode()


@st.composite
def hostile_messages(draw):
    """A topic and a payload: a message of the contract generated from its AsyncAPI schema
    (valid, so the parts act on it, as table t9), the same with one field poisoned at any
    depth, or bytes that are no JSON at all; sometimes retained, sometimes on a bad topic."""
    topic = draw(st.sampled_from(sorted(_SCHEMA_OF) + _BAD_TOPICS))
    schema = draw(st.sampled_from(_SCHEMA_OF.get(topic, ("PublicEnvelope",))))
    how = draw(st.sampled_from(["valid", "mutated", "mutated", "bytes"]))
    if how == "bytes":
        payload = draw(st.sampled_from(_BYTES))
    else:
        value = draw(valid(schema) if how == "valid" else mutated(schema))
        batch = value.get("batch") if isinstance(value, dict) else None
        for each in (batch if isinstance(batch, list) else [value]):
            if isinstance(each, dict) and "table" in each and draw(st.booleans()):
                each["table"] = "t9"  # so that the hub acts on it, not refuse a stranger
                if "venue" in each:
                    each["venue"] = VENUE
        payload = _raw(value)
    retain = draw(st.booleans()) and topic.rsplit("/", 1)[-1] in ("state", "status", "clock")
    return f"pkr/v1/{VENUE}/{topic}", payload, retain


@pytest.fixture
def live_hub(tmp_path, broker):
    hub = _hub(tmp_path, broker)
    box = Outbox(tmp_path / "t1.db")
    link = TableLink(box, venue=VENUE, table="t1", port=broker.port).start()
    assert wait_for(lambda: link.connected, 10)
    client = _client(broker)
    yield hub, box, link, client
    client.loop_stop()
    client.disconnect()
    link.stop()
    hub.stop()


@settings(max_examples=10, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages=st.lists(hostile_messages(), min_size=40, max_size=40))
def test_generated_hostile_messages_stop_nothing(live_hub, messages):
    hub, box, link, client = live_hub
    for topic, payload, retain in messages:
        client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)
    marker = 10_000 + len(hub.floor.alerts)
    _alive(hub, box, link, marker)
    assert hub.worker.thread.is_alive() and hub.recorder.thread.is_alive()
    for leaf in ("state", "status"):  # the retained poison goes, for the next example
        client.publish(f"pkr/v1/{VENUE}/tables/t9/{leaf}", b"", qos=1, retain=True)
    client.publish(f"pkr/v1/{VENUE}/clock", b"", qos=1, retain=True)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_restart_with_retained_poison_resumes_the_clock_and_catches_up_alerts(
        tmp_path, broker, backend, request):
    db = str(tmp_path / "hub.db") if backend == "sqlite" else request.getfixturevalue("postgres")
    hub = _hub(tmp_path, broker, db)
    box = Outbox(tmp_path / "t1.db")
    link = TableLink(box, venue=VENUE, table="t1", port=broker.port).start()
    client = _client(broker)
    try:
        assert wait_for(lambda: link.connected, 10)
        hub.clock.apply("start", "tda-2024")
        hub.clock.apply("level", 3)
        _alive(hub, box, link, 1)
        # Retained poison on every retained topic the hub reads at start.
        state = {"hand": 1, "in_progress": True, "shoe": "ok", "clock": None,
                 "hand_for_hand": "off", "seats": 5, "links": {"hub": "ok"}, "last_seq": 1,
                 "ts": 1}
        status = {"state": "online", "boot": 1, "table": "t1", "ts": math.inf}
        for leaf, body in (("tables/t1/state", state), ("tables/t1/status", status)):
            client.publish(f"pkr/v1/{VENUE}/{leaf}", _raw(body), qos=1,
                           retain=True).wait_for_publish(5)
        level_before = hub.call(lambda service: service.clock.state())["level"]
        hub.stop()  # the hub goes down mid-level; the room plays on
        box.append({"type": "floor.called", "hand": 77, "t": 2.0}, int(time.time() * 1000))
        link.notify()
        again = _hub(tmp_path, broker, db)
        try:
            state = again.call(lambda service: service.clock.state())
            assert state["structure"] == "tda-2024" and state["running"]
            assert state["level"] == level_before == 3
            assert wait_for(lambda: any(a.hand == 77 for a in again.floor.alerts.values()), 15)
            assert wait_for(lambda: box.acked_upto >= box.last_seq, 15)
            _alive(again, box, link, 2)
            raised = [a for a in again.floor.alerts.values() if a.hand == 77]
            assert len(raised) == 1, "an event raised its alert twice"
        finally:
            again.stop()
        third = _hub(tmp_path, broker, db)  # and once more: still one alert for the event
        try:
            assert [a.hand for a in third.floor.alerts.values()].count(77) == 1
            assert third.call(lambda service: service.clock.state())["level"] == 3
        finally:
            third.stop()
    finally:
        client.loop_stop()
        client.disconnect()
        link.stop()


def test_a_hub_that_knows_no_clock_publishes_nothing_that_stops_the_tables(tmp_path, broker):
    client = _client(broker)
    seen: list[tuple[str, bytes]] = []
    client.on_message = lambda c, u, m: seen.append((m.topic, bytes(m.payload)))
    client.subscribe([(f"pkr/v1/{VENUE}/clock", 1), (f"pkr/v1/{VENUE}/hub/cmd-resp", 1)])
    hub = _hub(tmp_path, broker)
    try:
        # A positive barrier: the clock's answer to a command comes after anything the hub
        # published on connecting.
        client.publish(f"pkr/v1/{VENUE}/hub/cmd/clock",
                       encode({"transaction": "barrier", "action": "pause"}), qos=1)
        assert wait_for(lambda: any(t.endswith("cmd-resp") for t, _ in seen), 10)
        answer = decode(next(p for t, p in seen if t.endswith("cmd-resp")))
        assert answer["ok"] is False and "start one" in answer["error"]
        assert not [p for t, p in seen if t.endswith("/clock")]
    finally:
        hub.stop()
        client.loop_stop()
        client.disconnect()


# ---------------------------------------------------------------------------- a table daemon

def test_a_table_daemon_survives_a_hostile_venue_clock_and_hostile_commands(tmp_path, broker):
    """What once killed every table (an infinite clock reading, in the screen code) and
    crash-looped it (the reading in its journal) is refused at the link; the daemon, with its
    screen drawn at every turn, follows the next good clock and answers the next command."""
    out = io.StringIO()
    config = _table_config(tmp_path, clock={"mode": "venue"}, mqtt={"enabled": True,
                                                                    "port": broker.port})
    daemon = Daemon(config, out=out).start()
    client = _client(broker)
    answers: list[dict] = []
    client.on_message = lambda c, u, m: answers.append(decode(m.payload))
    client.subscribe(f"pkr/v1/{VENUE}/tables/t1/cmd-resp", qos=1)
    root = f"pkr/v1/{VENUE}/"

    def turn():
        daemon.loop(until=lambda: True)
        while not daemon.queue.empty():
            daemon.loop(until=lambda: daemon.queue.empty())
        return True

    def answered(transaction: str) -> bool:
        return any(a.get("transaction") == transaction for a in answers)

    try:
        assert wait_for(lambda: turn() and daemon.link.connected, 10)
        # The table's subscription to its commands is in place once one is answered (a
        # command sent before it would be lost, not refused).
        for attempt in range(30):
            client.publish(root + "tables/t1/cmd/status",
                           encode({"transaction": f"ready-{attempt}"}), qos=1)
            if wait_for(lambda a=attempt: turn() and answered(f"ready-{a}"), 1):
                break
        answers.clear()
        clock = {"structure": "tda-2024", "running": True, "hand_for_hand": False}
        for elapsed in ("1e999", "-1e999", "NaN", "1e300", '"soon"', "2592001"):
            client.publish(root + "clock", f'{{"structure": "tda-2024", "elapsed": {elapsed}, '
                           f'"running": true, "hand_for_hand": false}}', qos=1, retain=True)
        client.publish(root + "clock", encode({**clock, "structure": "/etc/passwd",
                                               "elapsed": 5.0}), qos=1, retain=True)
        bad_commands = [("clock", '{"transaction": "c1", "action": "sync", "structure": '
                                  '"tda-2024", "elapsed": 1e999}'),
                        ("clock", '{"transaction": "c2", "action": "sync", "structure": '
                                  '"tda-2024", "elapsed": 1e300}'),
                        ("clock", '{"transaction": "c3", "action": "start", "structure": '
                                  '"../../etc/passwd"}'),
                        ("seating", '{"transaction": "c4", "seats": [1e400]}'),
                        ("hand-for-hand", '{"transaction": "c5", "state": "\u0000"}')]
        for name, body in bad_commands:
            client.publish(root + f"tables/t1/cmd/{name}", body, qos=1)
        client.publish(root + "tables/t1/cmd/status", encode({"transaction": "barrier"}), qos=1)
        assert wait_for(lambda: turn() and answered("barrier"), 15)
        refused = [a for a in answers if a.get("transaction") != "barrier"
                   and not str(a.get("transaction")).startswith("ready-")]
        assert len(refused) == 5 and not any(a["ok"] for a in refused)
        # The good clock after the bad ones: followed (level 3 of tda-2024 at 41 minutes).
        client.publish(root + "clock", encode({**clock, "elapsed": 41 * 60.0}), qos=1,
                       retain=True)
        assert wait_for(lambda: turn() and daemon.table.clock is not None
                        and daemon.table.clock.current_level() == 3, 15)
        daemon.tick()
        assert daemon.link.stats.invalid >= 6 and not supervise.FAILED.is_set()
        assert all(math.isfinite(float(e.get("elapsed", 0))) for _, _, _, e, _ in
                   daemon.outbox.rows(0, 1000) if e["type"] == "clock")
    finally:
        client.publish(root + "clock", b"", qos=1, retain=True)
        client.loop_stop()
        client.disconnect()
        daemon.stop()
    again = Daemon(config, out=io.StringIO()).start()  # its journal replays cleanly
    try:
        assert again.quarantined == [] and again.table.clock.current_level() == 3
    finally:
        again.stop()


# ---------------------------------------------------------------------------- certificates

def test_make_certs_refuses_ids_that_are_no_topic_level_and_adds_a_table_without_reissuing(
        tmp_path):
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "deploy" / "hub" / "make-certs.sh"
    out = tmp_path / "certs"
    for bad in ("+", "#", "a b", "t4/evil", "hub", "x" * 33):
        done = subprocess.run([str(script), str(out), VENUE, "127.0.0.1", "t1", bad],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (bad, done.stderr)
        assert f"'{bad}'" in done.stderr
        assert not out.exists() or not list(out.glob("*.crt")), "something was issued"
    first = subprocess.run([str(script), str(out), VENUE, "127.0.0.1", "t1"],
                           capture_output=True, text=True, timeout=60, check=True)
    assert "issued broker web dashboard recorder hub floor t1" in first.stdout
    keys = {p.name: p.read_bytes() for p in out.glob("*.key")}
    second = subprocess.run([str(script), str(out), VENUE, "127.0.0.1", "t1", "t2"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert "issued t2" in second.stdout and "broker" not in second.stdout
    assert all((out / name).read_bytes() == data for name, data in keys.items())
    assert (out / "t2.crt").exists()


# ---------------------------------------------------------------------------- a killed hub

def test_a_sigkilled_hub_resumes_the_venue_clock_mid_level_and_never_stops_the_tables(
        tmp_path, broker):
    """``tablectl hub`` SIGKILLed mid-level, with a bad retained state present, and started
    again with the same command line (``--start`` too, as a unit file would): the clock goes
    on at the level it had, and nothing it publishes stops a table."""
    import signal
    import subprocess
    import sys

    from simulators.broker import free_port

    users = tmp_path / "users.toml"
    auth.save_user(users, "sam", "supervisor", "sam-password")
    port = free_port()
    command = [sys.executable, "-m", "tablectl.cli", "hub", "--venue", VENUE, "--port",
               str(broker.port), "--users", str(users), "--db", str(tmp_path / "hub.db"),
               "--http", f"127.0.0.1:{port}", "--start", "tda-2024"]
    client = _client(broker)
    clocks: list[dict] = []
    client.on_message = lambda c, u, m: clocks.append(decode(m.payload)) if m.payload else None
    client.subscribe(f"pkr/v1/{VENUE}/clock", qos=1)
    client.publish(f"pkr/v1/{VENUE}/tables/t1/state", b'{"clock": "x", "seats": 5}', qos=1,
                   retain=True).wait_for_publish(5)

    def clock_cli(*args):
        return subprocess.run([sys.executable, "-m", "tablectl.cli", "clock", *args,
                               "--venue", VENUE, "--port", str(broker.port)],
                              capture_output=True, text=True, timeout=30)

    def started(process) -> bool:
        """Its stderr says the dashboard is up (read on a thread: never a blocking read)."""
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(iter(process.stderr.readline, "")),
                         daemon=True).start()
        # A hub's start is imports and a database: 20 s was once too short at a load of 24.
        return wait_for(lambda: any("dashboard at" in line for line in lines), 60)

    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    second = None
    try:
        assert started(first)
        assert wait_for(lambda: any(c.get("structure") == "tda-2024" for c in clocks), 15)
        assert clock_cli("level", "3").returncode == 0
        assert wait_for(lambda: clocks[-1].get("level") == 3, 10)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        clocks.clear()
        second = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        assert started(second)
        answer = clock_cli("resume")  # a barrier: answered after what it published at start
        assert answer.returncode == 0, answer.stderr
        assert json.loads(answer.stdout)["level"] == 3
        assert wait_for(lambda: len(clocks) >= 2, 10)  # on connecting, and the resume's
        assert all(c["structure"] == "tda-2024" and c["level"] == 3 and c["running"]
                   for c in clocks)
    finally:
        client.publish(f"pkr/v1/{VENUE}/tables/t1/state", b"", qos=1, retain=True)
        client.loop_stop()
        client.disconnect()
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                assert process.wait(20) == 0


def test_a_state_with_a_seat_twice_is_refused_and_makes_no_phantom_players(live_hub):
    """`seats [1, 1, 1, ...]` from a table made the hub propose moving "seat 1" three times
    and, confirmed, seated phantom players at a real table. The contract says seats are
    unique: the state is refused; the table keeps what it last reported that was right."""
    hub, box, link, client = live_hub

    def state(hand, seats):
        return json.dumps({"hand": hand, "in_progress": False, "shoe": "ok", "clock": None,
                           "hand_for_hand": "off", "seats": seats, "links": {"hub": "ok"},
                           "last_seq": 0, "ts": int(time.time() * 1000)}).encode()

    client.publish(f"pkr/v1/{VENUE}/tables/t3/state", state(1, [1, 2, 3, 4]),
                   qos=1).wait_for_publish(5)
    assert wait_for(lambda: "t3" in hub.floor.tables and hub.floor.tables["t3"].seats
                    == [1, 2, 3, 4], 10)
    client.publish(f"pkr/v1/{VENUE}/tables/t3/state", state(2, [1, 1, 1, 2]),
                   qos=1).wait_for_publish(5)
    # The barrier: a later state of another table has been taken in.
    client.publish(f"pkr/v1/{VENUE}/tables/t4/state", state(1, [5, 6]),
                   qos=1).wait_for_publish(5)
    assert wait_for(lambda: "t4" in hub.floor.tables, 10)
    assert hub.floor.tables["t3"].seats == [1, 2, 3, 4]
    assert hub.floor.tables["t3"].hand == 1
    _alive(hub, box, link, 20_001)


_A_CARD = {"type": "card", "hand": 3, "n": 5, "card": "Kd", "deck": "R1", "role": "board",
           "street": "flop", "t": 12.5}
_A_STATE = {"hand": 3, "in_progress": True, "street": "flop", "shoe": "ok", "clock": None,
            "hand_for_hand": "off", "seats": [1, 2], "links": {"hub": "ok"}, "last_seq": 9,
            "ts": 1}


@pytest.mark.parametrize("key, value", [("role", "dealt"), ("street", "showdown"),
                                        ("face", "down"), ("street", "Flop")])
def test_a_card_with_a_role_street_or_face_of_no_vocabulary_is_refused_everywhere(key, value):
    """A card's role, street and face are closed: the hub's gate (the contract's schema, on
    private and public envelopes alike), the outbox's and a replay's reading (the core's
    event classes) and the table's state refuse a value the core never writes."""
    from contract.snapshots import TableState
    from controller.events import EventDataError, from_json

    good = envelope(_A_CARD, venue=VENUE, table="t1", seq=1, boot=1, ts_ms=1)
    validate("Envelope", good)
    assert from_json(dict(_A_CARD)).to_json() == _A_CARD
    bad_card = {**_A_CARD, key: value}
    bad = envelope(bad_card, venue=VENUE, table="t1", seq=1, boot=1, ts_ms=1)
    for schema in ("Envelope", "PublicEnvelope"):
        with pytest.raises(ContractError):
            validate(schema, bad)
    if key != "face":  # a face down is the core's own word (left out when written)
        with pytest.raises(EventDataError):
            from_json(bad_card)
    TableState.parse(encode(_A_STATE))
    if key == "street":
        with pytest.raises(ContractError):
            TableState.parse(encode({**_A_STATE, "street": value}))


@pytest.mark.parametrize("line", [
    {"type": "card", "card": "As", "face": "sideways"},
    {"type": "card", "card": "As", "face": "UP"},
    {"type": "shoe", "state": "melted"},
    {"type": "shoe", "state": "OK"},
])
def test_a_journal_line_with_a_face_or_shoe_state_of_no_vocabulary_is_refused(line):
    with pytest.raises(InputError, match=r"^(face|state): "):
        parse_input(line)


def test_a_shoe_state_of_no_vocabulary_is_refused_by_the_hub_and_the_outbox():
    from contract.snapshots import TableState
    from controller.events import EventDataError, from_json

    with pytest.raises(ContractError):
        TableState.parse(encode({**_A_STATE, "shoe": "reads_lost"}))  # an event, no state
    with pytest.raises(ContractError):
        TableState.parse(encode({**_A_STATE, "shoe": "melted"}))
    shoe = {"type": "shoe", "state": "lost", "hand": None, "t": 1.0}
    assert from_json(dict(shoe)).to_json() == shoe
    with pytest.raises(EventDataError):
        from_json({**shoe, "state": "melted"})


def test_a_states_clock_and_dealer_stats_are_read_as_their_types_or_refused():
    """The snapshot's clock and dealer's figures are typed (contract/snapshots.py): what the
    core writes is read as it was written; another shape is refused at the gate, so the
    floor's typed reads never meet a missing key."""
    from contract.snapshots import TableState
    from controller.events import DealerSummary

    stats = DealerSummary(dealer="D17", hands=12, minutes=30.5, hands_per_hour=23.6,
                          t=1830.0).to_json()
    clock = {"structure": "tda-2024", "level": 3, "on_break": False, "running": True,
             "remaining": 412.25}
    state = {**_A_STATE, "clock": clock, "dealer_stats": stats}
    parsed = TableState.parse(encode(state))
    assert parsed.clock == clock and parsed.dealer_stats == stats
    written = parsed.to_json()
    assert encode(written["clock"]) == encode(clock)
    assert encode(written["dealer_stats"]) == encode(stats)
    for bad in ({"dealer_stats": {**stats, "hands": "many"}},
                {"dealer_stats": {k: v for k, v in stats.items() if k != "minutes"}},
                {"dealer_stats": {**stats, "type": "dealer"}},
                {"clock": {**clock, "seconds": 1}},
                {"clock": {k: v for k, v in clock.items() if k != "remaining"}}):
        with pytest.raises(ContractError):
            TableState.parse(encode({**state, **bad}))


def test_a_badge_with_control_characters_or_cut_to_fit_signs_nobody_in():
    """Badge text from the shoe reached events and displays with control characters (an ESC
    drawn raw resets a terminal display), and cut silently at 219 characters. Neither signs
    a dealer in: the tag is a tag by its UID (the floor sees it); a journal line naming such
    a dealer is refused."""
    from controller.inputs import CardRead, DealerSignIn
    from firmware_bridge import messages as m
    from tablectl.shoe_to_core import ShoeTranslator, tag_read

    assert tag_read("04AA", "dealer:D17", 1.0) == DealerSignIn("D17", 1.0)
    for text in ("dealer:\x1b[2Jx", "dealer:ab\u202edc", "dealer:" + "x" * 65):
        read = tag_read("04AA", text, 1.0)
        assert isinstance(read, CardRead) and read.tag == "04AA" and read.card is None, text
    cut = m.CardDrawn(1, 1000, bytes.fromhex("04aa"), "dealer:" + "y" * 20, False, False,
                      False, text_cut=True)
    (read,) = ShoeTranslator().translate(cut, 10.0)
    assert isinstance(read, CardRead) and read.tag == "04AA"
    for bad in ("\x1b[2J", "x" * 65, "a\u0000b"):
        with pytest.raises(InputError, match="dealer"):
            parse_input({"type": "dealer", "dealer": bad})


def test_ntp_stepping_the_clock_mid_evening_never_moves_a_tables_stamps(tmp_path, monkeypatch):
    """A Pi without a battery clock starts at its last shutdown's time, and NTP then steps it
    (here a year forward): the stamps of one start stay on one clock, so the hub moves them
    all by the one offset it measures (docs/failure.md, "A table with a wrong clock")."""
    daemon = Daemon(_table_config(tmp_path), out=io.StringIO()).start()
    try:
        before = daemon.outbox.now_ms()
        stepped = time.time() + 365 * 86400
        monkeypatch.setattr(time, "time", lambda: stepped)
        daemon.feed(parse_input({"type": "clock", "structure": "tda-2024", "t": daemon.now()}))
        last = daemon.outbox.rows(0, 1000)[-1]
        assert before <= last[1] < before + 60_000, (before, last)
        assert abs(daemon.outbox.now_ms() - last[1]) < 60_000
    finally:
        daemon.stop()
