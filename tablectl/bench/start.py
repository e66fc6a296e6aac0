"""A table's start against its history: a table that has dealt for a year starts as a new one
does (issue 44), each start timed as `tablectl run`, a process of its own, in the same run.

    tablectl bench start [--days 365] [--lines-a-day 7450] [--starts 3] [--json]

Builds the outbox of a table that has dealt ``--days`` days of a busy table (7,450 journal
lines a day: three months made 678,002 in issue 44), as a version before snapshots left it:
every journal line since its first start. The days are sessions of the scripted dealer
(``simulators.dealer_script``: mixed games, irregularities, seat changes, the blind clock
started each day, dealers pushed), a week of different ones in turn, each day's times after
the last's. Then times, from the process's start to its ``running`` line (its start done,
``READY=1`` said to systemd):

- the upgrade: the first start of this version, which replays the whole journal once, as
  every start did before snapshots, writing its snapshots on the way;
- the year's table, ``--starts`` times: its newest snapshot and the journal after it;
- a new table (an empty data directory), as many times, in turn with the year's: the floor.

Target: the year's table's start under 2 s on a PC. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contract.wire import encode
from houses.loaders import load_profile
from simulators.dealer_script import session

BUSY_DAY = 7450  # journal lines a day at a busy table (issue 44: 678,002 in three months)
WEEK = 7  # different days dealt in turn
DAY = 86400.0
TABLE = "t1"


def _day(seed: int, lines: int) -> list[dict[str, Any]]:
    """A day at the table: the scripted dealer's session of about ``lines`` journal lines."""
    dealt, _ = session(random.Random(seed), load_profile("tda-2024"), hands=max(1, lines // 15),
                       game="mixed", irregularity_rate=0.1, clock="tda-2024",
                       dealers=("D1", "D2", "D3"), dealer_every=8)
    # The day ends with the last hand begun before ``lines``.
    end = next((i for i in range(lines, len(dealt)) if dealt[i]["type"] == "deck_in"),
               len(dealt))
    return dealt[:end]


def year_lines(days: int, lines_a_day: int) -> Iterator[str]:
    """The journal's lines, day after day, as the daemon journals them."""
    week = [_day(seed, lines_a_day) for seed in range(min(days, WEEK))]
    for day in range(days):
        start = day * DAY + 3600.0
        for line in week[day % len(week)]:
            yield encode({**line, "t": start + float(line.get("t") or 0.0)})


def build_journal(directory: Path, days: int, lines_a_day: int) -> int:
    """The outbox of a table of ``days`` days as a version before snapshots left it."""
    from hardware.outbox import Outbox

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{TABLE}.db"
    Outbox(path).close()  # its tables, as the daemon makes them
    with sqlite3.connect(path) as db:
        before = db.execute("SELECT COUNT(*) FROM journal").fetchone()[0]
        db.executemany("INSERT INTO journal (line) VALUES (?)",
                       ((line,) for line in year_lines(days, lines_a_day)))
        return int(db.execute("SELECT COUNT(*) FROM journal").fetchone()[0]) - int(before)


def _config(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "table.toml"
    path.write_text(f'[table]\nid = "{TABLE}"\nprofile = "tda-2024"\n'
                    '[clock]\nstructure = "tda-2024"\n'
                    '[shoe]\nbackend = "none"\n[button]\nbackend = "none"\n'
                    '[display]\nbackend = "none"\n[buzzer]\nbackend = "none"\n'
                    f'[mqtt]\nenabled = false\n[storage]\ndata_dir = "{directory}"\n')
    return path


def start(directory: Path, timeout: float = 600.0) -> dict[str, Any]:
    """`tablectl run` on the table in ``directory``: seconds from its start to its running
    line, and what the line says (the journal lines it replayed, the snapshot it restored)."""
    config = _config(directory)
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "run", "--config",
                                str(config)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    summary: dict[str, Any] | None = None
    elapsed = float("nan")
    deadline = time.monotonic() + timeout
    for line in process.stdout:
        if "] running: " in line:
            elapsed = time.perf_counter() - began
            summary = json.loads(line.split("] running: ", 1)[1])
            break
        if time.monotonic() > deadline:
            break
    process.terminate()
    process.wait(30)
    if summary is None:
        raise RuntimeError(f"the table in {directory} never said it was running")
    return {"s": round(elapsed, 3), "replayed": summary["resumed_inputs"],
            "snapshot_upto": summary.get("snapshot_upto")}


def run(days: int, lines_a_day: int, starts: int, root: Path) -> dict[str, Any]:
    began = time.perf_counter()
    lines = build_journal(root / "year", days, lines_a_day)
    built = time.perf_counter() - began
    upgrade = start(root / "year")
    size = (root / "year" / f"{TABLE}.db").stat().st_size
    year, fresh = [], []
    for number in range(starts):
        year.append(start(root / "year"))
        fresh.append(start(root / f"new-{number}"))
    with sqlite3.connect(root / "year" / f"{TABLE}.db") as db:
        kept = int(db.execute("SELECT COUNT(*) FROM journal").fetchone()[0])

    def median(figures: list[dict[str, Any]]) -> float:
        return round(float(statistics.median(f["s"] for f in figures)), 3)

    return {
        "days": days, "journal_lines": lines, "built_s": round(built, 1),
        "db_mb": round(size / 1e6, 1),
        "upgrade": upgrade,  # the whole journal replayed once: what every start did before
        "year": {"start_s": median(year), "starts_s": [f["s"] for f in year],
                 "replayed": max(f["replayed"] for f in year),
                 "snapshot_upto": year[-1]["snapshot_upto"], "journal_kept": kept},
        "fresh": {"start_s": median(fresh), "starts_s": [f["s"] for f in fresh],
                  "replayed": max(f["replayed"] for f in fresh)},
        "year_over_fresh": round(median(year) / median(fresh), 2),
        "upgrade_over_year": round(upgrade["s"] / median(year), 1),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--lines-a-day", type=int, default=BUSY_DAY)
    parser.add_argument("--starts", type=int, default=3, help="of each table, in turn")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pkr-start-") as tmp:
        result = run(args.days, args.lines_a_day, max(1, args.starts), Path(tmp))
    if args.json:
        print(json.dumps(result))
        return 0
    year, fresh, upgrade = result["year"], result["fresh"], result["upgrade"]
    print(f"a table of {result['days']} days: {result['journal_lines']:,} journal lines "
          f"({result['db_mb']} MB, built in {result['built_s']} s)")
    print(f"upgrade (the whole journal replayed once, as every start did before): "
          f"{upgrade['s']} s, {upgrade['replayed']:,} lines")
    print(f"the year's table: {year['start_s']} s (median of {year['starts_s']}), "
          f"{year['replayed']} lines replayed after its snapshot, {year['journal_kept']:,} "
          f"journal lines kept")
    print(f"a new table: {fresh['start_s']} s (median of {fresh['starts_s']})")
    print(f"year/new: {result['year_over_fresh']}x; the upgrade took "
          f"{result['upgrade_over_year']}x the year's start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
