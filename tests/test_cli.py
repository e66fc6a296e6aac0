"""``tablectl`` as a user runs it: stdout is JSON lines only, user errors exit 2 without a
traceback and name the line or key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SCENARIOS

SETUP = '{"type": "setup", "game": "holdem", "seats": [1, 2, 4, 6], "button": 6}'


def tablectl(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tablectl.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_replay_prints_only_json_lines(tmp_path):
    result = tablectl("replay", str(SCENARIOS / "row02_later_exposed.jsonl"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert all(isinstance(e, dict) and "type" in e for e in events)
    assert {"hand.started", "card", "irregularity", "ruling", "hand.ended"} <= {
        e["type"] for e in events}
    assert result.stderr == ""


def test_replay_reads_stdin_and_takes_a_profile():
    text = (SCENARIOS / "row14_missing_burn.jsonl").read_text()
    result = tablectl("replay", "--profile", "corner-pocket", "-", stdin=text)
    assert result.returncode == 0, result.stderr
    rulings = [json.loads(x) for x in result.stdout.splitlines() if '"ruling"' in x]
    assert rulings[0]["action"] == "board_stands"


def _replay_fails(tmp_path, text):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    result = tablectl("replay", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.mark.parametrize("third_line,needles", [
    ('{"type": "card", "card": ', ("line 3", "not a JSON object")),
    ('{"type": "card", "card": "Xq", "t": 1}', ("line 3", "'Xq'")),
    ('{"type": "flop", "t": 1}', ("line 3", "'flop'")),
    ('[1, 2]', ("line 3", "JSON object")),
])
def test_a_bad_line_is_named(tmp_path, third_line, needles):
    stderr = _replay_fails(tmp_path, SETUP + '\n{"type": "deck_in", "deck": "R1"}\n'
                           + third_line + "\n")
    for needle in needles:
        assert needle in stderr


def test_every_bad_key_of_a_line_is_listed(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "card", "card": "As", "fase": "up", "boxed": "yes", "t": "x"}\n')
    result = tablectl("replay", str(path))
    assert result.returncode == 2
    for key in ("fase", "boxed", "t:"):
        assert key in result.stderr


def test_unknown_profile_lists_the_known_ones():
    result = tablectl("replay", "--profile", "casino-royale",
                      str(SCENARIOS / "row04_boxed.jsonl"))
    assert result.returncode == 2
    assert "casino-royale" in result.stderr and "corner-pocket" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_deck_before_setup_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "deck_in", "deck": "R1", "t": 0}\n')
    result = tablectl("replay", str(path))
    assert result.returncode == 2 and "line 1" in result.stderr and "setup" in result.stderr


def test_missing_file():
    result = tablectl("replay", "/nonexistent/session.jsonl")
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_profiles_lists_all_and_what_differs():
    result = tablectl("profiles")
    assert result.returncode == 0
    for name in ("tda-2024", "roberts-rules", "corner-pocket", "scpc-2010", "lppl",
                 "mikes-poker-tables", "dealers-choice"):
        assert name in result.stdout
    assert "premature_turn" in result.stdout and "set_aside_turn" in result.stdout
    shown = tablectl("profiles", "--show", "corner-pocket")
    assert "seed 000, Dealing rule D" in shown.stdout
    assert "[from roberts-rules]" in shown.stdout


def test_a_bad_user_profile_reports_every_problem(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\ninherits = "tda-2024"\ncolour = "red"\n'
                    '[rules.premature_turn]\nvalue = "burn_it"\nsource = "house rule 4"\n'
                    '[rules.missing_burn]\nvalue = "board_stands"\n'
                    '[rules.flop_too_big]\nvalue = "x"\nsource = "y"\n')
    result = tablectl("profiles", "--file", str(path))
    assert result.returncode == 2
    for needle in ("colour", "rules.premature_turn.value", "rules.missing_burn.source",
                   "rules.flop_too_big"):
        assert needle in result.stderr
    assert "4 problem(s)" in result.stderr


def test_a_user_profile_replays(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\ninherits = "tda-2024"\n'
                    '[rules.missing_burn]\nvalue = "board_stands"\nsource = "house rule 9"\n')
    result = tablectl("replay", "--profile", str(path),
                      str(SCENARIOS / "row14_missing_burn.jsonl"))
    assert result.returncode == 0, result.stderr
    assert '"board_stands"' in result.stdout and '"house rule 9"' in result.stdout


def test_demo_runs_and_summarises():
    result = tablectl("demo", "--hands", "5", "--quiet", "--profile", "lppl")
    assert result.returncode == 0, result.stderr
    assert "5 hands under profile lppl" in result.stdout


def test_demo_through_the_simulated_shoe():
    result = tablectl("demo", "--shoe", "--pace", "0.03", "--hands", "2", "--irregularities",
                      "0", "--quiet", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "2 hands under profile tda-2024" in result.stdout
    assert "simulated shoe on a pty" in result.stderr


def test_scenario_files_are_valid_replay_inputs(capsys):
    # In this process: the command's own code, without an interpreter start a file (the
    # subprocess form is tested above).
    from tablectl.cli import main

    for path in sorted(Path(SCENARIOS).glob("*.jsonl")):
        assert main(["replay", str(path)]) == 0, (path, capsys.readouterr().err)
        assert capsys.readouterr().out.count("\n") > 0, path


@pytest.mark.parametrize("command", [["recorder", "--db", "x.db"], ["venue-clock"],
                                     ["clock", "pause"]])
def test_hub_tools_refuse_half_a_tls_setup(command, tmp_path):
    """--ca without --cert and --key is a mistake, not a plain connection."""
    result = subprocess.run([sys.executable, "-m", "tablectl.cli", *command, "--venue", "v",
                             "--port", "1", "--ca", "ca.pem"], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    assert "TLS needs ca, cert and key together (--ca, --cert, --key)" in result.stderr


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_ctrl_c_during_the_simulation_is_no_false_alarm(tmp_path, signum):
    """Stopped mid-deal by Ctrl-C or SIGTERM, the simulator says so (exit 130) and that what
    was dealt reached the recorder; it does not claim events were lost, and leaves neither
    its Mosquitto nor a table daemon behind (SIGTERM once ended it where it stood)."""
    import os
    import signal
    import socket

    process = subprocess.Popen(
        [sys.executable, "-m", "tablectl.cli", "sim", "--tables", "1", "--hands", "500",
         "--pace", "0.05", "--dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        cwd=Path(__file__).resolve().parents[1],
        # A test run started in the background (CI, nohup ... &) ignores SIGINT, and a child
        # inherits that: give the simulator the terminal's default, as a person has.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert process.stdout is not None
        started = False
        port = None
        for line in process.stdout:  # started, then a frame on the table's display: dealing
            if "private Mosquitto on 127.0.0.1:" in line:
                port = int(line.split("127.0.0.1:")[1].split()[0])
            started = started or "Ctrl-C stops" in line
            if started and line.startswith("[t1] |"):
                break
        os.kill(process.pid, getattr(signal, signum))
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    said = "Ctrl-C" if signum == "SIGINT" else "SIGTERM"
    assert process.returncode == 130, output
    assert f"stopped by {said} before every hand was dealt" in output
    assert "every event dealt so far reached the recorder" in output, output
    assert "not every event" not in output
    assert port is not None
    with pytest.raises(OSError):  # its broker is gone
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    daemons = subprocess.run(["pgrep", "-f", f"{tmp_path}/t1/table.toml"],
                             capture_output=True, text=True)
    assert daemons.stdout == "", daemons.stdout  # and its table's daemon


def test_a_command_whose_extra_is_missing_names_the_extra(tmp_path):
    # PIL made unimportable, as after `pip install -e .` without the hardware extra.
    code = ("import sys; sys.modules['PIL'] = None; from tablectl.cli import main; "
            f"sys.exit(main(['render', '--all', '--out', {str(tmp_path)!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "'tablectl render' needs PIL" in result.stderr
    assert "pip install -e '.[hardware]'" in result.stderr


def test_the_hub_refuses_a_locale_and_a_time_zone_it_cannot_use_listing_both(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--venue", "v",
                             "--port", "1", "--locale", "english please", "--time-zone",
                             "Mars/Olympus", "--short-table", "t7"], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    for needle in ("--locale (dashboard.locale): must be a BCP 47 language tag",
                   "not 'english please'", "--time-zone (dashboard.time_zone)",
                   "not 'Mars/Olympus'", "--short-table (floor.short_tables)", "not 't7'"):
        assert needle in result.stderr
