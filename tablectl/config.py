"""The table's configuration: a TOML file of sections, declared here once (tablectl/sections.py
derives the schema, checks a file whole and builds these). Every problem is reported at once
with its key; the daemon does not start half-configured. The reference, with every key and its
default, is ``deploy/table.toml`` (tests/test_deploy.py holds the two together).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from controller.datafiles import ProblemsError
from controller.gestures import GestureConfig
from controller.inputs import GAMES
from controller.table import DEFAULT_GESTURES, GESTURE_ACTIONS
from tablectl.sections import IDENTIFIER, PORT, load, read, section, setting

SECONDS: dict[str, Any] = {"expect": "a number of seconds > 0", "exclusiveMinimum": 0}
PIN: dict[str, Any] = {"expect": "a BCM GPIO number 0 to 27", "minimum": 0, "maximum": 27}
TIME = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
UNIX_SOCKET_PATH_MAX = 107  # bytes: sun_path is 108 on Linux, its last for the NUL


class ConfigError(ProblemsError):
    """A configuration file that cannot be used; ``problems`` lists every bad key at once."""

    subject = "configuration"


@dataclass(frozen=True)
class TableSection:
    venue: str = setting("venue", **IDENTIFIER)
    id: str = setting("t1", **IDENTIFIER)
    profile: str = "tda-2024"  # a built-in profile or a .toml path
    game: str = setting("holdem", enum=list(GAMES))
    seats: tuple[int, ...] = setting(
        (1, 2, 3, 4, 5, 6), expect="a list of at least two different seat numbers 1 to 10",
        items={"type": "integer", "minimum": 1, "maximum": 10}, minItems=2, uniqueItems=True)
    button: int = 1
    deal_gap: float = setting(3.0, **SECONDS)
    decks: str | None = None  # the enrolled UID table


@dataclass(frozen=True)
class ClockSection:
    mode: Literal["standalone", "venue"] = "standalone"
    structure: str | None = None  # standalone: started at the first start
    structures: str | None = None  # the house's own NAME.toml structures


@dataclass(frozen=True)
class ShoeSection:
    # simulated: the shoe's firmware on a pty inside the daemon (a PC without a shoe).
    backend: Literal["serial", "nfc", "simulated", "none"] = "serial"
    port: str = "/dev/shoe"
    nfc: str = "tty:serial0:pn532"  # the Pi's GPIO UART, whichever it is (docs/pi.md)
    # serial: whose clock the shoe's milliseconds are. "shoe": its own, the mapping onto the
    # daemon's time estimated from the link's delays; "host": this machine's monotonic clock
    # (the simulated shoe on a pty beside the daemon, as the simulated venue runs it), mapped
    # exactly, so that a daemon starved while a message waits cannot move the cards' times.
    clock: Literal["shoe", "host"] = "shoe"


@dataclass(frozen=True)
class ButtonSection:
    backend: Literal["gpio", "mock", "none"] = "gpio"
    pin: int = setting(17, **PIN)
    pin_factory: Literal["auto", "lgpio", "rpigpio", "mock"] = "auto"
    control: str | None = None  # a mock pin driven over a socket (the simulator's finger)
    debounce: float = setting(GestureConfig.debounce, **SECONDS)
    double_tap: float = setting(GestureConfig.double_tap, **SECONDS)
    hold: float = setting(GestureConfig.hold, **SECONDS)
    long_hold: float = setting(GestureConfig.long_hold, **SECONDS)
    # Each gesture's action; the gestures not named keep theirs.
    actions: dict[str, str] = setting(dict(DEFAULT_GESTURES), properties={
        gesture: {"enum": list(GESTURE_ACTIONS)} for gesture in DEFAULT_GESTURES},
        additionalProperties=False)

    @property
    def gestures(self) -> GestureConfig:
        return GestureConfig(debounce=self.debounce, double_tap=self.double_tap,
                             hold=self.hold, long_hold=self.long_hold)


@dataclass(frozen=True)
class DisplaySection:
    backend: Literal["ssd1306", "sh1106", "hd44780", "terminal", "none"] = "ssd1306"
    address: int = 0x3C
    i2c_port: int = 1


@dataclass(frozen=True)
class BuzzerSection:
    backend: Literal["tonal", "active", "none"] = "tonal"
    pin: int = setting(18, **PIN)
    volume: Literal["normal", "quiet", "off"] = "normal"
    quiet_hours: tuple[str, str] | None = setting(None, expect='["HH:MM", "HH:MM"]',
                                              items={"type": "string", "pattern": TIME})


@dataclass(frozen=True)
class MqttSection:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = setting(8883, **PORT)
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    username: str | None = None
    password: str | None = setting(None, secret=True)


@dataclass(frozen=True)
class StorageSection:
    data_dir: str = "/var/lib/tablectl"  # the outbox and journal (~: the user's home)


@dataclass(frozen=True)
class Config:
    table: TableSection = section(TableSection)
    clock: ClockSection = section(ClockSection)
    shoe: ShoeSection = section(ShoeSection)
    button: ButtonSection = section(ButtonSection)
    display: DisplaySection = section(DisplaySection)
    buzzer: BuzzerSection = section(BuzzerSection)
    mqtt: MqttSection = section(MqttSection)
    storage: StorageSection = section(StorageSection)

    def problems(self, refused: frozenset[str] = frozenset()) -> list[str]:
        """What is wrong between keys (each key's own value is the schema's business); a rule
        on a key ``refused`` already (its default stands in) is left for the next reading."""
        def judged(*keys: str) -> bool:
            return not refused.intersection(keys)

        found = []
        if judged("button.debounce", "button.double_tap", "button.hold", "button.long_hold"):
            found += self.button.gestures.problems()
        table, mqtt = self.table, self.mqtt
        if judged("table.button", "table.seats") and table.button not in table.seats:
            found.append(f"table.button: seat {table.button} is not one of the seats "
                         f"{list(table.seats)}")
        if judged("mqtt.enabled", "mqtt.port", "mqtt.cert", "mqtt.username") and \
                mqtt.enabled and mqtt.port == 8883 and not (mqtt.cert or mqtt.username):
            found.append("mqtt: port 8883 is the TLS listener: give ca, cert and key (or "
                         "username and password), or set enabled = false")
        tls = [mqtt.ca, mqtt.cert, mqtt.key]
        if judged("mqtt.ca", "mqtt.cert", "mqtt.key") and any(tls) and not all(tls):
            found.append("mqtt: TLS needs ca, cert and key together")
        if judged("button.control", "button.backend") and \
                self.button.control is not None and self.button.backend != "mock":
            found.append("button.control: only a mock button is driven over a control socket")
        shoe = self.shoe
        if judged("shoe.clock", "shoe.backend") and shoe.clock == "host" and \
                shoe.backend != "serial":
            found.append(f'shoe.clock: "host" is read by the serial backend only, not '
                         f'"{shoe.backend}" (a simulated shoe\'s clock is always the host\'s): '
                         'leave it "shoe" or set shoe.backend = "serial"')
        control = self.button.control
        if judged("button.control") and control is not None and \
                len(os.fsencode(control)) > UNIX_SOCKET_PATH_MAX:
            found.append(f"button.control: {len(os.fsencode(control))} bytes, longer than a "
                         f"Unix socket's path may be ({UNIX_SOCKET_PATH_MAX}): give a shorter "
                         "path")
        return found


def config_from_data(data: dict[str, Any], origin: str, source: str | None = None) -> Config:
    return load(Config, data, origin, ConfigError, source=source)


def load_config(path: str | Path) -> Config:
    """The configuration file, with ``~`` in storage.data_dir as the user's home (a PC's
    configuration keeps its outbox there); refused if it holds mqtt.password and others may
    read it."""
    config = config_from_data(read(str(path), ConfigError), str(path), source=str(path))
    return replace(config, storage=replace(
        config.storage, data_dir=os.path.expanduser(config.storage.data_dir)))
