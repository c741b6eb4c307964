"""The progress note a running scenario shows at the end of its line on a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


class ProgressText:
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
def progress(config: pytest.Config) -> Iterator[ProgressText | None]:
    """A progress display when the run's output is a terminal, else None."""
    reporter = config.pluginmanager.getplugin("terminalreporter")
    if reporter is None or not getattr(reporter, "isatty", False) or config.option.verbose < 0:
        yield None
        return
    text = ProgressText(config)
    try:
        yield text
    finally:
        text.erase()
