"""``streamproof mutants``: the suites against every seeded defect, and the matrix
(:mod:`streamproof.mutants.matrix`) printed and written to ``mutants.json``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from streamproof.cli.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK

NAME = "mutants"


JOBS_PER_CORE = 6
"""The default ceiling on runs at once, per core: the runs mostly wait on scripted time, and
past one run per core the cores' load decides (docs/explanation/mutants.md#which-jobs)."""


def default_jobs() -> int:
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mutants", help="run the suite against every seeded defect and print the matrix"
    )
    parser.add_argument(
        "--suite",
        metavar="NAME",
        action="append",
        default=[],
        help="only this reference and its mutants (gateway, gateway-ag-ui, gateway-ai-sdk-ui, "
        "gateway-ag-ui-detach, a2a-client, browser-client, browser-client-reducer, "
        "browser-client-ag-ui); repeatable",
    )
    parser.add_argument("--only", metavar="NAME", action="append", default=[])
    parser.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        default=None,
        help=f"most runs at once (default six times the cores, {default_jobs()} here); past "
        "one per core a run starts only while the cores have time to spare (--busy-limit; "
        "docs/explanation/mutants.md#which-jobs)",
    )
    parser.add_argument(
        "--busy-limit",
        metavar="F",
        type=float,
        default=None,
        help="past one run per core, start another only while the cores were busy less than "
        "this fraction of the last 2 s (default 0.85; 1 starts up to --jobs regardless)",
    )
    parser.add_argument("--time-scale", metavar="F", type=float, default=None)
    parser.add_argument("--report-dir", metavar="DIR", default="reports")


def run(args: argparse.Namespace) -> int:
    from streamproof.mutants.matrix import default_suites, durations_of_matrix, run_matrix
    from streamproof.runtime.cpu import Admission

    suites = default_suites()
    names = [suite.name for suite in suites]
    strange = [name for name in args.suite if name not in names]
    if strange:
        print(
            f"--suite {', '.join(strange)}: unknown; choose from {', '.join(names)}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if args.suite:
        suites = [suite for suite in suites if suite.name in args.suite]
    known = {bug for suite in suites for bug in suite.intended}
    unknown = [name for name in args.only if name not in known]
    if unknown:
        print(
            f"--only {', '.join(unknown)}: unknown; choose from {', '.join(sorted(known))}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        print("--jobs must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    busy_limit = Admission.busy_limit if args.busy_limit is None else args.busy_limit
    if not 0 < busy_limit <= 1:
        print(f"--busy-limit {busy_limit}: a fraction above 0, at most 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    report_dir = Path(args.report_dir)
    keep = report_dir / "mutants"
    if keep.exists() and not keep.is_dir():
        print(
            f"--report-dir: {keep} is not a folder; the matrix keeps the reports of the runs "
            "that were not ok there: move it away",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    matrix = run_matrix(
        suites,
        only=args.only,
        jobs=jobs,
        busy_limit=busy_limit,
        time_scale=args.time_scale,
        # The last matrix's walls order the runs longest first.
        durations=durations_of_matrix(report_dir / "mutants.json"),
        keep=keep,
    )
    print(matrix.render())
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "mutants.json").write_text(json.dumps(matrix.to_json(), indent=2) + "\n")
    print(f"streamproof: matrix in {report_dir / 'mutants.json'}")
    return EXIT_OK if matrix.ok else EXIT_FAILED
