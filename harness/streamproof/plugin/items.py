"""A scenario as a pytest item: it runs in the session's
:class:`~streamproof.plugin.session.HarnessSession`, and its failure reads as the first broken
requirement."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr

from streamproof.plugin.progress import progress
from streamproof.plugin.shared import KINDS_KEY, SESSION_KEY

if TYPE_CHECKING:
    from _pytest._io import TerminalWriter

    from streamproof.suites.loading import LoadedScenario


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
    JUnit tests of harness/tests/test_cli_baseline.py read ``message=`` back, so a pytest that
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

        session = session_for(self.config, SESSION_KEY)
        if not session.kinds:
            session.kinds = self.config.stash.get(KINDS_KEY, [])
        with progress(self.config) as show:
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
