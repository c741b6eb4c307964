"""results.json: its layout (indented, one line per requirement and per scenario) reads back as
the report it was written from, and verdicts without their default fields read back whole."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.report.results import dumps_results, results_report, write_results

VERDICTS = [
    Verdict(requirement="GW-SSE-RESPONSE", level=Level.MUST, outcome=Outcome.PASS, message="ok"),
    Verdict(
        requirement="GW-FRAME-ID-FRESH",
        level=Level.SHOULD,
        outcome=Outcome.NON_STRICT,
        message="ids repeat\nat frame 3",
        expected="fresh ids",
        observed=["1", "1"],
    ),
    Verdict(
        requirement="expect.frames",
        level=Level.MUST,
        outcome=Outcome.PASS,
        message="as expected",
        kind=Kind.EXPECTATION,
    ),
]


def _report() -> dict[str, Any]:
    records = [
        {
            "id": f"gateway/s{i}",
            "outcome": "passed",
            "verdicts": [v.model_dump(mode="json", exclude_defaults=True) for v in VERDICTS],
            "observation": {"frame_sequence": "delta×3 message done", "note": "two\nlines"},  # noqa: RUF001
        }
        for i in range(3)
    ]
    return results_report(
        records,
        target_file=None,
        bug=None,
        time_scale=0.1,
        strict=False,
        started_at=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
        duration_s=1.0,
        exitstatus=0,
    )


def test_the_layout_reads_back_as_the_report(tmp_path: Path) -> None:
    report = _report()
    path = write_results(report, tmp_path / "deep" / "results.json")
    assert json.loads(path.read_text(encoding="utf-8")) == report
    lines = path.read_text(encoding="utf-8").splitlines()
    scenario_lines = [line for line in lines if line.lstrip().startswith('{"id":"gateway/s')]
    assert len(scenario_lines) == 3  # one line each
    assert '  "summary": {' in lines  # the summary is indented for people
    assert any(line.startswith('    "GW-FRAME-ID-FRESH": {') for line in lines)


def test_verdicts_without_their_defaults_read_back_whole() -> None:
    report = json.loads(dumps_results(_report()))
    stored = report["scenarios"][0]["verdicts"]
    assert "expected" not in stored[0] and "kind" not in stored[0]
    assert [Verdict.model_validate(v) for v in stored] == VERDICTS
    assert report["summary"]["verdicts"]["expectation"]["pass"] == 3
    assert report["requirements"]["GW-FRAME-ID-FRESH"]["non-strict"] == 3


def test_an_empty_report_is_valid_json() -> None:
    report = results_report(
        [],
        target_file=None,
        bug=None,
        time_scale=0.1,
        strict=False,
        started_at=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
        duration_s=0.0,
        exitstatus=2,
    )
    assert json.loads(dumps_results(report)) == report


# --- the summary a gate reads ------------------------------------------------------------------


def _verdict(requirement: str, outcome: Outcome, kind: Kind = Kind.REQUIREMENT) -> dict[str, Any]:
    level = Level.SHOULD if outcome is Outcome.NON_STRICT else Level.MUST
    verdict = Verdict(requirement=requirement, level=level, outcome=outcome, message="m", kind=kind)
    return verdict.model_dump(mode="json", exclude_defaults=True)


def _summary(records: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    options: dict[str, Any] = {"strict": False, "exitstatus": 1, **kw}
    summary: dict[str, Any] = results_report(
        records,
        target_file=None,
        bug=None,
        time_scale=0.1,
        started_at=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
        duration_s=1.0,
        **options,
    )["summary"]
    return summary


def test_the_summary_counts_every_kind_of_failure_and_ok_agrees() -> None:
    from streamproof.report.results import summary_line

    records = [
        {"id": "a", "outcome": "failed", "verdicts": [_verdict("GW-AUTH", Outcome.FAIL)]},
        {
            "id": "b",
            "outcome": "failed",
            "verdicts": [_verdict("expect.frames", Outcome.FAIL, Kind.EXPECTATION)],
        },
        {
            "id": "c",
            "outcome": "failed",
            "verdicts": [_verdict("fault.fired", Outcome.FAIL, Kind.FAULT)],
        },
        {"id": "d", "outcome": "failed", "error": "TargetError: x", "target_error": True},
        {"id": "e", "outcome": "failed", "error": "TimeoutError: no end"},
        {"id": "f", "outcome": "passed", "verdicts": [_verdict("GW-ID", Outcome.NON_STRICT)]},
        {"id": "g", "outcome": "failed", "error": "required: no mitmproxy", "skip_cause": "engine"},
    ]
    summary = _summary(records)
    assert {k: summary[k] for k in summary if k.endswith(("_failures", "_errors"))} == {
        "must_failures": 1,
        "should_failures": 0,  # not enforced without --strict
        "expectation_failures": 1,
        "fault_failures": 1,
        "target_errors": 1,
        "scenario_errors": 1,
    }
    assert summary["not_run"] == 1  # --require-all: an engine this install lacks
    assert summary["ok"] is False and summary["failed"] == 6
    line = summary_line(summary)
    assert line.startswith("FAILED: 1 MUST requirement(s) broken, 1 expectation(s) not met, ")
    assert "1 planned fault(s) that never fired" in line and "0 " not in line
    # only an expectation failed: the counts still say so, never "0 MUST failures" alone
    only = _summary(records[1:2])
    assert only["must_failures"] == 0 and only["expectation_failures"] == 1
    assert summary_line(only) == "FAILED: 1 expectation(s) not met"
    strict = _summary(records[5:], strict=True)
    assert strict["should_failures"] == 1


def test_a_run_whose_every_scenario_was_skipped_judged_nothing() -> None:
    skipped = [
        {"id": "a", "outcome": "skipped", "error": "needs engine x", "skip_cause": "engine"},
        {"id": "b", "outcome": "skipped", "error": "needs engine x", "skip_cause": "engine"},
    ]
    summary = _summary(skipped, exitstatus=0)
    assert summary["ok"] is False
    assert summary["error"].startswith("nothing was judged: every selected scenario (2)")
    assert "2 skipped: needs engine x" in summary["error"]
    assert summary["warnings"] == ["2 scenario(s) not judged: needs engine x (a, b)"]
    ran = [{"id": "c", "outcome": "passed", "verdicts": []}, *skipped[:1]]
    summary = _summary(ran, exitstatus=0)
    assert summary["ok"] is True and "error" not in summary
    assert summary["warnings"] == ["1 scenario(s) not judged: needs engine x (a)"]
    declared = [{"id": "d", "outcome": "skipped", "error": "no auth", "skip_cause": "capability"}]
    assert "warnings" not in _summary([ran[0], *declared], exitstatus=0)


def test_an_interrupted_scenario_is_neither_failed_nor_passed() -> None:
    records = [
        {"id": "a", "outcome": "passed", "verdicts": []},
        {"id": "b", "outcome": "interrupted", "error": "interrupted by SIGINT"},
    ]
    summary = _summary(records, exitstatus=2, interrupted=True)
    assert summary["failed"] == 0 and summary["interrupted_scenarios"] == 1
    assert summary["ok"] is False and summary["interrupted"] is True
    # a collection error is pytest's exit status 2 too, but no interrupt
    assert _summary(records[:1], exitstatus=2, interrupted=False)["interrupted"] is False
