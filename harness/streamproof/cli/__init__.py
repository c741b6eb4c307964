"""``streamproof``: run scenarios, validate them, list requirements, print the schema, run a
fault proxy in front of a user's own stack (``streamproof proxy``), serve one of the fakes on
its own from a scenario (``streamproof serve a2a|model``), record real traffic into fixtures and
a scenario that replays them (``streamproof record``), write a baseline of known failures
from a saved run (``streamproof baseline write``), and draw a saved run's report again
(``streamproof report``).

Exit codes: 0 every enforced requirement holds, or with ``--baseline`` every enforced failure
is a known one (``proxy``: it ran its ``--for``; ``record``: its ``--max-duration``); 1 one
failed (with ``--baseline``: one not in the baseline); 2 bad input (a malformed scenario,
target, plan or baseline file, a missing or unreadable results.json for ``baseline write`` or
``report``, an unknown scenario for ``report --show``, an unknown option, nothing to run, a
``proxy``, ``serve`` or ``record`` that cannot listen where it is told, a scenario of the wrong
kind for ``serve``); 3 the target could not be started or reached; 128 + the signal when
interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from streamproof.core.concurrency import CONCURRENCY_RANGE, MAX_CONCURRENCY
from streamproof.faults.engine_names import ENGINES
from streamproof.runtime.interrupts import Interrupts

if TYPE_CHECKING:
    import pytest

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_TARGET = 0, 1, 2, 3

UNUSED_PLUGINS = ("hypothesispytest", "anyio", "ag_ui_validate")
"""pytest plugins (by entry point name) that ``streamproof run`` leaves out when installed:
they serve tests written with hypothesis, anyio or ag-ui-validate, never a scenario item."""

NO_BUNDLED_SUITES = (
    "this streamproof has no bundled suites (the package streamproof.scenarios is not installed: "
    "install streamproof, e.g. pip install -e . in its repository)"
)


def _default_paths() -> list[str]:
    """What runs and is listed when no PATH is given: the bundled suites of the installed
    streamproof, from any folder. A ``scenarios/`` folder in the working directory runs only
    when named, so a gate never runs a different suite because of where it was started."""
    from streamproof.runtime.bundled import bundled_scenarios

    bundled = bundled_scenarios()
    if bundled is None:
        return []
    local = Path.cwd() / "scenarios"
    if local.is_dir() and local.resolve() != bundled.resolve():
        print(
            f"streamproof: the bundled suites are used ({bundled}), not the scenarios/ "
            "folder here (name it to run it: streamproof run scenarios)",
            file=sys.stderr,
        )
    return [str(bundled)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamproof",
        description="Conformance harness with fault injection for agent streaming.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run scenarios against a target (pytest underneath)")
    run.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or folders")
    run.add_argument("--target", metavar="FILE", help="target file (default: bundled reference)")
    run.add_argument("--bug", metavar="NAME", help="switch one seeded defect into the reference")
    run.add_argument("--time-scale", metavar="F", type=float, default=None)
    run.add_argument(
        "--report-dir",
        metavar="DIR",
        default="reports",
        help="reports go to DIR/runs/<UTC time>/, with DIR/latest and copies in DIR",
    )
    run.add_argument(
        "--keep-runs",
        metavar="N",
        type=int,
        default=None,
        help="keep the newest N run folders in DIR/runs (default 20; 0 keeps all)",
    )
    run.add_argument("--strict", action="store_true", help="SHOULD failures fail too")
    run.add_argument(
        "--require-all",
        action="store_true",
        help="a scenario this install cannot run (a fault engine or component missing) fails "
        "instead of being skipped with a warning: for a gate",
    )
    run.add_argument(
        "--baseline",
        metavar="FILE",
        help="known failures (YAML, see streamproof baseline write): they fail their checks "
        "but not the run; only new failures do",
    )
    run.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="the fault engine for every link a scenario does not give one (default inline); "
        "a scenario whose plan the engine cannot carry out is skipped with the reason",
    )
    run.add_argument(
        "--full-observations",
        action="store_true",
        help="keep every scenario's whole observation in results.json (default: failures only)",
    )
    run.add_argument(
        "--concurrency",
        metavar="K",
        type=int,
        default=None,
        help=f"run K copies of each scenario at once against one target (2 to "
        f"{MAX_CONCURRENCY}: gateway sessions with distinct ids, users and markers; client "
        "calls as K processes with marked prompts), judged by the concurrency checks too, "
        "with latency figures under that load",
    )
    run.add_argument(
        "-n",
        dest="workers",
        metavar="N",
        default=None,
        help="run the scenarios on N parallel workers (pytest-xdist; auto: one per CPU), each "
        "with its own target and fakes; one report as a serial run writes",
    )
    run.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only part I (from 1) of N of the selected scenarios, for a CI matrix of N "
        "jobs: disjoint parts whose union is the whole, balanced by the last report's durations",
    )
    run.add_argument(
        "--durations-from",
        metavar="FILE",
        default=None,
        help="the results.json whose durations balance --shard and order -n's workers, "
        "longest first (default: the last run's, REPORT_DIR/results.json, when there is one)",
    )
    run.add_argument("-k", metavar="EXPR", help="only scenarios whose id matches EXPR")
    run.add_argument("-x", "--exitfirst", action="store_true")
    run.add_argument("-q", "--quiet", action="store_true")

    mutants = sub.add_parser(
        "mutants", help="run the suite against every seeded defect and print the matrix"
    )
    mutants.add_argument(
        "--suite",
        metavar="NAME",
        action="append",
        default=[],
        help="only this reference and its mutants (gateway, gateway-ag-ui, gateway-ai-sdk-ui, "
        "gateway-ag-ui-detach, a2a-client); repeatable",
    )
    mutants.add_argument("--only", metavar="NAME", action="append", default=[])
    mutants.add_argument("--jobs", metavar="N", type=int, default=2)
    mutants.add_argument("--time-scale", metavar="F", type=float, default=None)
    mutants.add_argument("--report-dir", metavar="DIR", default="reports")

    explore = sub.add_parser(
        "explore",
        help="search fault plans with hypothesis and write the smallest failing scenario",
    )
    explore.add_argument("scenario", metavar="SCENARIO", help="a scenario file or bundled id")
    explore.add_argument(
        "--target", metavar="FILE", help="target file (default: bundled reference)"
    )
    explore.add_argument("--bug", metavar="NAME", help="seed a reference's defect (a mutant)")
    explore.add_argument("--max-examples", metavar="N", type=int, default=200)
    explore.add_argument(
        "--time-budget", metavar="D", default="10m", help="wall time for the search (10m)"
    )
    explore.add_argument("--seed", metavar="S", type=int, default=None)
    explore.add_argument("--out", metavar="DIR", default="reports")
    explore.add_argument("--time-scale", metavar="F", type=float, default=None)
    explore.add_argument("--strict", action="store_true", help="SHOULD failures are findings too")
    explore.add_argument(
        "--requirement",
        metavar="REQ",
        help="only this requirement counts: the search holds out for a plan that breaks it",
    )
    explore.add_argument(
        "--screen",
        action="store_true",
        help="run a found plan on the bundled reference first; what it fails too is skipped "
        "(implied by --bug, on the reference without the bug)",
    )

    validate = sub.add_parser(
        "validate", help="check scenario and target files without running them"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")

    schema = sub.add_parser(
        "schema", help="print the JSON Schema of scenario files, or of target files (for editors)"
    )
    schema.add_argument(
        "--target", action="store_true", help="the target file's schema instead of the scenario's"
    )

    sub.add_parser(
        "engines", help="print what each fault engine does with each plan item (Markdown)"
    )

    proxy = sub.add_parser(
        "proxy",
        help="a fault proxy in front of your own server or gateway, printing what it sees",
        description="Forward to --upstream through a fault link on loopback, print every "
        "connection, request, event and fault as it happens, and stop on Ctrl-C (or after "
        "--for). Point your client at the URL it prints first.",
    )
    proxy.add_argument("--upstream", required=True, metavar="URL", help="where to forward")
    proxy.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default="127.0.0.1:0",
        help="loopback only: 127.0.0.1, ::1 or localhost; port 0 (default): any free port",
    )
    proxy.add_argument(
        "--engine", choices=ENGINES, default="inline", help="the fault engine (default inline)"
    )
    # Neither --plan nor --fault: the traffic passes unchanged and is recorded (watching a
    # stack before choosing a fault, or measuring what the hop costs).
    plan = proxy.add_mutually_exclusive_group()
    plan.add_argument(
        "--plan", metavar="FILE", help="a YAML list of faults, as under links.<name> in a scenario"
    )
    plan.add_argument(
        "--fault",
        metavar="TEXT",
        action="append",
        help="one fault in words, repeatable, in plan order: 'after 40s: stall', "
        "'rpc message/stream after_event 3: rst', 'on_request: status 502'",
    )
    proxy.add_argument(
        "--time-scale",
        metavar="F",
        type=float,
        default=1.0,
        help="multiply the plan's durations (default 1: real time)",
    )
    proxy.add_argument(
        "--write-scenario",
        metavar="FILE",
        help="when it stops, write what it saw as a scenario skeleton to finish",
    )
    proxy.add_argument(
        "--for", dest="run_for", metavar="DURATION", help="stop by itself after this long (40s)"
    )

    record = sub.add_parser(
        "record",
        help="a recording proxy in front of a real model or A2A server: writes fixtures and a "
        "scenario that replays them",
    )
    record.add_argument("--upstream", required=True, metavar="URL", help="where to forward")
    record.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where to listen (loopback only; default 127.0.0.1 on any free port)",
    )
    record.add_argument(
        "--kind",
        choices=("model", "a2a"),
        default=None,
        help="the link: model (Gemini calls -> gateway scenario) or a2a (A2A server -> "
        "a2a-client scenario); default: guessed from the traffic",
    )
    record.add_argument(
        "--out", default="recorded", metavar="DIR", help="where to write (default: recorded)"
    )
    record.add_argument(
        "--name", metavar="NAME", help="scenario and fixture folder name (default: a time)"
    )
    record.add_argument(
        "--max-duration", metavar="D", help="stop after this long (e.g. 30s); default Ctrl-C"
    )

    serve = sub.add_parser(
        "serve",
        help="run a fake (A2A server, or Gemini + tool service) on its own from a scenario",
        description="Serve one of streamproof's fakes on 127.0.0.1 playing a scenario, print "
        "its URL(s) and one line per request as it arrives, and stop on Ctrl-C or SIGTERM. "
        "Point your own client, debugger or the A2A TCK at it.",
    )
    which = serve.add_subparsers(dest="fake", required=True, metavar="{a2a,model}")
    a2a_cmd = which.add_parser(
        "a2a", help="the fake A2A server, from an a2a-client scenario's task/reply and server:"
    )
    model = which.add_parser(
        "model", help="the fake Gemini endpoint and tool service, from a gateway scenario"
    )
    for cmd in (a2a_cmd, model):
        cmd.add_argument("scenario", metavar="SCENARIO", help="a scenario file")
        cmd.add_argument(
            "--id", dest="scenario_id", metavar="ID", help="which scenario of a file of several"
        )
        cmd.add_argument(
            "--port", type=int, default=0, help="the port on 127.0.0.1 (default 0: any free port)"
        )
        cmd.add_argument(
            "--time-scale",
            metavar="F",
            type=float,
            default=1.0,
            help="multiply the scenario's times (default 1: real time)",
        )
    a2a_cmd.add_argument(
        "--wire",
        choices=("0.3", "1.0", "both"),
        help="the wire the card offers and the server speaks (default: the scenario's)",
    )
    model.add_argument(
        "--tools-port",
        type=int,
        default=0,
        help="the tool service's port on 127.0.0.1 (default 0: any free port)",
    )

    baseline = sub.add_parser("baseline", help="write a baseline of known failures")
    baseline_sub = baseline.add_subparsers(dest="baseline_command", required=True, metavar="write")
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

    report = sub.add_parser(
        "report",
        help="draw a saved run's report.html again, or print one scenario of it",
        description="Re-render RESULTS.json's report.html (default: report.html beside it; a "
        "file there is replaced only when streamproof wrote it), or with --show print one "
        "scenario's verdicts and timeline as text (then nothing is written unless --html is "
        "given).",
    )
    report.add_argument("results", metavar="RESULTS.json", help="a run's results.json")
    report.add_argument("--html", metavar="OUT", help="where to write the page")
    report.add_argument(
        "--show", metavar="SCENARIO", help="print this scenario's verdicts and timeline"
    )

    lst = sub.add_parser("list", help="print the requirement registry")
    lst.add_argument("--json", action="store_true")
    lst.add_argument(
        "--markdown", action="store_true", help="the table of docs/reference/requirements.md"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `streamproof list | head`: the reader left; that is not an error of ours. Point
        # stdout at nothing so the interpreter's final flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "validate":
        return _validate(args.paths)
    if args.command == "mutants":
        return _mutants(args)
    if args.command == "explore":
        return _explore(args)
    if args.command == "schema":
        from streamproof.suites.schema import scenario_schema, target_schema

        print(json.dumps(target_schema() if args.target else scenario_schema(), indent=2))
        return EXIT_OK
    if args.command == "engines":
        from streamproof.faults.engines.catalog import engines_table

        print(engines_table())
        return EXIT_OK
    if args.command == "baseline":
        return _baseline_write(args.results, args.output)
    if args.command == "list":
        return _list(as_json=args.json, markdown=args.markdown)
    if args.command == "report":
        return _report(args)
    if args.command == "proxy":
        from streamproof.standalone.command import run as run_proxy

        return run_proxy(args)
    if args.command == "record":
        from streamproof.standalone.record import run as run_record

        return run_record(args)
    if args.command == "serve":
        from streamproof.standalone.serve import run as run_serve

        return run_serve(args)
    return EXIT_BAD_INPUT  # pragma: no cover - argparse enforces the choices


def _scenario_files(paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    files: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(raw)
    return files, missing


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


def _only_target_errors(results: Path) -> bool:
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


def _read_summary(results: Path) -> dict[str, object] | None:
    try:
        summary = json.loads(results.read_text(encoding="utf-8"))["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return summary if isinstance(summary, dict) else None


def _print_counts(results: Path, rerun: Sequence[str] = ()) -> None:
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


def _validate(paths: Sequence[str]) -> int:
    """Every problem of every file, scenario files and target files alike (a target file is
    recognised by its keys: :mod:`streamproof.suites.input_files`)."""
    from streamproof.suites.input_files import check_file
    from streamproof.suites.loading import ScenarioIds

    found, missing = _scenario_files(paths)
    files = list({file.resolve(): file for file in found}.values())  # each file once
    errors = [f"{m}: no such file or folder" for m in missing]
    ids = ScenarioIds()  # one for all the files: an id used in two files is an error
    checked = [check_file(file, ids) for file in files]
    errors += [str(problem) for entry in checked for problem in entry.problems]
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        return EXIT_BAD_INPUT
    if not files:
        print("no scenario or target files found", file=sys.stderr)
        return EXIT_BAD_INPUT
    scenario_files = [entry for entry in checked if entry.target_kind is None]
    for entry in checked:
        if entry.target_kind is not None:
            print(f"{entry.file}: ok: target file ({entry.target_kind})")
    if scenario_files:
        count = sum(len(entry.scenarios) for entry in scenario_files)
        print(f"ok: {count} scenario(s) in {len(scenario_files)} file(s)")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
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
    report_dir = _start_run(reports, args)
    if report_dir is None:
        return EXIT_BAD_INPUT
    if args.keep_runs is not None and args.keep_runs < 0:
        return _bad_input(report_dir, "--keep-runs must be 0 (keep every run) or more", args)
    paths = list(args.paths) or _default_paths()
    if not paths:
        return _bad_input(
            report_dir, f"streamproof run: no PATH given and {NO_BUNDLED_SUITES}", args
        )
    _, missing = _scenario_files(paths)
    if missing:
        return _bad_input(
            report_dir,
            "\n".join(f"{m}: no such file or folder" for m in missing),
            args,
            subject=missing[0],
        )
    if args.time_scale is not None and not args.time_scale > 0:
        return _bad_input(report_dir, "--time-scale must be a positive number", args)
    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        return _bad_input(
            report_dir, "--concurrency " + CONCURRENCY_RANGE.format(args.concurrency), args
        )
    parallel = _parallel_options(args, last_durations)
    if isinstance(parallel, str):
        return _bad_input(report_dir, parallel, args)
    target = None
    if args.target is not None:
        from streamproof.suites import suite
        from streamproof.suites.input_files import check_target_file
        from streamproof.targets.errors import TargetConfigError

        # Every problem of the target file with its line, as validate reports them; then the
        # suite's own loading (which also resolves a relative cwd and checks it exists).
        checked = check_target_file(args.target)
        if checked.problems:
            return _bad_input(
                report_dir, "\n".join(map(str, checked.problems)), args, subject=args.target
            )
        kind = checked.target_kind or "gateway"
        try:
            target = suite(kind).load_target(args.target)
        except TargetConfigError as exc:
            return _bad_input(report_dir, str(exc), args, subject=args.target)
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
            return _bad_input(report_dir, f"--engine {args.engine}: {exc}", args)
    if args.baseline is not None:
        from streamproof.report.baseline import BaselineError, load_baseline

        try:
            load_baseline(args.baseline)
        except BaselineError as exc:
            return _bad_input(
                report_dir, f"--baseline {args.baseline}:\n{exc}", args, subject=args.baseline
            )
    if args.bug is not None:
        from streamproof.suites import known_bugs

        names = known_bugs(args.target)
        if args.bug not in names:
            return _bad_input(
                report_dir, f"--bug {args.bug}: unknown; choose one of {', '.join(names)}", args
            )

    if target is not None and args.workers is not None:
        from streamproof.runtime.parallel import parallel_refusal

        refusal = parallel_refusal(target, parallel[0])
        if refusal is not None:
            return _bad_input(report_dir, f"streamproof run {refusal}", args)

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
            _record_error(report_dir, reason)
    _publish(reports, report_dir)
    _print_counts(results, _rerun_command(args))
    if results.exists():
        _print_where(reports, report_dir)
    if interrupts.exit_status is not None:
        # Interrupted: pytest's teardown closed the target's process group and the fakes and
        # wrote the report; the exit status says which signal, never "bad input".
        name = signal.Signals(interrupts.received[0]).name
        print(f"streamproof: interrupted by {name}", file=sys.stderr)
        return interrupts.exit_status
    if code == pytest.ExitCode.OK:
        summary = _read_summary(results)
        if summary is not None and not summary.get("ok") and summary.get("error"):
            # Every selected scenario was skipped: a gate that judged nothing is no pass.
            print(f"streamproof run: {summary['error']}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return EXIT_OK
    if code == pytest.ExitCode.TESTS_FAILED:
        return EXIT_TARGET if _only_target_errors(results) else EXIT_FAILED
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
    return _bad_input(
        report_dir, reason, args, subject=tally.error_files[0] if tally.errors else None
    )


def _record_error(report_dir: Path, reason: str) -> None:
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
        from streamproof.plugin import ScenarioItem

        self.collected += sum(1 for node in report.result if isinstance(node, ScenarioItem))
        if report.failed:
            self.errors.append(report.longreprtext.strip())
            self.error_files.append(report.nodeid or str(report.fspath))

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)


def _bad_input(
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
    _publish(reports, report_dir)
    _print_where(reports, report_dir)
    return EXIT_BAD_INPUT


def _start_run(reports: Path, args: argparse.Namespace) -> Path | None:
    """This run's own folder under ``reports/runs/``, ``reports/latest`` pointing at it, after
    removing the oldest run folders beyond ``--keep-runs`` (None when it cannot be made)."""
    from streamproof.report.runs import DEFAULT_KEEP, new_run

    keep = DEFAULT_KEEP if args.keep_runs is None else max(args.keep_runs, 0)
    try:
        return new_run(reports, keep=keep)
    except OSError as exc:
        print(f"streamproof: cannot make this run's folder in {reports}: {exc}", file=sys.stderr)
        return None


def _publish(reports: Path, run_dir: Path) -> None:
    """Copy this run's reports to the top of ``reports``, where gates and docs read them."""
    from streamproof.report.runs import publish

    try:
        publish(reports, run_dir)
    except OSError as exc:
        print(f"streamproof: cannot copy the reports to {reports}: {exc}", file=sys.stderr)


def _print_where(reports: Path, run_dir: Path) -> None:
    from streamproof.report.runs import REPORT_FILES

    written = [str(reports / n) for n in REPORT_FILES if (run_dir / n).exists()]
    where = (
        ", ".join(written[:-1]) + " and " + written[-1] if len(written) > 1 else "".join(written)
    )
    print(f"streamproof: report in {where} (this run: {run_dir})")


def _report(args: argparse.Namespace) -> int:
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


def _baseline_write(results: str, output: str | None) -> int:
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


def _explore(args: argparse.Namespace) -> int:
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


def _mutants(args: argparse.Namespace) -> int:
    from streamproof.mutants.matrix import default_suites, durations_of_matrix, run_matrix

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
    if args.jobs < 1:
        print("--jobs must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    report_dir = Path(args.report_dir)
    matrix = run_matrix(
        suites,
        only=args.only,
        jobs=args.jobs,
        time_scale=args.time_scale,
        # The last matrix's walls order the runs longest first.
        durations=durations_of_matrix(report_dir / "mutants.json"),
    )
    print(matrix.render())
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "mutants.json").write_text(json.dumps(matrix.to_json(), indent=2) + "\n")
    print(f"streamproof: matrix in {report_dir / 'mutants.json'}")
    return EXIT_OK if matrix.ok else EXIT_FAILED


def _list(*, as_json: bool, markdown: bool = False) -> int:
    from streamproof.suites import REGISTRY
    from streamproof.suites.coverage import requirements_table, scenarios_by_requirement

    paths = _default_paths()
    if not paths:
        print(f"streamproof list: {NO_BUNDLED_SUITES}", file=sys.stderr)
    if markdown:
        print(requirements_table(paths))
        return EXIT_OK
    by_req = scenarios_by_requirement(paths)
    if as_json:
        rows = [
            {**r.model_dump(mode="json"), "scenarios": by_req.get(r.id, [])}
            for r in REGISTRY.values()
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for req in REGISTRY.values():
        print(f"{req.id:<28} {req.level.value:<6} {req.statement}")
        print(f"{'':<28} {req.source()}: {req.section}")
        scenarios = by_req.get(req.id, [])
        # A rule about sessions at once, or of one wire's own protocol, is judged on every
        # scenario run that way.
        none = req.everywhere() or "(none)"
        print(f"{'':<28} scenarios: {', '.join(scenarios) if scenarios else none}")
    return EXIT_OK


def entry() -> NoReturn:
    """The command (console script and ``python -m streamproof``): :func:`main`, then out
    without the interpreter's teardown (:func:`streamproof.runtime.process_exit.exit_now`).
    :func:`main`
    itself returns, for callers in the same process."""
    from streamproof.runtime.process_exit import exit_now

    exit_now(main())
