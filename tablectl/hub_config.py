"""The hub's configuration file (``hub.toml``): the venue hub (``tablectl hub``), its recorder
and venue clock run alone (``tablectl recorder``, ``tablectl venue-clock``, ``tablectl clock``),
the venue's uplink to the group (``tablectl uplink``) and the group's central recorder
(``tablectl central``) each read the sections they use. Declared here once, as the table's file
is (tablectl/sections.py); each of those commands' flags overrides its key (``tablectl hub
--config hub.toml --port 1883``), and a problem with a value a flag gave names the flag.

The reference, every key with its default: deploy/hub/hub.toml.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from contract.schema import NAME
from controller.datafiles import ProblemsError
from hub.settings import HubSettings
from tablectl.sections import IDENTIFIER, PORT, load, read, section, setting

# A host (a name, an IPv4 address, or an IPv6 one in brackets) and a port; the port's range is
# checked between keys (problems), where the message can say which entry.
HOST_PORT = r"^(\[[0-9A-Fa-f:.]+\]|[^\s:\[\]]+):[0-9]{1,5}$"
# A language tag as browsers take it (Intl): en, en-GB, zh-Hant-TW.
LOCALE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$")
DEFAULT_PROFILE = "tda-2024"  # houses.DEFAULT_PROFILE (this module stays light: no core)
# The files the venue hub reads (the users file is its own: hub/auth.py says what is wrong).
HUB_FILES = ("mqtt.ca", "mqtt.cert", "mqtt.key", "mqtt.recorder_cert", "mqtt.recorder_key",
             "dashboard.cert", "dashboard.key")


class HubConfigError(ProblemsError):
    """A hub configuration (file and flags) that cannot be used: every problem at once."""

    subject = "hub configuration"


@dataclass(frozen=True)
class VenueSection:
    id: str | None = setting(None, **IDENTIFIER)  # the venue in the MQTT topics


@dataclass(frozen=True)
class MqttSection:
    """The venue's broker, and the hub's identities on it (certificates from make-certs.sh)."""

    host: str = "127.0.0.1"
    port: int = setting(1883, **PORT)
    ca: str | None = None
    cert: str | None = None  # the hub's (CN hub)
    key: str | None = None
    recorder_cert: str | None = None  # the recorder's (CN recorder); without: cert and key
    recorder_key: str | None = None


def holds_password(db: Any) -> bool:
    """Whether a database setting carries a password (``postgresql://user:PASSWORD@host/db``,
    ``?password=``, or ``password=`` in a keyword string): the file is then a secret file."""
    if not isinstance(db, str):
        return False
    if "://" in db:
        try:
            parts = urlsplit(db)
        except ValueError:  # (a malformed URL: the database says what is wrong; a user part
            return "@" in db  # may hold a password, so the file is treated as a secret)
        return parts.password is not None or "password" in parse_qs(parts.query)
    return re.search(r"(^|\s)password\s*=", db) is not None


@dataclass(frozen=True)
class StorageSection:
    db: str = setting("hub.db", secret=holds_password)  # a SQLite file or a postgresql:// URL
    retention_days: float = setting(
        90.0, expect="a number of days, 0 (keep all) to 36500", minimum=0, maximum=36500)


@dataclass(frozen=True)
class DashboardSection:
    listen: str = setting("127.0.0.1:8080", expect="HOST:PORT, for example 0.0.0.0:8080",
                      pattern=HOST_PORT)
    cert: str | None = None  # HTTPS
    key: str | None = None
    users: str = "users.toml"  # staff, made with `tablectl hub-user`
    locale: str | None = setting(None, expect="a BCP 47 language tag, for example en-GB",
                             pattern=LOCALE_TAG.pattern)
    time_zone: str | None = None  # IANA, for example Europe/London


@dataclass(frozen=True)
class FloorSection:
    profile: str = DEFAULT_PROFILE  # the house's rules the floor balances tables by
    structures: str | None = None  # the house's own NAME.toml blind structures
    short_tables: dict[str, int] = setting(
        {}, expect="a table of TABLE = SEATS, for example t7 = 6",
        propertyNames={"pattern": NAME.pattern},
        additionalProperties={"type": "integer", "minimum": 1})


@dataclass(frozen=True)
class ClockSection:
    start: str | None = None  # the venue clock's structure at a start without a kept clock


@dataclass(frozen=True)
class GroupSection:
    """The group's cluster, for the venue's uplink or the central recorder."""

    cluster: tuple[str, ...] = setting((), expect="a list of HOST:PORT, the cluster's nodes",
                                   items={"type": "string", "pattern": HOST_PORT})
    user: str | None = None  # venue-VENUE for an uplink, central for the central recorder
    password_file: str | None = None
    ca: str | None = None  # the group CA: TLS, the nodes verified (without: plain TCP)


@dataclass(frozen=True)
class UplinkSection:
    state: str = "uplink.db"  # what the centre holds, table by table


@dataclass(frozen=True)
class CentralSection:
    db: str | None = setting(None, secret=holds_password)  # postgresql:// URL (or SQLite file)
    client_id: str = "central-recorder"


@dataclass(frozen=True)
class HubConfig:
    venue: VenueSection = section(VenueSection)
    mqtt: MqttSection = section(MqttSection)
    storage: StorageSection = section(StorageSection)
    dashboard: DashboardSection = section(DashboardSection)
    floor: FloorSection = section(FloorSection)
    clock: ClockSection = section(ClockSection)
    group: GroupSection = section(GroupSection)
    uplink: UplinkSection = section(UplinkSection)
    central: CentralSection = section(CentralSection)

    def problems(self, refused: frozenset[str] = frozenset()) -> list[str]:
        """What is wrong between keys (each key's own value is the schema's business; a key
        ``refused`` already is not judged again by its default)."""
        found = []
        mqtt, dashboard = self.mqtt, self.dashboard
        tls = [mqtt.ca, mqtt.cert, mqtt.key]
        if any(tls) and not all(tls):
            found.append("mqtt: TLS needs ca, cert and key together (--ca, --cert, --key)")
        if (mqtt.recorder_cert or mqtt.recorder_key) and not (
                mqtt.ca and mqtt.recorder_cert and mqtt.recorder_key):
            found.append("mqtt: the recorder's identity needs ca, recorder_cert and "
                         "recorder_key together (--ca, --recorder-cert, --recorder-key)")
        for node in self.group.cluster:
            if not 0 < int(node.rpartition(":")[2]) < 65536:
                found.append(f"group.cluster: {node!r}: a port is 1 to 65535")
        if not 0 <= int(dashboard.listen.rpartition(":")[2]) < 65536:
            found.append(f"dashboard.listen: {dashboard.listen!r}: a port is 0 (any free one) "
                         "to 65535")
        if bool(dashboard.cert) != bool(dashboard.key):
            found.append("dashboard: HTTPS needs cert and key together (--web-cert, --web-key)")
        if dashboard.time_zone is not None:
            import zoneinfo

            try:
                zoneinfo.ZoneInfo(dashboard.time_zone)
            except (ValueError, zoneinfo.ZoneInfoNotFoundError):
                found.append(f"dashboard.time_zone: must be an IANA time zone, for example "
                             f"Europe/London, not {dashboard.time_zone!r}")
        return found

    def unreadable(self) -> list[str]:
        """The files and folder the venue hub reads that it cannot (each key's): looked at
        before it starts, where a certificate that could not be read looked like the
        dashboard's fault."""
        found = []
        for key in HUB_FILES:
            where, _, name = key.partition(".")
            path = getattr(getattr(self, where), name)
            if path is None:
                continue
            try:
                with open(path, "rb"):
                    pass
            except OSError as exc:
                found.append(f"{key}: cannot read {path} ({exc.strerror}): give the file "
                             "make-certs.sh made, readable by the hub's user")
        structures = self.floor.structures
        if structures is not None and not os.path.isdir(structures):
            found.append(f"floor.structures: {structures} is not a folder: give the folder "
                         "of the house's NAME.toml structures")
        return found

    def hub_settings(self) -> HubSettings:
        """What the venue hub's parts are built with (tablectl/hub_app.py)."""
        from contract.mqtt import tls_settings

        mqtt, dashboard = self.mqtt, self.dashboard
        host, _, port = dashboard.listen.rpartition(":")
        assert self.venue.id is not None, "required"
        return HubSettings(
            venue=self.venue.id, db=self.storage.db, users=dashboard.users, host=mqtt.host,
            port=mqtt.port, tls=tls_settings(mqtt.ca, mqtt.cert, mqtt.key),
            recorder_tls=tls_settings(mqtt.ca, mqtt.recorder_cert, mqtt.recorder_key),
            http_host=host or "127.0.0.1", http_port=int(port), web_cert=dashboard.cert,
            web_key=dashboard.key, retention_days=self.storage.retention_days,
            uplink_state=self.uplink.state if self.group.cluster else None,
            structures=self.floor.structures, profile=self.floor.profile,
            short_tables=dict(self.floor.short_tables), locale=dashboard.locale,
            time_zone=dashboard.time_zone)


# ------------------------------------------------------------------ the flags
@dataclass(frozen=True)
class Flag:
    """A command's flag as an override of a key: ``value`` turns what argparse gave into the
    file's value (None: as given)."""

    key: str
    value: Callable[[Any], Any] | None = None


def _listed(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _short_tables(given: list[str]) -> dict[str, Any]:
    """``--short-table t7=6`` (repeated) as the file's table; a malformed one is kept as its
    text, for the schema to say what is wrong with it."""
    tables: dict[str, Any] = {}
    for item in given:
        table, _, seats = item.partition("=")
        tables[table] = int(seats) if seats.isdigit() else item
    return tables


VENUE = {"venue": Flag("venue.id")}
BROKER = {"host": Flag("mqtt.host"), "port": Flag("mqtt.port"), "ca": Flag("mqtt.ca"),
          "cert": Flag("mqtt.cert"), "key": Flag("mqtt.key")}
CLUSTER = {"cluster": Flag("group.cluster", _listed), "user": Flag("group.user"),
           "password_file": Flag("group.password_file"), "ca": Flag("group.ca")}
FLAGS: dict[str, dict[str, Flag]] = {
    "hub": {**VENUE, **BROKER, "db": Flag("storage.db"), "users": Flag("dashboard.users"),
            "http": Flag("dashboard.listen"), "web_cert": Flag("dashboard.cert"),
            "web_key": Flag("dashboard.key"), "recorder_cert": Flag("mqtt.recorder_cert"),
            "recorder_key": Flag("mqtt.recorder_key"),
            "retention_days": Flag("storage.retention_days"), "start": Flag("clock.start"),
            "structures": Flag("floor.structures"), "profile": Flag("floor.profile"),
            "short_table": Flag("floor.short_tables", _short_tables),
            "locale": Flag("dashboard.locale"), "time_zone": Flag("dashboard.time_zone")},
    "recorder": {**VENUE, **BROKER, "db": Flag("storage.db")},
    "venue-clock": {**VENUE, **BROKER, "start": Flag("clock.start")},
    "clock": {**VENUE, **BROKER},
    "uplink": {**VENUE, "db": Flag("storage.db"), "state": Flag("uplink.state"), **CLUSTER},
    "central": {"db": Flag("central.db"), "client_id": Flag("central.client_id"), **CLUSTER},
}
# What each command cannot do without.
REQUIRED = {"hub": ("venue.id",), "recorder": ("venue.id",), "venue-clock": ("venue.id",),
            "clock": ("venue.id",), "uplink": ("venue.id", "group.cluster"),
            "central": ("central.db", "group.cluster")}


def hub_config(command: str, args: argparse.Namespace) -> HubConfig:
    """``command``'s configuration: the file of ``--config`` (if given), each key a flag gave
    overridden by it; HubConfigError lists every problem."""
    data: dict[str, Any] = read(args.config, HubConfigError) if args.config else {}
    flags = FLAGS[command]
    given: dict[str, tuple[str, Any]] = {}
    for dest, flag in flags.items():
        value = getattr(args, dest, None)
        if value is None or value == []:
            continue
        where, _, name = flag.key.rpartition(".")
        target = data.setdefault(where, {})
        if isinstance(target, dict):  # (a section that is no table is the schema's to say)
            target[name] = flag.value(value) if flag.value is not None else value
        shown = " ".join(value) if isinstance(value, list) else value  # (--short-table's)
        given[flag.key] = ("--" + dest.replace("_", "-"), shown)
    named = {flag.key: "--" + dest.replace("_", "-") for dest, flag in flags.items()}
    required = {where: f"give it in the file or with {named[where]}"
                for where in REQUIRED[command]}
    origin = (f"{args.config} and the command line" if args.config and given else
              args.config or "(the command line)")
    return load(HubConfig, data, origin, HubConfigError, flags=given, required=required,
                source=args.config)


def flag_keys(command: str) -> Mapping[str, str]:
    """Each of ``command``'s flags (argparse's dest) and the key it overrides."""
    return {dest: flag.key for dest, flag in FLAGS[command].items()}
