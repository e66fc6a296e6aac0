"""The equities' time per street (controller/equity.py), against pokerkit's evaluation of the
same runouts measured in the same run.

    python -m tests.bench.equity [--repeats 5] [--baseline-runouts 40] [--seed 49] [--json]

For each deal (Hold'em with 9 seats and with 2, Omaha and Omaha Hi/Lo with 6): one call per
street, pre-flop (sampled: the default count for its seats) to the river (every runout), its
median of ``--repeats`` calls, in CPU time (the process's own: a shared machine's load
inflates the wall clock, also given); then pokerkit evaluating ``--baseline-runouts`` of the
same runouts (each seat's best hand, and its low in Hi/Lo) and the time a call would take at
that pace. First, the evaluator's tables, built on first use. It asserts nothing: the budget is
100 ms a call (issue 49), ``worst_ms`` the slowest median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from itertools import combinations
from typing import Any

import pokerkit

from controller import equity
from controller.cards import HOLE_CARDS, STANDARD_DECK

DEALS = (("holdem", 9), ("holdem", 2), ("omaha", 6), ("omaha8", 6))
STREETS = (("preflop", 0), ("flop", 3), ("turn", 4), ("river", 5))
BUDGET_MS = 100


def deal(game: str, seats: int, seed: int) -> tuple[dict[int, list[str]], list[str]]:
    """The seats' hole cards and a whole board, shuffled by ``seed``."""
    deck = list(STANDARD_DECK)
    random.Random(seed).shuffle(deck)
    n = HOLE_CARDS[game]
    hole = {s + 1: deck[s * n:(s + 1) * n] for s in range(seats)}
    return hole, deck[seats * n:seats * n + 5]


def _runouts(hole: dict[int, list[str]], board: list[str], count: int,
             rng: random.Random) -> list[tuple[str, ...]]:
    """``count`` of the runouts a call counts: drawn from every runout from the flop on, sampled
    pre-flop."""
    used = {c for cards in hole.values() for c in cards} | set(board)
    deck = [c for c in STANDARD_DECK if c not in used]
    if not board:
        return [tuple(rng.sample(deck, 5)) for _ in range(count)]
    every = list(combinations(deck, 5 - len(board)))
    return rng.sample(every, min(count, len(every)))


def pokerkit_runout(game: str, hole: dict[int, list[str]], board: str) -> None:
    """One runout as pokerkit evaluates it: each seat's best high hand (and its low)."""
    high = pokerkit.StandardHighHand if game == "holdem" else pokerkit.OmahaHoldemHand
    for cards in hole.values():
        text = "".join(cards)
        high.from_game(text, board)
        if game == "omaha8":
            pokerkit.OmahaEightOrBetterLowHand.from_game_or_none(text, board)


def measure_street(game: str, hole: dict[int, list[str]], board: list[str], repeats: int,
                   baseline_runouts: int, seed: int) -> dict[str, Any]:
    times, cpu_times = [], []
    result = None
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        result = equity.equities(game, hole, board, rng=random.Random(seed))
        cpu_times.append((time.process_time() - cpu_start) * 1000)
        times.append((time.perf_counter() - start) * 1000)
    assert result is not None
    median = statistics.median(cpu_times)
    sample = _runouts(hole, board, baseline_runouts, random.Random(seed))
    cpu_start = time.process_time()
    for runout in sample:
        pokerkit_runout(game, hole, "".join([*board, *runout]))
    pokerkit_us = (time.process_time() - cpu_start) * 1e6 / len(sample)
    ours_us = median * 1000 / result.runouts
    return {"cpu_ms": round(median, 2), "best_cpu_ms": round(min(cpu_times), 2),
            "wall_ms": round(statistics.median(times), 2), "runouts": result.runouts,
            "exact": result.exact, "std_error": round(result.std_error, 4),
            "us_per_runout": round(ours_us, 2),
            "pokerkit_us_per_runout": round(pokerkit_us, 1),
            "pokerkit_call_ms": round(pokerkit_us * result.runouts / 1000, 1),
            "speedup": round(pokerkit_us / ours_us, 1)}


def run(repeats: int, baseline_runouts: int, seed: int) -> dict[str, Any]:
    start = time.perf_counter()
    equity._tables()  # built on first use: measured apart from the calls
    tables_ms = (time.perf_counter() - start) * 1000
    deals: dict[str, dict[str, Any]] = {}
    for game, seats in DEALS:
        hole, board = deal(game, seats, seed)
        deals[f"{game}-{seats}"] = {
            street: measure_street(game, hole, board[:cards], repeats, baseline_runouts, seed)
            for street, cards in STREETS}
    worst = max(s["cpu_ms"] for streets in deals.values() for s in streets.values())
    worst_wall = max(s["wall_ms"] for streets in deals.values() for s in streets.values())
    return {"tables_ms": round(tables_ms, 1), "deals": deals, "worst_cpu_ms": worst,
            "worst_wall_ms": worst_wall, "budget_ms": BUDGET_MS,
            "load_average": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}


def report(figures: dict[str, Any]) -> str:
    lines = [f"tables (first use): {figures['tables_ms']} ms; load average "
             f"{figures['load_average']} on {figures['cpus']} CPUs",
             f"{'deal':<10} {'street':<8} {'cpu ms':>7} {'wall':>7} {'runouts':>8} {'±':>6} "
             f"{'us/runout':>10} {'pokerkit':>9} {'x':>6} {'pokerkit ms':>12}"]
    for name, streets in figures["deals"].items():
        for street, s in streets.items():
            error = f"{s['std_error'] * 100:.1f}%" if not s["exact"] else "exact"
            lines.append(f"{name:<10} {street:<8} {s['cpu_ms']:>7.1f} {s['wall_ms']:>7.1f} "
                         f"{s['runouts']:>8} {error:>6} {s['us_per_runout']:>10.1f} "
                         f"{s['pokerkit_us_per_runout']:>9.0f} {s['speedup']:>6.0f} "
                         f"{s['pokerkit_call_ms']:>12.0f}")
    lines.append(f"slowest call (median): {figures['worst_cpu_ms']} ms of CPU, "
                 f"{figures['worst_wall_ms']} ms of wall clock; budget {figures['budget_ms']} ms")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="calls per street (median)")
    parser.add_argument("--baseline-runouts", type=int, default=40,
                        help="runouts pokerkit evaluates per street")
    parser.add_argument("--seed", type=int, default=49, help="the deal's and the samples' seed")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args.repeats, args.baseline_runouts, args.seed)
    print(json.dumps(figures) if args.json else report(figures))


if __name__ == "__main__":
    main()
