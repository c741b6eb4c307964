"""Where ``make test``'s time goes: per test module and per fixture, setup against call, waiting
against computing.

Run ``python -m harness.bench.test_time [--workers N] [--json FILE] [PYTEST ARGS...]`` (``make
test-profile`` runs it on the whole suite, as ``make test`` does). It runs pytest with a small
plugin (:mod:`harness.bench.test_time_plugin`) that times every test's setup, call and teardown
on the wall clock and on the CPU clock (this process and the children it reaped: a gateway or
client process the test started and stopped), and every fixture's setup. What the CPU clock does
not account for is waiting: on sockets, on subprocesses still running, on sleeps and timeouts.

It prints three tables: the test modules by wall time (tests, setup, call, teardown, CPU, wait),
the fixtures whose setup cost most, and the tests marked ``slow`` against the rest; ``--json``
keeps the raw records for a before/after comparison. The figures are worker-seconds: with ``-n
2`` the wall clock of the whole run is about half their sum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = ["Summary", "fixture_table", "main", "module_table", "summarise", "tier_table"]

ROOT: Final = Path(__file__).resolve().parents[2]
PHASES: Final = ("setup", "call", "teardown")


@dataclass
class Row:
    """Times summed over some tests (worker-seconds)."""

    tests: int = 0
    wall: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    cpu: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.wall.values())

    @property
    def wait(self) -> float:
        return max(self.total - self.cpu, 0.0)


@dataclass
class Summary:
    modules: dict[str, Row]
    fixtures: dict[tuple[str, str], tuple[int, float, float]]
    """(fixture, scope) -> (setups, wall, cpu)."""
    tiers: dict[str, Row]
    wall_s: float


def summarise(records: Iterable[Mapping[str, Any]], wall_s: float = 0.0) -> Summary:
    """The plugin's records (one per test phase or fixture setup) summed per module, per
    fixture and per tier (``slow`` or not)."""
    modules: dict[str, Row] = defaultdict(Row)
    tiers: dict[str, Row] = defaultdict(Row)
    fixtures: dict[tuple[str, str], tuple[int, float, float]] = {}
    seen: set[tuple[str, str]] = set()
    for r in records:
        if r["kind"] == "fixture":
            key = (str(r["name"]), str(r["scope"]))
            n, wall, cpu = fixtures.get(key, (0, 0.0, 0.0))
            fixtures[key] = (n + 1, wall + float(r["wall"]), cpu + float(r["cpu"]))
            continue
        module = str(r["nodeid"]).split("::", 1)[0]
        tier = "slow" if r.get("slow") else "not slow"
        for row in (modules[module], tiers[tier]):
            row.wall[str(r["phase"])] += float(r["wall"])
            row.cpu += float(r["cpu"])
        if (str(r["nodeid"]), tier) not in seen:
            seen.add((str(r["nodeid"]), tier))
            modules[module].tests += 1
            tiers[tier].tests += 1
    return Summary(dict(modules), fixtures, dict(tiers), wall_s)


def _row(name: str, row: Row) -> str:
    w = row.wall
    return (
        f"| {name} | {row.tests} | {row.total:.1f} | {w['setup']:.1f} | {w['call']:.1f} | "
        f"{w['teardown']:.1f} | {row.cpu:.1f} | {row.wait:.1f} |"
    )


_HEAD = (
    "| {what} | tests | total s | setup s | call s | teardown s | CPU s | waiting s |\n"
    "|---|---|---|---|---|---|---|---|"
)


def module_table(summary: Summary, limit: int = 30) -> str:
    rows = sorted(summary.modules.items(), key=lambda kv: kv[1].total, reverse=True)
    lines = [_HEAD.format(what="test module")]
    lines += [_row(name, row) for name, row in rows[:limit]]
    if len(rows) > limit:
        rest = Row()
        for _, row in rows[limit:]:
            rest.tests += row.tests
            rest.cpu += row.cpu
            for phase in PHASES:
                rest.wall[phase] += row.wall[phase]
        lines.append(_row(f"({len(rows) - limit} more modules)", rest))
    return "\n".join(lines)


def fixture_table(summary: Summary, limit: int = 15) -> str:
    rows = sorted(summary.fixtures.items(), key=lambda kv: kv[1][1], reverse=True)[:limit]
    lines = ["| fixture | scope | set up | total s | CPU s |", "|---|---|---|---|---|"]
    lines += [f"| {n} | {s} | {k} | {w:.1f} | {c:.1f} |" for (n, s), (k, w, c) in rows]
    return "\n".join(lines)


def tier_table(summary: Summary) -> str:
    lines = [_HEAD.format(what="tier")]
    lines += [_row(name, summary.tiers[name]) for name in sorted(summary.tiers)]
    return "\n".join(lines)


def report(summary: Summary) -> str:
    total = sum(r.total for r in summary.modules.values())
    return "\n\n".join(
        [
            f"make test's time: {total:.0f} worker-seconds in tests, {summary.wall_s:.0f} s "
            "of wall clock for the whole pytest run",
            module_table(summary),
            fixture_table(summary),
            tier_table(summary),
        ]
    )


def _parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m harness.bench.test_time",
        description="Where the test suite's time goes (extra arguments go to pytest).",
    )
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (0: one process)")
    parser.add_argument("--json", type=Path, help="keep the raw records in this file")
    return parser.parse_known_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args, pytest_args = _parse(argv)
    with tempfile.TemporaryDirectory(prefix="streamproof-test-time-") as tmp:
        records_file = Path(args.json) if args.json else Path(tmp) / "records.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "harness.bench.test_time_plugin",
            "-n",
            str(args.workers),
            "--dist",
            "loadgroup",
            "--no-loadscope-reorder",
            "-q",
            *pytest_args,
        ]
        started = time.monotonic()
        run = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "STREAMPROOF_TEST_TIME_FILE": str(records_file)},
            check=False,
        )
        wall = time.monotonic() - started
        if not records_file.exists():
            print(f"test_time: pytest wrote no records (exit {run.returncode})", file=sys.stderr)
            return 2
        records = json.loads(records_file.read_text(encoding="utf-8"))
    print(report(summarise(records, wall)))
    return 0 if run.returncode in (0, 1) else run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
