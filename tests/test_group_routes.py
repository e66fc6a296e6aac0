"""The group's cluster closed to strangers (issue 43, item 1): the cluster exactly as
``deploy/cluster/nats.conf`` configures it (``harness.nats_cluster``), and three nats-servers
of an attacker's, each configured as a route of the deployment's cluster name with the group's
accounts laid out as the deployment's (their own passwords, on their own servers), dialling
every node's route port:

- one with no TLS and no route password (the attack as found: it joined and heard everything);
- one with a certificate from another CA (a venue's own, made by the same script) that trusts
  the group's public CA certificate, and the route password as if it had leaked;
- one with a genuine certificate from the group's CA (a node's, stolen) and a guessed password.

Each is refused by every node, again and again (the barrier: each node's log says so for each
kind twice); then no node has a route but its two peers, no stranger has any, the attacker's
"central" on a stranger hears nothing of venue b's events (only its own server's forgery), and
the attacker's event in venue b's name reaches nobody, while b's own event, published after
it, reaches the real centre."""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from harness import nats_cluster
from harness.nats_cluster import CLUSTER_NAME, ROUTE_USER, NatsCluster, accounts_block
from simulators.broker import free_port
from tests.conftest import wait_for

MAKE_CERTS = Path(__file__).resolve().parents[1] / "deploy" / "hub" / "make-certs.sh"
# What each node logs when it refuses one kind of stranger (nats-server 2.9). The stranger with
# another CA's certificate offers none: Go's TLS client sends only a certificate from a CA the
# node asks for.
REFUSED = {
    "plain": "TLS route handshake error: tls: first record does not look like a TLS handshake",
    "other-ca": "TLS route handshake error: tls: client didn't provide a certificate",
    "stolen-cert": f'authentication error - User "{ROUTE_USER}"',
}


class Stranger:
    """An attacker's nats-server configured as a route of the group's cluster."""

    def __init__(self, directory: Path, kind: str, cluster: NatsCluster, tls: str,
                 credentials: str) -> None:
        self.kind = kind
        self.client_port, self.monitor_port = free_port(), free_port()
        self.log = directory / f"{kind}.log"
        routes = ", ".join(
            json.dumps(f"nats-route://{credentials}127.0.0.1:{node.route_port}")
            for node in cluster.nodes)
        config = directory / f"{kind}.conf"
        config.write_text(
            f"server_name: {kind}\nlisten: 127.0.0.1:{self.client_port}\n"
            f"http: 127.0.0.1:{self.monitor_port}\n"
            f"cluster {{\n  name: {CLUSTER_NAME}\n  listen: 127.0.0.1:{free_port()}\n"
            f"  {tls}\n  routes: [{routes}]\n}}\n"
            # The group's accounts by name, the attacker's own passwords on his own server.
            + accounts_block({"a": "attacker", "b": "attacker"}, "attacker"))
        self.process = subprocess.Popen(
            [nats_cluster.nats_binary(), "-c", str(config), "-l", str(self.log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def routes(self) -> list[dict[str, object]]:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/routez",
                                    timeout=2) as answer:
            found: list[dict[str, object]] = json.loads(answer.read()).get("routes") or []
            return found

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


NEVER = "0001-01-01T00:00:00Z"  # nats-server's time for "never" (a route nothing crossed)


def _joined(route: dict[str, object]) -> bool:
    """A route that became one: something crossed it. A stranger lists the route it dials
    while the node is still refusing it (its TLS accepted, its password not yet checked):
    nothing crossed, and it is gone at the refusal (a loaded run caught one in that moment)."""
    return bool(route.get("in_msgs") or route.get("out_msgs") or route.get("subscriptions")
                or route.get("last_activity", NEVER) != NEVER)


def _tls(certificate: Path, key: Path, ca: str) -> str:
    return (f"tls {{cert_file: {json.dumps(str(certificate))}, "
            f"key_file: {json.dumps(str(key))}, ca_file: {json.dumps(ca)}}}")


def _refusals(cluster: NatsCluster) -> dict[str, list[int]]:
    """How often each node's log says it refused each kind of stranger."""
    logs = [node.log.read_text() for node in cluster.nodes]
    return {kind: [log.count(line) for log in logs] for kind, line in REFUSED.items()}


@pytest.fixture
def cluster(tmp_path):
    group = NatsCluster(tmp_path / "group", {"a": "a-secret", "b": "b-secret"}, "c-secret")
    group.start()
    yield group
    group.stop()


def test_no_stranger_becomes_a_route_hears_a_venue_or_speaks_for_one(cluster, tmp_path):
    evil = tmp_path / "evil"
    evil.mkdir()
    # A certificate from another CA (a venue's own), for the stranger's address.
    subprocess.run(["bash", str(MAKE_CERTS), str(evil / "venue-ca"), "evil", "127.0.0.1",
                    "s1@127.0.0.1"], check=True, capture_output=True, timeout=60)
    # A genuine node certificate of the group's (as if stolen from a node).
    subprocess.run(["bash", str(MAKE_CERTS), str(cluster.certificates), "group", "127.0.0.1",
                    "s2@127.0.0.1"], check=True, capture_output=True, timeout=60)
    strangers = [
        Stranger(evil, "plain", cluster, "", ""),
        Stranger(evil, "other-ca", cluster,
                 _tls(evil / "venue-ca" / "s1.crt", evil / "venue-ca" / "s1.key",
                      cluster.ca_file),
                 f"{ROUTE_USER}:{cluster.route_password}@"),
        Stranger(evil, "stolen-cert", cluster,
                 _tls(cluster.certificates / "s2.crt", cluster.certificates / "s2.key",
                      cluster.ca_file),
                 f"{ROUTE_USER}:guessed@"),
    ]
    try:
        heard_by_attacker, heard_by_centre = asyncio.run(_attack(cluster, strangers))
        # No node has any route but its two peers; no stranger has any.
        assert all(stranger.process.poll() is None for stranger in strangers)
        ids = {cluster.monitoring(node, "varz")["server_id"]: node.name
               for node in cluster.nodes}
        for node in cluster.nodes:
            routes = cluster.monitoring(node, "routez").get("routes") or []
            peers = sorted(ids.get(str(route.get("remote_id")), "a stranger") for route in routes)
            assert peers == sorted(set(ids.values()) - {node.name}), (node.name, routes)
        for stranger in strangers:
            assert stranger.routes() == [], (stranger.kind, stranger.routes())
        # Each attacker hears its own server's forgery (its subscription works), nothing else.
        assert heard_by_attacker == ["forged"] * len(strangers), heard_by_attacker
        assert heard_by_centre == ["b's own"], heard_by_centre
    finally:
        for stranger in strangers:
            stranger.stop()


async def _attack(cluster: NatsCluster,
                  strangers: list[Stranger]) -> tuple[list[str], list[str]]:
    import nats

    group_tls = ssl.create_default_context(cafile=cluster.ca_file)
    centre = await nats.connect(f"tls://{cluster.nodes[0].address}", user="central",
                                password="c-secret", tls=group_tls, allow_reconnect=False)
    venue_b = await nats.connect(f"tls://{cluster.nodes[1].address}", user="venue-b",
                                 password="b-secret", tls=group_tls, allow_reconnect=False)
    attackers = [await nats.connect(f"nats://127.0.0.1:{stranger.client_port}",
                                    user="central", password="attacker",
                                    allow_reconnect=False) for stranger in strangers]
    forgers = [await nats.connect(f"nats://127.0.0.1:{stranger.client_port}",
                                  user="venue-b", password="attacker",
                                  allow_reconnect=False) for stranger in strangers]
    heard_by_attacker: list[str] = []
    heard_by_centre: list[str] = []

    async def attacker_heard(msg) -> None:
        heard_by_attacker.append(msg.data.decode())

    async def centre_heard(msg) -> None:
        heard_by_centre.append(msg.data.decode())

    try:
        for attacker in attackers:
            await attacker.subscribe("pkr.v1.*.tables.*.private", cb=attacker_heard)
            await attacker.flush()
        await centre.subscribe("pkr.v1.*.tables.*.private", cb=centre_heard)
        await centre.flush()
        # The barrier: every node has refused every kind of stranger at least twice (each
        # retries its routes every second), so a stranger that could join would have.
        deadline = time.monotonic() + 30
        while not all(min(counts) >= 2 for counts in _refusals(cluster).values()):
            for stranger in strangers:
                assert not [route for route in stranger.routes() if _joined(route)], (
                    f"the {stranger.kind} stranger became a route")
            assert time.monotonic() < deadline, (_refusals(cluster), cluster.tail(
                cluster.nodes[0]))
            await asyncio.sleep(0.1)
        for forger in forgers:
            await forger.publish("pkr.v1.b.tables.t1.private", b"forged")
            await forger.flush()
        await venue_b.publish("pkr.v1.b.tables.t1.private", b"b's own")
        await venue_b.flush()
        deadline = time.monotonic() + 10
        while "b's own" not in heard_by_centre:
            assert time.monotonic() < deadline, heard_by_centre
            await asyncio.sleep(0.02)
        # Each attacker's own forgery comes from its own server, not after the group's
        # message: waited for in its own right (one was once still on its way).
        while heard_by_attacker.count("forged") < len(strangers):
            assert time.monotonic() < deadline, heard_by_attacker
            await asyncio.sleep(0.02)
        return heard_by_attacker, heard_by_centre
    finally:
        for client in (centre, venue_b, *attackers, *forgers):
            await client.close()


def test_a_node_started_again_rejoins_its_peers(cluster):
    """Route authorization does not lock the group's own nodes out: a node SIGKILLed and
    started again is a route of both others again."""
    node = cluster.nodes[2]
    cluster.kill_node(node)
    cluster.start_node(node)
    cluster.wait_ready(node)
    assert wait_for(lambda: all(len(cluster.monitoring(n, "routez").get("routes") or []) == 2
                                for n in cluster.nodes), timeout=30), cluster.tail(node)
