"""A private three-node NATS cluster (Debian's ``nats-server``): JetStream on each node, routes
between them, and each node's MQTT listener, on free loopback ports with their own stores;
nodes killed by PID and started again on the same ports and stores.

Each node runs ``deploy/cluster/nats.conf`` word for word, with this machine's ports and
folders in its environment, and an ``accounts.conf`` laid out as the deployment's
(``accounts_block``): an account per venue and one for the central recorder, JetStream on in
each (MQTT keeps each account's sessions and QoS 1 messages in it, three replicas). Used by
``python -m tests.bench.multi_venue`` and by the tests."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from simulators.broker import free_port

CLUSTER_NAME = "pkr-group"


def nats_binary() -> str:
    found = shutil.which("nats-server") or shutil.which("nats-server",
                                                        path="/usr/sbin:/usr/bin")
    if found is None:
        raise RuntimeError("nats-server is not installed (apt-get install nats-server; "
                           "`make test` installs it)")
    return found


def _quoted(text: str) -> str:
    return json.dumps(text)  # a NATS configuration string is a JSON string


def accounts_block(venues: dict[str, str], central_password: str) -> str:
    """The group's accounts, as ``deploy/cluster/accounts.conf`` has them (``venues`` maps each
    venue to its user's password, in order): an account per venue, whose only user
    (``venue-<id>``) may publish under its own topics and receive only what the centre sends
    it, and which lends the centre its tables' QoS 1 messages and its uplink's counts; and the
    centre's account, whose only user is the central recorder (``central``)."""
    q = _quoted
    blocks: list[str] = []
    central_imports: list[str] = []
    for venue, password in venues.items():
        account, root = f"venue-{venue}", f"pkr.v1.{venue}"
        private, counts = f"$MQTT.msgs.{root}.tables.*.private", f"{root}.uplink.sent"
        blocks.append(
            f"  {q(account)} {{\n    jetstream: enabled\n"
            f"    users: [{{user: {q(account)}, password: {q(password)},\n"
            "              allowed_connection_types: [\"MQTT\"],\n"
            f"              permissions: {{publish: {{allow: [{q(root + '.>')}]}},\n"
            f"                             subscribe: {{allow: [{q(root + '.group.>')}]}}}}}}]\n"
            f"    exports: [{{stream: {q(private)}, accounts: [CENTRAL]}},\n"
            f"              {{stream: {q(counts)}, accounts: [CENTRAL]}}]\n"
            f"    imports: [{{stream: {{account: CENTRAL, subject: {q(root + '.group.>')}}}}}]\n"
            "  }\n")
        central_imports += [f"{{stream: {{account: {q(account)}, subject: {q(private)}}}}}",
                            f"{{stream: {{account: {q(account)}, subject: {q(counts)}}}}}"]
    blocks.append(
        "  CENTRAL {\n    jetstream: enabled\n"
        f"    users: [{{user: \"central\", password: {q(central_password)},\n"
        "              allowed_connection_types: [\"MQTT\"],\n"
        "              permissions: {publish: {allow: [\"pkr.v1.*.group.resend\"]},\n"
        "                            subscribe: {allow: [\"pkr.v1.*.tables.*.private\","
        " \"pkr.v1.*.uplink.sent\",\n"
        "                                                \"$MQTT.sub.>\"]}}}]\n"
        "    exports: [{stream: \"pkr.v1.*.group.>\"}]\n"
        "    imports: [\n      " + ",\n      ".join(central_imports) + "\n    ]\n"
        "  }\n")
    return "accounts {\n" + "".join(blocks) + "}\n"


def deploy_config() -> Path:
    """The node configuration the deployment uses (``deploy/cluster/nats.conf``)."""
    return Path(__file__).resolve().parents[1] / "deploy" / "cluster" / "nats.conf"


@dataclass
class Node:
    name: str
    client_port: int
    route_port: int
    mqtt_port: int
    monitor_port: int
    store: Path
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=Path)

    @property
    def mqtt(self) -> tuple[str, int]:
        return ("127.0.0.1", self.mqtt_port)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class NatsCluster:
    def __init__(self, directory: Path, venues: dict[str, str], central_password: str,
                 *, nodes: int = 3) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.venues = venues
        self.central_password = central_password
        self.nodes = [Node(f"n{i}", free_port(), free_port(), free_port(), free_port(),
                           self.directory / f"n{i}") for i in range(1, nodes + 1)]
        self.certificates = self.directory / "certs"
        self.ca_file = str(self.certificates / "ca.crt")  # what clients verify the nodes by

    def environment(self, node: Node) -> dict[str, str]:
        """What ``deploy/cluster/nats.conf`` takes from each node's environment."""
        routes = [f"nats-route://127.0.0.1:{n.route_port}" for n in self.nodes]
        return {"NODE_NAME": node.name, "STORE_DIR": str(node.store),
                "CLIENT_LISTEN": f"127.0.0.1:{node.client_port}",
                "MONITOR_LISTEN": f"127.0.0.1:{node.monitor_port}",
                "ROUTE_LISTEN": f"127.0.0.1:{node.route_port}",
                **{f"ROUTE_{i}": route for i, route in enumerate(routes, start=1)},
                "MQTT_LISTEN": f"127.0.0.1:{node.mqtt_port}",
                "TLS_CERT": str(self.certificates / "broker.crt"),
                "TLS_KEY": str(self.certificates / "broker.key")}

    def start(self, timeout: float = 30) -> NatsCluster:
        # The nodes' certificate from a CA of the group's own, made by the deployment's
        # script (for 127.0.0.1: every node here is on loopback).
        subprocess.run(["bash", str(deploy_config().parents[1] / "hub" / "make-certs.sh"),
                        str(self.certificates), "group", "127.0.0.1"],
                       check=True, capture_output=True, timeout=60)
        try:
            for node in self.nodes:
                self.start_node(node)
            deadline = time.monotonic() + timeout
            for node in self.nodes:
                self._wait_ready(node, deadline)
            self._wait_mqtt_sessions(deadline)
        except BaseException:
            self.stop()  # no node outlives a cluster that did not come up
            raise
        return self

    def start_node(self, node: Node) -> None:
        """Start (or start again) one node. (A node started again catches up with the others
        by itself: nothing to wait for.)"""
        node.store.mkdir(parents=True, exist_ok=True)
        conf = self.directory / "nats.conf"  # the deployment's, word for word
        if not conf.exists():  # written once: a node starting reads it while others start
            (self.directory / "accounts.conf").write_text(
                accounts_block(self.venues, self.central_password))
            shutil.copyfile(deploy_config(), conf)
        node.log = self.directory / f"{node.name}.log"
        node.process = subprocess.Popen([nats_binary(), "-c", str(conf), "-l", str(node.log)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env={**os.environ, **self.environment(node)})

    def _wait_ready(self, node: Node, deadline: float) -> None:
        """Until the node's MQTT listener answers and its JetStream is healthy (its
        ``/healthz`` says ok: the meta group has a leader and this node caught up)."""
        import urllib.request

        last = "no answer"
        while time.monotonic() < deadline:
            if node.process is not None and node.process.poll() is not None:
                raise RuntimeError(f"nats-server {node.name} exited: {self.tail(node)}")
            try:
                with socket.create_connection(node.mqtt, timeout=0.2):
                    pass  # (TLS answers later: that the port is open is enough here)
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{node.monitor_port}/healthz",
                        timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(f"nats-server {node.name} not ready: {last}; {self.tail(node)}")

    def _wait_mqtt_sessions(self, deadline: float) -> None:
        """Until every node accepts an MQTT client of every account. (nats-server 2.9
        registers an account on a node when a client first uses it; a node just started may
        then not yet route the replies MQTT's session lookup waits for, and refuses
        connections for a while: "lookup sessions stream ... timeout".) All at once: each
        account's first client makes its replicated streams, a second or two each."""
        from concurrent.futures import ThreadPoolExecutor

        users = [("central", self.central_password),
                 *((f"venue-{venue}", password) for venue, password in self.venues.items())]
        with ThreadPoolExecutor(len(users) * len(self.nodes)) as pool:
            waits = [pool.submit(self._wait_accepted, node, user, password, deadline)
                     for node in self.nodes for user, password in users]
            for wait in waits:
                wait.result()

    def _wait_accepted(self, node: Node, user: str, password: str, deadline: float) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        answer: list[bool] = []
        while time.monotonic() < deadline:
            client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{node.name}",
                                 protocol=mqtt.MQTTv311, clean_session=True)
            client.username_pw_set(user, password)
            client.tls_set(ca_certs=self.ca_file)
            client.on_connect = lambda c, u, f, rc, p=None: answer.append(not rc.is_failure)
            try:
                client.connect(*node.mqtt, keepalive=5)
                end = min(deadline, time.monotonic() + 6)
                while not answer and time.monotonic() < end:
                    client.loop(0.1)
            except OSError:
                pass
            finally:
                client.disconnect()
            if answer and answer[-1]:
                return
            answer.clear()
            time.sleep(0.2)
        raise RuntimeError(f"nats-server {node.name} accepts no MQTT client of {user}: "
                           f"{self.tail(node)}")

    def kill_node(self, node: Node) -> None:
        if node.process is not None and node.process.poll() is None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait(10)

    def tail(self, node: Node) -> str:
        try:
            return "\n".join(node.log.read_text().splitlines()[-8:])
        except OSError:
            return ""

    def stop(self) -> None:
        for node in self.nodes:
            self.kill_node(node)
