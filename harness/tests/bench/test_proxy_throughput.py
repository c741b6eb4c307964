"""The engine benchmark runs and prints every path it was asked for (figures are its output,
never asserted: speed lives in benchmarks, not in timed tests)."""

from __future__ import annotations

import pytest

from streamproof.bench.proxy_throughput import main


def test_a_small_run_prints_each_path_and_its_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--events", "300", "--paced-events", "5", "--rounds", "1"]
    assert main([*args, "--paths", "direct", "inline", "inline-process"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "direct" in line and "inline" in line)
    assert header.split() == ["direct", "inline", "inline-process"]
    assert "ratio to direct" in out and "event latency ms (p95)" in out
