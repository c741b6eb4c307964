"""How often the bundled suites fail a correct target at each time scale (the flake table).

Run ``python -m streamproof.bench.flakes [--scales 0.1 0.05 0.03] [--runs 20] [--beside 10]``.
For each scale it runs ``streamproof run SELECTION --time-scale S`` (the bundled suites,
``make run``'s selection, against the bundled references) ``--runs`` times one after another,
then ``--beside`` more runs two at a time, each with another whole suite running beside it
(the same scale, so a pair gives two runs under the other's load). Every run is a fresh
process with its own report folder; a run "fails" when its exit status is not 0 or its
results.json has a failed scenario, and the table names every requirement that failed and in
how many runs. Wall times are per run (median and slowest), with the load average before it.

The default scale stays what it is unless this table shows a faster one with no failure: a
faster clock that accuses a correct system one run in fifty is worse than a slow gate. The run
stops by itself: each suite run is bounded by ``--run-timeout`` seconds and killed after it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from streamproof.bench.suite_run import run_suite

__all__ = ["RunResult", "failures_of", "main", "summarise", "table"]

DEFAULT_SCALES: Final = (0.1, 0.05, 0.03)


@dataclass(frozen=True)
class RunResult:
    """One suite run: its scale, whether another ran beside it, and what it gave."""

    scale: float
    beside: bool
    wall_s: float
    exit_status: int
    load: float
    scenarios: int
    failures: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> bool:
        return self.exit_status != 0 or bool(self.failures)


def failures_of(results: Mapping[str, Any]) -> tuple[str, ...]:
    """``scenario: REQUIREMENT`` for every failed verdict of a results.json, in its order.

    A scenario that failed without a failed verdict (a target error, a timeout before any
    check) is named with its outcome instead, so no failed run is counted without a reason.
    """
    found: list[str] = []
    if results.get("summary", {}).get("error"):
        found.append(f"run error: {results['summary']['error']}")
    for scenario in results.get("scenarios", []):
        broken = [
            f"{scenario['id']}: {verdict['requirement']}"
            for verdict in scenario.get("verdicts", [])
            if verdict.get("outcome") == "fail" and "requirement" in verdict
        ]
        if not broken and scenario.get("outcome") not in ("passed", "skipped"):
            broken = [f"{scenario['id']}: {scenario.get('outcome')}"]
        found.extend(broken)
    return tuple(found)


def summarise(runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One row per (scale, beside): runs, failed runs, the failures counted, wall figures."""
    rows: list[dict[str, Any]] = []
    keys = sorted({(run.scale, run.beside) for run in runs}, key=lambda k: (-k[0], k[1]))
    for scale, beside in keys:
        group = [run for run in runs if run.scale == scale and run.beside == beside]
        counted: Counter[str] = Counter()
        for run in group:
            counted.update(
                set(run.failures) or ({f"exit {run.exit_status}"} if run.failed else set())
            )
        walls = [run.wall_s for run in group]
        rows.append(
            {
                "scale": scale,
                "mode": "beside another suite" if beside else "in a row",
                "runs": len(group),
                "failed_runs": sum(run.failed for run in group),
                "failures": dict(counted.most_common()),
                "wall_median_s": round(statistics.median(walls), 1),
                "wall_max_s": round(max(walls), 1),
                "load_max": round(max(run.load for run in group), 2),
            }
        )
    return rows


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a Markdown table (the form of docs/explanation/performance.md and the
    closing note)."""
    lines = [
        "| scale | runs | failed runs | wall median | wall slowest | load before (max) "
        "| failures |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        failures = "; ".join(f"{name} x{count}" for name, count in row["failures"].items())
        lines.append(
            f"| {row['scale']} ({row['mode']}) | {row['runs']} | {row['failed_runs']} "
            f"| {row['wall_median_s']} s | {row['wall_max_s']} s | {row['load_max']} "
            f"| {failures or 'none'} |"
        )
    return "\n".join(lines)


def _run_once(
    scale: float, beside: bool, report_dir: Path, selection: str, timeout_s: float
) -> RunResult:
    run = run_suite([selection, "--time-scale", str(scale), "-q"], report_dir, timeout_s)
    if run.results is None:
        return RunResult(
            scale, beside, run.wall_s, run.exit_status, run.load, 0, (str(run.problem),)
        )
    failures = failures_of(run.results)
    if run.problem:
        failures = (run.problem, *failures)
    return RunResult(
        scale,
        beside,
        run.wall_s,
        run.exit_status,
        run.load,
        int(run.results.get("summary", {}).get("scenarios", 0)),
        failures,
    )


def _print_run(index: int, run: RunResult) -> None:
    mode = "beside" if run.beside else "row"
    verdict = "FAILED " + "; ".join(run.failures) if run.failed else "ok"
    print(
        f"scale {run.scale:<5} {mode:<6} #{index:<3} wall {run.wall_s:6.1f} s"
        f"  exit {run.exit_status}  load {run.load:5.2f}  {run.scenarios} scenarios  {verdict}",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamproof.bench.flakes", description=__doc__)
    parser.add_argument("--scales", type=float, nargs="+", default=list(DEFAULT_SCALES))
    parser.add_argument("--runs", type=int, default=20, help="runs in a row per scale")
    parser.add_argument("--beside", type=int, default=10, help="runs beside another per scale")
    parser.add_argument("--selection", default="scenarios")
    parser.add_argument("--run-timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, default=None, help="reports and flakes.json here")
    args = parser.parse_args(argv)
    if any(not scale > 0 for scale in args.scales) or args.runs < 0 or args.beside < 0:
        parser.error("scales must be positive and run counts not negative")
    out = args.out or Path(tempfile.mkdtemp(prefix="streamproof-flakes-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"reports under {out}", flush=True)
    runs: list[RunResult] = []
    for scale in args.scales:
        for index in range(1, args.runs + 1):
            run = _run_once(
                scale, False, out / f"s{scale}-row{index}", args.selection, args.run_timeout
            )
            runs.append(run)
            _print_run(index, run)
        for pair in range((args.beside + 1) // 2):
            with ThreadPoolExecutor(max_workers=2) as pool:
                futures = [
                    pool.submit(
                        _run_once,
                        scale,
                        True,
                        out / f"s{scale}-beside{2 * pair + side}",
                        args.selection,
                        args.run_timeout,
                    )
                    for side in (1, 2)
                ]
                for side, future in enumerate(futures, start=1):
                    run = future.result()
                    runs.append(run)
                    _print_run(2 * pair + side, run)
        (out / "flakes.json").write_text(
            json.dumps({"runs": [vars(run) for run in runs], "table": summarise(runs)}, indent=1)
        )
    print(table(summarise(runs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
