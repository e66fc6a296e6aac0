"""The benchmark commands still run, and what they count (not how fast) is right: a benchmark
that has rotted gives no figure at all. Small sizes; `make bench` runs the real ones."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.headless_chromium import CHROMIUM

# The benchmark commands (`tablectl bench NAME ...`, docs/benchmarks.md), at small sizes.
RUNS = {
    "replay": ["--hands", "20"],
    "shoe": ["--frames", "500", "--samples", "40"],
    # Two idle seconds: a table pushes its clock once a second, and one second on a slow
    # machine saw no push (a fresh clone's run, the tick late past the window's end).
    "display": ["--frames", "5", "--idle-seconds", "2", "--settle-seconds", "0.2"],
    "latency": ["--cards", "30"],
    "outage": ["--events", "120"],  # a backlog of more than two messages (50 events each)
    "footprint": ["--hands", "1", "--idle-seconds", "1", "--settle-seconds", "0.2"],
    "venue": ["--tables", "6", "--events", "10", "--pace-seconds", "2"],
    "contract": ["--envelopes", "50"],
    "start": ["--days", "2", "--lines-a-day", "2500", "--starts", "1"],
}


def _bench(name: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "tablectl.cli", "bench", name,
                             *RUNS[name], "--json"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["shoe", "latency"])
def test_latency_benches_give_pipeline_floor_and_ratios(name):
    figures = _bench(name)
    figures = figures.get("latency", figures)
    for side in ("pipeline", "floor"):
        assert 0 < figures[side]["p50_ms"] <= figures[side]["p99_ms"]
    assert figures["p50_ratio"] > 0 and figures["p99_ratio"] > 0


def test_replay_bench_counts_the_hands_it_dealt():
    figures = _bench("replay")
    assert figures["hands"] >= 20 and figures["cards"] > 20 * 4
    assert figures["card_us"]["p50"] <= figures["card_us"]["p99"]


def test_outage_bench_delivers_every_event_once():
    figures = _bench("outage")
    assert figures["delivered"] == figures["events"] == 120
    assert figures["gaps"] == 0
    # Each event is stored once (the key is (table, seq)); a copy the recorder received twice
    # and discarded is counted, not an error: on a loaded machine its replay request can cross
    # the table's own resend after the broker comes back.
    assert figures["duplicates"] == 0
    assert 0 <= figures["redelivered"] <= figures["events"]


def test_display_and_footprint_benches_measure_a_running_table():
    display = _bench("display")
    assert display["frame"]["frames"] == 5 and display["idle"]["pushes"] >= 1
    footprint = _bench("footprint")
    assert footprint["daemon"]["hands"] == 1
    assert footprint["daemon"]["rss_mb"] > footprint["bare"]["rss_mb"] > 0


def test_venue_bench_counts_every_event_into_the_recorder_and_the_dashboard():
    figures = _bench("venue")
    assert figures["bare_fan_in"]["received"] == 60
    assert figures["recorder"]["stored"] == figures["recorder"]["floor_view_events"] == 60
    assert figures["recorder"]["floor_view_after_recorder_s"] >= 0  # measured, not timed out
    assert figures["lost"] == 0 and figures["recorder"]["duplicates"] == 0
    assert figures["dashboard"]["updates"] == figures["dashboard"]["expected"] == 12
    assert 0 < figures["dashboard"]["delay_p50_ms"] <= figures["dashboard"]["delay_p99_ms"]


def test_contract_bench_measures_real_envelopes_against_the_parsing_floor():
    figures = _bench("contract")
    assert figures["envelopes"] == 50
    assert set(figures["us_per_envelope"]) == {"json_loads", "wire_decode",
                                               "receive_jsonschema_rs",
                                               "receive_with_reference_jsonschema"}
    assert figures["over_json_loads"]["json_loads"] == 1.0


def test_a_benchmark_says_what_this_machine_lacks_for_it(monkeypatch, capsys):
    """On a table: Mosquitto for those that start a broker, the hub's extras for the venue's."""
    import importlib.util
    import shutil

    from tablectl import cli

    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    monkeypatch.setattr(cli.os.path, "exists", lambda path: False)
    assert cli.main(["bench", "latency"]) == cli.EXIT_USAGE
    assert "apt install mosquitto" in capsys.readouterr().err
    monkeypatch.undo()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "fastapi" else real(name, *a))
    assert cli.main(["bench", "venue"]) == cli.EXIT_USAGE
    assert "pip install '.[hub]'" in capsys.readouterr().err
    assert cli.main(["bench", "network"]) == cli.EXIT_USAGE
    assert "python -m tests.bench.network" in capsys.readouterr().err


def test_start_bench_starts_a_long_table_from_its_snapshot_and_a_new_one_from_nothing():
    """Real `tablectl run` processes: the first start of a table with a journal from before
    snapshots replays it whole, once, writing snapshots as it goes; the next restores the
    last and replays only the lines after it (fewer than a snapshot's interval)."""
    from tablectl.daemon import SNAPSHOT_EVERY

    figures = _bench("start")
    lines, year = figures["journal_lines"], figures["year"]
    assert lines >= 2 * 2500 and figures["upgrade"]["replayed"] == lines
    assert figures["upgrade"]["snapshot_upto"] is None
    assert SNAPSHOT_EVERY <= year["snapshot_upto"] <= lines
    assert year["replayed"] == lines - year["snapshot_upto"] < SNAPSHOT_EVERY + 200
    assert figures["fresh"]["replayed"] == 0
    assert figures["year"]["start_s"] > 0 and figures["fresh"]["start_s"] > 0


def test_dashboard_bench_draws_every_table_counts_updates_and_times_the_taps():
    """The dashboard on a throttled tablet (`python -m tests.bench.dashboard`), two small
    rooms: every table's card drawn, the updates the page received counted, each tap timed
    (from the press to the frame that showed it), the heap and nodes read. Two seconds of
    dealing and no warm-up: what is counted comes in the dealing, whenever its first events
    arrive."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.bench.dashboard", "--rooms", "2,4", "--seconds", "2",
         "--idle-seconds", "0.5", "--warm-up", "0", "--taps", "2", "--cpu", "1",
         "--browser", CHROMIUM, "--json"],
        capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert [room["tables"] for room in figures["rooms"]] == [2, 4]
    for room in figures["rooms"]:
        assert room["cards_drawn"] == room["tables"]
        assert room["updates_received"] > 0
        assert room["tap_open_table"]["taps"] == 2
        assert room["dealing"]["busy_ms_per_s"] > 0
        assert room["memory"]["end"]["nodes"] > 0
        assert room["tv_busy_ms_per_s"] > 0
        assert room["ms_per_update_above_idle"] is not None  # updates came: a cost per update
    assert "update_cost_ratio_big_over_small" in figures


def test_the_broadcast_bench_counts_each_hand_of_both_runs():
    """`python -m tests.bench.broadcast` at a tiny size: every hand of the baseline and the
    delayed run measured on the overlay's stream, and each street's view with equities."""
    result = subprocess.run([sys.executable, "-m", "tests.bench.broadcast", "--hands", "2",
                             "--every", "2", "--delay", "1", "--json"], capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["baseline"]["hands"] == figures["delayed"]["hands"] == 2
    assert figures["delayed"]["delay_s"] == 1 and figures["baseline"]["delay_s"] == 0
    assert set(figures["equity"]["with_equity_ms"]) == {"preflop", "flop", "turn", "river"}
