"""What the plugin adds to pytest's closing summary: how to make pytest take .yaml files it
did not collect for scenarios, the skipped scenarios by reason, the baseline's known and fixed
failures, and the latency under ``--streamproof-concurrency``."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest

from streamproof.plugin.shared import COLLECTED_FILES_KEY, SCENARIOS_KEY, SESSION_KEY


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    _hint_uncollected(terminalreporter, exitstatus, config)
    _skipped_summary(terminalreporter, config)
    _baseline_summary(terminalreporter, config)
    _load_summary(terminalreporter, config)


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
    if exitstatus not in nothing or config.stash.get(COLLECTED_FILES_KEY, 0):
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


def _load_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """With ``--concurrency K``: per scenario, the target's latency under K sessions at once."""
    holder = config.stash.get(SESSION_KEY, None)
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
    holder = config.stash.get(SESSION_KEY, None)
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
    holder = config.stash.get(SESSION_KEY, None)
    if holder is None or not config.stash.get(SCENARIOS_KEY, 0) or terminalreporter.hasopt("s"):
        return
    from streamproof.report.console import render_skipped

    lines = render_skipped(holder.records)
    if lines:
        terminalreporter.write_sep("=", "streamproof: skipped scenarios")
        for line in lines:
            terminalreporter.write_line(line)
