"""Where ``make test``'s time goes: per test module and per fixture, setup against call, waiting
against computing.

Run ``python -m streamproof.bench.test_time [--workers N] [--json FILE] [PYTEST ARGS...]`` (``make
test-profile`` runs it on the whole suite, as ``make test`` does). It runs pytest with a small
plugin (:mod:`streamproof.bench.test_time_plugin`) that times every test's setup, call and teardown
on the wall clock and on the CPU clock (this process and the children it reaped: a gateway or
client process the test started and stopped), and every fixture's setup. What the CPU clock does
not account for is waiting: on sockets, on subprocesses still running, on sleeps and timeouts.

It prints three tables: the test modules by wall time (tests, setup, call, teardown, CPU, wait),
the fixtures whose setup cost most, and the tests marked ``slow`` against the rest; ``--json``
keeps the raw records (and the run's wall clock) for a before/after comparison. The figures are
worker-seconds: with ``-n 2`` the wall clock of the whole run is about half their sum.

``python -m streamproof.bench.test_time --compare BEFORE.json AFTER.json`` runs nothing: it reads
two ``--json`` files and prints the modules and the tiers side by side (tests and worker-seconds
before and after, and the change), with the whole run's wall clock when both files have it.
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

__all__ = [
    "Summary",
    "compare",
    "fixture_table",
    "load",
    "main",
    "module_table",
    "summarise",
    "tier_table",
]

ROOT: Final = Path(__file__).resolve().parents[3]
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


def _sum(rows: Iterable[Row]) -> Row:
    out = Row()
    for row in rows:
        out.tests += row.tests
        out.cpu += row.cpu
        for phase in PHASES:
            out.wall[phase] += row.wall[phase]
    return out


def module_table(summary: Summary, limit: int = 30) -> str:
    rows = sorted(summary.modules.items(), key=lambda kv: kv[1].total, reverse=True)
    lines = [_HEAD.format(what="test module")]
    lines += [_row(name, row) for name, row in rows[:limit]]
    if len(rows) > limit:
        rest = _sum(row for _, row in rows[limit:])
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


def load(path: Path) -> tuple[list[dict[str, Any]], float | None]:
    """The records of a ``--json`` file and the run's wall clock: ``{"wall_s": ..., "records":
    [...]}``, or a bare list of records (the plugin's own file, which has no wall clock)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return data, None
    wall = data.get("wall_s")
    return list(data["records"]), None if wall is None else float(wall)


def _side_by_side(
    what: str, names: Sequence[str], before: Mapping[str, Row], after: Mapping[str, Row]
) -> str:
    lines = [
        f"| {what} | tests before | tests after | before s | after s | change s | after/before |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        b, a = before.get(name, Row()), after.get(name, Row())
        ratio = f"{a.total / b.total:.2f}" if b.total > 0 else "-"
        lines.append(
            f"| {name} | {b.tests} | {a.tests} | {b.total:.1f} | {a.total:.1f} | "
            f"{a.total - b.total:+.1f} | {ratio} |"
        )
    return "\n".join(lines)


def compare(before: Summary, after: Summary, limit: int = 40) -> str:
    """The tiers, then the modules (the ``limit`` costliest before or after, the rest summed),
    before and after side by side, in worker-seconds; the wall clock of each whole run when
    known."""

    def total(summary: Summary) -> float:
        return sum(r.total for r in summary.modules.values())

    def wall(summary: Summary) -> str:
        return f"{summary.wall_s:.0f} s" if summary.wall_s else "not recorded"

    head = (
        f"worker-seconds in tests: before {total(before):.0f}, after {total(after):.0f}; "
        f"wall clock of the pytest run: before {wall(before)}, after {wall(after)}"
    )
    tiers = sorted(set(before.tiers) | set(after.tiers))
    names = sorted(
        set(before.modules) | set(after.modules),
        key=lambda n: max(before.modules.get(n, Row()).total, after.modules.get(n, Row()).total),
        reverse=True,
    )
    shown, rest = names[:limit], names[limit:]
    modules = _side_by_side("test module", shown, before.modules, after.modules)
    if rest:
        label = f"({len(rest)} more modules)"
        summed = [
            {label: _sum(side.get(name, Row()) for name in rest)}
            for side in (before.modules, after.modules)
        ]
        modules += "\n" + _side_by_side("", [label], *summed).splitlines()[-1]
    return "\n\n".join([head, _side_by_side("tier", tiers, before.tiers, after.tiers), modules])


def _parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.test_time",
        description="Where the test suite's time goes (extra arguments go to pytest).",
    )
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (0: one process)")
    parser.add_argument("--json", type=Path, help="keep the raw records in this file")
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="run nothing: print two --json files side by side",
    )
    return parser.parse_known_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args, pytest_args = _parse(argv)
    if args.compare:
        (before, before_wall), (after, after_wall) = (load(path) for path in args.compare)
        print(compare(summarise(before, before_wall or 0.0), summarise(after, after_wall or 0.0)))
        return 0
    with tempfile.TemporaryDirectory(prefix="streamproof-test-time-") as tmp:
        records_file = Path(args.json) if args.json else Path(tmp) / "records.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "streamproof.bench.test_time_plugin",
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
        if args.json:
            payload = {"wall_s": round(wall, 1), "records": records}
            records_file.write_text(json.dumps(payload), encoding="utf-8")
    print(report(summarise(records, wall)))
    return 0 if run.returncode in (0, 1) else run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
