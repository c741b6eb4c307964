"""The flake table's arithmetic (harness/streamproof/bench/flakes.py): which failures a
results.json names,
and how runs fold into rows; the runs themselves are the benchmark's, not a test's."""

from __future__ import annotations

from streamproof.bench.flakes import RunResult, failures_of, summarise, table


def test_failures_name_the_scenario_and_the_broken_rule() -> None:
    results = {
        "summary": {"scenarios": 3},
        "scenarios": [
            {
                "id": "gateway/a",
                "outcome": "passed",
                "verdicts": [{"requirement": "GW-X", "outcome": "pass"}],
            },
            {
                "id": "gateway/b",
                "outcome": "failed",
                "verdicts": [
                    {"requirement": "GW-Y", "outcome": "fail"},
                    {"requirement": "GW-Z", "outcome": "not-applicable"},
                ],
            },
            {"id": "a2a_client/c", "outcome": "failed", "error": "TargetError: gone"},
            {"id": "a2a_client/d", "outcome": "skipped"},
        ],
    }
    assert failures_of(results) == ("gateway/b: GW-Y", "a2a_client/c: failed")
    assert failures_of({"summary": {"error": "bad input"}, "scenarios": []}) == (
        "run error: bad input",
    )


def test_rows_count_failed_runs_per_scale_and_mode() -> None:
    runs = [
        RunResult(0.05, False, 60.0, 0, 0.5, 53),
        RunResult(0.05, False, 70.0, 1, 0.7, 53, ("gateway/b: GW-Y",)),
        RunResult(0.05, True, 90.0, 1, 2.1, 53, ("gateway/b: GW-Y",)),
        RunResult(0.1, False, 93.0, 0, 0.4, 53),
        RunResult(0.1, False, 95.0, 143, 0.4, 0),  # killed: no failure named, its exit is
    ]
    rows = summarise(runs)
    assert [(r["scale"], r["mode"], r["runs"], r["failed_runs"]) for r in rows] == [
        (0.1, "in a row", 2, 1),
        (0.05, "in a row", 2, 1),
        (0.05, "beside another suite", 1, 1),
    ]
    assert rows[0]["failures"] == {"exit 143": 1}
    assert rows[1]["failures"] == {"gateway/b: GW-Y": 1}
    assert rows[1]["wall_median_s"] == 65.0 and rows[1]["wall_max_s"] == 70.0
    text = table(rows)
    assert text.splitlines()[2].startswith("| 0.1 (in a row) | 2 | 1 | 94.0 s | 95.0 s | 0.4 |")
    assert "gateway/b: GW-Y x1" in text
