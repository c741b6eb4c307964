"""What ``streamproof run`` writes and prints around pytest's run: its own run folder under
``reports/runs/`` and the copies at the top of ``reports``, the report of a run that could not
start, the closing counts, and what the written report says about how it ended."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from streamproof.cli.exits import EXIT_BAD_INPUT


def only_target_errors(results: Path) -> bool:
    """The run failed only because the target could not be started or reached: a scenario hit
    a target error, and no other scenario failed but by known failures of a baseline (no new
    failed verdict of any kind, no unmet SHOULD under --strict, no scenario that errored)."""
    try:
        report = json.loads(results.read_text(encoding="utf-8"))
        enforced = ("fail", "non-strict") if report.get("strict") else ("fail",)
        target = False
        for s in report["scenarios"]:
            if s.get("target_error"):
                target = True
            elif s.get("outcome") == "failed" and not s.get("known_failure"):
                if "verdicts" not in s:
                    return False  # it ended in another error before it was judged
                if any(v["outcome"] in enforced and "baseline" not in v for v in s["verdicts"]):
                    return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return target


def read_summary(results: Path) -> dict[str, object] | None:
    try:
        summary = json.loads(results.read_text(encoding="utf-8"))["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return summary if isinstance(summary, dict) else None


def print_counts(results: Path, rerun: Sequence[str] = ()) -> None:
    """The closing summary of the run just written (nothing when no report was written)."""
    from streamproof.report.console import render_counts, render_summary
    from streamproof.report.results import summary_line

    try:
        report = json.loads(results.read_text(encoding="utf-8"))
        counts = report["summary"]["verdicts"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    for line in render_summary(report, rerun):
        print(line)
    print(f"streamproof: {render_counts(counts)}")
    print(f"streamproof: {summary_line(report['summary'])}")
    environment = report.get("environment") or {}
    shard = environment.get("shard")
    if isinstance(shard, dict):
        how = (
            f"balanced by the durations in {shard.get('durations_from')}"
            if shard.get("balanced_by") == "durations"
            else "balanced by count"
        )
        print(
            f"streamproof: shard {shard.get('index')}/{shard.get('count')}: "
            f"{shard.get('scenarios')} of the {shard.get('of')} selected scenario(s), {how}"
        )
    if environment.get("workers"):
        print(f"streamproof: ran on {environment['workers']} parallel worker(s)")


def record_error(report_dir: Path, reason: str) -> None:
    """Put ``reason`` into the run's written report as ``summary.error`` (``ok`` false)."""
    from streamproof.report.html import write_html
    from streamproof.report.results import write_results

    path = report_dir / "results.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        report["summary"].update(ok=False, error=reason)
        write_results(report, path)
        write_html(report, report_dir / "report.html")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"streamproof: cannot record the error in {path}: {exc}", file=sys.stderr)


def bad_input(
    report_dir: Path, reason: str, args: argparse.Namespace, *, subject: str | None = None
) -> int:
    """Say why the run could not start, and leave a report that says so (never an old one):
    the same report a run writes, with no scenario, ``ok: false`` and the reason, and a
    ``junit.xml`` with one error test case named after ``subject`` (the file at fault; else
    ``streamproof run``)."""
    import datetime as dt

    from streamproof.core.durations import DEFAULT_TIME_SCALE
    from streamproof.report.html import write_html
    from streamproof.report.junit import write_bad_input_junit
    from streamproof.report.results import results_report, write_results

    print(reason, file=sys.stderr)
    report = results_report(
        [],
        target_file=args.target,
        bug=args.bug,
        time_scale=args.time_scale or DEFAULT_TIME_SCALE,
        strict=args.strict,
        engine=args.engine,
        started_at=dt.datetime.now(dt.UTC),
        duration_s=0.0,
        exitstatus=int(EXIT_BAD_INPUT),
        interrupted=False,
    )
    report["summary"].update(ok=False, error=reason)
    try:
        write_results(report, report_dir / "results.json")
        write_html(report, report_dir / "report.html")
        if not (report_dir / "junit.xml").exists():
            write_bad_input_junit(report_dir / "junit.xml", subject or "streamproof run", reason)
    except OSError as exc:
        print(f"streamproof: cannot write the report in {report_dir}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    reports = Path(args.report_dir)
    publish_run(reports, report_dir)
    print_where(reports, report_dir)
    return EXIT_BAD_INPUT


def start_run(reports: Path, args: argparse.Namespace) -> Path | None:
    """This run's own folder under ``reports/runs/``, ``reports/latest`` pointing at it, after
    removing the oldest run folders beyond ``--keep-runs`` (None when it cannot be made)."""
    from streamproof.report.runs import DEFAULT_KEEP, new_run

    keep = DEFAULT_KEEP if args.keep_runs is None else max(args.keep_runs, 0)
    try:
        return new_run(reports, keep=keep)
    except OSError as exc:
        print(f"streamproof: cannot make this run's folder in {reports}: {exc}", file=sys.stderr)
        return None


def publish_run(reports: Path, run_dir: Path) -> None:
    """Copy this run's reports to the top of ``reports``, where gates and docs read them."""
    from streamproof.report.runs import publish

    try:
        publish(reports, run_dir)
    except OSError as exc:
        print(f"streamproof: cannot copy the reports to {reports}: {exc}", file=sys.stderr)


def print_where(reports: Path, run_dir: Path) -> None:
    from streamproof.report.runs import REPORT_FILES

    written = [str(reports / n) for n in REPORT_FILES if (run_dir / n).exists()]
    where = (
        ", ".join(written[:-1]) + " and " + written[-1] if len(written) > 1 else "".join(written)
    )
    print(f"streamproof: report in {where} (this run: {run_dir})")
