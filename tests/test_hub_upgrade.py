"""Upgrading the venue hub (docs/hub.md, "Upgrading"): the broker keeps the hub's persistent
MQTT sessions across the upgrade, with what an older version subscribed to in them; the old
unit's flags are the hub.toml the manual shows; `tablectl hub --check` says whether a
configuration would start. (Each flag's key: the manual's generated table, tests/docgen.py.)"""

from __future__ import annotations

import json
import logging
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from contract import topics
from contract.envelope import envelope
from contract.views import public_envelope
from hub import auth
from hub.floor_worker import FLOOR_SESSION_SECONDS
from tablectl.cli import build_parser
from tablectl.hub_app import Hub, HubSettings
from tablectl.hub_config import hub_config
from tests.conftest import subscribed, table_state, wait_for

VENUE = "upgraded"
ROOT = Path(__file__).resolve().parent.parent

# The hub before 1d7dc6b (2026-12-03), as it subscribed with its persistent sessions: the
# floor (client id hub-VENUE, 24 h) read each table's public events too; the recorder
# (recorder-VENUE, 7 days) as today.
OLD_FLOOR = [*(topics.every_table(VENUE, leaf) for leaf in ("status", "state", "events",
                                                              "cmd-resp")),
             topics.venue_clock(VENUE), topics.hub(VENUE, "cmd/clock")]
OLD_RECORDER = [topics.every_table(VENUE, leaf) for leaf in ("private", "cmd-resp", "status")]


def _old_session(port: int, client_id: str, seconds: int, filters: list[str]) -> None:
    """What the older hub left at the broker: a session that outlives its connection, with
    its subscriptions (it connected, subscribed, and was stopped for the upgrade)."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5)
    properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    properties.SessionExpiryInterval = seconds
    client.connect("127.0.0.1", port, clean_start=False, properties=properties)
    client.loop_start()
    try:
        subscribed(client, *filters)
    finally:
        client.disconnect()
        client.loop_stop()


def _event(table: str, seq: int, hand: int) -> dict[str, object]:
    return envelope({"type": "floor.called", "hand": hand, "t": float(hand)}, venue=VENUE,
                    table=table, seq=seq, boot=1, ts_ms=int(time.time() * 1000))


def _as_a_table(client: mqtt.Client, table: str, seq: int, hand: int) -> None:
    """What a table publishes for one event: the envelope on private, its public view on
    events (QoS 1, each waited for: the broker holds it for every session that wants it)."""
    private = _event(table, seq, hand)
    for leaf, body in (("private", private), ("events", public_envelope(private))):
        client.publish(topics.table(VENUE, table, leaf), json.dumps(body),
                       qos=1).wait_for_publish(5)


def _refusals(caplog, leaf: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if re.search(rf"refused a message on \S+/tables/[^/]+/{leaf}\b", r.getMessage())]


def _removed(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if "an older version's subscription" in r.getMessage()]


def test_an_upgraded_hub_drops_the_old_versions_subscription_and_loses_no_event(
        tmp_path, broker, caplog):
    """The upgrade: the old hub's sessions at the broker (its floor subscribed to every
    table's events), an event sent while the hub is down, today's hub started with the same
    client ids. Its floor unsubscribes what the old one subscribed to, once: no refusal per
    table for the events topic it no longer reads (before, one per table), and the event sent
    while it was down is recorded (the recorder's session is kept, never started clean)."""
    caplog.set_level(logging.INFO)
    _old_session(broker.port, f"hub-{VENUE}", FLOOR_SESSION_SECONDS, OLD_FLOOR)
    _old_session(broker.port, f"recorder-{VENUE}", 7 * 24 * 3600, OLD_RECORDER)

    table = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    table.connect("127.0.0.1", broker.port)
    table.loop_start()
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    hub = None
    try:
        _as_a_table(table, "t1", 1, hand=1)  # while the hub is down: the broker keeps it
        hub = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                              port=broker.port, http_port=0)).start()
        assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
        for number, name in enumerate(("t2", "t3"), start=2):
            _as_a_table(table, name, 1, hand=number)
        # The barrier: a state from each table, after its events on the same connection
        # (the broker keeps one publisher's order to each session): once the floor has it,
        # whatever came before it on the old topic has been through the floor.
        for name in ("t1", "t2", "t3"):
            state = table_state(seats=[1, 2], last_seq=1, ts=1).to_json()
            table.publish(topics.table(VENUE, name, "state"),
                          json.dumps({k: v for k, v in state.items()
                                      if v is not None or k in ("hand", "clock")}),
                          qos=1).wait_for_publish(5)
        assert wait_for(lambda: all(name in hub.floor.tables
                                    and hub.floor.tables[name].seats == [1, 2]
                                    for name in ("t1", "t2", "t3")), 15)
        # No event lost: the one sent while the hub was down, and each after.
        assert wait_for(lambda: [hub.recorder.seqs(name) for name in ("t1", "t2", "t3")]
                        == [[1], [1], [1]], 15)
        assert wait_for(lambda: {a.table for a in hub.floor.alerts.values()}
                        == {"t1", "t2", "t3"}, 15)  # the floor follows the recorder
        assert _refusals(caplog, "events") == []
        assert len(_removed(caplog)) == 1, _removed(caplog)
        assert topics.every_table(VENUE, "events") in _removed(caplog)[0]
        # The session holds what this version subscribes to, no more: the broker sent the
        # old topic only what it had queued while the hub was down (t1's), not t2's or t3's.
        assert hub.worker.retired_dropped == 1
        hub.stop()
        hub = Hub(hub.settings).start()  # a later restart: nothing left to remove
        assert hub.connected.wait(10)  # (its UNSUBACK came before the SUBACK)
        assert len(_removed(caplog)) == 1
    finally:
        if hub is not None:
            hub.stop()
        table.loop_stop()
        table.disconnect()


def _upgrading() -> str:
    text = (ROOT / "docs" / "hub.md").read_text()
    return text.split("\n## Upgrading\n", 1)[1].split("\n## ", 1)[0]


def test_the_documented_hub_toml_is_the_old_units_hub(tmp_path):
    """docs/hub.md, "Upgrading": the old unit's command line, its hub.env values put in, is
    the same configuration as the hub.toml shown for it (the flags still work alone)."""
    section = _upgrading()
    old = re.search(r"```text\n(EnvironmentFile=.*?)```", section, re.S)[1]
    env = dict(re.findall(r"(\w+)=(\S+)", old.splitlines()[0].split("#", 1)[1]))
    command = re.search(r"ExecStart=(.*)", old.replace("\\\n", " "))[1]
    for name, value in env.items():
        command = command.replace("${" + name + "}", value)
    words = shlex.split(command)
    assert words[0].endswith("/tablectl") and words[1] == "hub"
    toml = tmp_path / "hub.toml"
    toml.write_text(re.search(r"```toml\n(.*?)```", section, re.S)[1])
    parser = build_parser()
    from_flags = hub_config("hub", parser.parse_args(words[1:]))
    from_file = hub_config("hub", parser.parse_args(["hub", "--config", str(toml)]))
    assert from_file == from_flags
    assert set(env) == {"VENUE", "BROKER", "DASHBOARD"}


def test_tablectl_hub_check_reads_the_configuration_and_its_files_without_connecting(
        tmp_path):
    """`tablectl hub --check`: exit 0 and what it would run, for a good file, without a
    broker; every problem, the files it names too, exit 2, for a bad one."""
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    good = tmp_path / "hub.toml"
    good.write_text(f'[venue]\nid = "riverside"\n[mqtt]\nport = 1\n'
                    f'[dashboard]\nusers = "{users}"\n')
    done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--config", str(good),
                           "--check"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "riverside" in done.stdout and "127.0.0.1:1" in done.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(f'[venue]\nid = "riverside"\n[mqtt]\nca = "{tmp_path}/ca.crt"\n'
                   f'cert = "{tmp_path}/hub.crt"\nkey = "{tmp_path}/hub.key"\n'
                   f'[dashboard]\nusers = "{users}"\n')
    # Checked, or started for real: the same words (a certificate it could not read was
    # said to be the dashboard's fault: "the dashboard cannot listen on ...").
    for check in (["--check"], []):
        done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                               str(bad), *check], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert "3 problem(s)" in done.stderr and "dashboard" not in done.stderr, done.stderr
        for key in ("mqtt.ca", "mqtt.cert", "mqtt.key"):
            assert f"{key}: cannot read {tmp_path}/" in done.stderr, done.stderr


def test_tablectl_hub_check_lists_every_problem_of_every_part_at_once(tmp_path):
    """Unreadable certificates, a users file that is not there and a structure that does not
    exist: one run names all five, not the first part's and then, once mended, the next's."""
    bad = tmp_path / "hub.toml"
    bad.write_text(f'[venue]\nid = "riverside"\n[mqtt]\nca = "{tmp_path}/ca.crt"\n'
                   f'cert = "{tmp_path}/hub.crt"\nkey = "{tmp_path}/hub.key"\n'
                   f'[dashboard]\nusers = "{tmp_path}/none.toml"\n'
                   '[clock]\nstart = "no-such-structure"\n')
    done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--config", str(bad),
                           "--check"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "5 problem(s)" in done.stderr, done.stderr
    for said in ("mqtt.ca: cannot read", "mqtt.cert: cannot read", "mqtt.key: cannot read",
                 f"users file {tmp_path}/none.toml", "clock.start no-such-structure"):
        assert said in done.stderr, (said, done.stderr)


@pytest.mark.parametrize("db", ["postgresql://u:p@[::1/db", "postgresql://u:p@host:abc/db"])
def test_a_malformed_database_url_is_no_traceback(tmp_path, db):
    """A database URL urllib cannot split (an unclosed IPv6 bracket, a port that is no
    number) once stopped `tablectl hub` with a ValueError where it asked whether the file
    holds a password: it is taken as a secret (it has a user part), and the hub goes on to
    say what it can."""
    from tablectl.hub_config import holds_password

    assert holds_password(db)
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    config = tmp_path / "hub.toml"
    config.write_text(f'[venue]\nid = "riverside"\n[storage]\ndb = "{db}"\n'
                      f'[dashboard]\nusers = "{users}"\n')
    config.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--config",
                           str(config), "--check"], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
