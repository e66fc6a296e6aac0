"""The MQTT client every part of the project starts from (table link, recorder, hub, venue
clock, tools): paho-mqtt 2 speaking MQTT 5, with the venue's TLS client certificate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TlsSettings:
    ca_file: str
    cert_file: str
    key_file: str


def tls_settings(ca_file: str | None, cert_file: str | None,
                 key_file: str | None) -> TlsSettings | None:
    """TLS with a client certificate when all three files are given, else none."""
    if ca_file and cert_file and key_file:
        return TlsSettings(ca_file, cert_file, key_file)
    return None


def mqtt_client(client_id: str = "", *, tls: TlsSettings | None = None,
                username: str | None = None, password: str | None = None) -> Any:
    """A paho-mqtt 2 client speaking MQTT 5 (callback API version 2), with the venue's TLS
    client certificate or a username when given: every MQTT client of the project starts here."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if tls is not None:
        client.tls_set(ca_certs=tls.ca_file, certfile=tls.cert_file, keyfile=tls.key_file)
    if username is not None:
        client.username_pw_set(username, password)
    return client
