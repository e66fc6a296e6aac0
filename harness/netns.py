"""A venue's network on one machine: each host (the broker, the hub, every table) a network
namespace of its own, wired by a veth pair to a bridge in a "switch" namespace, as the
venue's hosts hang off one switch. Nothing is added to the machine's own namespace.

Faults, from the switch's side or inside a host, the way a venue has them:

- ``cut`` / ``heal``: the switch port goes down (a cable pulled, a table's Wi-Fi gone): every
  packet to and from the host is dropped until it comes back; the host's own sockets stay open.
- ``loss``: nftables in the host drops a share of its packets at random, both ways
  (``numgen random``: the kernel has no ``netem`` qdisc here, nftables does the same drop).

Latency is a delaying proxy (``harness.delay_proxy``) run in the host, between its daemon
and the broker. Everything runs ``ip`` and ``nft`` (iproute2 and nftables): as root only.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field

SUBNET = "10.77.0"  # each network is a namespace of its own: every run can use the same


def unavailable() -> str | None:
    """Why namespaces cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    for tool, package in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            return f"{tool} is not installed (apt-get install {package})"
    probe = f"pkr-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add is not permitted here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _run(*argv: str, stdin: str | None = None) -> None:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}")


@dataclass
class Host:
    name: str  # broker, hub, t1...
    namespace: str
    address: str
    port: str  # the switch's end of the host's cable
    lossy: bool = field(default=False)

    def prefix(self) -> list[str]:
        """A command run as ``prefix() + argv`` runs inside this host."""
        return ["ip", "netns", "exec", self.namespace]


class Network:
    """Hosts on one switch; ``close`` removes every namespace (and so every interface)."""

    def __init__(self, tag: str | None = None) -> None:
        self.tag = tag or secrets.token_hex(3)
        self.switch = f"pkr-{self.tag}-switch"
        self.hosts: dict[str, Host] = {}
        _run("ip", "netns", "add", self.switch)
        _run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", self.switch, "link", "set", "br0", "up")

    def add(self, name: str) -> Host:
        number = len(self.hosts) + 1
        host = Host(name, f"pkr-{self.tag}-{name}", f"{SUBNET}.{number}", f"p{number}")
        _run("ip", "netns", "add", host.namespace)
        # Both ends made where they live: no interface ever appears in the machine's namespace.
        _run("ip", "-n", self.switch, "link", "add", host.port, "type", "veth", "peer", "name",
             "eth0", "netns", host.namespace)
        _run("ip", "-n", self.switch, "link", "set", host.port, "master", "br0", "up")
        _run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _run("ip", "-n", host.namespace, "link", "set", "eth0", "up")
        _run("ip", "-n", host.namespace, "link", "set", "lo", "up")
        self.hosts[name] = host
        return host

    def cut(self, name: str) -> None:
        _run("ip", "-n", self.switch, "link", "set", self.hosts[name].port, "down")

    def heal(self, name: str) -> None:
        _run("ip", "-n", self.switch, "link", "set", self.hosts[name].port, "up")

    def loss(self, name: str, percent: int) -> None:
        """Drop ``percent`` % of the host's packets at random, sent and received."""
        if not 0 <= percent <= 100:
            raise ValueError(f"a loss of {percent} %: 0 to 100")
        host = self.hosts[name]
        rules = ("table inet venue_fault {\n"
                 " chain ingress { type filter hook input priority 0; "
                 f"iifname \"eth0\" numgen random mod 100 < {percent} drop; }}\n"
                 " chain egress { type filter hook output priority 0; "
                 f"oifname \"eth0\" numgen random mod 100 < {percent} drop; }}\n"
                 "}\n")
        if host.lossy:
            _run("ip", "netns", "exec", host.namespace, "nft", "delete", "table", "inet",
                 "venue_fault")
        _run("ip", "netns", "exec", host.namespace, "nft", "-f", "-", stdin=rules)
        host.lossy = True

    def close(self) -> None:
        for host in self.hosts.values():
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.switch], capture_output=True)
        self.hosts.clear()
