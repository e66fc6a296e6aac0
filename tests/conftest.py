"""Shared helpers for the tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tablectl.bench import replay_lines

# No hypothesis deadline anywhere: a deadline asserts wall-clock speed, which a machine kept
# busy does not have (one example of the shoe codec's corrupted streams took 315 ms against
# the default 200 ms with both cores loaded). A test that sets its own settings keeps this.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

SCENARIOS = Path(__file__).parent / "scenarios"


# The longest files, longest first: seconds each took in its process (a fresh clone's
# `make test` with `--junitxml`, summed by file, on a quiet machine, 2026-12-05, second
# session): dashboard_browser 69, bench 67, net_venue 59, floor_alerts_browser 51,
# multi_venue 38, firmware_micropython 33, hub 32, sim_venue 30, shoe_link 30, reporting 28,
# players_browser 26, broadcast 25, tournament_browser 23, broadcast_desk_browser 22, hostile
# 22, venue_year_tables 22, web 21, tournament 21, tournament_houses 20, nfc 16, cli 16,
# payouts_browser 14, sessions_revoked 13, registration_browser 11, group_fairness 11, deploy
# 11, dashboard_frames_browser 10; every other file under 10 (the sum, 887 s, over the
# processes).
LONGEST_FILES = ("test_dashboard_browser.py", "test_bench.py", "test_net_venue.py",
                 "test_floor_alerts_browser.py", "test_multi_venue.py",
                 "test_firmware_micropython.py", "test_hub.py", "test_sim_venue.py",
                 "test_shoe_link.py", "test_reporting.py", "test_players_browser.py",
                 "test_broadcast.py", "test_tournament_browser.py",
                 "test_broadcast_desk_browser.py", "test_hostile.py",
                 "test_venue_year_tables.py", "test_web.py", "test_tournament.py",
                 "test_tournament_houses.py", "test_nfc.py", "test_cli.py",
                 "test_payouts_browser.py", "test_sessions_revoked.py",
                 "test_registration_browser.py", "test_group_fairness.py", "test_deploy.py",
                 "test_dashboard_frames_browser.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, then the files with slow tests, each file's tests in their own
    order: make test gives each file to one process (``--dist loadfile``: a module's tests
    share its fixtures and may build on each other), so the processes, handed the longest
    files first, end close together."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item: pytest.Item) -> tuple[int, bool]:
        name = item.path.name
        first = LONGEST_FILES.index(name) if name in LONGEST_FILES else len(LONGEST_FILES)
        return first, item.path not in slow_files
    items.sort(key=rank)


def run(lines: Iterable[Any], profile: str = "tda-2024", **config: Any) -> list[dict[str, Any]]:
    """Replay input objects (or JSON strings) through the core; return all events."""
    return replay_lines(lines, profile, **config)


def of_type(events: list[Any], kind: str) -> list[dict[str, Any]]:
    """The events of one type, as JSON objects (the core's typed events are converted)."""
    data = [e if isinstance(e, dict) else e.to_json() for e in events]
    return [e for e in data if e["type"] == kind]


def table_state(**fields: Any) -> Any:
    """A table's state snapshot (``contract.snapshots.TableState``) as a table sends it: the
    fields a test gives, the rest as a table between hands with nobody seated writes them."""
    from contract.snapshots import TableState

    written = {"hand": None, "in_progress": False, "shoe": "ok", "clock": None,
               "hand_for_hand": "off", "seats": [], "links": {}, "last_seq": 0, "ts": 0}
    return TableState(**{**written, **fields})


def wait_for(condition: Any, timeout: float = 15.0, step: float = 0.05) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass; its last value."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(step)
    return bool(condition())


def open_event_stream(url: str, cookie: str) -> tuple[Any, bytes]:
    """A dashboard's event stream (``GET /api/stream``) opened on a raw socket with a
    session's cookie, as a tab holds it: the socket, left open, and the answer's status line."""
    import socket

    host, port = url.split("//")[1].split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(f"GET /api/stream HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n".encode())
    return sock, sock.recv(4096).split(b"\r\n", 1)[0]


def subscribed(client: Any, *topics: str, qos: int = 1, timeout: float = 10.0) -> None:
    """Subscribe a paho client and return once the broker granted every subscription
    (SUBACK): a message published after this reaches the client. Use before publishing what
    it should see, instead of sleeping."""
    granted: set[int] = set()
    previous = client.on_subscribe

    def on_subscribe(c: Any, userdata: Any, mid: int, *rest: Any) -> None:
        granted.add(mid)
        if previous is not None:
            previous(c, userdata, mid, *rest)

    client.on_subscribe = on_subscribe
    mids = [client.subscribe(topic, qos=qos)[1] for topic in topics]
    try:
        assert wait_for(lambda: all(mid in granted for mid in mids), timeout, 0.01), \
            f"the broker did not grant {topics}"
    finally:
        client.on_subscribe = previous


@pytest.fixture(autouse=True)
def no_worker_dies():
    """Every test: no supervised worker (table link, recorder, floor, venue clock) died during
    it. A death marks the process failed (``contract/supervise.py``); here it fails the test
    that caused it, and is cleared for the next."""
    from contract import supervise

    yield
    died = list(supervise.failures)
    supervise.failures.clear()
    supervise.FAILED.clear()
    assert not died, f"a supervised worker died: {died}"


class QuietLink:
    """The floor's MQTT side for a floor service the tests call directly and whose commands,
    clock readings and clock answers they do not look at (tests/typed_fakes.py holds it to
    hub.service.FloorLink); tests that look keep stand-ins of their own."""

    def send_command(self, table: str, command: Any) -> None:
        pass

    def publish_clock(self, reading: Any) -> None:
        pass

    def answer_clock(self, answer: Any) -> None:
        pass


@pytest.fixture
def scenarios_dir() -> Path:
    return SCENARIOS


@pytest.fixture
def broker(tmp_path):
    from simulators.broker import Broker

    started = Broker(tmp_path / "mosquitto").start()
    yield started
    started.kill()


@pytest.fixture
def postgres():
    """A PostgreSQL database of its own, in this test process's private PostgreSQL (a
    throwaway cluster that does not wait for the disk: harness/postgres.py)."""
    from harness.postgres import Database

    database = Database(durable=False)
    yield database.url
    database.drop()


def bench_figures(tmp_path: Path, command: str, *options: str,
                  timeout: float = 240) -> tuple[dict[str, Any], int]:
    """Run the lab benchmark ``python -m tests.bench.COMMAND --json`` with ``options`` (its files
    in ``tmp_path``): its figures (kept beside, in figures.json) and its exit status."""
    import subprocess
    import sys

    try:
        run = subprocess.run([sys.executable, "-m", f"tests.bench.{command}", "--json",
                              *options, "--dir", str(tmp_path)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:  # what it said so far (a hung table's threads)
        said = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (
            exc.stderr or "")
        raise AssertionError(f"tests.bench.{command} did not end in {timeout:g} s; its "
                             f"stderr ends:\n{said[-6000:]}") from None
    assert run.stdout, run.stderr
    figures = json.loads(run.stdout)
    (tmp_path / "figures.json").write_text(json.dumps(figures, indent=1))
    return figures, run.returncode


def hub_config_file(tmp_path: Path, venue: str, broker_port: int, db: str,
                    more: str = "") -> Path:
    """A hub's configuration file for a test (its own users file with maria, a free dashboard
    port, the file's mode a secret's), ``more`` its other sections or keys after [storage]."""
    from hub import auth
    from simulators.broker import free_port

    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    config = tmp_path / "hub.toml"
    config.write_text(
        f'[venue]\nid = "{venue}"\n[mqtt]\nport = {broker_port}\n'
        f'[storage]\ndb = {json.dumps(db)}\n{more}'
        f'[dashboard]\nlisten = "127.0.0.1:{free_port()}"\nusers = {json.dumps(str(users))}\n')
    config.chmod(0o600)
    return config
