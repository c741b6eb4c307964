"""The scenario paths a command is given: the bundled suites when none is, and the files
under the ones that are."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

NO_BUNDLED_SUITES = (
    "this streamproof has no bundled suites (the package streamproof.scenarios is not installed: "
    "install streamproof, e.g. pip install -e . in its repository)"
)


def default_paths() -> list[str]:
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


def scenario_files(paths: Sequence[str]) -> tuple[list[Path], list[str]]:
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
