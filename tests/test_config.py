"""The configuration files, declared once (tablectl/sections.py): the table's (tablectl/config.py)
and the hub's (tablectl/hub_config.py), whose commands' flags override the file's keys."""

from __future__ import annotations

import datetime

import pytest

from tablectl.cli import build_parser
from tablectl.config import ConfigError, config_from_data
from tablectl.hub_config import HubConfigError, hub_config


def _hub(tmp_path, text, *argv, command="hub"):
    path = tmp_path / "hub.toml"
    path.write_text(text)
    return hub_config(command, build_parser().parse_args([command, "--config", str(path), *argv]))


def test_a_table_refuses_what_toml_holds_and_no_key_takes_naming_each_key():
    with pytest.raises(ConfigError) as info:
        config_from_data({"table": {"deal_gap": float("nan"), "seats": [1, float("inf")],
                                    "profile": datetime.date(2026, 1, 1)},
                          "mqtt": {"enabled": False}}, "t.toml")
    assert info.value.problems == [
        "table.deal_gap: must be a number of seconds > 0, not nan",
        "table.seats: must be a list of at least two different seat numbers 1 to 10, "
        "not [1, inf]",
        "table.profile: must be a string, not a date (2026-01-01)"]


def test_a_table_given_some_gestures_keeps_the_others_actions():
    config = config_from_data({"button": {"actions": {"tap": "ignore"}},
                               "mqtt": {"enabled": False}}, "t.toml")
    assert config.button.actions == {"tap": "ignore", "double_tap": "end_hand",
                                     "hold": "shot_clock", "long_hold": "call_floor"}


def test_a_flag_overrides_its_key_and_the_file_gives_the_rest(tmp_path):
    config = _hub(tmp_path, '[venue]\nid = "riverside"\n[mqtt]\nhost = "hub.lan"\nport = 8883\n'
                  '[dashboard]\nlisten = "0.0.0.0:8443"\n[floor.short_tables]\nt7 = 6\n',
                  "--port", "1883", "--short-table", "t9=8")
    settings = config.hub_settings()
    assert (settings.venue, settings.host, settings.port) == ("riverside", "hub.lan", 1883)
    assert (settings.http_host, settings.http_port) == ("0.0.0.0", 8443)
    assert settings.short_tables == {"t9": 8}  # the flag's table, as any key's value


def test_every_problem_of_the_file_and_the_flags_at_once_each_named_by_who_gave_it(tmp_path):
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, '[mqtt]\nport = 0\nca = "ca.crt"\n[dashbord]\n[storage]\n'
                       'retention_days = -1\n', "--http", "8080", "--locale", "english please")
    assert info.value.origin.endswith("hub.toml and the command line")
    assert sorted(info.value.problems) == sorted([
        "mqtt.port: must be a TCP port number, not 0",
        "dashbord: unknown section (known: venue, mqtt, storage, dashboard, floor, clock, "
        "group, uplink, central)",
        "storage.retention_days: must be a number of days, 0 (keep all) to 36500, not -1",
        "--http (dashboard.listen): must be HOST:PORT, for example 0.0.0.0:8080, not '8080'",
        "--locale (dashboard.locale): must be a BCP 47 language tag, for example en-GB, "
        "not 'english please'",
        "venue.id: not set: give it in the file or with --venue",
        "mqtt: TLS needs ca, cert and key together (--ca, --cert, --key)"])


def test_each_command_asks_only_for_what_it_needs(tmp_path):
    text = '[venue]\nid = "riverside"\n'
    assert _hub(tmp_path, text, command="venue-clock").venue.id == "riverside"
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, text, command="uplink")
    assert info.value.problems == ["group.cluster: not set: give it in the file or with "
                                   "--cluster"]
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, text, "--cluster", "n1:8883,n2", command="central")
    assert info.value.problems == [
        "--cluster (group.cluster): must be a list of HOST:PORT, the cluster's nodes, "
        "not 'n1:8883,n2'",
        "central.db: not set: give it in the file or with --db"]


def test_a_password_is_never_shown_in_a_problem():
    """The journal and a terminal are read by others: a wrong password says what is wrong
    with it, not what it is."""
    for wrong in (904711, float("nan"), ["hunter2-secret"]):
        with pytest.raises(ConfigError) as info:
            config_from_data({"mqtt": {"password": wrong, "username": "t1",
                                       "port": 1883}}, "t.toml")
        assert info.value.problems == [
            "mqtt.password: wrong: it must be a string (the value given is not shown: a "
            "secret)"]
        assert "904711" not in str(info.value) and "hunter2" not in str(info.value)


def test_a_database_setting_is_hidden_in_a_problem_only_when_it_holds_a_password(tmp_path):
    """storage.db and central.db are secret only with a password in them: a wrong file name is
    shown (it helps to mend it), a wrong value holding a URL with a password is not."""
    path = tmp_path / "hub.toml"

    def problems(text, command="hub"):
        path.write_text(text)
        path.chmod(0o600)  # (the file's mode is another check's)
        with pytest.raises(HubConfigError) as info:
            hub_config(command, build_parser().parse_args([command, "--config", str(path)]))
        return info.value.problems

    assert problems('[venue]\nid = "v"\n[storage]\ndb = ["hub.db"]\n') == [
        "storage.db: must be a string, not an array (['hub.db'])"]
    said = problems('[venue]\nid = "v"\n[storage]\ndb = ["postgresql://u:pw@db/h"]\n')
    assert said == ["storage.db: wrong: it must be a string (the value given is not shown: "
                    "a secret)"]
    said = problems('[central]\ndb = 5\n[group]\ncluster = ["n1:4222"]\n', "central")
    assert said == ["central.db: must be a string, not an integer (5)"]
    said = problems('[central]\ndb = [{url = "postgresql://c@db/g?password=pw"}]\n'
                    '[group]\ncluster = ["n1:4222"]\n', "central")
    assert said == ["central.db: wrong: it must be a string (the value given is not shown: "
                    "a secret)"]


def test_a_cluster_node_and_a_listener_need_a_host_and_a_port_in_range(tmp_path):
    text = '[venue]\nid = "riverside"\n[central]\ndb = "postgresql://c@db/g"\n'
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, text, "--cluster", ":0,h:8883", command="central")  # no host
    assert info.value.problems == [
        "--cluster (group.cluster): must be a list of HOST:PORT, the cluster's nodes, "
        "not ':0,h:8883'"]
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, text, "--cluster", "n1:8883,[::1]:0,h:99999", command="central")
    assert info.value.problems == [
        "--cluster (group.cluster): '[::1]:0': a port is 1 to 65535",
        "--cluster (group.cluster): 'h:99999': a port is 1 to 65535"]
    with pytest.raises(HubConfigError) as info:
        _hub(tmp_path, text, "--http", "h:70000")
    assert info.value.problems == [
        "--http (dashboard.listen): 'h:70000': a port is 0 (any free one) to 65535"]
    config = _hub(tmp_path, text, "--cluster", "n1:8883,[fd00::2]:8883", command="central")
    assert config.group.cluster == ("n1:8883", "[fd00::2]:8883")


def test_a_button_control_socket_longer_than_unix_allows_is_a_configuration_error():
    """Bound, a socket path over 107 bytes fails deep in the daemon's start ("AF_UNIX path
    too long", seen when a test's directories ran deep): the configuration says so first."""
    def control(path: str) -> dict:
        return {"button": {"backend": "mock", "control": path}, "mqtt": {"enabled": False}}

    config_from_data(control("/run/t/" + "d" * 95 + ".sock"), "t.toml")  # 107 bytes: fine
    with pytest.raises(ConfigError) as info:
        config_from_data(control("/run/t/" + "d" * 96 + ".sock"), "t.toml")
    assert info.value.problems == [
        "button.control: 108 bytes, longer than a Unix socket's path may be (107): give a "
        "shorter path"]


def test_a_host_shoe_clock_without_the_serial_backend_is_a_configuration_error():
    """Only the serial backend reads ``shoe.clock``: "host" with another is a mistake the
    configuration names (listed with the others, at once), not a key silently ignored."""
    def table(backend: str, clock: str, **more: dict) -> dict:
        return {"shoe": {"backend": backend, "clock": clock}, "mqtt": {"enabled": False},
                **more}

    assert config_from_data(table("serial", "host"), "t.toml").shoe.clock == "host"
    for backend in ("nfc", "simulated", "none"):
        assert config_from_data(table(backend, "shoe"), "t.toml").shoe.backend == backend
        with pytest.raises(ConfigError) as info:  # with another problem: both said
            config_from_data(table(backend, "host", button={
                "backend": "gpio", "control": "/run/t/b.sock"}), "t.toml")
        assert info.value.problems == [
            "button.control: only a mock button is driven over a control socket",
            f'shoe.clock: "host" is read by the serial backend only, not "{backend}" (a '
            'simulated shoe\'s clock is always the host\'s): leave it "shoe" or set '
            'shoe.backend = "serial"']
