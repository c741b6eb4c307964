"""Shared test helpers.

``STREAMPROOF_REQUIRE_ALL=1`` (set by CI) turns a missing real component into a failure:
a test that needs google-adk, a2a-sdk, toxiproxy or a JDK must run there, never skip.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from harness.faults.engines import Engine

pytest_plugins = ["pytester"]


def _missing(name: str, why: object) -> NoReturn:
    if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
        pytest.fail(f"{name} is required (STREAMPROOF_REQUIRE_ALL=1) but missing: {why}")
    pytest.skip(f"{name} is not installed: {why}")


def require_module(name: str) -> ModuleType:
    """Import a real component, or skip (fail under STREAMPROOF_REQUIRE_ALL=1) without it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        _missing(name, exc)


def require_executable(name: str) -> Path:
    """The program ``name`` on PATH (``mvn``, ``java``), or skip (fail under
    STREAMPROOF_REQUIRE_ALL=1) without it."""
    found = shutil.which(name)
    if found is None:
        _missing(name, f"no {name!r} on PATH")
    return Path(found)


def require_toxiproxy() -> Path:
    """The toxiproxy-server binary the toxiproxy engine would run (``$STREAMPROOF_TOXIPROXY``,
    the project's build in .tools/bin, or PATH), or skip (fail under STREAMPROOF_REQUIRE_ALL=1)
    without one."""
    from harness.faults.engines.link import EngineUnavailable
    from harness.faults.engines.toxiproxy_server import find_binary

    try:
        return find_binary()
    except EngineUnavailable as exc:
        _missing("toxiproxy", exc)


def require_engine(name: str) -> Engine:
    """A new fault engine of kind ``name`` (:func:`~harness.faults.engines.open_engine`), or
    skip (fail under STREAMPROOF_REQUIRE_ALL=1) when this machine cannot run it."""
    from harness.faults.engines import EngineUnavailable, open_engine

    try:
        return open_engine(name)
    except EngineUnavailable as exc:
        _missing(f"engine {name}", exc)
