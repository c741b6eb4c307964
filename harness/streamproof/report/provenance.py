"""Where a run happened, for ``results.json``'s ``environment``: the versions of streamproof,
Python and the packages a verdict depends on, the operating system, the targets as their
environments describe them, the run's settings and its command line.

Reading installed versions is I/O, which is why it lives here and not in the core.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

__all__ = ["PACKAGES", "package_version", "provenance", "streamproof_version"]

PACKAGES = ("google-adk", "a2a-sdk", "aiohttp", "pydantic", "pytest")
"""The distributions whose versions a report names (``None`` when one is not installed)."""


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def streamproof_version() -> str:
    """streamproof's own version (``unknown`` when it runs from a tree that is not installed)."""
    return package_version("streamproof") or "unknown"


def provenance(
    *,
    targets: Mapping[str, Mapping[str, Any]],
    time_scale: float,
    bug: str | None,
    strict: bool,
    command_line: Sequence[str],
    pytest_args: Sequence[str] | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """The ``environment`` of a report. ``targets``: per scenario kind, what its environment
    says of its target (``Environment.target_info``); ``command_line``: the process's argv;
    ``pytest_args``: what pytest was invoked with, when it ran."""
    return {
        "streamproof": streamproof_version(),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "platform": platform.platform(),
        },
        "packages": {name: package_version(name) for name in PACKAGES},
        "targets": {kind: dict(info) for kind, info in targets.items()},
        "time_scale": time_scale,
        "bug": bug,
        "strict": strict,
        "engine": engine or "inline",
        "command_line": list(command_line),
        "pytest_args": None if pytest_args is None else list(pytest_args),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
    }
