"""The parallel bench's arithmetic and verdict comparison (harness/streamproof/bench/parallel.py):
what a
results.json's verdicts are, which differ between a serial and a parallel run, the ratio and
the table; the runs themselves are the benchmark's, not a test's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamproof.bench import parallel
from streamproof.bench.parallel import RunResult, differences, ratio, slowest, table, verdicts_of
from streamproof.bench.suite_run import SuiteRun
from streamproof.targets.warm.pool import SWITCH

RESULTS: dict[str, Any] = {
    "scenarios": [
        {
            "id": "gateway/a",
            "outcome": "passed",
            "verdicts": [
                {"requirement": "GW-X", "outcome": "pass"},
                {"requirement": "expect.frames", "outcome": "pass", "kind": "expectation"},
            ],
        },
        {"id": "a2a_client/b", "outcome": "failed", "error": "TargetError: gone"},
    ]
}


def test_verdicts_are_read_per_scenario_by_kind_and_requirement() -> None:
    assert verdicts_of(RESULTS) == {
        "gateway/a": {
            "outcome": "passed",
            "requirement GW-X": "pass",
            "expectation expect.frames": "pass",
        },
        "a2a_client/b": {"outcome": "failed"},
    }


def test_differences_name_every_scenario_and_verdict_that_changed() -> None:
    serial = verdicts_of(RESULTS)
    assert differences(serial, serial) == []
    parallel = {
        "gateway/a": {"outcome": "failed", "requirement GW-X": "fail"},
        "gateway/c": {"outcome": "passed"},
    }
    assert differences(serial, parallel) == [
        "gateway/a: outcome: passed -> failed",
        "gateway/a: requirement GW-X: pass -> fail",
        "gateway/a: expectation expect.frames: pass -> missing",
        "a2a_client/b: failed -> missing",
        "gateway/c: missing -> passed",
    ]


def test_the_ratio_is_serial_over_parallel() -> None:
    assert ratio(77.0, 40.0) == 1.93
    assert ratio(10.0, 0.0) is None


def test_slowest_lists_the_longest_scenarios_first() -> None:
    assert slowest({"b": 1.0, "a": 3.0, "c": 1.0, "d": 0.5}, 3) == [
        ("a", 3.0),
        ("b", 1.0),
        ("c", 1.0),
    ]


def test_the_table_gives_both_walls_the_ratio_and_whether_verdicts_match() -> None:
    same = verdicts_of(RESULTS)
    other = {**same, "gateway/a": {**same["gateway/a"], "requirement GW-X": "fail"}}
    rounds = [
        (RunResult(0, 80.0, 1, 0.5, same), RunResult(2, 40.0, 1, 1.5, same)),
        (RunResult(0, 90.0, 1, 0.6, same), RunResult(2, 50.0, 1, 1.2, other)),
    ]
    lines = table(rounds).splitlines()
    assert lines[2] == (
        "| 1 | 0.50 / 1.50 | 80.0 s (1 passed) | 40.0 s -n 2 (1 passed) | 2.0x | yes |"
    )
    assert lines[3].endswith("| 1.8x | no |")
    killed = RunResult(2, 900.0, -1, 1.0, problem="killed after 900 s")
    assert table([(rounds[0][0], killed)]).splitlines()[2].endswith("| no |")


def test_cold_runs_serially_with_warm_starts_off_first_and_compares_its_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[list[str], dict[str, str] | None]] = []

    def fake_run(
        args: list[str], report_dir: Path, timeout_s: float, env: dict[str, str] | None = None
    ) -> SuiteRun:
        calls.append((list(args), env))
        results = RESULTS
        if env:  # the cold run: one verdict differs, which the bench must say
            results = {"scenarios": [{**RESULTS["scenarios"][0], "outcome": "failed"}]}
        return SuiteRun(0, 10.0 if env else 5.0, 0.1, results)

    monkeypatch.setattr(parallel, "run_suite", fake_run)
    status = parallel.main(["--cold", "--out", str(tmp_path)])
    said = capsys.readouterr().out
    assert [env for _, env in calls] == [{SWITCH: "0"}, None, None]
    assert [("-n" in args) for args, _ in calls] == [False, False, True]
    assert "serial with warm starts off 10.0 s, with them 5.0 s: 2.0x" in said
    assert "warm starts change: gateway/a" in said
    assert status == 1
