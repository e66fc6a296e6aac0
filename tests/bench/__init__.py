"""Benchmarks: commands that print figures (JSON with ``--json``), each against a floor measured
in the same process. Shared here: how a figure is read off a list of samples."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The sample at the ``q``-th percentile (nearest rank; 50 is the median)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def ms(values: list[float], q: float) -> float:
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
