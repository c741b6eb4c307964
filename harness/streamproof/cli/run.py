"""``streamproof run``: its options, the checks of its input, and pytest with the plugin
underneath; the run folder and the report of a run that could not start are
:mod:`streamproof.cli.run_reports`."""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from streamproof.cli.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, EXIT_TARGET
from streamproof.cli.paths import NO_BUNDLED_SUITES, default_paths, scenario_files
from streamproof.cli.run_reports import (
    bad_input,
    only_target_errors,
    print_counts,
    print_where,
    publish_run,
    read_summary,
    record_error,
    start_run,
)
from streamproof.core.concurrency import CONCURRENCY_RANGE, MAX_CONCURRENCY
from streamproof.faults.engine_names import ENGINES
from streamproof.runtime.interrupts import Interrupts

if TYPE_CHECKING:
    import pytest

NAME = "run"

UNUSED_PLUGINS = ("hypothesispytest", "anyio", "ag_ui_validate", "platformdirs")
"""pytest plugins (by entry point name) that ``streamproof run`` leaves out when installed:
they serve tests written with hypothesis, anyio or ag-ui-validate, or platformdirs's
isolated-directories fixture, never a scenario item."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("run", help="run scenarios against a target (pytest underneath)")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or folders")
    parser.add_argument("--target", metavar="FILE", help="target file (default: bundled reference)")
    parser.add_argument("--bug", metavar="NAME", help="switch one seeded defect into the reference")
    parser.add_argument("--time-scale", metavar="F", type=float, default=None)
    parser.add_argument(
        "--report-dir",
        metavar="DIR",
        default="reports",
        help="reports go to DIR/runs/<UTC time>/, with DIR/latest and copies in DIR",
    )
    parser.add_argument(
        "--keep-runs",
        metavar="N",
        type=int,
        default=None,
        help="keep the newest N run folders in DIR/runs (default 20; 0 keeps all)",
    )
    parser.add_argument("--strict", action="store_true", help="SHOULD failures fail too")
    parser.add_argument(
        "--require-all",
        action="store_true",
        help="a scenario this install cannot run (a fault engine or component missing) fails "
        "instead of being skipped with a warning: for a gate",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="known failures (YAML, see streamproof baseline write): they fail their checks "
        "but not the run; only new failures do",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="the fault engine for every link a scenario does not give one (default inline); "
        "a scenario whose plan the engine cannot carry out is skipped with the reason",
    )
    parser.add_argument(
        "--full-observations",
        action="store_true",
        help="keep every scenario's whole observation in results.json (default: failures only)",
    )
    parser.add_argument(
        "--concurrency",
        metavar="K",
        type=int,
        default=None,
        help=f"run K copies of each scenario at once against one target (2 to "
        f"{MAX_CONCURRENCY}: gateway sessions with distinct ids, users and markers; client "
        "calls as K processes with marked prompts), judged by the concurrency checks too, "
        "with latency figures under that load",
    )
    parser.add_argument(
        "-n",
        dest="workers",
        metavar="N",
        default=None,
        help="run the scenarios on N parallel workers (pytest-xdist; auto: one per CPU), each "
        "with its own target and fakes; one report as a serial run writes",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only part I (from 1) of N of the selected scenarios, for a CI matrix of N "
        "jobs: disjoint parts whose union is the whole, balanced by the last report's durations",
    )
    parser.add_argument(
        "--durations-from",
        metavar="FILE",
        default=None,
        help="the results.json whose durations balance --shard and order -n's workers, "
        "longest first (default: the last run's, REPORT_DIR/results.json, when there is one)",
    )
    parser.add_argument("-k", metavar="EXPR", help="only scenarios whose id matches EXPR")
    parser.add_argument("-x", "--exitfirst", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    """``streamproof run``; with ``--shard`` or ``-n`` and no ``--durations-from``, the last
    run's durations are kept aside (the run removes its results.json before it starts) for the
    split and the workers' order to read."""
    import tempfile

    last = Path(args.report_dir) / "results.json"
    wanted = args.shard is not None or args.workers not in (None, "0", "1")
    if not wanted or args.durations_from is not None or not last.is_file():
        return _run_scenarios(args, None)
    with tempfile.TemporaryDirectory(prefix="streamproof-durations-") as folder:
        kept = Path(folder) / "results.json"
        try:
            kept.write_bytes(last.read_bytes())
        except OSError:
            return _run_scenarios(args, None)  # unreadable: the shards go by count
        return _run_scenarios(args, (kept, str(last)))


def _run_scenarios(args: argparse.Namespace, last_durations: tuple[Path, str] | None) -> int:
    reports = Path(args.report_dir)
    # A report left by an earlier run must never pass for this one's.
    for name in ("results.json", "junit.xml"):
        (reports / name).unlink(missing_ok=True)
    # This run writes into its own folder (reports/runs/<UTC time>/); its reports are copied to
    # the top of `reports` when it ends, whatever ends it.
    report_dir = start_run(reports, args)
    if report_dir is None:
        return EXIT_BAD_INPUT
    if args.keep_runs is not None and args.keep_runs < 0:
        return bad_input(report_dir, "--keep-runs must be 0 (keep every run) or more", args)
    paths = list(args.paths) or default_paths()
    if not paths:
        return bad_input(
            report_dir, f"streamproof run: no PATH given and {NO_BUNDLED_SUITES}", args
        )
    _, missing = scenario_files(paths)
    if missing:
        return bad_input(
            report_dir,
            "\n".join(f"{m}: no such file or folder" for m in missing),
            args,
            subject=missing[0],
        )
    if args.time_scale is not None and not args.time_scale > 0:
        return bad_input(report_dir, "--time-scale must be a positive number", args)
    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        return bad_input(
            report_dir, "--concurrency " + CONCURRENCY_RANGE.format(args.concurrency), args
        )
    parallel = _parallel_options(args, last_durations)
    if isinstance(parallel, str):
        return bad_input(report_dir, parallel, args)
    target = None
    if args.target is not None:
        from streamproof.suites import suite
        from streamproof.suites.input_files import check_target_file
        from streamproof.targets.errors import TargetConfigError

        # Every problem of the target file with its line, as validate reports them; then the
        # suite's own loading (which also resolves a relative cwd and checks it exists).
        checked = check_target_file(args.target)
        if checked.problems:
            return bad_input(
                report_dir, "\n".join(map(str, checked.problems)), args, subject=args.target
            )
        kind = checked.target_kind or "gateway"
        try:
            target = suite(kind).load_target(args.target)
        except TargetConfigError as exc:
            return bad_input(report_dir, str(exc), args, subject=args.target)
        own_suite = Path(paths[0]) / kind.replace("-", "_")
        if not args.paths and own_suite.is_dir():
            # A target is of one kind: with no PATH, run the bundled suite of that kind rather
            # than every scenario of the other kind only to skip it.
            paths = [str(own_suite)]
    if args.engine is not None:
        from streamproof.faults.engines import EngineUnavailable, open_engine

        try:
            open_engine(args.engine)
        except EngineUnavailable as exc:
            return bad_input(report_dir, f"--engine {args.engine}: {exc}", args)
    if args.baseline is not None:
        from streamproof.report.baseline import BaselineError, load_baseline

        try:
            load_baseline(args.baseline)
        except BaselineError as exc:
            return bad_input(
                report_dir, f"--baseline {args.baseline}:\n{exc}", args, subject=args.baseline
            )
    if args.bug is not None:
        from streamproof.suites import known_bugs

        names = known_bugs(args.target)
        if args.bug not in names:
            return bad_input(
                report_dir, f"--bug {args.bug}: unknown; choose one of {', '.join(names)}", args
            )

    if target is not None and args.workers is not None:
        from streamproof.runtime.parallel import parallel_refusal

        refusal = parallel_refusal(target, parallel[0])
        if refusal is not None:
            return bad_input(report_dir, f"streamproof run {refusal}", args)

    import pytest

    pytest_args = [
        *paths,
        "-p",
        "no:cacheprovider",
        # Plugins a scenario item never uses, which installed packages bring: each costs the
        # run's start (hypothesis's imports hypothesis for the header of a verbose run, about
        # 0.5 s; docs/explanation/performance.md).
        *(arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")),
        "-o",
        "testpaths=",
        "-o",
        "filterwarnings=",
        # `python -m streamproof` imports the package before pytest loads the plugin.
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--rootdir",
        str(Path.cwd()),
        f"--junitxml={report_dir / 'junit.xml'}",
        f"--streamproof-run-dir={report_dir}",
        "-rfEs",
    ]
    if importlib.util.find_spec("pytest_asyncio") is not None:
        # Scenario items need no async test plugin, but when pytest-asyncio is installed it
        # warns about its own unset option in every project; setting it keeps a run quiet
        # (disabling the plugin instead warns about a project's own asyncio ini options).
        pytest_args += ["-o", "asyncio_default_fixture_loop_scope=function"]
    if args.target:
        pytest_args.append(f"--streamproof-target={args.target}")
    if args.bug:
        pytest_args.append(f"--streamproof-bug={args.bug}")
    if args.time_scale is not None:
        pytest_args.append(f"--streamproof-time-scale={args.time_scale}")
    if args.strict:
        pytest_args.append("--streamproof-strict")
    if args.require_all:
        pytest_args.append("--streamproof-require-all")
    if args.engine:
        pytest_args.append(f"--streamproof-engine={args.engine}")
    if args.full_observations:
        pytest_args.append("--streamproof-full-observations")
    if args.baseline:
        pytest_args.append(f"--streamproof-baseline={args.baseline}")
    if args.concurrency is not None:
        pytest_args.append(f"--streamproof-concurrency={args.concurrency}")
    pytest_args += parallel[1]
    if args.k:
        pytest_args += ["-k", args.k]
    if args.exitfirst:
        pytest_args.append("-x")
    pytest_args.append("-q" if args.quiet else "-v")
    # Every path named on the command line holds scenarios, whatever the ini says.
    os.environ["STREAMPROOF_SCENARIO_PATHS"] = os.pathsep.join(str(Path(p)) for p in paths)
    tally = _Tally()
    # SIGTERM and SIGHUP stop the run as Ctrl-C does, so pytest's teardown kills the target's
    # process group, closes the fakes and writes the report.
    interrupts = Interrupts()
    interrupts.install()
    try:
        code = int(pytest.main(pytest_args, plugins=[tally]))
    finally:
        interrupts.restore()
    results = report_dir / "results.json"
    reason: str | None = None
    if tally.errors:
        reason = "streamproof run: a scenario file could not be loaded:\n" + "\n".join(tally.errors)
        if results.exists():
            # The session wrote its report (scenarios of other files were collected): it must
            # say why the run stopped, as the console does.
            record_error(report_dir, reason)
    publish_run(reports, report_dir)
    print_counts(results, _rerun_command(args))
    if results.exists():
        print_where(reports, report_dir)
    if interrupts.exit_status is not None:
        # Interrupted: pytest's teardown closed the target's process group and the fakes and
        # wrote the report; the exit status says which signal, never "bad input".
        name = signal.Signals(interrupts.received[0]).name
        print(f"streamproof: interrupted by {name}", file=sys.stderr)
        return interrupts.exit_status
    if code == pytest.ExitCode.OK:
        summary = read_summary(results)
        if summary is not None and not summary.get("ok") and summary.get("error"):
            # Every selected scenario was skipped: a gate that judged nothing is no pass.
            print(f"streamproof run: {summary['error']}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return EXIT_OK
    if code == pytest.ExitCode.TESTS_FAILED:
        return EXIT_TARGET if only_target_errors(results) else EXIT_FAILED
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and reason is None:
        where = ", ".join(paths)
        reason = (
            f"streamproof run: -k {args.k!r} selected none of the {tally.collected} "
            f"scenario(s) found under {where} ({tally.deselected} deselected)"
            if args.k and tally.collected
            else f"streamproof run: no scenario found under {where}"
        )
        if args.shard is not None:
            reason += (
                f" in shard {args.shard} (a part of a selection with fewer scenarios than "
                "parts is empty: use at most as many parts as scenarios)"
            )
    elif reason is None:
        reason = f"streamproof run: pytest stopped with exit status {code} (see above)"
    if results.exists():
        print(reason, file=sys.stderr)
        return EXIT_BAD_INPUT
    return bad_input(
        report_dir, reason, args, subject=tally.error_files[0] if tally.errors else None
    )


def _parallel_options(
    args: argparse.Namespace, last_durations: tuple[Path, str] | None
) -> tuple[int | str, list[str]] | str:
    """``-n``, ``--shard`` and ``--durations-from`` checked: the number of workers (1 when
    not parallel) and pytest's options for them, or why they are bad input."""
    from streamproof.runtime.parallel import (
        DurationsError,
        durations_of_report,
        parse_shard,
        parse_workers,
    )

    workers: int | str = 1
    options: list[str] = []
    os.environ.pop("STREAMPROOF_DURATIONS_LABEL", None)
    if args.workers is not None:
        try:
            workers = parse_workers(args.workers)
        except ValueError as exc:
            return f"streamproof run -n: {exc}"
        if workers != 0 and importlib.util.find_spec("xdist") is None:
            return (
                f"streamproof run -n {workers}: pytest-xdist is not installed (pip install "
                "pytest-xdist); without -n the scenarios run one after another"
            )
        options += ["-n", str(workers)]
    if args.shard is not None:
        try:
            parse_shard(args.shard)
        except ValueError as exc:
            return f"streamproof run --shard {exc}"
        options.append(f"--streamproof-shard={args.shard}")
    if args.shard is None and workers in (0, 1):
        if args.durations_from is None:
            return workers, options
        return (
            "streamproof run --durations-from: it balances --shard and orders -n's workers, "
            "and neither is given"
        )
    if args.durations_from is not None:
        try:
            durations_of_report(Path(args.durations_from))
        except DurationsError as exc:
            return f"streamproof run --durations-from {exc}"
        options.append(f"--streamproof-durations-from={args.durations_from}")
    elif last_durations is not None:
        kept, label = last_durations
        try:
            durations_of_report(kept)
        except DurationsError:
            pass  # not a report of scenarios: by count, in collection order
        else:
            options.append(f"--streamproof-durations-from={kept}")
            os.environ["STREAMPROOF_DURATIONS_LABEL"] = label
    return workers, options


class _Tally:
    """A pytest plugin object counting the scenarios collected and deselected, so a ``-k``
    that selects nothing can say what it left out, and keeping what a file that could not be
    collected said, for the report."""

    def __init__(self) -> None:
        self.collected = 0
        self.deselected = 0
        self.errors: list[str] = []
        """What each file that could not be collected said (its path, line and problem)."""
        self.error_files: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        from streamproof.plugin.items import ScenarioItem

        self.collected += sum(1 for node in report.result if isinstance(node, ScenarioItem))
        if report.failed:
            self.errors.append(report.longreprtext.strip())
            self.error_files.append(report.nodeid or str(report.fspath))

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)


def _rerun_command(args: argparse.Namespace) -> list[str]:
    """``streamproof run`` with this run's target, bug, time scale and strictness."""
    command = ["streamproof", "run"]
    if args.target:
        command += ["--target", args.target]
    if args.bug:
        command += ["--bug", args.bug]
    if args.time_scale is not None:
        command += ["--time-scale", str(args.time_scale)]
    if args.strict:
        command.append("--strict")
    if args.engine:
        command += ["--engine", args.engine]
    if args.baseline:
        command += ["--baseline", args.baseline]
    if args.concurrency is not None:
        command += ["--concurrency", str(args.concurrency)]
    return command
