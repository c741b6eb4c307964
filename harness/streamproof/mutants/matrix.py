"""``streamproof mutants``: run the suite against every seeded defect and print the matrix.

Every check is proven twice: the references pass it, and a mutant with the matching bug fails
it. This module runs ``streamproof run --bug NAME --strict`` once per mutant (and once per
reference, with no bug), in parallel subprocesses, reads each ``results.json``, and builds a
matrix of mutant by requirement. A mutant counts as killed only when the requirement meant
for it fails; one that survives, or is caught only by unrelated requirements, fails the run,
and so does a reference that breaks any requirement.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamproof.runtime.cpu import Admission, CpuGauge, GatedPool
from streamproof.targets.warm import sharing
from streamproof.targets.warm.command import RUN_PRELOAD, run_to_end

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Suite:
    """A reference, the scenarios that judge it, and its mutants."""

    name: str
    paths: tuple[str, ...]
    target: str | None
    intended: Mapping[str, str]
    """Mutant name -> the requirement that must catch it."""
    concurrent: Mapping[str, int] = field(default_factory=dict)
    """Mutant name -> the sessions at once (``--concurrency``) its run needs: a defect in state
    shared between sessions shows only then."""
    mutant_runs: str | None = None
    """A ``-k`` expression the mutants' runs keep (the reference's run keeps every scenario)."""


@dataclass(frozen=True)
class Run:
    suite: str
    bug: str | None
    intended: str | None
    failed: tuple[str, ...]
    """Requirements that failed (MUST) or were not met (SHOULD, under --strict)."""
    exit_code: int
    wall_s: float
    error: str | None = None

    @property
    def killed(self) -> bool:
        return self.intended is not None and self.intended in self.failed

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "error"
        if self.bug is None:
            return "pass" if not self.failed and self.exit_code == 0 else "REFERENCE FAILS"
        if self.killed:
            return "killed"
        return "caught elsewhere" if self.failed else "SURVIVED"

    @property
    def ok(self) -> bool:
        return self.verdict in ("pass", "killed")


@dataclass
class Matrix:
    runs: list[Run] = field(default_factory=list)
    wall_s: float = 0.0
    kept: tuple[Path, ...] = ()
    """The report folders kept of the runs that were not ok (``run_matrix(keep=...)``)."""

    @property
    def ok(self) -> bool:
        return bool(self.runs) and all(r.ok for r in self.runs)

    def requirements(self) -> list[str]:
        ids = {r for run in self.runs for r in run.failed}
        ids |= {run.intended for run in self.runs if run.intended is not None}
        return sorted(ids)

    def render(self) -> str:
        reqs = self.requirements()
        width = max([len("mutant"), *(len(r.bug or f"({r.suite} reference)") for r in self.runs)])
        lines = [f"{'mutant':<{width}}  {'verdict':<16} {'intended':<28} also failed"]
        for run in self.runs:
            name = run.bug or f"({run.suite} reference)"
            others = [r for r in run.failed if r != run.intended]
            lines.append(
                f"{name:<{width}}  {run.verdict:<16} {run.intended or '-':<28} "
                f"{', '.join(others) or '-'}"
            )
        lines.append("")
        lines.append(
            f"requirements exercised: {len(reqs)}; runs: {len(self.runs)}; "
            f"wall time {self.wall_s:.1f}s"
        )
        lines += [f"the report of a run that was not ok: {path}" for path in self.kept]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "wall_s": round(self.wall_s, 2),
            "kept": [str(path) for path in self.kept],
            "runs": [
                {
                    "suite": r.suite,
                    "bug": r.bug,
                    "intended": r.intended,
                    "verdict": r.verdict,
                    "failed": list(r.failed),
                    "exit_code": r.exit_code,
                    "wall_s": round(r.wall_s, 2),
                    "error": r.error,
                }
                for r in self.runs
            ],
        }


def failed_requirements(report: Mapping[str, Any]) -> tuple[str, ...]:
    """Requirements with at least one fail or non-strict verdict in a ``results.json``."""
    return tuple(
        sorted(
            rid
            for rid, entry in report.get("requirements", {}).items()
            if entry.get("fail", 0) or entry.get("non-strict", 0)
        )
    )


def _run_one(suite: Suite, bug: str | None, workdir: Path, time_scale: float | None) -> Run:
    report_dir = workdir / _report_name(suite.name, bug)
    argv = [sys.executable, "-m", "streamproof.cli", "run", *suite.paths, "--strict", "-q"]
    argv += ["--report-dir", str(report_dir)]
    if suite.target:
        argv += ["--target", suite.target]
    if bug:
        argv += ["--bug", bug]
    if time_scale is not None:
        argv += ["--time-scale", str(time_scale)]
    if bug is not None and bug in suite.concurrent:
        argv += ["--concurrency", str(suite.concurrent[bug])]
    if bug is not None and suite.mutant_runs is not None:
        argv += ["-k", suite.mutant_runs]
    started = time.monotonic()
    try:
        proc = run_to_end(
            argv,
            cwd=str(ROOT),
            timeout=900,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preload=RUN_PRELOAD,
        )
    except subprocess.TimeoutExpired:
        return Run(
            suite.name,
            bug,
            suite.intended.get(bug or ""),
            (),
            -1,
            time.monotonic() - started,
            "no result within 900s",
        )
    wall = time.monotonic() - started
    intended = suite.intended.get(bug) if bug else None
    results = report_dir / "results.json"
    if not results.exists():
        tail = (proc.stdout + proc.stderr)[-800:]
        return Run(
            suite.name,
            bug,
            intended,
            (),
            proc.returncode,
            wall,
            f"no results.json (exit {proc.returncode}): {tail}",
        )
    report = json.loads(results.read_text(encoding="utf-8"))
    return Run(suite.name, bug, intended, failed_requirements(report), proc.returncode, wall)


RunKey = tuple[str, str | None]
"""A run of the matrix: its suite's name and its bug (None for the reference)."""


def durations_of_matrix(path: Path) -> dict[RunKey, float]:
    """Seconds per run as a previous ``mutants.json`` recorded them; nothing when the file is
    missing or is not one (the runs are then ordered by :func:`longest_first`'s estimate)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    runs = report.get("runs") if isinstance(report, dict) else None
    out: dict[RunKey, float] = {}
    for run in runs if isinstance(runs, list) else []:
        if not isinstance(run, dict):
            continue
        suite, bug, wall = run.get("suite"), run.get("bug"), run.get("wall_s")
        if isinstance(suite, str) and (bug is None or isinstance(bug, str)):
            if isinstance(wall, int | float) and wall >= 0 and not run.get("error"):
                out[(suite, bug)] = float(wall)
    return out


def longest_first(
    plan: Sequence[tuple[Suite, str | None]], durations: Mapping[RunKey, float] | None = None
) -> list[int]:
    """The indexes of ``plan`` in the order to start them: longest first, so that no long run
    starts last and holds the matrix up alone. A run's length is what ``durations`` (a previous
    matrix) recorded; a run it does not know counts as their median. Without durations, a run
    with ``--concurrency K`` counts K times one without (K sessions of every scenario, one
    client process each for the A2A suite). Ties keep the plan's order."""
    from streamproof.runtime import parallel

    if durations:
        default = parallel.median(durations.values(), 1.0)
        weights = [durations.get((suite.name, bug), default) for suite, bug in plan]
    else:
        weights = [
            float(suite.concurrent.get(bug, 1) if bug is not None else 1) for suite, bug in plan
        ]
    return parallel.longest_first(weights)


def run_matrix(
    suites: Sequence[Suite],
    *,
    only: Iterable[str] = (),
    jobs: int = 2,
    time_scale: float | None = None,
    durations: Mapping[RunKey, float] | None = None,
    keep: Path | None = None,
    busy_limit: float = Admission.busy_limit,
    gauge: CpuGauge | None = None,
    cores: int | None = None,
) -> Matrix:
    """Every reference and mutant of ``suites`` (or only the mutants named), at most ``jobs``
    runs at once, started longest first (:func:`longest_first`, by ``durations`` when given)
    and, past one run per core, only while the cores were busy less than ``busy_limit`` of the
    time (:class:`~streamproof.runtime.cpu.Admission`, read from ``gauge``; ``cores``: the
    machine's unless given): the runs mostly wait on scripted time, but a run that computes
    while the cores are saturated misses its timings. The matrix lists them in plan order:
    each suite's reference, then its mutants. ``keep``: the folder that gets the report folder
    of each run that was not ok (a reference that failed, a mutant that survived or was caught
    elsewhere, a run in error), emptied first so that it never holds an earlier matrix's."""
    wanted = set(only)
    plan: list[tuple[Suite, str | None]] = []
    for suite in suites:
        if not wanted:
            plan.append((suite, None))
        plan += [(suite, bug) for bug in suite.intended if not wanted or bug in wanted]
    admission = Admission(
        max(jobs, 1), cores=Admission.cores if cores is None else cores, busy_limit=busy_limit
    )
    matrix = Matrix()
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="streamproof-mutants-") as tmp,
        # Every run's reference gateway and client turns fork from zygotes shared across
        # the runs: each imports google-adk or a2a-sdk once per matrix, not once per start.
        sharing(),
        GatedPool(admission, gauge) as pool,
    ):
        futures = {
            i: pool.submit(_run_one, plan[i][0], plan[i][1], Path(tmp), time_scale)
            for i in longest_first(plan, durations)
        }
        matrix.runs = [futures[i].result() for i in range(len(plan))]
        if keep is not None:
            matrix.kept = _keep_reports(matrix.runs, Path(tmp), keep)
    matrix.wall_s = time.monotonic() - started
    return matrix


def _report_name(suite: str, bug: str | None) -> str:
    """The report folder of one run of the matrix."""
    return f"{suite}-{bug or 'reference'}"


def _keep_reports(runs: Sequence[Run], workdir: Path, keep: Path) -> tuple[Path, ...]:
    """Copy the report folders of the runs that were not ok from ``workdir`` into ``keep``."""
    shutil.rmtree(keep, ignore_errors=True)
    kept: list[Path] = []
    for run in runs:
        name = _report_name(run.suite, run.bug)
        if run.ok or not (workdir / name).is_dir():
            continue
        kept.append(Path(shutil.copytree(workdir / name, keep / name)))
    return tuple(kept)


def default_suites() -> list[Suite]:
    """Every registered suite's bundled references (its default one, then the others, such as
    the gateway on each wire), each with the kind's bundled scenarios and its mutants."""
    from streamproof.runtime.bundled import bundled_scenarios
    from streamproof.suites import kinds, suite

    bundled = bundled_scenarios()
    if bundled is None:
        raise LookupError("no bundled suites: the package streamproof.scenarios is not installed")
    out: list[Suite] = []
    for kind in kinds():
        described = suite(kind)
        folder = str(bundled / described.SCENARIO_FOLDER)
        out += [
            Suite(
                ref.name,
                (folder,),
                str(ref.target),
                dict(ref.intended),
                dict(ref.concurrent),
                ref.mutant_runs,
            )
            for ref in described.references()
        ]
    return out
