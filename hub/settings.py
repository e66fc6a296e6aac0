"""What a venue hub's parts are built with: the composition root reads the hub's configuration
(tablectl/hub_config.py: ``hub.toml`` and ``tablectl hub``'s flags over it) into these, and
builds the recorder, the floor and the dashboard from them (tablectl/hub_app.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from contract.mqtt import TlsSettings


@dataclass
class HubSettings:
    venue: str
    db: str = "hub.db"
    users: str = "users.toml"
    host: str = "127.0.0.1"
    port: int = 1883
    tls: TlsSettings | None = None  # the hub's identity (CN "hub")
    recorder_tls: TlsSettings | None = None  # the recorder's (CN "recorder")
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    web_cert: str | None = None  # HTTPS for the dashboard
    web_key: str | None = None
    retention_days: float = 90.0  # 0 keeps everything
    # The venue's uplink's state file, when the venue sends to a group (group.cluster): the
    # retention deletes no event the group's centre does not hold yet.
    uplink_state: str | None = None
    reorder_timeout: float = 2.0
    structures: str | None = None  # the house's own blind structures (NAME.toml files)
    profile: str = "tda-2024"  # the house's rules (balancing and breaking tables): name or path
    short_tables: dict[str, int] = field(default_factory=dict)  # tables seating fewer
    locale: str | None = None  # the venue's language for dates and times (None: the browser's)
    time_zone: str | None = None  # the venue's IANA zone for times (None: the browser's)
