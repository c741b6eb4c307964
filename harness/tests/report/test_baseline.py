"""Baselines: a file is validated at load with every problem at its line; which entries are
known, fixed or not run follows from a run's records alone; ``baseline write`` reads back as the
failures it recorded; a run whose enforced failures are all known is ok."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.report.baseline import (
    REASON_LIMIT,
    Baseline,
    BaselineError,
    EntryStatus,
    KnownFailure,
    baseline_summary,
    baseline_text,
    entry_statuses,
    failures_of_report,
    headline,
    load_baseline,
    one_line_reason,
    parse_baseline,
)
from streamproof.report.console import render_baseline, render_summary
from streamproof.report.results import results_report

GOOD = """\
# known failures of our gateway
known_failures:
  - scenario: gateway/plain-streamed-answer
    requirement: GW-FRAME-TYPES
    reason: our frames are untyped until ticket 42
  - scenario: gateway/plain-streamed-answer
    requirement: expect.frames
    reason: follows from the untyped frames
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(BaselineError) as caught:
        parse_baseline(text, "base.yaml")
    return [str(p) for p in caught.value.problems]


def test_a_good_file_loads_with_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "base.yaml"
    path.write_text(GOOD, encoding="utf-8")
    baseline = load_baseline(path)
    assert baseline.file == str(path)
    assert [e.key for e in baseline.entries] == [
        ("gateway/plain-streamed-answer", "GW-FRAME-TYPES"),
        ("gateway/plain-streamed-answer", "expect.frames"),
    ]
    assert baseline.reason("gateway/plain-streamed-answer", "GW-FRAME-TYPES") == (
        "our frames are untyped until ticket 42"
    )
    assert baseline.reason("gateway/plain-streamed-answer", "GW-SSE-RESPONSE") is None
    assert baseline.reason("gateway/other", "GW-FRAME-TYPES") is None
    with pytest.raises(ValueError, match="frozen"):
        baseline.entries[0].reason = "changed"  # type: ignore[misc]


def test_a_fault_that_never_fired_may_be_a_known_failure() -> None:
    text = "known_failures:\n  - {scenario: gateway/a, requirement: fault.fired, reason: r}\n"
    (entry,) = parse_baseline(text, "b.yaml").entries
    assert entry.requirement == "fault.fired"


def test_an_empty_list_is_a_baseline_with_no_entry() -> None:
    assert parse_baseline("known_failures: []\n", "b.yaml").entries == ()


def test_every_problem_names_the_file_and_line() -> None:
    text = """\
known_failures:
  - scenario: gateway/a
    requirement: GW-NO-SUCH-RULE
    reason: r
  - scenario: gateway/b
    requirement: GW-FRAME-TYPES
  - scenario: gateway/c
    requirement: GW-FRAME-TYPES
    reason: r
    ticket: 7
"""
    problems = _problems(text)
    assert any(
        p.startswith("base.yaml:3: known_failures[0].requirement:")
        and "'GW-NO-SUCH-RULE' is neither a requirement id" in p
        for p in problems
    ), problems
    assert any(p.startswith("base.yaml:5: known_failures[1]") and "reason" in p for p in problems)
    assert any(
        p.startswith("base.yaml:10: known_failures[2].ticket: unknown key") for p in problems
    )


def test_the_wrong_shape_a_duplicate_and_broken_yaml_are_each_said() -> None:
    (shape,) = _problems("- scenario: gateway/a\n  requirement: GW-AUTH\n  reason: r\n")
    assert shape.startswith("base.yaml:1: a baseline file is a mapping with one key, known_fail")
    assert _problems("failures: []\n") == [
        "base.yaml:1: failures: unknown key; did you mean 'known_failures'?",
        "base.yaml:1: known_failures: Field required",
    ]
    (empty,) = _problems("")
    assert empty == "base.yaml: a baseline file is one YAML document (no document found)"
    (dup,) = _problems(
        "known_failures:\n"
        "  - {scenario: gateway/a, requirement: GW-AUTH, reason: r}\n"
        "  - {scenario: gateway/a, requirement: GW-AUTH, reason: again}\n"
    )
    assert dup == ("base.yaml:3: known_failures[1]: gateway/a GW-AUTH is already listed at line 2")
    (syntax,) = _problems("known_failures: [\n")
    assert syntax.startswith("base.yaml:") and "malformed YAML" in syntax


def test_a_missing_file_is_a_baseline_error(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match=r"nowhere.yaml: cannot read the baseline"):
        load_baseline(tmp_path / "nowhere.yaml")


# --- the one-line reason --------------------------------------------------------------------


def test_the_headline_is_the_id_the_level_and_what_was_seen() -> None:
    verdict = Verdict(
        requirement="A2A-C-RECOVERY",
        level=Level.MUST,
        outcome=Outcome.FAIL,
        message="A2A-C-RECOVERY: the client never recovered after the drop. Rule: resubscribe\n"
        "second line",
    )
    assert headline(verdict) == "A2A-C-RECOVERY MUST: the client never recovered after the drop"
    long = one_line_reason("GW-AUTH", "GW-AUTH: " + "x" * 500)
    assert len(long) == REASON_LIMIT and long.endswith("…")
    assert one_line_reason("GW-AUTH", "") == "failed"


# --- matching: known, fixed, not run ------------------------------------------------------------


def _verdict(requirement: str, outcome: Outcome, **extra: Any) -> dict[str, Any]:
    kind = Kind.EXPECTATION if requirement.startswith("expect.") else Kind.REQUIREMENT
    level = Level.SHOULD if requirement == "GW-FRAME-ID-FRESH" else Level.MUST
    verdict = Verdict(
        requirement=requirement,
        level=level,
        outcome=outcome,
        message=f"{requirement}: seen",
        kind=kind,
    )
    return verdict.model_dump(mode="json", exclude_defaults=True) | extra


def _baseline(*pairs: tuple[str, str]) -> Baseline:
    return Baseline(
        "base.yaml",
        tuple(KnownFailure(scenario=s, requirement=r, reason=f"why {r}") for s, r in pairs),
    )


BASELINE = _baseline(
    ("gateway/a", "GW-FRAME-TYPES"),  # still failing: known
    ("gateway/a", "GW-AUTH"),  # now passes: fixed
    ("gateway/a", "GW-DISPOSE"),  # nothing to judge now: fixed
    ("gateway/a", "GW-RUN-BOUND"),  # not judged by the scenario at all: fixed
    ("gateway/a", "GW-HISTORY-ISOLATION"),  # capability not declared: not run
    ("gateway/a", "GW-FRAME-ID-FRESH"),  # an unmet SHOULD: enforced only under --strict
    ("gateway/skipped", "GW-AUTH"),  # its scenario was skipped
    ("gateway/errored", "GW-AUTH"),  # its scenario could not run (target error)
    ("gateway/absent", "GW-AUTH"),  # its scenario was not selected
)

RECORDS: list[dict[str, Any]] = [
    {
        "id": "gateway/a",
        "outcome": "failed",
        "known_failure": True,
        "verdicts": [
            _verdict("GW-FRAME-TYPES", Outcome.FAIL, baseline="why GW-FRAME-TYPES"),
            _verdict("GW-AUTH", Outcome.PASS),
            _verdict("GW-DISPOSE", Outcome.NOT_APPLICABLE),
            _verdict("GW-HISTORY-ISOLATION", Outcome.SKIP),
            _verdict("GW-FRAME-ID-FRESH", Outcome.NON_STRICT),
        ],
    },
    {
        "id": "gateway/new",
        "outcome": "failed",
        "verdicts": [_verdict("GW-AUTH", Outcome.FAIL), _verdict("expect.frames", Outcome.FAIL)],
    },
    {"id": "gateway/skipped", "outcome": "skipped", "error": "no auth declared"},
    {"id": "gateway/errored", "outcome": "failed", "error": "TargetError: gone"},
]


def test_each_entry_is_known_fixed_not_run_or_unenforced() -> None:
    statuses = {e.key: s for e, s in entry_statuses(BASELINE, RECORDS, strict=False)}
    assert statuses == {
        ("gateway/a", "GW-FRAME-TYPES"): EntryStatus.KNOWN,
        ("gateway/a", "GW-AUTH"): EntryStatus.FIXED,
        ("gateway/a", "GW-DISPOSE"): EntryStatus.FIXED,
        ("gateway/a", "GW-RUN-BOUND"): EntryStatus.FIXED,
        ("gateway/a", "GW-HISTORY-ISOLATION"): EntryStatus.NOT_RUN,
        ("gateway/a", "GW-FRAME-ID-FRESH"): EntryStatus.UNENFORCED,
        ("gateway/skipped", "GW-AUTH"): EntryStatus.NOT_RUN,
        ("gateway/errored", "GW-AUTH"): EntryStatus.NOT_RUN,
        ("gateway/absent", "GW-AUTH"): EntryStatus.NOT_RUN,
    }
    strict = {e.key: s for e, s in entry_statuses(BASELINE, RECORDS, strict=True)}
    assert strict[("gateway/a", "GW-FRAME-ID-FRESH")] is EntryStatus.KNOWN


def test_the_summary_counts_known_and_new_failures_and_lists_fixed_and_not_run() -> None:
    summary = baseline_summary(BASELINE, RECORDS, strict=False)
    assert summary["file"] == "base.yaml"
    assert summary["known"] == 1
    assert summary["new_failures"] == 2  # GW-AUTH and expect.frames in gateway/new
    assert [(e["scenario"], e["requirement"]) for e in summary["fixed"]] == [
        ("gateway/a", "GW-AUTH"),
        ("gateway/a", "GW-DISPOSE"),
        ("gateway/a", "GW-RUN-BOUND"),
    ]
    assert summary["fixed"][0]["reason"] == "why GW-AUTH"
    assert [e["scenario"] for e in summary["not_run"]] == [
        "gateway/a",
        "gateway/skipped",
        "gateway/errored",
        "gateway/absent",
    ]
    # Under --strict the unmet SHOULD is an enforced failure no verdict marked known: new.
    assert baseline_summary(BASELINE, RECORDS, strict=True)["new_failures"] == 3


def _report(records: list[dict[str, Any]], baseline: Baseline | None) -> dict[str, Any]:
    return results_report(
        records,
        target_file=None,
        bug="untyped-frames",
        time_scale=0.1,
        strict=False,
        started_at=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        duration_s=1.0,
        exitstatus=1,
        baseline=baseline,
    )


def test_a_run_is_ok_when_every_failure_is_known_and_not_otherwise() -> None:
    known_only = [RECORDS[0]]
    report = _report(known_only, BASELINE)
    assert report["summary"]["ok"] is True
    assert report["summary"]["failed"] == 1  # it failed its checks, not the run
    assert report["summary"]["baseline"]["known"] == 1
    assert _report(RECORDS, BASELINE)["summary"]["ok"] is False  # new failures, an error
    assert "baseline" not in _report(known_only, None)["summary"]


def test_the_console_lists_known_fixed_and_not_run_and_reruns_only_new_failures() -> None:
    report = _report(RECORDS, BASELINE)
    lines = render_baseline(report["scenarios"], report["summary"]["baseline"])
    assert "known failure (baseline): gateway/a GW-FRAME-TYPES MUST: why GW-FRAME-TYPES" in lines
    assert "fixed, remove from the baseline: gateway/a GW-AUTH" in lines
    assert "not run, kept in the baseline: gateway/absent GW-AUTH" in lines
    assert lines[-1] == "baseline base.yaml: 1 known failure(s), 2 new, 3 fixed, 4 not run"
    for record in report["scenarios"]:
        record["file"] = f"{record['id']}.yaml"
    rerun = render_summary(report, ["streamproof", "run"])
    assert "  streamproof run gateway/new.yaml -k gateway/new" in rerun
    assert not any("-k gateway/a" in line for line in rerun)


# --- baseline write ------------------------------------------------------------------------------


def test_a_saved_run_writes_a_sorted_baseline_that_reads_back() -> None:
    records = [
        {
            "id": "gateway/z",
            "outcome": "failed",
            "verdicts": [_verdict("GW-AUTH", Outcome.FAIL), _verdict("GW-DISPOSE", Outcome.PASS)],
        },
        RECORDS[0],
        {"id": "gateway/skipped", "outcome": "skipped", "error": "no auth declared"},
    ]
    report = _report(records, None)
    entries = failures_of_report(report)
    assert [e.key for e in entries] == [
        ("gateway/a", "GW-FRAME-TYPES"),
        ("gateway/z", "GW-AUTH"),
    ]
    assert entries[1].reason == "recorded from 2026-01-02T03:04:05+00:00, seen"
    text = baseline_text(entries, header=["a header", "", "of two paragraphs"])
    assert text.startswith("# a header\n#\n# of two paragraphs\nknown_failures:\n")
    assert parse_baseline(text, "written.yaml").entries == tuple(entries)
    assert baseline_text(failures_of_report(report)) == baseline_text(entries)  # stable
    # A --strict run's unmet SHOULDs were enforced failures: they are recorded too.
    strict = failures_of_report({**report, "strict": True})
    assert ("gateway/a", "GW-FRAME-ID-FRESH") in [e.key for e in strict]
