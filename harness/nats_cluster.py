"""A private three-node NATS cluster (Debian's ``nats-server``): routes between the nodes
(mutual TLS with the group's CA and the route password), each node's client port with TLS, on
free loopback ports; nodes killed by PID and started again on the same ports.

Each node runs ``deploy/cluster/nats.conf`` word for word, with this machine's ports and
folders in its environment, and an ``accounts.conf`` laid out as the deployment's
(``accounts_block``): an account per venue and one for the central recorder. Used by
``python -m tests.bench.multi_venue`` and by the tests."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulators.broker import free_port

CLUSTER_NAME = "pkr-group"
ROUTE_USER = "pkr-route"  # as deploy/cluster/nats.conf names it
# Each account's limits at the cluster (accounts.conf): an uplink or the central recorder is
# one connection (two while a restart overlaps) with a few subscriptions, and the contract's
# largest message is 128 kB (EnvelopeBatch), 256 kB the most the centre reads.
ACCOUNT_LIMITS = "    limits: {max_connections: 4, max_subscriptions: 32, max_payload: 262144}\n"


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
    (``venue-<id>``) may publish under its own subjects and receive only what the centre sends
    it (its answers and its resend requests), which takes the centre's storing service for its
    own tables and lends the centre its uplink's counts; and the centre's account, whose only
    user is the central recorder (``central``)."""
    q = _quoted
    blocks: list[str] = []
    central_exports: list[str] = []
    central_imports: list[str] = []
    for venue, password in venues.items():
        account, root = f"venue-{venue}", f"pkr.v1.{venue}"
        private, counts = f"{root}.tables.*.private", f"{root}.uplink.sent"
        blocks.append(
            f"  {q(account)} {{\n"
            f"    users: [{{user: {q(account)}, password: {q(password)},\n"
            "              allowed_connection_types: [\"STANDARD\"],\n"
            f"              permissions: {{publish: {{allow: [{q(root + '.>')}]}},\n"
            "                             subscribe: {allow: [\"_INBOX.>\", "
            f"{q(root + '.group.>')}]}}}}}}]\n"
            f"{ACCOUNT_LIMITS}"
            f"    exports: [{{stream: {q(counts)}, accounts: [CENTRAL]}}]\n"
            f"    imports: [{{service: {{account: CENTRAL, subject: {q(private)}}}}},\n"
            f"              {{stream: {{account: CENTRAL, subject: {q(root + '.group.>')}}}}}]\n"
            "  }\n")
        central_exports.append(f"{{service: {q(private)}, accounts: [{q(account)}]}}")
        central_imports.append(f"{{stream: {{account: {q(account)}, subject: {q(counts)}}}}}")
    blocks.append(
        "  CENTRAL {\n"
        f"    users: [{{user: \"central\", password: {q(central_password)},\n"
        "              allowed_connection_types: [\"STANDARD\"],\n"
        "              permissions: {publish: {allow: [\"pkr.v1.*.group.resend\"]},\n"
        "                            subscribe: {allow: [\"pkr.v1.*.tables.*.private\","
        " \"pkr.v1.*.uplink.sent\"]},\n"
        "                            allow_responses: true}}]\n"
        f"{ACCOUNT_LIMITS}"
        "    exports: [\n      {stream: \"pkr.v1.*.group.>\"},\n      "
        + ",\n      ".join(central_exports) + "\n    ]\n"
        "    imports: [\n      " + ",\n      ".join(central_imports) + "\n    ]\n"
        "  }\n")
    return "accounts {\n" + "".join(blocks) + "}\n"


def deploy_config() -> Path:
    """The node configuration the deployment uses (``deploy/cluster/nats.conf``)."""
    return Path(__file__).resolve().parents[1] / "deploy" / "cluster" / "nats.conf"


class NodeExited(RuntimeError):
    """A node's process ended while the cluster waited for it (a port taken, a bad config)."""


@dataclass
class Node:
    name: str
    client_port: int
    route_port: int
    monitor_port: int
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=Path)

    @property
    def address(self) -> str:
        """HOST:PORT of its client port (TLS), as group.cluster lists it."""
        return f"127.0.0.1:{self.client_port}"

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
        self.nodes = [Node(f"n{i}", free_port(), free_port(), free_port())
                      for i in range(1, nodes + 1)]
        self.certificates = self.directory / "certs"
        self.ca_file = str(self.certificates / "ca.crt")  # what clients verify the nodes by
        # nats-server parses a variable's value as configuration: a value that starts with a
        # digit is read as a number (and "1e5..." stops the node), so it starts with a letter.
        self.route_password = "r" + secrets.token_hex(24)

    def environment(self, node: Node) -> dict[str, str]:
        """What ``deploy/cluster/nats.conf`` takes from each node's environment (the
        deployment's ``pkr-node.env``)."""
        routes = [f"nats-route://{ROUTE_USER}:{self.route_password}@127.0.0.1:{n.route_port}"
                  for n in self.nodes]
        return {"NODE_NAME": node.name, "CLIENT_LISTEN": f"127.0.0.1:{node.client_port}",
                "MONITOR_LISTEN": f"127.0.0.1:{node.monitor_port}",
                "ROUTE_LISTEN": f"127.0.0.1:{node.route_port}",
                **{f"ROUTE_{i}": route for i, route in enumerate(routes, start=1)},
                "TLS_CERT": str(self.certificates / f"{node.name}.crt"),
                "TLS_KEY": str(self.certificates / f"{node.name}.key"),
                "GROUP_CA": self.ca_file, "ROUTE_PASSWORD": self.route_password}

    def start(self, timeout: float = 60) -> NatsCluster:
        # Each node's certificate from a CA of the group's own, made by the deployment's
        # script (for 127.0.0.1: every node here is on loopback).
        subprocess.run(["bash", str(deploy_config().parents[1] / "hub" / "make-certs.sh"),
                        str(self.certificates), "group", "127.0.0.1",
                        *(f"{node.name}@127.0.0.1" for node in self.nodes)],
                       check=True, capture_output=True, timeout=60)
        # A port is picked free and bound a moment later by the node: meanwhile another test's
        # process may take it, and that node exits. Its peers then waited out the deadline for
        # a route that could not come (a fresh clone's run, once): a node that exits is said at
        # once, and the cluster starts again on new ports, twice at most.
        for attempt in range(3):
            try:
                for node in self.nodes:
                    self.start_node(node)
                deadline = time.monotonic() + timeout
                for node in self.nodes:
                    self._wait_ready(node, deadline, peers_must_live=True)
                return self
            except NodeExited:
                self.stop()
                if attempt == 2:
                    raise
                for node in self.nodes:
                    node.client_port, node.route_port, node.monitor_port = (
                        free_port(), free_port(), free_port())
            except BaseException:
                self.stop()  # no node outlives a cluster that did not come up
                raise
        return self

    def start_node(self, node: Node) -> None:
        """Start (or start again) one node. (It keeps nothing: nothing to catch up with.)"""
        conf = self.directory / "nats.conf"  # the deployment's, word for word
        if not conf.exists():  # written once: a node starting reads it while others start
            (self.directory / "accounts.conf").write_text(
                accounts_block(self.venues, self.central_password))
            shutil.copyfile(deploy_config(), conf)
        node.log = self.directory / f"{node.name}.log"
        node.process = subprocess.Popen([nats_binary(), "-c", str(conf), "-l", str(node.log)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env={**os.environ, **self.environment(node)})

    def _wait_ready(self, node: Node, deadline: float, peers_must_live: bool = False) -> None:
        """Until the node's client port answers and ``/healthz`` says ok, and its routes to
        every other live node are up (a client's interest reaches them). ``peers_must_live``:
        the cluster is starting, and a peer that exits will never route (NodeExited)."""
        import urllib.request

        last = "no answer"
        others = sum(other.alive for other in self.nodes) - 1
        while time.monotonic() < deadline:
            for watched in (self.nodes if peers_must_live else [node]):
                if watched.process is not None and watched.process.poll() is not None:
                    raise NodeExited(f"nats-server {watched.name} exited: {self.tail(watched)}")
            try:
                with socket.create_connection(("127.0.0.1", node.client_port), timeout=0.2):
                    pass  # (TLS answers later: that the port is open is enough here)
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{node.monitor_port}/healthz",
                        timeout=1) as answer:
                    healthy = answer.status == 200
                if healthy and len(self.monitoring(node, "routez").get("routes") or []) >= others:
                    return
                last = "routes not all up"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(f"nats-server {node.name} not ready: {last}; {self.tail(node)}")

    def wait_ready(self, node: Node, timeout: float = 30) -> None:
        """A node started again (``start_node``): until it serves and routes."""
        self._wait_ready(node, time.monotonic() + timeout)

    def monitoring(self, node: Node, query: str) -> dict[str, Any]:
        """A node's monitoring endpoint (``connz``, ``subsz?subs=1``, ``routez``)."""
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{node.monitor_port}/{query}",
                                    timeout=2) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result

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
