"""Benchmarks: commands that print figures (JSON with ``--json``), each against a floor measured
in the same process. Installed with the table and the hub, they run with the runtime extras
alone (``tablectl bench NAME``), on the machine whose figures matter. Shared here: how a figure
is read off a list of samples, and a replay of input lines through the core."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any


def replay_lines(lines: Iterable[Any], profile: str = "tda-2024",
                 **config: Any) -> list[Any]:
    """Input objects (or JSON strings) through the core: every event."""
    from controller.replay import replay
    from controller.table import TableConfig
    from houses.loaders import load_profile, load_structure

    text = [x if isinstance(x, str) else json.dumps(x) for x in lines]
    return list(replay(text, load_profile(profile), TableConfig(**config),
                       structure_loader=load_structure))


def percentile(values: Sequence[float], q: float) -> float:
    """The sample at the ``q``-th percentile (nearest rank; 50 is the median)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def ms(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of samples in seconds, in milliseconds to the microsecond."""
    return round(percentile(values, q) * 1000, 3)


def latency_against_floor(pipeline: list[float], floor: list[float]) -> dict[str, object]:
    """Latency samples (seconds) of the pipeline and of its bare floor: p50 and p99 of each in
    milliseconds, and their ratios, which a noisy machine leaves steadier than either figure."""
    return {
        "pipeline": {"p50_ms": ms(pipeline, 50), "p99_ms": ms(pipeline, 99)},
        "floor": {"p50_ms": ms(floor, 50), "p99_ms": ms(floor, 99)},
        "p50_ratio": round(percentile(pipeline, 50) / percentile(floor, 50), 2),
        "p99_ratio": round(percentile(pipeline, 99) / percentile(floor, 99), 2),
    }
