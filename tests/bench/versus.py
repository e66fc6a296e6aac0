"""Benchmarks of this checkout against another commit, measured in the same run.

    python -m tests.bench.versus REV [--rounds 2] [--bench NAME ...] [--json]

Checks REV out in a temporary git worktree and runs the same benchmark commands there and
here, alternating (old, new, old, new...) so that a busy machine weighs on both alike. Prints,
for each figure, the median of each side and new/old. The commands: the core's per-card path
(``replay_throughput``), the shoe codec (``shoe_link``), a display frame (``display``) and the
contract's envelope check (``contract``); ``--bench multi_venue`` instead, the group's centre
taking a backlog (``multi_venue``, about a minute a run: not among the defaults). It asserts
nothing; it is how a refactor shows that it kept the figures (issue 14).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# (module, arguments, figures: a path into its JSON, lower is better unless said)
BENCHES: list[tuple[str, list[str], list[str]]] = [
    ("replay_throughput", ["--hands", "2000"],
     ["card_us.p50", "card_us.p99", "card_over_floor_p50", "hands_per_s"]),
    ("shoe_link", ["--frames", "50000", "--samples", "500"],
     ["decode.frames_per_s", "latency.p50_ratio"]),
    ("display", ["--frames", "200", "--idle-seconds", "2"], ["frame.render_push_ms",
                                                            "frame.ratio"]),
    ("contract", [], ["over_json_loads.wire_decode", "over_json_loads.receive_jsonschema_rs"]),
]
# Run only when asked for by name (--bench): higher is better for events a second.
ON_REQUEST: list[tuple[str, list[str], list[str]]] = [
    ("multi_venue", ["--live-seconds", "10", "--no-faults"],
     ["ingest_events_per_s", "backlog_seconds", "caught_up_after_last_event_s"]),
]


def _figure(data: dict[str, Any], path: str) -> float:
    value: Any = data
    for key in path.split("."):
        value = value[key]
    return float(value)


def _run(tree: Path, module: str, args: list[str]) -> dict[str, Any]:
    # The tree's own packages come first on the path (python -m puts the working directory
    # there): the old commit runs its own code with this venv's libraries.
    # The benchmarks moved from tests/bench to tablectl/bench: each tree runs its own.
    package = "tablectl.bench" if (tree / "tablectl" / "bench" / f"{module}.py").exists() \
        else "tests.bench"
    result = subprocess.run([sys.executable, "-m", f"{package}.{module}", *args, "--json"],
                            cwd=tree, capture_output=True, text=True, check=True, timeout=600)
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def compare(rev: str, rounds: int, names: list[str] | None = None,
            ) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    benches = ([b for b in BENCHES + ON_REQUEST if b[0] in names] if names else BENCHES)
    with tempfile.TemporaryDirectory(prefix="bench-versus-") as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(old_tree), rev], check=True)
        try:
            for module, args, figures in benches:
                runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
                for _ in range(rounds):
                    runs["old"].append(_run(old_tree, module, args))
                    runs["new"].append(_run(ROOT, module, args))
                for path in figures:
                    old = statistics.median(_figure(r, path) for r in runs["old"])
                    new = statistics.median(_figure(r, path) for r in runs["new"])
                    out.setdefault(module, {})[path] = {
                        "old": round(old, 3), "new": round(new, 3),
                        "new_over_old": round(new / old, 2) if old else float("nan")}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old_tree)], check=False)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare with (e.g. the one before a change)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bench", action="append", metavar="NAME",
                        choices=[b[0] for b in BENCHES + ON_REQUEST],
                        help="only these (repeat it); multi_venue only so")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = compare(args.rev, args.rounds, args.bench)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{'figure':<48} {args.rev[:10]:>10} {'this':>10} {'this/old':>9}")
    for module, figures in result.items():
        for path, row in figures.items():
            print(f"{module + ' ' + path:<48} {row['old']:>10g} {row['new']:>10g} "
                  f"{row['new_over_old']:>9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
