"""A private three-node NATS cluster (Debian's ``nats-server``): JetStream on each node, routes
between them, and each node's MQTT listener, on free loopback ports with their own stores;
nodes killed by PID and started again on the same ports and stores.

Each node runs ``deploy/cluster/nats.conf`` word for word, with this machine's ports and
folders in its environment, and an ``accounts.conf`` laid out as the deployment's: one account
for the group (JetStream on; MQTT keeps its sessions and QoS 1 messages in it, three
replicas), one user per venue who may publish only under its own ``pkr.v1.<venue>.>`` and
subscribe to nothing, and the central recorder, who may only subscribe to the tables'
private topics. Used by ``python -m tests.bench.multi_venue`` and by the tests."""

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
    """The group's account, as ``deploy/cluster/accounts.conf`` has it: each venue's user
    (``venue-<id>``; ``venues`` maps the venue to its password, in order) and the central
    recorder's (``central``)."""
    users = [f"      {{user: {_quoted('venue-' + venue)}, password: {_quoted(password)},\n"
             f"       permissions: {{publish: {{allow: [{_quoted(f'pkr.v1.{venue}.>')}]}},"
             " subscribe: {deny: [\">\"]}}}"
             for venue, password in venues.items()]
    users.append(f"      {{user: \"central\", password: {_quoted(central_password)},\n"
                 "       permissions: {publish: {deny: [\">\"]},\n"
                 "                     subscribe: {allow: [\"pkr.v1.*.tables.*.private\","
                 " \"$MQTT.sub.>\"]}}}")
    return ("accounts {\n  GROUP {\n    jetstream: enabled\n    users: [\n"
            + ",\n".join(users) + "\n    ]\n  }\n}\n")


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
            for node in self.nodes:
                self._wait_mqtt_session(node, deadline)
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

    def _wait_mqtt_session(self, node: Node, deadline: float) -> None:
        """Until an MQTT client of the group's account is accepted on the node. (nats-server
        2.9 registers an account on a node when a client first uses it; a node just started
        may then not yet route the replies MQTT's session lookup waits for, and refuses
        connections for a while: "lookup sessions stream ... timeout".)"""
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        answer: list[bool] = []
        while time.monotonic() < deadline:
            client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{node.name}",
                                 protocol=mqtt.MQTTv311, clean_session=True)
            client.username_pw_set("central", self.central_password)
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
        raise RuntimeError(f"nats-server {node.name} accepts no MQTT client: {self.tail(node)}")

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
