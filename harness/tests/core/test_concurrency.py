"""harness/streamproof/core/concurrency.py: the bound on K, percentiles, the console line of a
scenario's load."""

from __future__ import annotations

import pytest

from streamproof.core.concurrency import CONCURRENCY_RANGE, MAX_CONCURRENCY, load_line, percentile


def test_nearest_rank_percentiles() -> None:
    values = [0.5, 0.1, 0.4, 0.2, 0.3]
    assert percentile(values, 50) == 0.3
    assert percentile(values, 95) == 0.5
    assert percentile(values, 0) == 0.1
    assert percentile([0.25], 95) == 0.25
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match="0 to 100"):
        percentile(values, 101)


def test_the_bound_is_said_with_the_value_refused() -> None:
    assert MAX_CONCURRENCY == 32
    assert CONCURRENCY_RANGE.format(40) == "must be 1 to 32 sessions at once, not 40"


def test_load_line_names_each_figure_in_milliseconds() -> None:
    load = {
        "sessions": 4,
        "first_frame_s": {"p50": 0.359, "p95": 0.4114, "n": 4},
        "frame_latency_s": {"p50": None, "p95": None, "n": 0},
    }
    assert load_line("gateway/x", load) == (
        "gateway/x x4: first frame p50 359 ms, p95 411 ms (n=4); frame latency n/a"
    )
