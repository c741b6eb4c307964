"""How ``--bug NAME`` reaches a target, shared by both target kinds: the ``bugs`` a reference of
its own lists (validated at load), and the check that a run's ``--bug`` can reach the target."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from streamproof.targets.errors import TargetConfigError


def _bug_names(v: tuple[str, ...]) -> tuple[str, ...]:
    if any(not name.strip() for name in v):
        raise ValueError("a mutant name is empty")
    twice = sorted({name for name in v if v.count(name) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)}: listed more than once")
    return v


BugNames = Annotated[tuple[str, ...], AfterValidator(_bug_names)]
"""A target file's ``bugs``: mutant names, none empty, none twice."""


def bugs_need_bug_env(bugs: tuple[str, ...], bug_env: str | None) -> None:
    """A target's listed mutants reach it only through its ``bug_env``."""
    if bugs and bug_env is None:
        raise ValueError("bugs: a target's mutants reach it through bug_env; set bug_env too")


def check_bug(name: str, bug_env: str | None, bugs: tuple[str, ...], bug: str) -> None:
    """Raise :class:`TargetConfigError` unless ``--bug`` can reach target ``name``: it needs a
    ``bug_env``, and a target that lists its ``bugs`` takes only those."""
    if bug_env is None:
        raise TargetConfigError(
            f"--bug {bug} needs a reference target; target {name!r} declares no bug_env"
        )
    if bugs and bug not in bugs:
        raise TargetConfigError(
            f"--bug {bug}: target {name!r} has no such mutant; its bugs: {', '.join(bugs)}"
        )
