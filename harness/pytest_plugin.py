"""The pytest plugin: scenario files become test items, one per scenario.

Registered through the ``pytest11`` entry point, so it is active in every pytest run of an
environment where streamproof is installed. It is cheap to import (only pytest and the
standard library at module level) and collects only scenario files: ``*.scenario.yaml``
anywhere, or any ``.yaml`` under a folder listed in the ``streamproof_dirs`` ini option.
Everything heavy (pydantic models, aiohttp, the fakes, the gateway) loads when a scenario
file is actually collected or run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.session import HarnessSession
    from harness.suites.loading import LoadedScenario

_SESSION_KEY: pytest.StashKey[HarnessSession] = pytest.StashKey()
_SCENARIOS_KEY: pytest.StashKey[int] = pytest.StashKey()
"""How many scenario items the session selected (after ``-k`` and ``-m``)."""


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
        help="multiply every scenario duration by F (default 0.1)",
    )
    group.addoption(
        "--streamproof-report-dir",
        metavar="DIR",
        default=None,
        help="write DIR/results.json with verdicts and observations (default: reports/ under "
        "the rootdir, when the session selected a scenario)",
    )
    group.addoption(
        "--streamproof-strict",
        action="store_true",
        default=False,
        help="fail scenarios on SHOULD requirements too",
    )
    group.addoption(
        "--streamproof-full-observations",
        action="store_true",
        default=False,
        help="keep every scenario's whole observation in results.json (default: only for "
        "failures and unmet SHOULDs; a summary for the others)",
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
        ("must", "a streamproof scenario built to test a MUST requirement"),
        ("should", "a streamproof scenario built to test a SHOULD requirement"),
        ("may", "a streamproof scenario built to test a MAY requirement"),
    ):
        config.addinivalue_line("markers", f"{name}: {text}")
    bug = config.getoption("--streamproof-bug", None)
    if bug:
        from harness.suites import kinds, suite  # only when a mutant is asked for

        names = [name for kind in kinds() for name in suite(kind).BUGS]
        if bug not in names:
            raise pytest.UsageError(
                f"--streamproof-bug {bug}: unknown; choose one of {', '.join(names)}"
            )


def _is_scenario_file(path: Path, config: pytest.Config) -> bool:
    if path.suffix not in (".yaml", ".yml"):
        return False
    if path.name.endswith((".scenario.yaml", ".scenario.yml")):
        return True
    folders: list[Path] = config.getini("streamproof_dirs")
    extra = os.environ.get("STREAMPROOF_SCENARIO_PATHS")
    if extra:
        folders = [*folders, *(Path(p) for p in extra.split(os.pathsep) if p)]
    resolved = path.resolve()
    for folder in folders:
        folder = folder.resolve()
        if resolved == folder or folder in resolved.parents:
            return True
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_scenario_file(file_path, parent.config):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from harness.suites import REGISTRY
        from harness.suites.loading import ScenarioError, load_scenarios

        try:
            loaded = load_scenarios(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for entry in loaded:
            item = ScenarioItem.from_parent(self, name=entry.scenario.id, loaded=entry)
            item.add_marker(entry.scenario.kind.replace("-", "_"))
            levels = {REGISTRY[r].level.value.lower() for r in entry.scenario.requirements}
            for level in sorted(levels):
                item.add_marker(level)
            yield item


class ScenarioFailed(Exception):
    """The target broke at least one requirement the run must enforce."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


class ScenarioItem(pytest.Item):
    def __init__(self, *, loaded: LoadedScenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded

    def runtest(self) -> None:
        from harness.session import session_for

        session = session_for(self.config, _SESSION_KEY)
        failure = session.run_item(self)
        if failure is not None:
            raise ScenarioFailed(failure)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        from harness.targets.errors import TargetConfigError, TargetError

        if isinstance(excinfo.value, ScenarioFailed):
            return excinfo.value.report
        if isinstance(excinfo.value, TargetError | TargetConfigError | TimeoutError):
            return f"{type(excinfo.value).__name__}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.loaded.line - 1, f"scenario {self.name}"


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_SCENARIOS_KEY] = sum(isinstance(i, ScenarioItem) for i in session.items)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    holder = config.stash.get(_SESSION_KEY, None)
    if holder is None and config.stash.get(_SCENARIOS_KEY, 0) and not config.option.collectonly:
        # Scenarios were selected but none ran (interrupted first, or stopped by -x): the
        # report still says what this session did. A session without scenarios (a project's
        # own tests) writes nothing.
        from harness.session import session_for

        holder = session_for(config, _SESSION_KEY)
    if holder is not None:
        holder.finish(exitstatus)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Skipped scenarios grouped by reason, in the default summary (``-rs`` shows pytest's own
    list instead; the CLI prints its own summary and asks for that)."""
    holder = config.stash.get(_SESSION_KEY, None)
    if holder is None or not config.stash.get(_SCENARIOS_KEY, 0) or terminalreporter.hasopt("s"):
        return
    from harness.report.console import render_skipped

    lines = render_skipped(holder.records)
    if lines:
        terminalreporter.write_sep("=", "streamproof: skipped scenarios")
        for line in lines:
            terminalreporter.write_line(line)
