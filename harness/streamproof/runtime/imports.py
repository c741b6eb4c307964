"""Importing early what a program's libraries import lazily, for warm starts.

A warm start's zygote imports a target's module once and forks every start from it
(docs/reference/target-files.md#warm-starts); what the libraries import only when the program
first runs is imported again in every child. A module that lists those imports and calls
:func:`import_early` while it is imported has them imported once, in the zygote.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterable

__all__ = ["import_early"]


def import_early(names: Iterable[str]) -> None:
    """Import each module of ``names`` now; one that does not exist (a library that moved
    it) is skipped, which only loses the saving."""
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
