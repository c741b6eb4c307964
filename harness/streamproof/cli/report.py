"""``streamproof report``: a saved run's report.html drawn again, or one scenario printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streamproof.cli.exits import EXIT_BAD_INPUT, EXIT_OK

NAME = "report"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="draw a saved run's report.html again, or print one scenario of it",
        description="Re-render RESULTS.json's report.html (default: report.html beside it; a "
        "file there is replaced only when streamproof wrote it), or with --show print one "
        "scenario's verdicts and timeline as text (then nothing is written unless --html is "
        "given).",
    )
    parser.add_argument("results", metavar="RESULTS.json", help="a run's results.json")
    parser.add_argument("--html", metavar="OUT", help="where to write the page")
    parser.add_argument(
        "--show", metavar="SCENARIO", help="print this scenario's verdicts and timeline"
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.report.rerender import ReportInputError, rerender, show

    results = Path(args.results)
    try:
        if args.show is not None:
            lines = show(results, args.show)
            if args.html:
                rerender(results, Path(args.html))
            print("\n".join(lines))
            return EXIT_OK
        written = rerender(results, Path(args.html) if args.html else None)
    except ReportInputError as exc:
        print(f"streamproof report: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"streamproof: report in {written}")
    return EXIT_OK
