"""The venue on a network under its real faults (``python -m tests.bench.network``): the broker, the
hub and the tables each a host in network namespaces (as root; ``harness.net_venue``), the
tables the real daemon with the simulated shoe. The first table loses 5 % of its packets the
whole session, the second's link stalls for 0.4 s at a time, the third is cut off for 3 minutes
while dealing (the floor adds a minute to the clock meanwhile; meanwhile its daemon is
SIGKILLed and started again, its shoe unplugged for a second, its configuration reloaded); the
hub is cut from the broker for 30 s and the broker's host goes down for 10 s.

Figures: for each heal, the seconds until the recorder holds every event the tables had made
when it came, and until each table's clock is within a second of the hub's again; beside the
same measure with no fault (the baseline, in the same run: how far behind the recorder runs
anyway). Then the checker: every event once and in order at the recorder and equal to the
outbox's, the hands equal to a fault-free replay of each daemon's inputs and, for the tables
whose dealing no fault touched, to their dealer's script.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
from pathlib import Path

from harness.net_venue import Faults, NetworkVenue, check, play_faults
from harness.netns import unavailable

SECONDS_PER_HAND = 3.0  # a brisk hand at ten times a dealer's pace takes 3.5-5 s: room to spare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.network", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=4, help="at least 3 (default 4)")
    parser.add_argument("--cut", type=float, default=180.0,
                        help="seconds the third table is cut off (default 180)")
    parser.add_argument("--hub-cut", type=float, default=30.0)
    parser.add_argument("--broker-down", type=float, default=10.0)
    parser.add_argument("--loss", type=int, default=5, help="percent, on the first table")
    parser.add_argument("--spike", type=float, default=0.4,
                        help="seconds the second table's link holds each packet in a stall")
    parser.add_argument("--spike-every", type=float, default=12.0,
                        help="seconds from one stall to the next (each lasts a quarter)")
    parser.add_argument("--hands", type=int,
                        help="hands each table deals (default: enough to deal through the faults "
                             "and 30 s beyond)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--irregularities", type=float, default=0.25,
                        help="share of hands with an irregularity (default 0.25)")
    parser.add_argument("--dir", help="keep the venue's files here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.tables < 3:
        parser.error("--tables: at least 3 (one lossy, one stalling, one cut off)")
    if (why := unavailable()) is not None:
        print(f"python -m tests.bench.network: {why}", file=sys.stderr)
        return 2
    faults = Faults(loss_percent=args.loss, spike_seconds=args.spike,
                    spike_every=args.spike_every, spike_for=args.spike_every / 4,
                    cut_seconds=args.cut,
                    hub_cut_seconds=args.hub_cut, broker_down_seconds=args.broker_down)
    pace = 0.1
    hands = args.hands or math.ceil((faults.seconds() + 30) / SECONDS_PER_HAND)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-network-") as tmp:
        directory = Path(args.dir or tmp)
        venue = NetworkVenue(directory, tables=args.tables, hands=hands, pace=pace,
                             seed=args.seed, irregularities=args.irregularities).start()
        try:
            if (dealt := min(t.script_seconds() for t in venue.tables)) < faults.seconds() + 5:
                parser.error(f"--hands {hands}: the tables would stop dealing after {dealt:.0f} "
                             f"s, not 5 s past the last heal ({faults.seconds():.0f} s): more "
                             "hands")
            venue.run(chaos=lambda venue, stop: play_faults(venue, faults, stop))
            delivered = venue.wait_delivered(120)
            report = check(venue)
        finally:
            venue.stop()
    figures = {"tables": args.tables, "hands_per_table": hands,
               "faults": dataclasses.asdict(faults), "delivered": delivered,
               "spikes": venue.spikes, **report}
    if args.json:
        print(json.dumps(figures))
        return 0 if delivered and not report["problems"] else 1
    print(f"{args.tables} tables, {hands} hands each at 10x a dealer's pace; "
          f"{faults.loss_percent} % loss on {venue.tables[0].name}, {venue.spikes} stalls of "
          f"{faults.spike_seconds:g} s on {venue.tables[1].name}, {venue.tables[2].name} cut "
          f"off {faults.cut_seconds:g} s, hub cut {faults.hub_cut_seconds:g} s, broker host "
          f"down {faults.broker_down_seconds:g} s")
    for heal in report["heals"]:
        clocks = ", ".join(f"{name} {after} s (then within {heal['clock_difference_s'].get(name)}"
                           " s)" for name, after in heal["clock_agrees_after_s"].items())
        print(f"  {heal['what']}: recorder caught up in {heal['delivered_after_s']} s; "
              f"clocks agree after {clocks}")
    for name, table in report["tables"].items():
        print(f"  {name}: {table['events']} events, {table['recorded']} recorded, "
              f"{table['missing']} missing, {table['stored_twice']} stored twice, "
              f"{table['differing']} differing, {table['boots']} boots; clock within "
              f"{table['clock_difference_at_end_s']} s of the hub's at the end; hands equal to the "
              f"fault-free replay: {table['hands_equal_replay']}, to the script: "
              f"{table['hands_equal_script']}"
              + (" (a fault changed its dealing)" if table["off_script"] else ""))
    print("  checker: " + ("nothing wrong" if not report["problems"]
                           else "; ".join(report["problems"])))
    return 0 if delivered and not report["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
