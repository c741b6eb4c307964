"""The closing summary is a pure function of the report."""

from __future__ import annotations

from streamproof.report.console import render_summary


def _report() -> dict[str, object]:
    return {
        "scenarios": [
            {
                "id": "gateway/a",
                "file": "scenarios/gateway/a.yaml",
                "outcome": "passed",
                "verdicts": [{"requirement": "GW-FRAME-ID-FRESH", "outcome": "non-strict"}],
            },
            {"id": "gateway/b", "file": "b.yaml", "outcome": "skipped", "error": "no multi_agent"},
            {"id": "gateway/c", "file": "c.yaml", "outcome": "skipped", "error": "no multi_agent"},
            {"id": "gateway/d", "file": "scenarios/gateway/d.yaml", "outcome": "failed"},
        ]
    }


def test_unmet_shoulds_show_without_strict_and_skips_group_by_reason() -> None:
    lines = render_summary(_report())
    assert "SHOULD unmet (1; they fail the run only with --strict):" in lines
    assert "  GW-FRAME-ID-FRESH in gateway/a" in lines
    assert "skipped (2): no multi_agent" in lines
    assert lines.index("  gateway/b") == lines.index("skipped (2): no multi_agent") + 1


def test_each_failed_scenario_gets_the_command_that_reruns_it_alone() -> None:
    rerun = ["streamproof", "run", "--target", "my gateway.yaml", "--bug", "x"]
    lines = render_summary(_report(), rerun)
    assert (
        "  streamproof run --target 'my gateway.yaml' --bug x scenarios/gateway/d.yaml -k gateway/d"
    ) in lines


def test_a_clean_run_adds_nothing() -> None:
    assert render_summary({"scenarios": [{"id": "g/a", "outcome": "passed", "verdicts": []}]}) == []


def test_an_interrupted_scenario_is_named_and_not_offered_for_a_rerun() -> None:
    report = {
        "summary": {"warnings": ["1 scenario(s) not judged: needs engine toxiproxy (g/b)"]},
        "scenarios": [
            {"id": "g/a", "file": "a.yaml", "outcome": "interrupted", "error": "SIGINT"},
            {"id": "g/b", "file": "b.yaml", "outcome": "skipped", "error": "needs engine"},
        ],
    }
    lines = render_summary(report, ["streamproof", "run"])
    assert "interrupted, not judged: g/a" in lines
    assert "warning: 1 scenario(s) not judged: needs engine toxiproxy (g/b)" in lines
    assert not any("rerun" in line or "-k g/a" in line for line in lines)


def test_the_counts_name_the_faults_when_a_scenario_planned_one() -> None:
    from streamproof.report.console import render_counts

    counts = {
        "requirement": {"pass": 3, "fail": 0, "non-strict": 0, "not-applicable": 1, "skip": 0},
        "expectation": {"pass": 1, "fail": 1},
        "fault": {"pass": 2, "fail": 1, "not-applicable": 1},
    }
    text = render_counts(counts)
    assert text.endswith("; faults: 2 fired, 1 never fired, 1 optional not fired")
    assert "faults" not in render_counts({**counts, "fault": {"pass": 0, "fail": 0}})
