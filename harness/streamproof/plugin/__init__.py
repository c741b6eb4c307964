"""The pytest plugin: scenario files become test items, one per scenario.

Registered through the ``pytest11`` entry point, so it is active in every pytest run of an
environment where streamproof is installed. It is cheap to import (only pytest and the
standard library at module level) and collects only scenario files: ``*.scenario.yaml``
anywhere, or any ``.yaml`` under a folder listed in the ``streamproof_dirs`` ini option.
Everything heavy (pydantic models, aiohttp, the fakes, the gateway) loads when a scenario
file is actually collected or run.

Scenario ids are unique across everything one session collects: every file's load shares the
session's :class:`~streamproof.suites.loading.ScenarioIds`, so a file that uses an id another file
(or the same one) already used is a collection error naming both places. Like any collection
error it stops the session before anything runs (``streamproof run`` exits 2), whatever ``-k``
would have selected: the check is made at collection, before deselection.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr

from streamproof.faults.engine_names import ENGINES
from streamproof.plugin.shared import KINDS_KEY, SESSION_KEY, SUITE_FOLDERS_KEY
from streamproof.plugin.shared import is_scenario_file as _is_scenario_file

if TYPE_CHECKING:
    from _pytest._io import TerminalWriter

    from streamproof.suites.loading import LoadedScenario, ScenarioIds

pytest_plugins = ("streamproof.plugin.fixtures", "streamproof.plugin.xdist")
"""The fixtures for a team's own tests (``fake_model``, ``fake_a2a``, ``fault_link``...): a
module of their own, as cheap to import as this one; and the hooks for pytest-xdist workers
and ``--streamproof-shard`` (:mod:`streamproof.plugin.xdist`)."""

_SESSION_KEY = SESSION_KEY
_COLLECTED_FILES: pytest.StashKey[int] = pytest.StashKey()
_IDS_KEY: pytest.StashKey[ScenarioIds] = pytest.StashKey()
_SCENARIOS_KEY: pytest.StashKey[int] = pytest.StashKey()
"""How many scenario items the session selected (after ``-k`` and ``-m``)."""
_INTERRUPTED_KEY: pytest.StashKey[bool] = pytest.StashKey()
"""Set when Ctrl-C or a signal stopped the session (not a collection error, which pytest also
reports as "interrupted")."""


class _InterruptWatch:
    """Tells a real interrupt from pytest's own ``Interrupted`` (collection errors, ``-x``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if not isinstance(excinfo.value, pytest.Session.Interrupted):
            self.config.stash[_INTERRUPTED_KEY] = True


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
        # make every pytest run pay for it (harness/tests/core/test_durations.py checks the two
        # agree)
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
        help="collect the bundled suite NAME (gateway, a2a_client) of the installed "
        "streamproof, besides the paths named (instead of testpaths when none is named); "
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
    config.pluginmanager.register(_InterruptWatch(config), "streamproof-interrupt-watch")
    for name, text in (
        ("gateway", "a streamproof scenario that targets an SSE gateway"),
        ("a2a_client", "a streamproof scenario that targets an A2A client"),
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
    suites = sorted(p.name for p in bundled.iterdir() if p.is_dir() and p.name.isidentifier())
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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_scenario_file(file_path, parent.config):
        stash = parent.config.stash
        stash[_COLLECTED_FILES] = stash.get(_COLLECTED_FILES, 0) + 1
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def _holds_yaml(path: Path, skip: list[str]) -> bool:
    """A .yaml file, or a folder with one somewhere below it (outside the folders pytest does
    not recurse into: hidden ones, virtualenvs, build output)."""
    if path.is_file():
        return path.suffix in (".yaml", ".yml")
    for _, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not any(fnmatch.fnmatch(d, pattern) for pattern in skip)]
        if any(name.endswith((".yaml", ".yml")) for name in files):
            return True
    return False


def _hint_uncollected(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Pointed at scenario files that pytest did not take for scenarios, say how to make it."""
    # Nothing collected from a folder, or a file named on its own "not found" (a usage error).
    nothing = (pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.USAGE_ERROR)
    if exitstatus not in nothing or config.stash.get(_COLLECTED_FILES, 0):
        return
    skip: list[str] = config.getini("norecursedirs")
    here = config.invocation_params.dir
    given = [arg for arg in config.args if _holds_yaml(here / arg.split("::")[0], skip)]
    if not given:
        return
    ini = f"this run read {config.inipath}" if config.inipath else "this run found no ini file"
    for line in (
        f"streamproof: no scenario collected from {', '.join(given)}: pytest takes a .yaml file "
        "for a streamproof scenario only when it is named *.scenario.yaml or lies under a "
        f"folder listed in the streamproof_dirs ini option ({ini}). For example, in "
        "pyproject.toml:",
        "    [tool.pytest.ini_options]",
        '    streamproof_dirs = ["scenarios"]',
        "or run the folder with the CLI, which takes any .yaml it is given: streamproof run PATH",
    ):
        terminalreporter.write_line(line, yellow=True)


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from streamproof.suites import REGISTRY
        from streamproof.suites.loading import ScenarioError, ScenarioIds, load_scenarios

        ids = self.config.stash.setdefault(_IDS_KEY, ScenarioIds())
        try:
            loaded = load_scenarios(self.path, ids)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for entry in loaded:
            item = ScenarioItem.from_parent(self, name=entry.scenario.id, loaded=entry)
            item.add_marker(entry.scenario.kind.replace("-", "_"))
            levels = {REGISTRY[r].level.value.lower() for r in entry.scenario.requirements}
            for level in sorted(levels):
                item.add_marker(level)
            yield item


class _ProgressText:
    """A progress note at the end of the item's line on a terminal (``[12s of at most 60s
    scenario time]``), redrawn in place and erased before pytest writes the outcome.

    It writes with pytest's output capture suspended, straight to the terminal, and erases
    exactly what it wrote (backspaces, blanks, backspaces), so the cursor ends where pytest
    left it and pytest's own line-width bookkeeping stays true.
    """

    def __init__(self, config: pytest.Config) -> None:
        self._capture = config.pluginmanager.getplugin("capturemanager")
        self._shown = 0

    def _write(self, text: str) -> None:
        import sys

        if self._capture is not None:
            with self._capture.global_and_fixture_disabled():
                sys.stdout.write(text)
                sys.stdout.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()

    def __call__(self, note: str) -> None:
        text = f" [{note}]"
        pad = max(self._shown - len(text), 0)
        self._write("\b" * self._shown + text + " " * pad + "\b" * pad)
        self._shown = len(text)

    def erase(self) -> None:
        if self._shown:
            self._write("\b" * self._shown + " " * self._shown + "\b" * self._shown)
            self._shown = 0


@contextmanager
def _progress(config: pytest.Config) -> Iterator[_ProgressText | None]:
    """A progress display when the run's output is a terminal, else None."""
    reporter = config.pluginmanager.getplugin("terminalreporter")
    if reporter is None or not getattr(reporter, "isatty", False) or config.option.verbose < 0:
        yield None
        return
    text = _ProgressText(config)
    try:
        yield text
    finally:
        text.erase()


class ScenarioFailed(Exception):
    """The target broke at least one requirement the run must enforce. ``report``'s first line
    is ``<REQ-ID> <LEVEL>: <reason>`` for the first broken rule."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


class _FailureRepr(TerminalRepr):
    """A scenario's failure for pytest's reports: the whole text in the failures section and
    JUnit's ``<failure>`` body, and its first line as the "crash" message that JUnit's
    ``message=`` attribute and the short test summary (``FAILED id - ...``) show.

    pytest has no public type for a failure representation with a crash line; these two from
    ``_pytest._code.code`` are what its own reports are made of (stable since pytest 3). The
    JUnit tests of harness/tests/cli/test_baseline.py read ``message=`` back, so a pytest that
    changes them shows up there."""

    def __init__(self, text: str, path: Path, line: int) -> None:
        self.text = text
        self.reprcrash = ReprFileLocation(str(path), line, text.split("\n", 1)[0])

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.text.splitlines():
            tw.line(line)


class ScenarioItem(pytest.Item):
    def __init__(self, *, loaded: LoadedScenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded

    def runtest(self) -> None:
        from streamproof.plugin.session import session_for

        session = session_for(self.config, _SESSION_KEY)
        if not session.kinds:
            session.kinds = self.config.stash.get(KINDS_KEY, [])
        with _progress(self.config) as show:
            failure = session.run_item(self, show)
        if failure is not None:
            raise ScenarioFailed(failure)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        from streamproof.targets.errors import TargetConfigError, TargetError

        if isinstance(excinfo.value, ScenarioFailed):
            return _FailureRepr(excinfo.value.report, self.path, self.loaded.line)
        if isinstance(excinfo.value, TargetError | TargetConfigError | TimeoutError):
            return f"{type(excinfo.value).__name__}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.loaded.line - 1, f"scenario {self.name}"


def pytest_collection_finish(session: pytest.Session) -> None:
    scenarios = [i for i in session.items if isinstance(i, ScenarioItem)]
    session.config.stash[_SCENARIOS_KEY] = len(scenarios)
    kinds: list[str] = list(dict.fromkeys(i.loaded.scenario.kind for i in scenarios))
    session.config.stash[KINDS_KEY] = kinds


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from streamproof.plugin import xdist as parallel

    config = session.config
    holder = config.stash.get(_SESSION_KEY, None)
    if parallel.is_worker(config):
        # Its records go to the controller, which writes the one report of the run.
        parallel.send_records(config, holder, config.stash.get(_SCENARIOS_KEY, 0))
        return
    if parallel.is_controller(config):
        holder, config.stash[_SCENARIOS_KEY] = parallel.gather(config, holder)
    elif holder is not None:
        holder.shard = parallel.shard_of(config)
    if holder is None and config.stash.get(_SCENARIOS_KEY, 0) and not config.option.collectonly:
        # Scenarios were selected but none ran (interrupted first, or stopped by -x): the
        # report still says what this session did. A session without scenarios (a project's
        # own tests) writes nothing.
        from streamproof.plugin.session import session_for

        holder = session_for(config, _SESSION_KEY)
    if holder is not None:
        interrupted = config.stash.get(_INTERRUPTED_KEY, False) or any(
            r.get("outcome") == "interrupted" for r in holder.records
        )
        holder.finish(exitstatus, interrupted=interrupted)
        if holder.interrupts.exit_status is not None:
            # Killed by a signal, as a shell reports it (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
            # rather than pytest's generic "interrupted".
            session.exitstatus = holder.interrupts.exit_status
    if parallel.is_controller(config):
        parallel.reorder_junit(config)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    _hint_uncollected(terminalreporter, exitstatus, config)
    _skipped_summary(terminalreporter, config)
    _baseline_summary(terminalreporter, config)
    _load_summary(terminalreporter, config)


def _load_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """With ``--concurrency K``: per scenario, the target's latency under K sessions at once."""
    holder = config.stash.get(_SESSION_KEY, None)
    if holder is None or holder.concurrency < 2:
        return
    from streamproof.core.concurrency import load_line

    lines = [load_line(r["id"], r["concurrency"]) for r in holder.records if r.get("concurrency")]
    if lines:
        terminalreporter.write_sep(
            "=", f"streamproof: latency under {holder.concurrency} sessions at once"
        )
        for line in lines:
            terminalreporter.write_line(line)


def _baseline_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """With a baseline: its known failures, the entries now fixed (to remove) and those whose
    scenario did not run."""
    holder = config.stash.get(_SESSION_KEY, None)
    if holder is None or holder.baseline is None:
        return
    from streamproof.report.baseline import baseline_summary
    from streamproof.report.console import render_baseline

    summary = baseline_summary(holder.baseline, holder.records, strict=holder.strict)
    terminalreporter.write_sep("=", "streamproof: baseline")
    for line in render_baseline(holder.records, summary):
        terminalreporter.write_line(line)


def _skipped_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Skipped scenarios grouped by reason, in the default summary (``-rs`` shows pytest's own
    list instead; the CLI prints its own summary and asks for that)."""
    holder = config.stash.get(_SESSION_KEY, None)
    if holder is None or not config.stash.get(_SCENARIOS_KEY, 0) or terminalreporter.hasopt("s"):
        return
    from streamproof.report.console import render_skipped

    lines = render_skipped(holder.records)
    if lines:
        terminalreporter.write_sep("=", "streamproof: skipped scenarios")
        for line in lines:
            terminalreporter.write_line(line)
