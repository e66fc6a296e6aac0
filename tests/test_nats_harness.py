"""The lab's NATS cluster (harness/nats_cluster.py) when a port it picked is taken before its
node binds it: another test's process can take a free port between the pick and the bind. The
node exits; the cluster starts again on new ports instead of its peers waiting out the
deadline for a route that cannot come (a fresh clone's run failed so, once)."""

from __future__ import annotations

import socket

from harness.nats_cluster import NatsCluster


def test_a_route_port_taken_before_its_node_binds_it_starts_the_cluster_on_new_ports(tmp_path):
    cluster = NatsCluster(tmp_path, {"a": "a-password"}, "central-password")
    taker = socket.socket()
    taker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    taken = cluster.nodes[1].route_port
    taker.bind(("127.0.0.1", taken))
    taker.listen()
    try:
        cluster.start(timeout=30)
        assert cluster.nodes[1].route_port != taken
        assert all(node.alive for node in cluster.nodes)
        for node in cluster.nodes:  # each routes to its two peers
            assert len(cluster.monitoring(node, "routez").get("routes") or []) >= 2
    finally:
        cluster.stop()
        taker.close()
