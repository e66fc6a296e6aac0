"""The daemon's configuration: a TOML file, validated whole. Pure (the caller reads the file).

Every problem is reported at once with its key; the daemon does not start half-configured.
The reference, with every key and its default, is ``deploy/table.toml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from contract.schema import NAME
from controller.datafiles import ProblemsError
from controller.gestures import GestureConfig
from controller.inputs import GAMES
from controller.table import DEFAULT_GESTURES, GESTURE_ACTIONS

_ID = NAME  # a table id and a venue are MQTT topic levels: one rule (contract/schema.py)
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")

# simulated: the shoe's firmware on a pty inside the daemon (a PC without a shoe).
SHOE_BACKENDS = ("serial", "nfc", "simulated", "none")
BUTTON_BACKENDS = ("gpio", "mock", "none")
PIN_FACTORIES = ("auto", "lgpio", "rpigpio", "mock")
DISPLAY_BACKENDS = ("ssd1306", "sh1106", "hd44780", "terminal", "none")
BUZZER_BACKENDS = ("tonal", "active", "none")
CLOCK_MODES = ("standalone", "venue")


class ConfigError(ProblemsError):
    """A configuration file that cannot be used; ``problems`` lists every bad key at once."""

    subject = "configuration"


@dataclass
class Config:
    venue: str = "venue"
    table: str = "t1"
    profile: str = "tda-2024"
    game: str = "holdem"
    seats: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5, 6])
    button_seat: int = 1
    deal_gap: float = 3.0
    decks: str | None = None
    clock_mode: str = "standalone"
    clock_structure: str | None = None
    clock_structures: str | None = None  # the house's own NAME.toml structures
    shoe_backend: str = "serial"
    shoe_port: str = "/dev/shoe"
    nfc_path: str = "tty:S0:pn532"
    button_backend: str = "gpio"
    button_pin: int = 17
    pin_factory: str = "auto"
    button_control: str | None = None  # mock pins driven over a socket (the simulator)
    gestures: GestureConfig = field(default_factory=GestureConfig)
    gesture_actions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_GESTURES))
    display_backend: str = "ssd1306"
    display_address: int = 0x3C
    display_port: int = 1
    buzzer_backend: str = "tonal"
    buzzer_pin: int = 18
    volume: str = "normal"
    quiet_hours: tuple[str, str] | None = None
    mqtt_enabled: bool = True
    mqtt_host: str = "127.0.0.1"
    mqtt_port: int = 8883
    mqtt_ca: str | None = None
    mqtt_cert: str | None = None
    mqtt_key: str | None = None
    mqtt_username: str | None = None
    mqtt_password: str | None = None
    data_dir: str = "/var/lib/tablectl"


# section -> key -> (attribute, check)
def _is(kind: Any) -> Any:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) and kind is not bool:
            return f"must be {getattr(kind, '__name__', kind)}, not a boolean"
        if not isinstance(value, kind):
            names = getattr(kind, "__name__", None) or " or ".join(k.__name__ for k in kind)
            return f"must be {names}, not {type(value).__name__}"
        return None
    return check


def _choice(options: tuple[str, ...]) -> Any:
    def check(value: Any) -> str | None:
        return None if value in options else f"{value!r} is not one of {', '.join(options)}"
    return check


def _positive(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return f"must be a number > 0, not {value!r}"
    return None


def _identifier(value: Any) -> str | None:
    if not isinstance(value, str) or not _ID.match(value):
        return f"{value!r}: 1 to 32 letters, digits, '-' or '_'"
    return None


def _seats(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                              and 1 <= s <= 10 for s in value):
        return "must be a list of seat numbers 1 to 10"
    if len(set(value)) != len(value) or len(value) < 2:
        return "needs at least two different seats"
    return None


def _port(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        return f"must be a TCP port number, not {value!r}"
    return None


def _pin(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 27:
        return f"must be a BCM GPIO number 0 to 27, not {value!r}"
    return None


def _quiet_hours(value: Any) -> str | None:
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, str) and _TIME.match(v) for v in value)):
        return 'must be ["HH:MM", "HH:MM"]'
    return None


SCHEMA: dict[str, dict[str, tuple[str, Any]]] = {
    "table": {
        "venue": ("venue", _identifier), "id": ("table", _identifier),
        "profile": ("profile", _is(str)), "game": ("game", _choice(tuple(GAMES))),
        "seats": ("seats", _seats), "button": ("button_seat", _is(int)),
        "deal_gap": ("deal_gap", _positive), "decks": ("decks", _is(str)),
    },
    "clock": {"mode": ("clock_mode", _choice(CLOCK_MODES)),
              "structure": ("clock_structure", _is(str)),
              "structures": ("clock_structures", _is(str))},
    "shoe": {"backend": ("shoe_backend", _choice(SHOE_BACKENDS)), "port": ("shoe_port", _is(str)),
             "nfc": ("nfc_path", _is(str))},
    "button": {"backend": ("button_backend", _choice(BUTTON_BACKENDS)), "pin": ("button_pin", _pin),
               "pin_factory": ("pin_factory", _choice(PIN_FACTORIES)),
               "control": ("button_control", _is(str)),
               "debounce": ("debounce", _positive), "double_tap": ("double_tap", _positive),
               "hold": ("hold", _positive), "long_hold": ("long_hold", _positive),
               "actions": ("gesture_actions", _is(dict))},
    "display": {"backend": ("display_backend", _choice(DISPLAY_BACKENDS)),
                "address": ("display_address", _is(int)), "i2c_port": ("display_port", _is(int))},
    "buzzer": {"backend": ("buzzer_backend", _choice(BUZZER_BACKENDS)), "pin": ("buzzer_pin", _pin),
               "volume": ("volume", _choice(("normal", "quiet", "off"))),
               "quiet_hours": ("quiet_hours", _quiet_hours)},
    "mqtt": {"enabled": ("mqtt_enabled", _is(bool)), "host": ("mqtt_host", _is(str)),
             "port": ("mqtt_port", _port), "ca": ("mqtt_ca", _is(str)),
             "cert": ("mqtt_cert", _is(str)), "key": ("mqtt_key", _is(str)),
             "username": ("mqtt_username", _is(str)), "password": ("mqtt_password", _is(str))},
    "storage": {"data_dir": ("data_dir", _is(str))},
}


def config_from_data(data: dict[str, Any], origin: str) -> Config:
    problems: list[str] = []
    config = Config()
    gesture_values: dict[str, float] = {}
    for section in sorted(set(data) - set(SCHEMA)):
        problems.append(f"{section}: unknown section (known: {', '.join(SCHEMA)})")
    for section, keys in SCHEMA.items():
        values = data.get(section, {})
        if not isinstance(values, dict):
            problems.append(f"{section}: must be a table")
            continue
        for key in sorted(set(values) - set(keys)):
            problems.append(f"{section}.{key}: unknown key (known: {', '.join(keys)})")
        for key, (attribute, check) in keys.items():
            if key not in values:
                continue
            value = values[key]
            problem = check(value)
            if problem:
                problems.append(f"{section}.{key}: {problem}")
                continue
            if attribute in ("debounce", "double_tap", "hold", "long_hold"):
                gesture_values[attribute] = float(value)
            elif attribute == "quiet_hours":
                config.quiet_hours = (value[0], value[1])
            elif attribute == "gesture_actions":
                for gesture, action in value.items():
                    if gesture not in DEFAULT_GESTURES:
                        problems.append(f"button.actions.{gesture}: unknown gesture (known: "
                                        f"{', '.join(DEFAULT_GESTURES)})")
                    elif action not in GESTURE_ACTIONS:
                        problems.append(f"button.actions.{gesture}: {action!r} is not one of "
                                        f"{', '.join(GESTURE_ACTIONS)}")
                    else:
                        config.gesture_actions[gesture] = action
            else:
                setattr(config, attribute, value)
    if gesture_values:
        config.gestures = GestureConfig(**{**config.gestures.__dict__, **gesture_values})
        problems.extend(config.gestures.problems())
    if config.button_seat not in config.seats:
        problems.append(f"table.button: seat {config.button_seat} is not one of the seats "
                        f"{config.seats}")
    if config.mqtt_enabled and config.mqtt_port == 8883 and not (
            config.mqtt_cert or config.mqtt_username):
        problems.append("mqtt: port 8883 is the TLS listener: give ca, cert and key (or "
                        "username and password), or set enabled = false")
    tls = [config.mqtt_ca, config.mqtt_cert, config.mqtt_key]
    if any(tls) and not all(tls):
        problems.append("mqtt: TLS needs ca, cert and key together")
    if config.button_control is not None and config.button_backend != "mock":
        problems.append("button.control: only a mock button is driven over a control socket")
    if problems:
        raise ConfigError(origin, problems)
    return config
