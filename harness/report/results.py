"""``results.json``: every scenario's verdicts and observation, a summary a CI gate can read, and
a roll-up per requirement."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from harness.suites import REGISTRY
from harness.verdicts import Kind, Outcome

__all__ = ["REPORT_VERSION", "results_report", "verdict_counts"]

REPORT_VERSION = 1


def results_report(
    records: list[dict[str, Any]],
    *,
    target_file: str | None,
    bug: str | None,
    time_scale: float,
    strict: bool,
    started_at: dt.datetime,
    duration_s: float,
    exitstatus: int,
) -> dict[str, Any]:
    """The report of one run from its per-scenario records."""
    outcomes = [r.get("outcome", "failed") for r in records]
    per_requirement: dict[str, dict[str, Any]] = {}
    for record in records:
        for verdict in record.get("verdicts", []):
            entry = per_requirement.setdefault(
                verdict["requirement"],
                {"level": verdict["level"], **{o.value: 0 for o in Outcome}, "scenarios": []},
            )
            entry[verdict["outcome"]] += 1
            if verdict["outcome"] in (Outcome.FAIL.value, Outcome.NON_STRICT.value):
                entry["scenarios"].append(record["id"])
    must_failures = sum(
        1
        for r in records
        for v in r.get("verdicts", [])
        if v["outcome"] == Outcome.FAIL.value and v.get("kind") != Kind.EXPECTATION.value
    )
    counts = verdict_counts(records)
    return {
        "tool": "streamproof",
        "report_version": REPORT_VERSION,
        "target_file": target_file,
        "bug": bug,
        "time_scale": time_scale,
        "strict": strict,
        "started_at": started_at.isoformat(),
        "duration_s": round(duration_s, 3),
        "pytest_exit_status": int(exitstatus),
        "summary": {
            "scenarios": len(records),
            "passed": outcomes.count("passed"),
            "failed": outcomes.count("failed"),
            "skipped": outcomes.count("skipped"),
            "must_failures": must_failures,
            "target_errors": sum(1 for r in records if r.get("target_error")),
            "ok": "failed" not in outcomes and int(exitstatus) != 2,
            "interrupted": int(exitstatus) == 2,
            "verdicts": counts,
        },
        "requirements": {
            rid: {"statement": REGISTRY[rid].statement, **entry}
            for rid, entry in sorted(per_requirement.items())
            if rid in REGISTRY
        },
        "scenarios": records,
        "environment": {"pid": os.getpid()},
    }


def verdict_counts(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Verdicts by kind and outcome: how many requirements were judged and passed, failed,
    were not applicable (nothing to judge) or skipped (a capability not declared), and the
    same for the scenarios' own expectations."""
    counts: dict[str, dict[str, int]] = {kind.value: {o.value: 0 for o in Outcome} for kind in Kind}
    for record in records:
        for verdict in record.get("verdicts", []):
            kind = verdict.get("kind", Kind.REQUIREMENT.value)
            counts[kind][verdict["outcome"]] += 1
    return counts
