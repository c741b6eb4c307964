"""Serial against ``-n N``, side by side in one run: how much faster the workers are, and whether
they gave the same verdicts.

Run ``python -m streamproof.bench.parallel [--workers 2] [--rounds 1] [--selection scenarios]
[--cold]``.
Each round runs ``streamproof run SELECTION`` (``make run``'s selection by default: both bundled
suites against the bundled references, at the default clock) once serially and once with ``-n
N`` (handed the scenarios longest first by the serial run's durations, as a second run in one
report folder is), one after the other, each a fresh process with its own report folder, and
prints both wall times, the ratio (serial / parallel) and every scenario or verdict whose outcome
differs between the two. It also prints where the serial run's time went: the slowest scenarios and
the time outside any scenario (start-up, collection, reports). Every run is bounded by
``--run-timeout`` seconds and killed after it; the load average before each run is printed,
since a loaded machine shares its cores with the workers (docs/how-to/parallel-and-sharding.md).
With ``--cold`` each round first runs serially with warm starts off
(docs/reference/target-files.md#warm-starts) and prints that wall beside the serial one, the
ratio, and every verdict the warm starts change.

The goal (docs/explanation/performance.md#parallel-runs): ``-n 2`` at least 1.8x faster than
serial, with the same
verdicts, on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamproof.bench.suite_run import run_suite
from streamproof.targets.warm.pool import SWITCH

__all__ = [
    "RunResult",
    "differences",
    "main",
    "ratio",
    "slowest",
    "table",
    "verdicts_of",
]


Verdicts = dict[str, dict[str, str]]
"""Scenario id -> ``outcome`` (the scenario's) and ``KIND REQUIREMENT`` -> the verdict's outcome."""


@dataclass(frozen=True)
class RunResult:
    """One suite run: serial (``workers`` 0) or on ``workers`` workers, and what it gave."""

    workers: int
    wall_s: float
    exit_status: int
    load: float
    verdicts: Verdicts = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    problem: str | None = None
    """Why the run gave no results (killed, no results.json), or None."""
    cold: bool = False
    """A serial run with warm starts off (``--cold``): every target start an ordinary one."""

    @property
    def passed(self) -> int:
        return sum(1 for v in self.verdicts.values() if v.get("outcome") == "passed")

    @property
    def label(self) -> str:
        if self.cold:
            return "serial, warm starts off"
        return "serial" if self.workers == 0 else f"-n {self.workers}"


def verdicts_of(results: Mapping[str, Any]) -> Verdicts:
    """Every scenario's outcome and every verdict's outcome, by scenario id, from a results.json
    (a verdict by its kind and requirement, ``requirement GW-SSE-RESPONSE``)."""
    out: Verdicts = {}
    for scenario in results.get("scenarios", []):
        entry = {"outcome": str(scenario.get("outcome"))}
        for verdict in scenario.get("verdicts", []):
            key = f"{verdict.get('kind', 'requirement')} {verdict.get('requirement')}"
            entry[key] = str(verdict.get("outcome"))
        out[str(scenario.get("id"))] = entry
    return out


def differences(serial: Verdicts, parallel: Verdicts) -> list[str]:
    """Every scenario or verdict whose outcome is not the same in both runs (``scenario: what:
    serial -> parallel``; ``missing`` where a run has none), in the serial run's order then the
    parallel run's extra scenarios."""
    found: list[str] = []
    for sid in [*serial, *(s for s in parallel if s not in serial)]:
        one, other = serial.get(sid), parallel.get(sid)
        if one is None or other is None:
            found.append(
                f"{sid}: {'missing' if one is None else one['outcome']} -> "
                f"{'missing' if other is None else other['outcome']}"
            )
            continue
        for key in [*one, *(k for k in other if k not in one)]:
            a, b = one.get(key, "missing"), other.get(key, "missing")
            if a != b:
                found.append(f"{sid}: {key}: {a} -> {b}")
    return found


def ratio(serial_s: float, parallel_s: float) -> float | None:
    """How many times faster the parallel run was (serial wall / parallel wall), rounded to two
    places; None when the parallel run took no time."""
    return round(serial_s / parallel_s, 2) if parallel_s > 0 else None


def slowest(durations: Mapping[str, float], count: int = 10) -> list[tuple[str, float]]:
    """The ``count`` longest scenarios, longest first (ids in order on a tie)."""
    return sorted(durations.items(), key=lambda kv: (-kv[1], kv[0]))[:count]


def table(rounds: Sequence[tuple[RunResult, RunResult]]) -> str:
    """One row per round: both walls, the ratio, the passed counts and whether the verdicts are
    the same (a Markdown table, the form of docs/explanation/performance.md)."""
    lines = [
        "| round | load before | serial | parallel | ratio | same verdicts |",
        "|---|---|---|---|---|---|",
    ]
    for index, (serial, parallel) in enumerate(rounds, start=1):
        diff = differences(serial.verdicts, parallel.verdicts)
        same = "yes" if not diff and not serial.problem and not parallel.problem else "no"
        lines.append(
            f"| {index} | {serial.load:.2f} / {parallel.load:.2f} "
            f"| {serial.wall_s:.1f} s ({serial.passed} passed) "
            f"| {parallel.wall_s:.1f} s {parallel.label} ({parallel.passed} passed) "
            f"| {ratio(serial.wall_s, parallel.wall_s)}x | {same} |"
        )
    return "\n".join(lines)


def _run_once(
    workers: int,
    report_dir: Path,
    selection: str,
    extra: Sequence[str],
    timeout_s: float,
    *,
    cold: bool = False,
) -> RunResult:
    args = [selection, "-q", *(["-n", str(workers)] if workers else []), *extra]
    run = run_suite(args, report_dir, timeout_s, {SWITCH: "0"} if cold else None)
    if run.results is None:
        return RunResult(
            workers, run.wall_s, run.exit_status, run.load, problem=run.problem, cold=cold
        )
    durations = {
        str(s["id"]): float(s["duration_s"])
        for s in run.results.get("scenarios", [])
        if isinstance(s.get("duration_s"), int | float)
    }
    return RunResult(
        workers,
        run.wall_s,
        run.exit_status,
        run.load,
        verdicts_of(run.results),
        durations,
        run.problem,
        cold,
    )


def _print_run(index: int, run: RunResult) -> None:
    print(
        f"round {index}  {run.label:<7} wall {run.wall_s:6.1f} s  exit {run.exit_status}  "
        f"load {run.load:5.2f}  {len(run.verdicts)} scenarios, {run.passed} passed"
        + (f"  ({run.problem})" if run.problem else ""),
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.parallel", description=__doc__
    )
    parser.add_argument("--workers", type=int, default=2, help="-n for the parallel run")
    parser.add_argument("--rounds", type=int, default=1, help="serial + parallel pairs")
    parser.add_argument("--selection", default="scenarios")
    parser.add_argument("--run-timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, default=None, help="reports and parallel.json here")
    parser.add_argument(
        "--cold",
        action="store_true",
        help=f"each round also runs serially with warm starts off ({SWITCH}=0), first",
    )
    parser.add_argument(
        "extra", nargs="*", help="more streamproof run options for both runs (after --)"
    )
    args = parser.parse_args(argv)
    if args.workers < 2 or args.rounds < 1:
        parser.error("--workers must be at least 2 and --rounds at least 1")
    out = args.out or Path(tempfile.mkdtemp(prefix="streamproof-parallel-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"reports under {out}", flush=True)
    rounds: list[tuple[RunResult, RunResult]] = []
    colds: list[tuple[RunResult, RunResult]] = []
    for index in range(1, args.rounds + 1):
        pair: list[RunResult] = []
        if args.cold:
            cold = _run_once(
                0,
                out / f"r{index}-serial-cold",
                args.selection,
                args.extra,
                args.run_timeout,
                cold=True,
            )
            _print_run(index, cold)
        for workers in (0, args.workers):
            extra = list(args.extra)
            serial_results = out / f"r{index}-serial" / "results.json"
            if workers and serial_results.is_file():
                # As a second run in the same report folder would: the workers are handed the
                # scenarios longest first by the serial run's durations.
                extra += ["--durations-from", str(serial_results)]
            run = _run_once(
                workers,
                out / f"r{index}-{'serial' if not workers else f'n{workers}'}",
                args.selection,
                extra,
                args.run_timeout,
            )
            _print_run(index, run)
            pair.append(run)
        rounds.append((pair[0], pair[1]))
        if args.cold:
            colds.append((cold, pair[0]))
    print(table(rounds), flush=True)
    for index, (cold, warm) in enumerate(colds, start=1):
        print(
            f"round {index}: serial with warm starts off {cold.wall_s:.1f} s, with them "
            f"{warm.wall_s:.1f} s: {ratio(cold.wall_s, warm.wall_s)}x",
            flush=True,
        )
        for line in differences(cold.verdicts, warm.verdicts):
            print(f"round {index}: warm starts change: {line}", flush=True)
    for index, (serial, parallel) in enumerate(rounds, start=1):
        for line in differences(serial.verdicts, parallel.verdicts):
            print(f"round {index}: differs: {line}", flush=True)
    serial = rounds[-1][0]
    if serial.durations:
        inside = sum(serial.durations.values())
        print(
            f"serial run (round {len(rounds)}): {inside:.1f} s in scenarios, "
            f"{serial.wall_s - inside:.1f} s outside them; slowest:",
            flush=True,
        )
        for sid, seconds in slowest(serial.durations):
            print(f"  {seconds:6.2f} s  {sid}", flush=True)
    ratios = [ratio(s.wall_s, p.wall_s) for s, p in rounds]
    known = [r for r in ratios if r is not None]
    if known:
        print(f"ratio median {statistics.median(known):.2f}x over {len(known)} round(s)")
    (out / "parallel.json").write_text(
        json.dumps({"rounds": [[vars(s), vars(p)] for s, p in rounds], "ratios": ratios}, indent=1),
        encoding="utf-8",
    )
    same = all(
        not differences(s.verdicts, p.verdicts) and not s.problem and not p.problem
        for s, p in [*rounds, *colds]
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
