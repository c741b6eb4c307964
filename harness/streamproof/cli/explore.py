"""``streamproof explore``: a hypothesis search of fault plans (:mod:`streamproof.explore`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streamproof.cli.exits import EXIT_BAD_INPUT

NAME = "explore"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "explore",
        help="search fault plans with hypothesis and write the smallest failing scenario",
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="a scenario file or bundled id")
    parser.add_argument("--target", metavar="FILE", help="target file (default: bundled reference)")
    parser.add_argument("--bug", metavar="NAME", help="seed a reference's defect (a mutant)")
    parser.add_argument("--max-examples", metavar="N", type=int, default=200)
    parser.add_argument(
        "--time-budget", metavar="D", default="10m", help="wall time for the search (10m)"
    )
    parser.add_argument("--seed", metavar="S", type=int, default=None)
    parser.add_argument("--out", metavar="DIR", default="reports")
    parser.add_argument("--time-scale", metavar="F", type=float, default=None)
    parser.add_argument("--strict", action="store_true", help="SHOULD failures are findings too")
    parser.add_argument(
        "--requirement",
        metavar="REQ",
        help="only this requirement counts: the search holds out for a plan that breaks it",
    )
    parser.add_argument(
        "--screen",
        action="store_true",
        help="run a found plan on the bundled reference first; what it fails too is skipped "
        "(implied by --bug, on the reference without the bug)",
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.core.durations import DEFAULT_TIME_SCALE, parse_duration
    from streamproof.explore.search import Options, explore

    try:
        budget = parse_duration(
            float(args.time_budget)
            if args.time_budget.replace(".", "", 1).isdigit()
            else args.time_budget
        )
    except ValueError as exc:
        print(f"streamproof explore: --time-budget {args.time_budget}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    options = Options(
        scenario=args.scenario,
        target=args.target,
        bug=args.bug,
        max_examples=args.max_examples,
        time_budget=budget,
        seed=args.seed,
        out=Path(args.out),
        time_scale=args.time_scale if args.time_scale is not None else DEFAULT_TIME_SCALE,
        strict=args.strict,
        requirement=args.requirement,
        screen=args.screen,
    )
    return explore(options)
