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

from streamproof.core.capabilities import INSTALL_SKIPS
from streamproof.core.verdicts import Kind, Outcome
from streamproof.report.baseline import Baseline, baseline_summary
from streamproof.report.provenance import provenance
from streamproof.suites import REGISTRY

__all__ = [
    "FAILURE_COUNTS",
    "REPORT_VERSION",
    "dumps_results",
    "failure_counts",
    "nothing_judged",
    "results_report",
    "skip_warnings",
    "summary_line",
    "verdict_counts",
    "write_results",
]

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
    interrupted: bool | None = None,
) -> dict[str, Any]:
    """The report of one run from its per-scenario records. ``targets``: per scenario kind, the
    target its environment ran (``Environment.target_info``); ``command_line`` (default
    ``sys.argv``) and ``pytest_args`` go into the report's ``environment``. With a
    ``baseline``, a scenario whose enforced failures are all known (``known_failure`` in its
    record) does not make the run fail, and the summary gets ``baseline``
    (:func:`streamproof.report.baseline.baseline_summary`). With ``concurrency`` above 1 (K
    copies of each scenario at once), the report says so in ``concurrency`` and each scenario
    that ran keeps its latency figures under that load in its record's ``concurrency``.
    ``workers``: how many parallel workers ran the scenarios (``-n``; None when they ran in
    this process), in ``environment.workers``; ``shard``: which part of the selection this run
    was (``--shard``), in ``environment.shard`` and, as ``I/N``, ``summary.shard``.
    ``interrupted``: the run was stopped by a signal (default: pytest's exit status 2).

    ``summary.ok`` is true only when no scenario failed (with a baseline: none but by known
    failures), the run was not interrupted, and something was judged; the failure counts say
    why it is false (:func:`failure_counts`), and :func:`summary_line` says it in one line."""
    outcomes = [r.get("outcome", "failed") for r in records]
    if interrupted is None:
        interrupted = int(exitstatus) == 2
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
    counts = verdict_counts(records)
    # A scenario whose enforced failures are all in the baseline fails its checks (it counts
    # in ``failed``) but not the run.
    gate_failed = any(
        r.get("outcome", "failed") == "failed" and not r.get("known_failure") for r in records
    )
    nothing = nothing_judged(records)
    summary: dict[str, Any] = {
        "scenarios": len(records),
        "passed": outcomes.count("passed"),
        "failed": outcomes.count("failed"),
        "skipped": outcomes.count("skipped"),
        **failure_counts(records, strict=strict),
        "ok": not gate_failed and not interrupted and nothing is None,
        "interrupted": interrupted,
        "verdicts": counts,
    }
    if outcomes.count("interrupted"):
        summary["interrupted_scenarios"] = outcomes.count("interrupted")
    warnings = skip_warnings(records)
    if warnings:
        summary["warnings"] = warnings
    if nothing is not None:
        summary["error"] = nothing
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


FAILURE_COUNTS: tuple[tuple[str, str], ...] = (
    ("must_failures", "MUST requirement(s) broken"),
    ("should_failures", "SHOULD requirement(s) unmet (--strict)"),
    ("expectation_failures", "expectation(s) not met"),
    ("fault_failures", "planned fault(s) that never fired"),
    ("target_errors", "scenario(s) whose target could not be started or reached"),
    ("scenario_errors", "scenario(s) that ended in an error"),
    ("not_run", "scenario(s) this install could not run (--require-all)"),
)
"""The summary's failure counts, each with how a person reads it."""


def failure_counts(records: Sequence[Mapping[str, Any]], *, strict: bool) -> dict[str, int]:
    """Why scenarios failed, counted: failed verdicts by kind (a requirement's MUST, its SHOULD
    when ``strict`` enforces it, a scenario's own expectation, a planned fault that never
    fired), scenarios whose target could not be started or reached, scenarios this install
    could not run under ``--require-all``, and scenarios that ended in another error before
    they were judged. Known failures of a baseline count too."""
    out = {key: 0 for key, _ in FAILURE_COUNTS}
    for record in records:
        if record.get("target_error"):
            out["target_errors"] += 1
        elif record.get("outcome") == "failed" and record.get("skip_cause") in INSTALL_SKIPS:
            out["not_run"] += 1
        elif record.get("outcome") == "failed" and "verdicts" not in record:
            out["scenario_errors"] += 1
        for verdict in record.get("verdicts", []):
            kind = verdict.get("kind", Kind.REQUIREMENT.value)
            outcome = verdict.get("outcome")
            if outcome == Outcome.FAIL.value:
                key = {
                    Kind.EXPECTATION.value: "expectation_failures",
                    Kind.FAULT.value: "fault_failures",
                }.get(kind, "must_failures")
                out[key] += 1
            elif outcome == Outcome.NON_STRICT.value and strict:
                out["should_failures"] += 1
    return out


def nothing_judged(records: Sequence[Mapping[str, Any]]) -> str | None:
    """Why nothing was judged, when every scenario of the run was skipped (``None`` when a
    scenario ran, or none was selected: that is a usage error of its own)."""
    if not records or any(r.get("outcome") != "skipped" for r in records):
        return None
    reasons: dict[str, int] = {}
    for record in records:
        reason = str(record.get("error") or "no reason given")
        reasons[reason] = reasons.get(reason, 0) + 1
    listed = "; ".join(f"{n} skipped: {why}" for why, n in reasons.items())
    return f"nothing was judged: every selected scenario ({len(records)}) was skipped ({listed})"


def skip_warnings(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per reason scenarios were skipped for want of an engine or a component."""
    by_reason: dict[str, list[str]] = {}
    for record in records:
        if record.get("outcome") == "skipped" and record.get("skip_cause") in INSTALL_SKIPS:
            by_reason.setdefault(str(record.get("error")), []).append(str(record.get("id")))
    return [
        f"{len(ids)} scenario(s) not judged: {why} ({', '.join(ids)})"
        for why, ids in by_reason.items()
    ]


def summary_line(summary: Mapping[str, Any]) -> str:
    """The run's verdict in one line, naming what failed: ``OK: 12 scenario(s) passed, 1
    skipped``, or ``FAILED: 2 MUST requirement(s) broken, 1 expectation(s) not met``. The
    console's closing line and the report's header both say this."""
    if summary.get("ok"):
        skipped = summary.get("skipped", 0)
        known = summary.get("baseline", {}).get("known", 0) if summary.get("baseline") else 0
        extra = f", {skipped} skipped" if skipped else ""
        extra += f", {known} known failure(s) of the baseline" if known else ""
        return f"OK: {summary.get('passed', 0)} scenario(s) passed{extra}"
    parts = [f"{summary[key]} {words}" for key, words in FAILURE_COUNTS if summary.get(key, 0) > 0]
    if summary.get("interrupted"):
        parts.append("interrupted")
    if summary.get("error") and not parts:
        parts.append(str(summary["error"]).splitlines()[0])
    return "FAILED: " + (", ".join(parts) if parts else "see the scenarios")


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
