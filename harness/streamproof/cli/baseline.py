"""``streamproof baseline write``: a baseline of every failure of a saved run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from streamproof.cli.exits import EXIT_BAD_INPUT, EXIT_OK

NAME = "baseline"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("baseline", help="write a baseline of known failures")
    baseline_sub = parser.add_subparsers(dest="baseline_command", required=True, metavar="write")
    write = baseline_sub.add_parser(
        "write",
        help="a baseline holding every failure of a saved run",
        description="Write a baseline (for run --baseline) with one entry per failed "
        "requirement or expectation of a saved run.",
    )
    write.add_argument(
        "results",
        nargs="?",
        default="reports/results.json",
        metavar="RESULTS.json",
        help="the run's results.json (default reports/results.json)",
    )
    write.add_argument("-o", "--output", metavar="FILE", help="where to write (default: stdout)")


def run(args: argparse.Namespace) -> int:
    return _write(args.results, args.output)


def _write(results: str, output: str | None) -> int:
    """``streamproof baseline write``: a baseline of every failure of a saved run."""
    from streamproof.report.baseline import baseline_text, failures_of_report

    where = f"streamproof baseline write: {results}"
    try:
        report = json.loads(Path(results).read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(
            f"{where}: no such file (run streamproof run first, or name a results.json)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{where}: cannot read it: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"{where}: not JSON ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    problem = _not_a_run(report)
    if problem is not None:
        print(f"{where}: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        entries = failures_of_report(report)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"{where}: a verdict it cannot read ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    header = [
        "streamproof baseline: known failures; `streamproof run --baseline FILE` fails only on",
        "failures not listed here. Remove an entry once its failure is fixed (the run says",
        "which). Edit each reason to say why the failure is accepted.",
        f"Written by `streamproof baseline write` from {results}",
        f"(run of {report.get('started_at')}, target {report.get('target_file') or 'bundled'}"
        + (f", bug {report['bug']}" if report.get("bug") else "")
        + (", --strict" if report.get("strict") else "")
        + (", interrupted" if report["summary"].get("interrupted") else "")
        + f"): {len(entries)} failure(s).",
    ]
    text = baseline_text(entries, header=header)
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"streamproof baseline write: cannot write {output}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"streamproof: {len(entries)} known failure(s) written to {output}")
    return EXIT_OK


def _not_a_run(report: object) -> str | None:
    """Why ``report`` is not the results.json of a run that ran scenarios (None when it is)."""
    if not isinstance(report, dict) or report.get("tool") != "streamproof":
        return "not a streamproof results.json"
    summary, scenarios = report.get("summary"), report.get("scenarios")
    if not isinstance(summary, dict) or not isinstance(scenarios, list):
        return "not a streamproof results.json (no summary or scenarios)"
    if summary.get("error"):
        return f"that run did not run any scenario: {summary['error']}"
    if not any(isinstance(s, dict) and "verdicts" in s for s in scenarios):
        return "that run judged no scenario (all skipped or errored): nothing to record"
    return None
