"""Shared test helpers.

``STREAMPROOF_REQUIRE_ALL=1`` (set by CI) turns a missing real component into a failure:
a test that needs google-adk, a2a-sdk, toxiproxy or a JDK must run there, never skip.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

pytest_plugins = ["pytester"]


def require_module(name: str) -> ModuleType:
    """Import a real component, or skip (fail under STREAMPROOF_REQUIRE_ALL=1) without it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
            pytest.fail(f"{name} is required (STREAMPROOF_REQUIRE_ALL=1) but missing: {exc}")
        pytest.skip(f"{name} is not installed: {exc}")
