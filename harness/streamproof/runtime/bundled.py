"""The conformance suites that ship with streamproof, found as package data.

The repository keeps them in its top-level ``scenarios/`` folder (one subfolder per suite);
the build maps that folder to the package ``streamproof.scenarios`` (setup.py), so an installed
wheel carries them and an editable install points at the repository's folder. They are found
through :mod:`importlib.resources`, never through a path relative to this file: the suites
are always those of the streamproof that is installed, whichever folder it runs from.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.resources
from pathlib import Path

__all__ = ["SCENARIO_PACKAGE", "bundled_scenarios"]

SCENARIO_PACKAGE = "streamproof.scenarios"

# Suites read from a zip are extracted once and kept until the process ends: pytest reads the
# files long after the lookup returned.
_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)


@functools.cache
def bundled_scenarios(package: str = SCENARIO_PACKAGE) -> Path | None:
    """The folder that holds the bundled suites, on the file system; None when this
    streamproof was not installed with them (a source tree put on ``sys.path`` by hand)."""
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        return None
    if not root.is_dir():
        return None
    # An installed folder is its own path (nothing is copied).
    return _EXTRACTED.enter_context(importlib.resources.as_file(root))
