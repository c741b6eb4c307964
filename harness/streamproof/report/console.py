"""What a run prints for people at its end: the unmet SHOULDs, skips and warnings, the rerun
commands and the verdict counts (the closing verdict itself is
:func:`streamproof.report.results.summary_line`, which the report's header shows too)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from streamproof.core.verdicts import Kind, Outcome

__all__ = ["render_baseline", "render_counts", "render_skipped", "render_summary"]


def render_counts(counts: Mapping[str, Mapping[str, int]]) -> str:
    """``requirements: 300 passed (judged), 2 failed, ...; expectations: ...; faults: ...``
    (the faults only when a scenario planned one)."""
    empty: dict[str, int] = {}
    req = counts.get(Kind.REQUIREMENT.value, empty)
    exp = counts.get(Kind.EXPECTATION.value, empty)
    text = (
        f"requirements: {req.get('pass', 0)} passed (judged), {req.get('fail', 0)} failed, "
        f"{req.get('non-strict', 0)} SHOULD unmet, {req.get('not-applicable', 0)} not "
        f"applicable, {req.get('skip', 0)} skipped; expectations: {exp.get('pass', 0)} met, "
        f"{exp.get('fail', 0)} not met"
    )
    faults = counts.get(Kind.FAULT.value, empty)
    if any(faults.values()):
        optional = faults.get("not-applicable", 0)
        text += f"; faults: {faults.get('pass', 0)} fired, {faults.get('fail', 0)} never fired" + (
            f", {optional} optional not fired" if optional else ""
        )
    return text


def render_summary(report: Mapping[str, Any], rerun: Sequence[str] = ()) -> list[str]:
    """The closing lines for people: every unmet SHOULD by id and scenario (shown even without
    ``--strict``), skipped scenarios grouped by reason, and per failed scenario the command that
    reruns just it (``rerun`` is the run's own command line, without paths and ``-k``)."""
    lines: list[str] = []
    scenarios = report.get("scenarios", [])
    unmet = [
        f"  {v['requirement']} in {s['id']}"
        for s in scenarios
        for v in s.get("verdicts", [])
        if v.get("outcome") == Outcome.NON_STRICT.value
    ]
    if unmet:
        lines.append(f"SHOULD unmet ({len(unmet)}; they fail the run only with --strict):")
        lines += unmet
    lines += render_skipped(scenarios)
    summary = report.get("summary") or {}
    lines += [f"warning: {w}" for w in summary.get("warnings", [])]
    interrupted = [s["id"] for s in scenarios if s.get("outcome") == "interrupted"]
    if interrupted:
        lines.append(f"interrupted, not judged: {', '.join(interrupted)}")
    # An interrupted scenario is not offered: it did not fail, it was stopped.
    failed = [s for s in scenarios if s.get("outcome") == "failed" and not s.get("known_failure")]
    if failed and rerun:
        lines.append("rerun a failed scenario alone:")
        for s in failed:
            lines.append("  " + shlex.join([*rerun, str(s["file"]), "-k", str(s["id"])]))
    return lines


def render_skipped(scenarios: Sequence[Mapping[str, Any]]) -> list[str]:
    """Skipped scenarios grouped by reason: ``skipped (2): <reason>``, then their ids."""
    skipped: dict[str, list[str]] = {}
    for s in scenarios:
        if s.get("outcome") == "skipped":
            skipped.setdefault(str(s.get("error") or "no reason given"), []).append(s["id"])
    lines: list[str] = []
    for reason, ids in skipped.items():
        lines.append(f"skipped ({len(ids)}): {reason}")
        lines += [f"  {i}" for i in ids]
    return lines


def render_baseline(
    scenarios: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]
) -> list[str]:
    """What became of the baseline (``summary`` is the report's ``summary.baseline``): every
    known failure with the entry's reason, every entry now fixed (to remove), every entry whose
    scenario did not run, and a count."""
    lines = [
        f"known failure (baseline): {s['id']} {v['requirement']} {v.get('level', '')}: "
        f"{v['baseline']}"
        for s in scenarios
        for v in s.get("verdicts", [])
        if "baseline" in v
    ]
    lines += [
        f"fixed, remove from the baseline: {e['scenario']} {e['requirement']}"
        for e in summary.get("fixed", [])
    ]
    lines += [
        f"not run, kept in the baseline: {e['scenario']} {e['requirement']}"
        for e in summary.get("not_run", [])
    ]
    lines.append(
        f"baseline {summary.get('file')}: {summary.get('known', 0)} known failure(s), "
        f"{summary.get('new_failures', 0)} new, {len(summary.get('fixed', []))} fixed, "
        f"{len(summary.get('not_run', []))} not run"
    )
    return lines
