"""Footprint of one daemon: peak RSS and CPU over a simulated hour at a real table's pace (time
compressed), CPU while idle with the clock ticking, and the time from start to the first clock
frame on the display; each beside a bare interpreter that imports nothing (same run).

    python -m tablectl.bench.footprint [--pace 0.02] [--idle-seconds 10] [--json]

Targets: under 60 MB RSS and the first frame within 1.5 s (issue 6), under 1 % of one core idle
(issue 29; issue 6 asked for 2 %). Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tablectl.sim_venue import SimulatedVenue

SETTLE = 2.0  # seconds after the first frame before the idle CPU is counted


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])  # kB
    return 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bare_interpreter() -> dict[str, float]:
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c",
                                "import sys; sys.stdout.write('ready\\n'); sys.stdout.flush(); "
                                "sys.stdin.read()"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    process.stdout.readline()
    started = time.perf_counter() - start
    rss = _status(process.pid, "VmHWM")
    process.communicate("")
    return {"rss_mb": round(rss / 1024, 1), "start_s": round(started, 3)}


def first_frame() -> float:
    """Seconds from starting `tablectl run` to the clock's first frame on its display (the
    terminal display: the moment it draws the clock screen)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "table.toml"
        config.write_text('[table]\nid = "t1"\n[clock]\nstructure = "tda-2024"\n'
                          '[shoe]\nbackend = "none"\n[button]\nbackend = "none"\n'
                          '[display]\nbackend = "terminal"\n[buzzer]\nbackend = "none"\n'
                          f'[mqtt]\nenabled = false\n[storage]\ndata_dir = "{tmp}"\n')
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "run", "--config",
                                    str(config)], stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        for line in process.stdout:
            if "|TIME" in line:
                elapsed = time.perf_counter() - start
                break
        else:
            elapsed = float("nan")
        process.terminate()
        process.wait(20)
    return elapsed


def daemon(pace: float, idle_seconds: float, hands: int,
           settle: float = SETTLE) -> dict[str, float]:
    frame = first_frame()
    with tempfile.TemporaryDirectory() as tmp:
        venue = SimulatedVenue(Path(tmp), tables=1, hands=hands, pace=pace, broker="none",
                               irregularities=0.1, quiet=True, brisk=False)
        venue.start()
        table = venue.tables[0]
        assert table.process is not None
        pid = table.process.pid
        # idle, the clock ticking: from a settled daemon (its first clock frame drawn, then
        # ``settle`` seconds for what a start does once: the shoe's hello, lazy imports)
        deadline = time.monotonic() + 30
        while not any("|TIME" in line for line in list(table.output)) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        cpu0, wall0 = _cpu_seconds(pid), time.monotonic()
        time.sleep(idle_seconds)
        idle = (_cpu_seconds(pid) - cpu0) / (time.monotonic() - wall0)
        # a simulated hour of dealing
        cpu0, wall0 = _cpu_seconds(pid), time.monotonic()
        venue.run(threading.Event())
        dealing_wall = time.monotonic() - wall0
        dealing = (_cpu_seconds(pid) - cpu0) / dealing_wall
        rss = _status(pid, "VmHWM")
        summary = venue.summary()["tables"][table.name]
        venue.stop()
    return {"rss_mb": round(rss / 1024, 1),
            "first_frame_s": round(frame, 3),
            "idle_cpu_percent": round(100 * idle, 2),
            "dealing_cpu_percent": round(100 * dealing, 2),
            "hands": summary["hands"], "simulated_minutes": round(dealing_wall / pace / 60, 1),
            "real_seconds": round(dealing_wall, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pace", type=float, default=0.02)
    parser.add_argument("--hands", type=int, default=25, help="about an hour at a real table")
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--settle-seconds", type=float, default=SETTLE,
                        help="after the first frame, before the idle CPU is counted")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = {"bare": bare_interpreter(), "daemon": daemon(args.pace, args.idle_seconds,
                                                           args.hands, args.settle_seconds)}
    if args.json:
        print(json.dumps(result))
        return 0
    b, d = result["bare"], result["daemon"]
    print(f"daemon: peak RSS {d['rss_mb']} MB (bare interpreter {b['rss_mb']} MB); first clock "
          f"frame {d['first_frame_s']} s after start (bare interpreter ready in {b['start_s']} "
          f"s); idle {d['idle_cpu_percent']} % of one core; dealing {d['hands']} hands "
          f"({d['simulated_minutes']} simulated minutes in {d['real_seconds']} s) "
          f"{d['dealing_cpu_percent']} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
