"""One bounded ``streamproof run`` for a benchmark: its exit status, wall clock, the load before
it and its ``results.json``; what the flake table and the parallel bench both measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["KILLED", "SuiteRun", "run_suite"]

ROOT: Final = Path(__file__).resolve().parents[3]
KILLED: Final = -1
"""The exit status recorded for a run killed at its bound."""


@dataclass(frozen=True)
class SuiteRun:
    exit_status: int
    wall_s: float
    load: float
    """The 1-minute load average just before the run."""
    results: dict[str, Any] | None
    """Its ``results.json``, or None when there is none to read (see ``problem``)."""
    problem: str | None = None


def run_suite(
    args: Sequence[str], report_dir: Path, timeout_s: float, env: Mapping[str, str] | None = None
) -> SuiteRun:
    """``streamproof run ARGS --report-dir REPORT_DIR`` in a fresh process (``env`` added to
    this one's environment), killed after ``timeout_s`` seconds, its output discarded (the
    report folder keeps what it found)."""
    streamproof = Path(sys.executable).with_name("streamproof")
    command = [str(streamproof), "run", *args, "--report-dir", str(report_dir)]
    load = os.getloadavg()[0]
    started = time.monotonic()
    problem: str | None = None
    try:
        status = subprocess.run(
            command,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            timeout=timeout_s,
            check=False,
        ).returncode
    except subprocess.TimeoutExpired:
        status, problem = KILLED, f"killed after {timeout_s:.0f} s"
    wall = time.monotonic() - started
    try:
        results = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return SuiteRun(status, wall, load, None, problem or f"no results.json: {error}")
    return SuiteRun(status, wall, load, results, problem)
