"""Deployment files: the systemd unit verifies, the shell scripts pass shellcheck, the
reference configuration is valid, and bad configuration is reported whole."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tablectl.config import ConfigError, config_from_data

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


@pytest.mark.parametrize("unit_path", ["tablectl.service", "hub/tablectl-hub.service",
                                       "hub/tablectl-uplink.service",
                                       "cluster/tablectl-central.service"])
def test_the_unit_files_pass_systemd_analyze_verify(tmp_path, unit_path):
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: `make test` installs systemd"
    tablectl = Path(sys.executable).with_name("tablectl")
    unit = (DEPLOY / unit_path).read_text().replace(
        "/opt/tablectl/venv/bin/tablectl", str(tablectl))
    name = Path(unit_path).name
    (tmp_path / name).write_text(unit)
    result = subprocess.run([analyze, "verify", str(tmp_path / name)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Restart=on-failure" in unit
    assert "Type=notify" in unit and "WatchdogSec=" in unit


@pytest.mark.parametrize("unit_path,command,flags", [
    ("hub/tablectl-hub.service", "hub", ["--venue", "riverside"]),
    ("hub/tablectl-uplink.service", "uplink", ["--venue", "riverside", "--cluster", "n1:8883"]),
    ("cluster/tablectl-central.service", "central", ["--db", "postgresql://c@db/pkr",
                                                     "--cluster", "n1:8883,n2:8883"])])
def test_the_hub_and_group_units_read_a_hub_configuration(unit_path, command, flags):
    """Each unit runs its command on a configuration file (the hub's reference, in the test,
    with what a deployment must add given as flags over it)."""
    from tablectl.cli import build_parser
    from tablectl.hub_config import hub_config

    unit = (DEPLOY / unit_path).read_text()
    line = unit.split("ExecStart=", 1)[1].split("\n", 1)[0]
    words = line.split()[1:]
    assert words[:2] == [command, "--config"] and len(words) == 3, line
    args = build_parser().parse_args([command, "--config", str(DEPLOY / "hub" / "hub.toml"),
                                      *flags])
    config = hub_config(command, args)
    assert config.storage.db == "hub.db" and config.uplink.state == "uplink.db"


def test_the_cluster_accounts_are_laid_out_as_the_tests_run_them():
    """deploy/cluster/accounts.conf is what harness.nats_cluster writes for the same users:
    the permissions the tests check (a venue publishes only under its own topics) are the
    deployment's."""
    import re

    from harness.nats_cluster import accounts_block

    text = (DEPLOY / "cluster" / "accounts.conf").read_text()
    block = text[text.index("accounts {"):]
    users = re.findall(r'\{user: "([^"]+)", password: "([^"]+)"', block)
    venues = {name.removeprefix("venue-"): password for name, password in users
              if name.startswith("venue-")}
    central = dict(users)["central"]
    assert block == accounts_block(venues, central)


def test_a_cluster_node_environment_sets_what_nats_conf_reads(tmp_path):
    """deploy/cluster/pkr-node.env (a node's EnvironmentFile) sets every variable that
    nats.conf reads and no other, as the harness does for the nodes the tests run; the route
    password keeps the template's rule (nats-server reads a value starting with a digit as a
    number) and is the one in every route URL."""
    from harness.nats_cluster import NatsCluster

    conf = (DEPLOY / "cluster" / "nats.conf").read_text()
    wanted = set(re.findall(r"\$([A-Z][A-Z0-9_]*)", re.sub(r"#.*", "", conf)))
    template = dict(line.split("=", 1) for line in
                    (DEPLOY / "cluster" / "pkr-node.env").read_text().splitlines()
                    if line and not line.startswith("#"))
    assert set(template) == wanted
    cluster = NatsCluster(tmp_path, {"a": "x"}, "y")
    assert set(cluster.environment(cluster.nodes[0])) == wanted
    password = template["ROUTE_PASSWORD"]
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", password)
    assert all(template[f"ROUTE_{i}"].startswith(f"nats-route://pkr-route:{password}@")
               for i in (1, 2, 3))
    dropin = (DEPLOY / "cluster" / "nats-server.conf").read_text()
    assert "EnvironmentFile=/etc/nats/pkr-node.env" in dropin


@pytest.mark.parametrize("script", ["deploy/install.sh", "deploy/hub/make-certs.sh", ".ci/run"])
def test_shell_scripts_pass_shellcheck(script):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck is missing: `make test` installs it"
    result = subprocess.run([shellcheck, str(ROOT / script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_the_reference_configuration_is_valid():
    config = config_from_data(tomllib.loads((DEPLOY / "table.toml").read_text()), "table.toml")
    assert config.shoe.port == "/dev/shoe" and config.mqtt.port == 8883


# The reference's values that are an example of a deployment, not the default.
EXAMPLES = {"mqtt.host", "mqtt.ca", "mqtt.cert", "mqtt.key", "shoe.nfc"}


@pytest.mark.parametrize("reference,model", [("table.toml", "tablectl.config:Config"),
                                             ("hub/hub.toml", "tablectl.hub_config:HubConfig")])
def test_the_reference_configuration_names_every_key_with_its_default(reference, model):
    """Each key of the configuration's model is in its reference file, set to its default (a
    key without one commented out), and the reference sets no other."""
    import importlib

    from tablectl.sections import defaults

    module, name = model.split(":")
    expected = defaults(getattr(importlib.import_module(module), name))
    text = (DEPLOY / reference).read_text()
    given = tomllib.loads(text)
    commented, lines, section_now = set(), {}, ""
    for line in text.splitlines():  # the keys commented out, and each key's line, by section
        header = re.match(r"^\[([\w.]+)\]", line)
        if header:
            section_now = header[1]
        elif found := re.match(r"^# ?(\w+) = ", line):
            commented.add(f"{section_now}.{found[1]}")
        elif found := re.match(r"^(\w+) = ", line):
            lines[f"{section_now}.{found[1]}"] = line
    for section, keys in expected.items():
        for key, default in keys.items():
            where = f"{section}.{key}"
            if key not in given.get(section, {}):
                assert default is None and where in commented, f"{where} is not in {reference}"
            else:
                value = given[section][key]
                if (tuple(value) if isinstance(value, list) else value) != default:
                    # what a venue sets instead of the default: said so on its line
                    assert where in EXAMPLES and "example" in lines[where] and \
                        "default" in lines[where], where
    assert {f"{s}.{k}" for s, keys in given.items() for k in keys} <= {
        f"{s}.{k}" for s, keys in expected.items() for k in keys}


def test_the_pc_configuration_runs_a_whole_simulated_table(tmp_path):
    """deploy/pc.toml: the daemon runs the shoe's firmware on a pty of its own and reaches it
    through the serial link (the shoe's "ok" event is its HELLO); its outbox is under ~, the
    pty's folder is gone after a SIGTERM."""
    import json
    import os
    import signal
    import sqlite3

    from tests.conftest import wait_for

    home, scratch = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    scratch.mkdir()
    env = dict(os.environ, HOME=str(home), TMPDIR=str(scratch))
    daemon = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "run", "--config",
                               str(ROOT / "deploy" / "pc.toml")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    outbox = home / ".local" / "state" / "tablectl-pc" / "pc1.db"

    def shoe_said_hello() -> bool:
        try:  # the file may be there before its tables are
            with sqlite3.connect(f"file:{outbox}?mode=ro", uri=True) as db:
                events = [json.loads(row[0]) for row in db.execute("SELECT event FROM outbox")]
        except sqlite3.OperationalError:
            return False
        return {"type": "shoe", "state": "ok"}.items() <= next(
            (e for e in events if e["type"] == "shoe"), {}).items()

    try:
        assert wait_for(shoe_said_hello, timeout=30), "the simulated shoe never said HELLO"
        assert [p.name[:14] for p in scratch.iterdir()] == ["tablectl-shoe-"]
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, _ = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, out
    assert "Traceback" not in out and "|#- SHOE ok" in out
    assert list(scratch.iterdir()) == []


def test_every_configuration_error_is_listed_with_its_key():
    with pytest.raises(ConfigError) as info:
        config_from_data({
            "table": {"id": "t 1", "seats": [1], "button": 9, "deal_gap": -1, "colour": "red"},
            "shoe": {"backend": "bluetooth"},
            "button": {"pin": 40, "hold": 5.0, "long_hold": 2.0,
                       "actions": {"tap": "explode", "wink": "close_round"}},
            "display": {"backend": "hologram"},
            "mqtt": {"port": 8883, "ca": "/x"},
            "lights": {},
        }, "bad.toml")
    text = "\n".join(info.value.problems)
    for key in ("lights", "table.colour", "table.id", "table.seats", "table.deal_gap",
                "shoe.backend", "button.pin", "button.actions.tap", "button.actions.wink",
                "button.long_hold", "display.backend", "mqtt: TLS needs"):
        assert key in text, key
    # The button's seat is not judged against the default seats while the file's are refused
    # (seat 9 is no problem at a table of ten): that waits for seats the file gives right.
    assert "table.button" not in text


def test_tablectl_run_refuses_a_bad_configuration(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t1"\nseats = [1, 2]\nbutton = 9\n[shoe]\nbackend = "x"\n')
    result = subprocess.run([sys.executable, "-m", "tablectl.cli", "run", "--config",
                             str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "table.button" in result.stderr and "shoe.backend" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel deploy/install.sh installs, built from the checkout's files as a clone with
    this tree's changes holds them: not from the checkout itself, where a build/ folder left by
    an earlier build would carry modules moved or removed since into the wheel (setuptools
    packs what its build/lib holds)."""
    directory = tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    source = directory / "source"
    for name in listed.decode().split("\0"):
        if name and (ROOT / name).is_file():  # not a tracked file deleted in this tree
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(directory), str(source)], check=True, capture_output=True, timeout=300)
    (built,) = directory.glob("*.whl")
    return built


def test_the_installed_package_carries_what_it_reads_at_run_time(wheel):
    """deploy/install.sh installs the project (not editable): the AsyncAPI document every
    MQTT boundary validates against, the structures, profiles, payout tables and the
    dashboard's files must be in the wheel, not only in the checkout; so must the benchmarks a
    table runs (tablectl bench) and the simulated venue of `tablectl sim`."""
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("contract/asyncapi.json", "houses/structures/tda-2024.toml",
                   "houses/profiles/tda-2024.toml", "houses/payouts/standard.toml",
                   "hub/static/dashboard.js",
                   "hub/static/login.html", "tablectl/bench/footprint.py",
                   "tablectl/bench/mqtt.py", "tablectl/bench/venue.py",
                   "simulators/shoe_frames.py", "tablectl/sim_venue.py",
                   "simulators/broker.py", "simulators/staff.py"):
        assert needed in names, needed


def test_the_installed_package_leaves_the_harness_out_and_runs_without_it(wheel, tmp_path):
    """The lab's harness (harness/) is not in the wheel, and what is needs none of it: every
    module of the wheel, imported from the unpacked wheel alone (the checkout off the path),
    imports; none names a harness module to import or run; `tablectl bench --help` lists the
    benchmarks a table or a hub runs."""
    import re
    import tomllib
    import zipfile

    from tablectl.cli import BENCHES

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    installed = {name.rstrip("*") for name in
                 config["tool"]["setuptools"]["packages"]["find"]["include"]}
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as unpacked:
        unpacked.extractall(site)
        names = unpacked.namelist()
    packages = {name.split("/")[0] for name in names
                if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert packages == installed and "harness" not in packages
    # Nothing but the checkout's own modules (none a stale build/ kept from before a move).
    assert not [name for name in names if name.endswith(".py") and not (ROOT / name).exists()]
    sources = [name for name in names if name.endswith(".py")
               and not name.startswith("firmware_bridge/firmware/")]  # MicroPython's
    naming = [name for name in sources
              if re.search(r"\bharness\.[a-z_]|\b(from|import) +harness\b",
                           (site / name).read_text())]
    assert not naming, f"installed modules that name a harness module: {naming}"
    modules = [name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for name in sources]
    # -I: neither the working directory nor PYTHONPATH on the path, only the unpacked wheel
    # ahead of this virtualenv's libraries (its editable install maps no harness).
    code = f"""
import importlib, sys
sys.path.insert(0, {str(site)!r})
for name in {modules!r}:
    module = importlib.import_module(name)
    assert module.__file__.startswith({str(site)!r}), (name, module.__file__)
assert not any(name.split(".")[0] == "harness" for name in sys.modules)
from tablectl.cli import main
main(["bench", "--help"])
"""
    result = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    listed = result.stdout.split("{", 1)[1].split("}", 1)[0].split(",")
    assert {"latency", "outage", "replay", "shoe", "display", "footprint", "venue",
            "contract", "start"} == set(BENCHES) <= set(listed), result.stdout
    assert {f"tablectl/bench/{module}.py" for module in BENCHES.values()} <= set(names)


@pytest.mark.parametrize("dpkg, uname", [("armhf", None), (None, "armv7l"), (None, "armv6l")])
def test_install_refuses_a_32_bit_system_before_changing_anything(tmp_path, dpkg, uname):
    """32-bit Raspberry Pi OS has no wheels for jsonschema-rs nor Pillow: install.sh says so and
    stops before its first change (it is checked before even being root; make pi-check runs
    it in an emulated armhf root, where nothing of it is left behind)."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "dpkg").write_text(f"#!/bin/sh\necho {dpkg}\n" if dpkg else "#!/bin/sh\nexit 1\n")
    if uname:
        (stubs / "uname").write_text(f"#!/bin/sh\necho {uname}\n")
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    for forbidden in ("apt-get", "useradd", "systemctl", "install", "python3", "cp"):
        (stubs / forbidden).write_text(f"#!/bin/sh\necho CALLED {forbidden} >&2\nexit 99\n")
        (stubs / forbidden).chmod(0o755)
    result = subprocess.run(["bash", str(ROOT / "deploy" / "install.sh")], capture_output=True,
                            text=True, env={"PATH": f"{stubs}:/usr/bin:/bin"}, timeout=30)
    assert result.returncode == 3, result.stderr
    assert f"refused: this is a {dpkg or uname} system" in result.stderr
    assert "Raspberry Pi OS Lite (64-bit)" in result.stderr
    assert "Nothing was changed." in result.stderr and "CALLED" not in result.stderr
