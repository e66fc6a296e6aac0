"""The floor's statistics over a big period: time and peak memory of one request, the events
streamed from the database (as the hub does) against the same events read whole (as it did),
each in a process of its own so that its peak RSS is its own.

    python -m tests.bench.stats_memory [--events 300000] [--json]

SQLite, a venue of 100 tables, three events a hand (started, an irregularity, ended).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

T0 = 1_790_000_000_000
MINUTE = 60_000


def store_night(storage: Any, tables: int, hands: int) -> None:
    """A busy venue's night in a hub's database: ``tables`` x ``hands`` hands, three events
    each (public envelopes as the recorder stores them)."""
    for t in range(tables):
        seq = 0
        for h in range(hands):
            start = T0 + h * 3 * MINUTE
            for type_, ts, data in (("hand.started", start, {"seats": list(range(1, 10))}),
                                    ("irregularity", start + MINUTE,
                                     {"kind": "exposed_card", "text": "x" * 120}),
                                    ("hand.ended", start + 2 * MINUTE, {"outcome": "complete"})):
                seq += 1
                envelope = {"v": 1, "venue": "v", "table": f"t{t}", "seq": seq, "boot": 1,
                            "type": type_, "ts": ts, "hand": h + 1, "dealer": f"d{t % 7}",
                            "data": data}
                storage.insert(f"t{t}", seq, envelope, json.dumps(envelope), ts)
    storage.commit()


def build(path: Path, events: int, tables: int = 100) -> int:
    from hub.storage import open_storage

    storage = open_storage(str(path))
    hands = max(1, events // (3 * tables))
    store_night(storage, tables, hands)
    storage.close()
    return hands * 3 * tables


def measure(path: str, how: str) -> dict[str, float]:
    """In this process: one statistics request, streamed or whole."""
    from hub.stats import STATS_TYPES, statistics
    from hub.storage import open_storage

    storage = open_storage(path)
    end = T0 + 10**9
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    events = (storage.stream_events(T0, STATS_TYPES, end) if how == "streamed"
              else storage.events_since(T0, STATS_TYPES, end))
    figures = statistics(events, T0, end)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    storage.close()
    return {"seconds": round(seconds, 2), "peak_rss_growth_mb": round((after - before) / 1024, 1),
            "hands": figures["hands"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", nargs=2, metavar=("DB", "HOW"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "hub.db"
        count = build(db, args.events)
        result: dict[str, object] = {"events": count}
        for how in ("whole", "streamed"):
            run = subprocess.run([sys.executable, "-m", "tests.bench.stats_memory", "--measure",
                                  str(db), how], capture_output=True, text=True, check=True)
            result[how] = json.loads(run.stdout)
    if args.json:
        print(json.dumps(result))
    else:
        for how in ("whole", "streamed"):
            figures = result[how]
            print(f"{how:9}: {figures['seconds']} s, "  # type: ignore[index]
                  f"peak RSS +{figures['peak_rss_growth_mb']} MB "  # type: ignore[index]
                  f"({result['events']:,} events)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
