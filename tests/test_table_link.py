"""The table's MQTT link (``hardware/mqtt_link.py``) at its connection, without a broker: what
it sends, in what order."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from contract.worker import Connected
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox


class PacketsInOrder:
    """A broker client that keeps what is sent, in order (a broker takes one connection's
    packets in the order they come)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def publish(self, topic: str, payload: Any = None, qos: int = 0,
                retain: bool = False) -> SimpleNamespace:
        self.sent.append(("publish", topic))
        return SimpleNamespace(mid=len(self.sent))

    def subscribe(self, topic: Any, qos: int = 0) -> tuple[int, int]:
        self.sent.append(("subscribe", [name for name, _ in topic]))
        return 0, len(self.sent)


def test_a_table_subscribes_to_its_commands_before_it_says_it_is_online(tmp_path: Path):
    """The hub answers a table's "online" at once (its status question, which measures the
    table's clock; hand-for-hand's state): a table that said it before subscribing could have
    the hub's question dropped by the broker, and its clock was never measured (seen twice in
    one loaded make test: test_broadcast's tables)."""
    outbox = Outbox(str(tmp_path / "t1.db"))
    try:
        link = TableLink(outbox, venue="v", table="t1")
        client = PacketsInOrder()
        link.client = client  # type: ignore[assignment]
        link.handle(Connected(refused=False, reason="Success"))
        status = ("publish", "pkr/v1/v/tables/t1/status")
        assert status in client.sent, client.sent
        said_online = client.sent.index(status)
        subscribed = [topics for kind, topics in client.sent[:said_online] if kind == "subscribe"]
        assert any("pkr/v1/v/tables/t1/cmd/+" in topics for topics in subscribed), client.sent
    finally:
        outbox.close()
