"""Concurrent sessions (``streamproof run --concurrency K``), what every suite shares: the bound
on K, percentiles, and how a scenario's load figures read on the console (core: no suite, no
I/O)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CONCURRENCY_RANGE", "MAX_CONCURRENCY", "load_line", "percentile"]

MAX_CONCURRENCY = 32
"""The most copies of a scenario one run drives at once (one target, loopback only)."""
CONCURRENCY_RANGE = "must be 1 to " + str(MAX_CONCURRENCY) + " sessions at once, not {}"
"""What is wrong with a K out of range (``.format(K)``), after the option's name."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0 to 100) of ``values`` by nearest rank, None when empty."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is 0 to 100, not {q}")
    ordered = sorted(values)
    rank = max(1, math.ceil(len(ordered) * q / 100))
    return round(ordered[rank - 1], 4)


def _ms(stats: Mapping[str, Any]) -> str:
    p50, p95 = stats.get("p50"), stats.get("p95")
    if p50 is None or p95 is None:
        return "n/a"
    return f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (n={stats.get('n', 0)})"


def load_line(scenario_id: str, load: Mapping[str, Any]) -> str:
    """One console line of a scenario's figures under load, each named by its ``load`` key
    (``first_frame_s``, ``frame_latency_s``, or a suite's own)."""
    parts = [
        f"{name.removesuffix('_s').replace('_', ' ')} {_ms(stats)}"
        for name, stats in load.items()
        if isinstance(stats, Mapping)
    ]
    return f"{scenario_id} x{load.get('sessions', '?')}: " + "; ".join(parts)
