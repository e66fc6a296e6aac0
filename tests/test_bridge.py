"""The documented bridge: a venue's Mosquitto forwards its live view to a central broker (two
local brokers); never the private events nor acknowledgements (the records go through
``tablectl uplink``: test_multi_venue.py)."""

from __future__ import annotations

import json
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from simulators.broker import Broker, free_port
from tests.conftest import subscribed, wait_for

TEMPLATE = Path(__file__).resolve().parents[1] / "deploy" / "hub" / "bridge.conf.template"


def _client(port, messages=None):
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    if messages is not None:
        client.on_message = lambda c, u, m: messages.append((m.topic, json.loads(m.payload)))
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def test_a_venue_broker_bridges_to_the_central_broker(tmp_path):
    central = Broker(tmp_path / "central", name="central").start()
    port = free_port()
    bridge = TEMPLATE.read_text().replace("@VENUE@", "v1").replace(
        "@CENTRAL_HOST@", "127.0.0.1").replace("@CENTRAL_PORT@", str(central.port))
    venue_conf = (f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                  f"log_dest file {tmp_path / 'venue.log'}\n" + bridge)
    venue = Broker(tmp_path / "venue", port=port, config=venue_conf, name="venue").start()
    at_central: list = []
    at_venue: list = []
    clients = []
    try:
        clients.append(central_sub := _client(central.port, at_central))
        subscribed(central_sub, "pkr/v1/v1/#")
        clients.append(venue_sub := _client(venue.port, at_venue))
        subscribed(venue_sub, "pkr/v1/v1/tables/t1/cmd/#")
        # the bridge announces on its notification topic that it is connected
        assert wait_for(lambda: ("pkr/v1/v1/hub/bridge", 1) in at_central)
        clients.append(table := _client(venue.port))
        table.publish("pkr/v1/v1/tables/t1/events", json.dumps({"seq": 1}), qos=1)
        table.publish("pkr/v1/v1/tables/t1/private", json.dumps({"seq": 1}), qos=1)
        assert wait_for(lambda: "pkr/v1/v1/tables/t1/events" in {t for t, _ in at_central})
        clients.append(floor := _client(central.port))
        floor.publish("pkr/v1/v1/tables/t1/cmd/status", json.dumps({"transaction": "x"}),
                      qos=1)
        assert wait_for(lambda: [m for t, m in at_venue if t.endswith("cmd/status")])
        # Commands go in, not out again: no loop back to the central side. The barrier: an
        # event the venue publishes after the command arrived crosses the same bridge out.
        table.publish("pkr/v1/v1/tables/t1/events", json.dumps({"seq": 2}), qos=1)
        assert wait_for(lambda: any(t.endswith("/events") and m == {"seq": 2}
                                    for t, m in at_central))
        assert len([t for t, _ in at_central if t.endswith("cmd/status")]) == 1
        # and the private event, sent before that barrier, never crossed
        assert not [t for t, _ in at_central if t.endswith("/private")]
    finally:
        for client in clients:
            client.loop_stop()
            client.disconnect()
        venue.kill()
        central.kill()
