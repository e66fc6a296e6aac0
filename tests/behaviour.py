"""What the core does, as digests: the proof that a refactor changed no behaviour.

    python -m tests.behaviour            # compare with tests/behaviour.json; exit 1 on a change
    python -m tests.behaviour --write    # record the current behaviour (only when a change is
                                         # meant: say so in the commit)
    python -m tests.behaviour --dump CASE  # the case's inputs and events, one JSON per line,
                                           # to diff against the same dump at another commit

A case is a replay through the table core: every scenario file under every built-in profile,
and sessions the scripted dealer generates (mixed games, seat changes, dealers signing in,
irregularities, the blind clock) under every profile. For each case the digest covers the input
lines, every event the core emits and its public view (what the dashboard may see), as JSON with
its keys in the order emitted. The golden screens have their own test (``tests/test_display.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import SCENARIOS

SNAPSHOT = Path(__file__).parent / "behaviour.json"
SESSION_SEEDS = (1, 2, 3)
SESSION_HANDS = 40


def _profiles() -> list[str]:
    from houses.loaders import builtin_names

    return builtin_names()


def cases() -> Iterator[tuple[str, str, list[str]]]:
    """(case name, profile name, input lines) for every case, in a fixed order."""
    from houses.loaders import load_profile
    from simulators.dealer_script import session

    for path in sorted(SCENARIOS.glob("*.jsonl")):
        lines = path.read_text().splitlines()
        for profile in _profiles():
            yield f"scenario/{path.stem}/{profile}", profile, lines
    for profile in _profiles():
        for seed in SESSION_SEEDS:
            inputs, _ = session(random.Random(seed), load_profile(profile),
                                hands=SESSION_HANDS, game="mixed", irregularity_rate=0.35,
                                clock="tda-2024", brisk=True, dealers=("D1", "D2"))
            yield (f"session/{seed}/{profile}", profile,
                   [json.dumps(line, sort_keys=True) for line in inputs])


def transcript(profile: str, lines: list[str]) -> Iterator[str]:
    """The case as text: its inputs, then each event and its public view."""
    from contract.views import public_event
    from controller.replay import replay
    from houses.loaders import load_profile, load_structure

    for line in lines:
        yield "in " + line
    for event in replay(lines, load_profile(profile), structure_loader=load_structure):
        # As ``tablectl replay`` prints them: key order is part of what must not change.
        yield "ev " + json.dumps(event, separators=(",", ":"))
        yield "pv " + json.dumps(public_event(event), separators=(",", ":"))


def digests() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, profile, lines in cases():
        digest = hashlib.sha256()
        events = 0
        for text in transcript(profile, lines):
            digest.update(text.encode() + b"\n")
            events += text.startswith("ev ")
        out[name] = {"events": events, "sha256": digest.hexdigest()}
    return out


def changed(recorded: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"{name}: no longer a case" for name in sorted(set(recorded) - set(now))]
    lines += [f"{name}: a new case (record it with --write)"
              for name in sorted(set(now) - set(recorded))]
    for name in sorted(set(now) & set(recorded)):
        if now[name] != recorded[name]:
            lines.append(f"{name}: {recorded[name]['events']} events before, "
                         f"{now[name]['events']} now; the transcript differs")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="record the current behaviour")
    parser.add_argument("--dump", metavar="CASE", help="print one case's transcript")
    args = parser.parse_args(argv)
    if args.dump:
        for name, profile, lines in cases():
            if name == args.dump:
                for text in transcript(profile, lines):
                    print(text)
                return 0
        print(f"no case {args.dump!r}", file=sys.stderr)
        return 2
    now = digests()
    if args.write:
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(now)} cases, {sum(c['events'] for c in now.values())} events")
        return 0
    problems = changed(json.loads(SNAPSHOT.read_text()), now)
    for line in problems:
        print(line)
    print(f"{len(now)} cases, {len(problems)} changed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
