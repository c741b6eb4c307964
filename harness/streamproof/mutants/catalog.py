"""A reference's mutants as data: names, descriptions, intended requirements, lookups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


class UnknownBugError(ValueError):
    """A ``--bug`` / ``STREAMPROOF_BUG`` value that names no mutant of this reference."""

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"unknown bug {name!r}; valid bugs: {', '.join(valid)}")
        self.name = name


@dataclass(frozen=True)
class BugCatalog:
    bugs: Mapping[str, str]
    """Mutant name -> one-line description of its single defect."""
    intended: Mapping[str, str]
    """Mutant name -> the requirement that must catch it."""

    def names(self) -> list[str]:
        return list(self.bugs)

    def check(self, name: str | None) -> str | None:
        """``name`` if it is a known mutant (``None`` or empty: the correct reference)."""
        if not name:
            return None
        if name not in self.bugs:
            raise UnknownBugError(name, self.names())
        return name

    def describe(self) -> str:
        """The ``--list-bugs`` text: one ``name  requirement  description`` line per mutant."""
        width = max(len(name) for name in self.bugs)
        rwidth = max(len(r) for r in self.intended.values())
        return "\n".join(
            f"{name:<{width}}  {self.intended[name]:<{rwidth}}  {text}"
            for name, text in self.bugs.items()
        )
