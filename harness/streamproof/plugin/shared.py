"""What the streamproof plugin's modules share (the modules of :mod:`streamproof.plugin`):
the session's stash keys and which files hold scenarios. Cheap to import: pytest and the
standard library only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from streamproof.plugin.session import HarnessSession

__all__ = [
    "COLLECTED_FILES_KEY",
    "KINDS_KEY",
    "SCENARIOS_KEY",
    "SESSION_KEY",
    "SUITE_FOLDERS_KEY",
    "is_scenario_file",
]

SESSION_KEY: pytest.StashKey[HarnessSession] = pytest.StashKey()
"""The session's :class:`~streamproof.plugin.session.HarnessSession` (made when a scenario first
runs)."""
KINDS_KEY: pytest.StashKey[list[str]] = pytest.StashKey()
"""The scenario kinds the session selected, in the order their first scenario comes."""
SUITE_FOLDERS_KEY: pytest.StashKey[list[Path]] = pytest.StashKey()
"""The bundled suite folders ``--streamproof-suite`` added to the collection."""
COLLECTED_FILES_KEY: pytest.StashKey[int] = pytest.StashKey()
"""How many scenario files the session collected."""
SCENARIOS_KEY: pytest.StashKey[int] = pytest.StashKey()
"""How many scenario items the session selected (after ``-k`` and ``-m``)."""


def is_scenario_file(path: Path, config: pytest.Config) -> bool:
    """A ``*.scenario.yaml`` anywhere, or a ``.yaml`` under a folder of the
    ``streamproof_dirs`` ini option, of ``STREAMPROOF_SCENARIO_PATHS`` (the CLI's paths) or of
    the bundled suite ``--streamproof-suite`` names."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    if path.name.endswith((".scenario.yaml", ".scenario.yml")):
        return True
    folders: list[Path] = [
        *config.getini("streamproof_dirs"),
        *config.stash.get(SUITE_FOLDERS_KEY, []),
    ]
    extra = os.environ.get("STREAMPROOF_SCENARIO_PATHS")
    if extra:
        folders = [*folders, *(Path(p) for p in extra.split(os.pathsep) if p)]
    resolved = path.resolve()
    for folder in folders:
        folder = folder.resolve()
        if resolved == folder or folder in resolved.parents:
            return True
    return False
