"""The venue's broker as deployed: TLS, a certificate per client, the CN as user name, no
anonymous access, and the ACL of deploy/hub, with certificates made by its script."""

from __future__ import annotations

import getpass
import json
import ssl
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from simulators.broker import Broker, free_port
from tests.conftest import wait_for

DEPLOY = Path(__file__).resolve().parents[1] / "deploy" / "hub"
VENUE = "v1"


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hub")
    subprocess.run([str(DEPLOY / "make-certs.sh"), str(directory), VENUE, "127.0.0.1", "t1",
                    "t2"], check=True, capture_output=True)
    port = free_port()
    subprocess.run([str(DEPLOY / "render-config"), str(directory), VENUE, str(port),
                    getpass.getuser()], check=True, capture_output=True)
    broker = Broker(directory, port=port,
                    config=(directory / "mosquitto.conf").read_text(), name="secure").start()
    yield broker, directory
    broker.kill()


class Client:
    def __init__(self, directory: Path, port: int, name: str | None,
                 client_id: str | None = None) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.name = name
        self.messages: list[tuple[str, dict]] = []
        self.subacks: dict[int, list] = {}
        self.pubacks: dict[int, object] = {}
        self.connected = threading.Event()
        # Set once the broker has answered either way (a CONNACK, or the connection closed):
        # a refusal is waited for as long as it takes, not for a fixed time.
        self.settled = threading.Event()
        self.refused: object = None
        self.disconnects = 0
        client = mqtt.Client(CallbackAPIVersion.VERSION2,
                             client_id=client_id or f"test-{name}-{time.time()}",
                             protocol=mqtt.MQTTv5)
        if name is None:
            client.tls_set(ca_certs=str(directory / "ca.crt"))
        else:
            client.tls_set(ca_certs=str(directory / "ca.crt"),
                           certfile=str(directory / f"{name}.crt"),
                           keyfile=str(directory / f"{name}.key"))
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = lambda c, u, m: self.messages.append((m.topic, json.loads(m.payload)))
        client.on_subscribe = lambda c, u, mid, codes, p: self.subacks.__setitem__(mid, codes)
        client.on_publish = lambda c, u, mid, code, p: self.pubacks.__setitem__(mid, code)
        self.client = client
        self.error: Exception | None = None
        try:
            client.connect("127.0.0.1", port, keepalive=10)
        except (ssl.SSLError, OSError) as exc:
            self.error = exc
            return
        client.loop_start()

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            self.refused = reason
        else:
            self.connected.set()
        self.settled.set()

    def _on_disconnect(self, *args) -> None:
        self.disconnects += 1
        self.settled.set()

    def subscribe(self, topic: str) -> list:
        _, mid = self.client.subscribe(topic, qos=1)
        end = time.monotonic() + 5
        while mid not in self.subacks and time.monotonic() < end:
            time.sleep(0.01)
        return self.subacks[mid]

    def publish(self, topic: str, body: dict) -> object:
        info = self.client.publish(topic, json.dumps(body), qos=1)
        end = time.monotonic() + 5
        while info.mid not in self.pubacks and time.monotonic() < end:
            time.sleep(0.01)
        return self.pubacks.get(info.mid)

    def close(self) -> None:
        # Disconnected first, the network thread ends at once; stopped first, it finished
        # its second-long wait for the socket, a second a client at each test's end.
        self.client.disconnect()
        self.client.loop_stop()


def _root(table: str) -> str:
    return f"pkr/v1/{VENUE}/tables/{table}/"


@pytest.fixture
def clients(secure_broker):
    broker, directory = secure_broker
    made: list[Client] = []

    def connect(name):
        client = Client(directory, broker.port, name)
        made.append(client)
        if client.error is None:
            client.settled.wait(5)
        return client

    yield connect
    for client in made:
        if client.error is None:
            client.close()


def test_a_table_publishes_only_as_itself(clients):
    hub, t1 = clients("hub"), clients("t1")
    assert not hub.subscribe(_root("+") + "events")[0].is_failure
    assert not t1.publish(_root("t1") + "events", {"n": 1}).is_failure
    forged = t1.publish(_root("t2") + "events", {"n": 2})
    assert forged.is_failure  # MQTT 5: the broker says "not authorized"
    # The barrier: t1's next message arrives; the forged one, sent before it, never did.
    assert not t1.publish(_root("t1") + "events", {"n": 3}).is_failure
    assert wait_for(lambda: len(hub.messages) >= 2, 5)
    assert [(t, m["n"]) for t, m in hub.messages] == [(_root("t1") + "events", 1),
                                                       (_root("t1") + "events", 3)]


def test_a_role_identity_cannot_speak_as_a_table_of_its_name(clients):
    hub, dashboard, recorder = clients("hub"), clients("dashboard"), clients("recorder")
    assert not hub.subscribe(_root("+") + "events")[0].is_failure
    for role in (dashboard, recorder):
        forged = role.publish(_root(role.name) + "events", {"n": 1})
        assert forged is not None and forged.is_failure, role.name
    t1 = clients("t1")  # the barrier: a table's own event arrives, the forged ones never
    assert not t1.publish(_root("t1") + "events", {"n": 2}).is_failure
    assert wait_for(lambda: hub.messages, 5)
    assert [(t, m["n"]) for t, m in hub.messages] == [(_root("t1") + "events", 2)]


def test_a_certificate_cannot_take_another_clients_id(secure_broker):
    """The broker takes the client id from the certificate: a table asking for the recorder's
    id neither kicks the recorder off nor takes its persistent session."""
    broker, directory = secure_broker
    recorder = Client(directory, broker.port, "recorder", client_id=f"recorder-{VENUE}")
    assert recorder.connected.wait(5)
    impostor = Client(directory, broker.port, "t1", client_id=f"recorder-{VENUE}")
    try:
        assert impostor.connected.wait(5)
        # The barrier: both still publish, each as itself, after the impostor connected.
        assert not impostor.publish(_root("t1") + "status", {"n": 1}).is_failure
        assert not recorder.publish(_root("t1") + "ack", {"upto_seq": 0}).is_failure
        assert recorder.disconnects == 0 and recorder.client.is_connected()
    finally:
        impostor.close()
        recorder.close()


def test_a_table_reads_only_its_own_commands(clients):
    # Mosquitto 2.0 may grant a subscription and enforce read access on each message: what
    # matters is what reaches the client.
    hub, t1, t2 = clients("hub"), clients("t1"), clients("t2")
    t1.subscribe(_root("t2") + "cmd/#")
    t1.subscribe(_root("t1") + "cmd/#")
    t2.subscribe(_root("t2") + "cmd/#")
    assert not hub.publish(_root("t2") + "cmd/status", {"transaction": "x1"}).is_failure
    assert not hub.publish(_root("t1") + "cmd/status", {"transaction": "x2"}).is_failure
    # The barrier: a later command to each arrives; anything leaked would have come first.
    assert not hub.publish(_root("t2") + "cmd/status", {"transaction": "x3"}).is_failure
    assert wait_for(lambda: len(t2.messages) >= 2 and t1.messages, 5)
    assert [m["transaction"] for _, m in t1.messages] == ["x2"]
    assert [m["transaction"] for _, m in t2.messages] == ["x1", "x3"]


def test_the_dashboard_never_reads_private(clients):
    dashboard, recorder, t1 = clients("dashboard"), clients("recorder"), clients("t1")
    dashboard.subscribe(_root("+") + "private")
    dashboard.subscribe(_root("+") + "#")
    assert not dashboard.subscribe(_root("+") + "events")[0].is_failure
    assert not recorder.subscribe(_root("+") + "private")[0].is_failure
    t1.publish(_root("t1") + "private", {"hole": ["As", "Kd"]})
    t1.publish(_root("t1") + "events", {"public": True})
    # The barrier: the next private and public messages arrive where they may.
    t1.publish(_root("t1") + "private", {"hole": ["2c", "2d"]})
    t1.publish(_root("t1") + "events", {"marker": True})
    assert wait_for(lambda: len(recorder.messages) == 2 and any(
        "marker" in m for _, m in dashboard.messages), 5)
    assert {t for t, _ in dashboard.messages} == {_root("t1") + "events"}
    assert [t for t, _ in recorder.messages] == [_root("t1") + "private"] * 2


def test_a_client_without_a_certificate_is_refused(clients):
    anonymous = clients(None)
    assert anonymous.error is not None or anonymous.settled.is_set()
    assert not anonymous.connected.is_set()
    assert anonymous.error is not None or anonymous.refused is not None or \
        anonymous.disconnects


def test_the_table_link_and_recorder_over_tls(tmp_path, secure_broker):
    from contract.mqtt import TlsSettings
    from hardware.mqtt_link import TableLink
    from hardware.outbox import Outbox
    from hub.recorder import Recorder

    broker, directory = secure_broker

    def tls(name):
        return TlsSettings(str(directory / "ca.crt"), str(directory / f"{name}.crt"),
                           str(directory / f"{name}.key"))

    recorder = Recorder(tmp_path / "rec.db", venue=VENUE, port=broker.port, tls=tls("recorder"),
                        client_id="recorder-tls").start()
    box = Outbox(tmp_path / "t1.db")
    link = TableLink(box, venue=VENUE, table="t1", port=broker.port, tls=tls("t1")).start()
    try:
        for i in range(50):
            box.append({"type": "shoe", "state": "ok", "t": float(i)}, i)
        link.notify()
        end = time.monotonic() + 20
        while recorder.upto.get("t1", 0) < 50 and time.monotonic() < end:
            time.sleep(0.05)
        assert recorder.seqs("t1") == list(range(1, 51))
        while box.acked_upto < 50 and time.monotonic() < end:
            time.sleep(0.05)
        assert box.acked_upto == 50  # the recorder's acks got through the ACL
    finally:
        link.stop()
        recorder.stop()


def test_the_hub_runs_with_the_deployed_certificates_acl_and_https(secure_broker, tmp_path):
    """The hub's three identities as deployed (hub, recorder; a table as itself): the
    recorder stores and acknowledges, the floor sees the table's alert, the clock is
    published, and the dashboard answers over HTTPS with the venue's web certificate."""
    from contract.mqtt import tls_settings
    from hardware.mqtt_link import TableLink
    from hardware.outbox import Outbox
    from hub import auth
    from hub.service import FloorService
    from simulators.staff import Staff
    from tablectl.hub_app import Hub, HubSettings
    from tests.conftest import wait_for

    broker, directory = secure_broker

    def identity(name):
        return tls_settings(str(directory / "ca.crt"), str(directory / f"{name}.crt"),
                            str(directory / f"{name}.key"))

    auth.save_user(tmp_path / "users.toml", "maria", "floor", "maria-password")
    hub = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"),
                          users=str(tmp_path / "users.toml"), port=broker.port,
                          tls=identity("hub"), recorder_tls=identity("recorder"),
                          http_host="127.0.0.1", http_port=0,
                          web_cert=str(directory / "web.crt"),
                          web_key=str(directory / "web.key"))).start()
    box = Outbox(tmp_path / "t1.db")
    link = TableLink(box, venue=VENUE, table="t1", port=broker.port,
                     tls=identity("t1")).start()
    try:
        assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
        context = ssl.create_default_context(cafile=str(directory / "ca.crt"))
        assert hub.url.startswith("https://")
        maria = Staff(hub.url, "maria", "maria-password", context=context).listen()
        assert all(cookie.secure for cookie in maria.jar)
        with urllib.request.urlopen(hub.url + "/login", context=context) as page:
            assert page.headers["Strict-Transport-Security"] == "max-age=31536000"
        box.append({"type": "floor.called", "hand": 1, "t": 1.0}, int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: maria.alerts("floor_called"), 10)
        assert wait_for(lambda: hub.recorder.upto.get("t1") == box.last_seq, 10)
        assert wait_for(lambda: box.acked_upto == box.last_seq, 10)  # the ack reached it
        assert maria.post("/api/clock", {"action": "start", "value": "tda-2024"})[0] == 200
        assert wait_for(lambda: (hub.floor.clock or {}).get("structure") == "tda-2024", 10)
        status, sent = maria.post("/api/tables/t1/cmd/status", {})
        assert status == 200
        assert wait_for(lambda: hub.floor.commands[sent["transaction"]].reply, 10)
        # Floor staff at a terminal, with the floor identity: answered, and the hub (whose
        # client id the broker takes from its own certificate) is not kicked off.
        import sys

        done = subprocess.run(
            [sys.executable, "-m", "tablectl.cli", "clock", "pause", "--venue", VENUE,
             "--port", str(broker.port), "--ca", str(directory / "ca.crt"),
             "--cert", str(directory / "floor.crt"), "--key", str(directory / "floor.key")],
            capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["running"] is False
        assert wait_for(lambda: (hub.floor.clock or {}).get("running") is False, 10)
        assert hub.connected.is_set()
        # In the floor log like a change made on the dashboard (it was answered, not logged).
        assert wait_for(lambda: [line for line in hub.call(FloorService.floor_log)
                                 if line["action"] == "clock/pause"
                                 and line["user"] == "floor (MQTT)"], 10)
        maria.close()
    finally:
        link.stop()
        hub.stop()


def _doctor_over_tls(tmp_path, port, host="127.0.0.1", ca=None, cert=None, key=None):
    import sys

    config = tmp_path / "doctor.toml"
    config.write_text(
        f'[table]\nid = "t1"\nvenue = "{VENUE}"\n[shoe]\nbackend = "none"\n[button]\n'
        'backend = "none"\n[display]\nbackend = "none"\n'
        f'[mqtt]\nhost = "{host}"\nport = {port}\nca = "{ca}"\ncert = "{cert}"\nkey = "{key}"\n'
        f'[storage]\ndata_dir = "{tmp_path}"\n')
    return subprocess.run([sys.executable, "-m", "tablectl.cli", "doctor", "--config",
                           str(config)], capture_output=True, text=True, timeout=60).stdout


def test_doctor_names_each_certificate_problem(secure_broker, tmp_path):
    broker, directory = secure_broker
    ca, cert, key = directory / "ca.crt", directory / "t1.crt", directory / "t1.key"
    out = _doctor_over_tls(tmp_path, broker.port, ca=ca, cert=cert, key=key)
    assert f"[  ok] broker: connected to 127.0.0.1:{broker.port} with the table's certificate" \
        in out
    # Another venue's CA: the broker's certificate is not trusted.
    other = tmp_path / "other-venue"
    subprocess.run([str(DEPLOY / "make-certs.sh"), str(other), "v2", "127.0.0.1", "t1"],
                   check=True, capture_output=True)
    out = _doctor_over_tls(tmp_path, broker.port, ca=other / "ca.crt", cert=cert, key=key)
    assert "the broker's certificate is not trusted" in out and "mqtt.ca must be" in out
    # The broker's certificate names 127.0.0.1 and localhost, not 127.0.0.2 (the same host).
    out = _doctor_over_tls(tmp_path, broker.port, host="127.0.0.2", ca=ca, cert=cert, key=key)
    assert "the broker's certificate is not trusted" in out and "name mqtt.host" in out
    # A certificate with another table's key.
    out = _doctor_over_tls(tmp_path, broker.port, ca=ca, cert=cert, key=directory / "t2.key")
    assert "[FAIL] broker: the TLS files cannot be used" in out and "matching pair" in out
    # A file that is missing is named with its key.
    out = _doctor_over_tls(tmp_path, broker.port, ca=ca, cert=cert, key=tmp_path / "gone.key")
    assert f"[FAIL] broker: mqtt.key {tmp_path / 'gone.key'} does not exist" in out
