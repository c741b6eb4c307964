"""The plugin's command-line options and ini settings, and their checks when pytest is
configured (an unknown engine, bug or bundled suite, a bad baseline: a usage error before
anything is collected). The options of ``-n`` and ``--streamproof-shard`` are
:mod:`streamproof.plugin.xdist`'s."""

from __future__ import annotations

import pytest

from streamproof.faults.engine_names import ENGINES
from streamproof.plugin.shared import SUITE_FOLDERS_KEY


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamproof", "streamproof conformance scenarios")
    group.addoption(
        "--streamproof-target",
        metavar="FILE",
        default=None,
        help="target file (default: the bundled reference gateway)",
    )
    group.addoption(
        "--streamproof-bug",
        metavar="NAME",
        default=None,
        help="switch one seeded defect into the reference target (a mutant)",
    )
    group.addoption(
        "--streamproof-time-scale",
        metavar="F",
        type=float,
        default=None,
        # streamproof.core.durations.DEFAULT_TIME_SCALE, spelt out: importing it (pydantic) would
        # make every pytest run pay for it (harness/tests/core/test_durations.py checks them)
        help="multiply every scenario duration by F (default 0.1)",
    )
    group.addoption(
        "--streamproof-report-dir",
        metavar="DIR",
        default=None,
        help="write the reports as `streamproof run --report-dir DIR` does: DIR/runs/<UTC "
        "time>/ with results.json and report.html, DIR/latest pointing at it, and copies in DIR "
        "(default: reports/ under the rootdir, when the session selected a scenario)",
    )
    group.addoption(
        "--streamproof-engine",
        metavar="NAME",
        default=None,
        choices=ENGINES,
        help="the fault engine that carries out the links' plans unless a scenario names one "
        "(default inline)",
    )
    group.addoption(
        "--streamproof-strict",
        action="store_true",
        default=False,
        help="fail scenarios on SHOULD requirements too",
    )
    group.addoption(
        "--streamproof-require-all",
        action="store_true",
        default=False,
        help="a scenario this install cannot run (a fault engine or component missing) fails "
        "instead of being skipped with a warning: for a gate (ini: streamproof_require_all)",
    )
    group.addoption(
        "--streamproof-baseline",
        metavar="FILE",
        default=None,
        help="a YAML file of known failures (known_failures: [{scenario, requirement, "
        "reason}]): those fail their checks but not the run (reported as xfail)",
    )
    group.addoption(
        "--streamproof-full-observations",
        action="store_true",
        default=False,
        help="keep every scenario's whole observation in results.json (default: only for "
        "failures and unmet SHOULDs; a summary for the others)",
    )
    group.addoption(
        "--streamproof-concurrency",
        metavar="K",
        type=int,
        default=None,
        help="run K copies of each scenario at once against one target (2 to 32: gateway "
        "sessions with distinct ids, users and markers; client calls as K processes with "
        "marked prompts), judged by the concurrency checks too, with latency figures under "
        "that load",
    )
    group.addoption(
        "--streamproof-suite",
        metavar="NAME",
        default=None,
        help="collect the bundled suite NAME (gateway, a2a_client, browser_client) of the "
        "installed streamproof, besides the paths named (instead of testpaths when none is named); "
        "ini: streamproof_suite",
    )
    group.addoption(
        "--streamproof-run-dir",
        metavar="DIR",
        default=None,
        help="write the reports into DIR itself, no run folder of their own (what `streamproof "
        "run` passes: it made DIR under its --report-dir)",
    )
    parser.addini(
        "streamproof_suite",
        default="",
        help="as --streamproof-suite",
    )
    parser.addini(
        "streamproof_require_all",
        type="bool",
        default=False,
        help="as --streamproof-require-all",
    )
    parser.addini(
        "streamproof_dirs",
        type="paths",
        default=[],
        help="folders whose .yaml files are streamproof scenarios",
    )


def pytest_configure(config: pytest.Config) -> None:
    for name, text in (
        ("gateway", "a streamproof scenario that targets an SSE gateway"),
        ("a2a_client", "a streamproof scenario that targets an A2A client"),
        (
            "browser_client",
            "a streamproof scenario that targets a page or reducer rendering a stream",
        ),
        ("must", "a streamproof scenario built to test a MUST requirement"),
        ("should", "a streamproof scenario built to test a SHOULD requirement"),
        ("may", "a streamproof scenario built to test a MAY requirement"),
    ):
        config.addinivalue_line("markers", f"{name}: {text}")
    _add_bundled_suite(config)
    engine = config.getoption("--streamproof-engine", None)
    if engine:
        from streamproof.faults.engines import EngineUnavailable, open_engine

        try:
            open_engine(engine)
        except EngineUnavailable as exc:
            raise pytest.UsageError(f"--streamproof-engine {engine}: {exc}") from None
    baseline = config.getoption("--streamproof-baseline", None)
    if baseline:
        from streamproof.report.baseline import BaselineError, load_baseline

        try:
            load_baseline(baseline)
        except BaselineError as exc:
            raise pytest.UsageError(f"--streamproof-baseline {baseline}:\n{exc}") from None
    concurrency = config.getoption("--streamproof-concurrency", None)
    if concurrency is not None:
        from streamproof.core.concurrency import CONCURRENCY_RANGE, MAX_CONCURRENCY

        if not 1 <= concurrency <= MAX_CONCURRENCY:
            raise pytest.UsageError(
                "--streamproof-concurrency " + CONCURRENCY_RANGE.format(concurrency)
            )
    bug = config.getoption("--streamproof-bug", None)
    if bug:
        from streamproof.suites import known_bugs  # only when a mutant is asked for

        names = known_bugs(config.getoption("--streamproof-target", None))
        if bug not in names:
            raise pytest.UsageError(
                f"--streamproof-bug {bug}: unknown; choose one of {', '.join(names)}"
            )


def _add_bundled_suite(config: pytest.Config) -> None:
    """``--streamproof-suite NAME``: the installed streamproof's own suite folder is collected
    where it is (no copy that would not follow an upgrade), beside the paths the command line
    names, or in place of testpaths and the current folder when it names none."""
    name = config.getoption("--streamproof-suite", None) or config.getini("streamproof_suite")
    if not name:
        return
    from streamproof.runtime.bundled import bundled_scenarios

    bundled = bundled_scenarios()
    if bundled is None:
        raise pytest.UsageError(
            f"--streamproof-suite {name}: this streamproof has no bundled suites (the package "
            "streamproof.scenarios is not installed)"
        )
    from streamproof.suites import kinds, suite

    # The kinds' scenario folders, not whatever else the package folder holds (__pycache__).
    suites = sorted(
        folder
        for folder in (suite(kind).SCENARIO_FOLDER for kind in kinds())
        if (bundled / folder).is_dir()
    )
    if name not in suites:
        raise pytest.UsageError(
            f"--streamproof-suite {name}: no such bundled suite; choose one of {', '.join(suites)}"
        )
    folder = bundled / name
    config.stash[SUITE_FOLDERS_KEY] = [folder]
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        config.args.append(str(folder))
    else:
        config.args[:] = [str(folder)]
