"""Where a scenario's ``fixture:`` paths lead: the file's folder, then each folder above it.

A scenario writes ``fixture: fixtures/gemini/worked_example_answer.sse`` the way a user reads
the repository; the first folder, from the scenario file's own upward, that holds that path
wins. So the bundled suites find the top-level ``fixtures/`` folder in the repository
(``scenarios/gateway/`` -> ``scenarios/`` -> the root) and in an installed package
(``harness/streamproof/scenarios/gateway/`` -> ``harness/streamproof/scenarios/`` -> ``harness/``,
where the build maps the folder as ``streamproof.fixtures``), and a user's scenario finds its own. A
path under ``fixtures/`` that no folder above the scenario holds is then looked up in the canned
streams this streamproof ships, so a bundled scenario copied into a team's own folder keeps working.
"""

from __future__ import annotations

import os
from pathlib import Path

from streamproof.protocol.fixture import FIXTURE_CONTEXT_KEY, FixtureSource
from streamproof.runtime.bundled import bundled_scenarios

__all__ = ["FIXTURE_PACKAGE", "fixture_context", "fixture_source", "resolve_fixture"]

FIXTURE_PACKAGE = "streamproof.fixtures"
"""The package the top-level ``fixtures/`` folder ships as (setup.py)."""

_MAX_BYTES = 16 * 1024 * 1024
"""A fixture is a recorded response body, not a data set: larger files are refused."""


def resolve_fixture(written: str, scenario_file: str | Path) -> Path:
    """The file ``written`` names, from ``scenario_file``'s folder upward (ValueError: none)."""
    path = Path(written)
    if path.is_absolute():
        if path.is_file():
            return path
        raise ValueError(f"fixture {written!r}: no such file")
    start = Path(scenario_file).resolve().parent
    for folder in (start, *start.parents):
        candidate = folder / path
        if candidate.is_file():
            return candidate
    shipped = _shipped(path)
    if shipped is not None:
        return shipped
    raise ValueError(
        f"fixture {written!r}: not found in {start} or any folder above it, nor among the "
        "canned streams streamproof ships (a fixture path is relative to the scenario file's "
        "folder or one of its ancestors; fixtures/... may also name a shipped one)"
    )


def _shipped(path: Path) -> Path | None:
    """``fixtures/<rest>`` among the canned streams this streamproof ships, if it is one."""
    if len(path.parts) < 2 or path.parts[0] != "fixtures":
        return None
    root = bundled_scenarios(FIXTURE_PACKAGE)
    if root is None:
        return None
    candidate = root.joinpath(*path.parts[1:])
    return candidate if candidate.is_file() else None


def _shown(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def fixture_source(scenario_file: str | Path) -> FixtureSource:
    """Reads the fixtures one scenario file names (see :data:`FixtureSource`)."""

    def read(written: str) -> tuple[str, bytes]:
        path = resolve_fixture(written, scenario_file)
        try:
            size = path.stat().st_size
            if size > _MAX_BYTES:
                raise ValueError(
                    f"fixture {written!r}: {size} bytes is more than a recorded response body "
                    f"may hold here ({_MAX_BYTES})"
                )
            return _shown(path), path.read_bytes()
        except OSError as exc:
            raise ValueError(f"fixture {written!r}: cannot read: {exc.strerror or exc}") from None

    return read


def fixture_context(scenario_file: str | Path) -> dict[str, FixtureSource]:
    """The pydantic validation context that lets a scenario model read its fixtures."""
    return {FIXTURE_CONTEXT_KEY: fixture_source(scenario_file)}
