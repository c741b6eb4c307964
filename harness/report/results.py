"""``results.json``: every scenario's verdicts and observation, a summary a CI gate can read, and
a roll-up per requirement.

The file is JSON laid out for people as well as programs: the summary and the environment are
indented, and each requirement and each scenario is one line (``grep`` finds a scenario, and
the report of a whole suite stays small). Verdicts leave out fields at their default
(``expected`` and ``observed`` when there is nothing to show, ``kind`` for a requirement), so
``Verdict.model_validate`` reads each one back as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.report.baseline import Baseline, baseline_summary
from harness.report.provenance import provenance
from harness.suites import REGISTRY
from harness.verdicts import Kind, Outcome

__all__ = ["REPORT_VERSION", "dumps_results", "results_report", "verdict_counts", "write_results"]

REPORT_VERSION = 2
"""2: a scenario where everything held keeps its suite's summary as ``observation`` and its
verdicts without ``expected``/``observed`` (``observation_detail``: ``summary``; a failure or
an unmet SHOULD keeps both whole: ``full``); verdicts leave out default fields;
``environment`` names the versions, the target and the command line."""

_ONE_LINE_ENTRIES = ("requirements", "scenarios")


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
    targets: Mapping[str, Mapping[str, Any]] | None = None,
    command_line: Sequence[str] | None = None,
    pytest_args: Sequence[str] | None = None,
    engine: str | None = None,
    baseline: Baseline | None = None,
    concurrency: int = 1,
    workers: int | None = None,
    shard: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of one run from its per-scenario records. ``targets``: per scenario kind, the
    target its environment ran (``Environment.target_info``); ``command_line`` (default
    ``sys.argv``) and ``pytest_args`` go into the report's ``environment``. With a
    ``baseline``, a scenario whose enforced failures are all known (``known_failure`` in its
    record) does not make the run fail, and the summary gets ``baseline``
    (:func:`harness.report.baseline.baseline_summary`). With ``concurrency`` above 1 (K
    copies of each scenario at once), the report says so in ``concurrency`` and each scenario
    that ran keeps its latency figures under that load in its record's ``concurrency``.
    ``workers``: how many parallel workers ran the scenarios (``-n``; None when they ran in
    this process), in ``environment.workers``; ``shard``: which part of the selection this run
    was (``--shard``), in ``environment.shard`` and, as ``I/N``, ``summary.shard``."""
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
    # A scenario whose enforced failures are all in the baseline fails its checks (it counts
    # in ``failed``) but not the run.
    gate_failed = any(
        r.get("outcome", "failed") == "failed" and not r.get("known_failure") for r in records
    )
    summary: dict[str, Any] = {
        "scenarios": len(records),
        "passed": outcomes.count("passed"),
        "failed": outcomes.count("failed"),
        "skipped": outcomes.count("skipped"),
        "must_failures": must_failures,
        "target_errors": sum(1 for r in records if r.get("target_error")),
        "ok": not gate_failed and int(exitstatus) != 2,
        "interrupted": int(exitstatus) == 2,
        "verdicts": counts,
    }
    if baseline is not None:
        summary["baseline"] = baseline_summary(baseline, records, strict=strict)
    if shard is not None:
        summary["shard"] = f"{shard['index']}/{shard['count']}"
    environment = provenance(
        targets=targets or {},
        time_scale=time_scale,
        bug=bug,
        strict=strict,
        command_line=sys.argv if command_line is None else command_line,
        pytest_args=pytest_args,
        engine=engine,
    )
    if workers is not None:
        environment["workers"] = workers
    if shard is not None:
        environment["shard"] = dict(shard)
    report: dict[str, Any] = {
        "tool": "streamproof",
        "report_version": REPORT_VERSION,
        "target_file": target_file,
        "bug": bug,
        "time_scale": time_scale,
        "strict": strict,
        "started_at": started_at.isoformat(),
        "duration_s": round(duration_s, 3),
        "pytest_exit_status": int(exitstatus),
        "summary": summary,
        "environment": environment,
        "requirements": {
            rid: {"statement": REGISTRY[rid].statement, **entry}
            for rid, entry in sorted(per_requirement.items())
            if rid in REGISTRY
        },
        "scenarios": records,
    }
    if concurrency > 1:
        report["concurrency"] = concurrency
    return report


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


def dumps_results(report: Mapping[str, Any]) -> str:
    """``report`` as the text of ``results.json``: indented, except that each entry of
    ``requirements`` and of ``scenarios`` is one line."""
    parts: list[str] = []
    for key, value in report.items():
        name = json.dumps(key)
        if key in _ONE_LINE_ENTRIES and value:
            if isinstance(value, Mapping):
                entries = [f"    {json.dumps(k)}: {_one_line(v)}" for k, v in value.items()]
                parts.append(f"  {name}: {{\n" + ",\n".join(entries) + "\n  }")
            else:
                entries = [f"    {_one_line(v)}" for v in value]
                parts.append(f"  {name}: [\n" + ",\n".join(entries) + "\n  ]")
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            parts.append(f"  {name}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_results(report: Mapping[str, Any], path: Path) -> Path:
    """Write ``report`` to ``path`` (its folder created), as :func:`dumps_results` lays it out."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_results(report), encoding="utf-8")
    return path


def _one_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
