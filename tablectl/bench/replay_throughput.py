"""Replay throughput: generated hands through the table core, against the bare parsing floor.

    python -m tablectl.bench.replay_throughput [--hands 10000] [--json]

Generates a session (mixed games, 2-10 seats, some irregularities) with the scripted dealer,
then measures, in the same process:

- the floor: decoding and validating every input line (``json.loads`` + ``parse_input``), which
  any consumer of the lines must pay;
- the core: ``Table.handle`` on every input, timed per card (the per-card path), and the whole
  replay including end-of-hand records with pokerkit evaluation (hands per second).

It prints figures; it asserts nothing (tests assert behaviour, never speed). The target of the
foundation issue is a per-card p99 under 50 microseconds on the project machine.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time

from controller.events import HandRecord
from controller.inputs import CardRead, parse_input
from controller.table import Table, TableConfig
from houses.loaders import load_profile, load_structure
from simulators.dealer_script import session_lines
from tablectl.bench import percentile


def run(hands: int, seed: int, profile_name: str) -> dict[str, object]:
    profile = load_profile(profile_name)
    rng = random.Random(seed)
    lines = [json.dumps(x) for x in session_lines(rng, profile, hands=hands, game="mixed",
                                                   irregularity_rate=0.1, clock="tda-2024")]
    # Floor: the bare cost of turning each line into an input.
    parse_ns: list[int] = []
    inputs = []
    clock = time.perf_counter_ns
    for line in lines:
        start = clock()
        item = parse_input(json.loads(line))
        parse_ns.append(clock() - start)
        inputs.append(item)
    parse_card_ns = [ns for ns, item in zip(parse_ns, inputs, strict=True)
                     if isinstance(item, CardRead)]

    # The core, per input; cards are the hot path.
    table = Table(profile, TableConfig(), load_structure)
    card_ns: list[int] = []
    other_ns: list[int] = []
    hands_done = 0
    started = clock()
    for item in inputs:
        t0 = clock()
        events = table.handle(item)
        elapsed = clock() - t0
        (card_ns if isinstance(item, CardRead) else other_ns).append(elapsed)
        hands_done += sum(1 for e in events
                          if isinstance(e, HandRecord) and e.outcome != "misdeal")
    total_s = (clock() - started) / 1e9

    def us(values: list[int], q: float) -> float:
        return round(percentile([v / 1000 for v in values], q), 2)

    return {
        "hands": hands_done,
        "lines": len(lines),
        "cards": len(card_ns),
        "hands_per_s": round(hands_done / total_s, 1),
        "replay_s": round(total_s, 3),
        "card_us": {"p50": us(card_ns, 50), "p99": us(card_ns, 99),
                    "mean": round(statistics.fmean(card_ns) / 1000, 2)},
        "floor_parse_card_us": {"p50": us(parse_card_ns, 50), "p99": us(parse_card_ns, 99)},
        "card_over_floor_p50": round(percentile(card_ns, 50) / percentile(parse_card_ns, 50),
                                     2),
        "card_over_floor_p99": round(percentile(card_ns, 99) / percentile(parse_card_ns, 99),
                                     2),
        "hand_end_us_p50": us(other_ns, 50),
        "profile": profile_name,
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--profile", default="tda-2024")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.hands, args.seed, args.profile)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"replayed {result['hands']} hands ({result['cards']} cards, {result['lines']} lines) "
          f"in {result['replay_s']} s: {result['hands_per_s']} hands/s")
    card = result["card_us"]
    floor = result["floor_parse_card_us"]
    print(f"per card in the core: p50 {card['p50']} us, p99 {card['p99']} us "  # type: ignore[index]
          f"(floor, parsing the line: p50 {floor['p50']} us, p99 {floor['p99']} us)")  # type: ignore[index]
    print(f"core/floor ratio: p50 {result['card_over_floor_p50']}x, "
          f"p99 {result['card_over_floor_p99']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
