"""The closing summary is a pure function of the report."""

from __future__ import annotations

from harness.report.console import render_summary


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
