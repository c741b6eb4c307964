"""results.json: its layout (indented, one line per requirement and per scenario) reads back as
the report it was written from, and verdicts without their default fields read back whole."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from harness.report.results import dumps_results, results_report, write_results
from harness.verdicts import Kind, Level, Outcome, Verdict

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
