"""What ``streamproof explore`` is asked (:class:`Options`) and the checks of it that come
before anything starts: an :class:`ExploreError` names what was wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.core.verdicts import Level
from streamproof.suites import suite
from streamproof.targets.errors import TargetConfigError

__all__ = ["ExploreError", "Options", "check_options", "check_target"]

_PREFIX = {"gateway": "GW-", "a2a-client": "A2A-C-", "browser-client": "BR-"}


class ExploreError(Exception):
    """Bad input: the message names what was wrong and where it came from."""


@dataclass(frozen=True)
class Options:
    scenario: str
    target: str | None = None
    bug: str | None = None
    max_examples: int = 200
    time_budget: float = 600.0
    seed: int | None = None
    out: Path = Path("reports")
    time_scale: float = DEFAULT_TIME_SCALE
    strict: bool = False
    """SHOULD failures are findings too (as ``streamproof run --strict``)."""
    requirement: str | None = None
    """Only this requirement counts (``--requirement``): the search holds out for it."""
    screen: bool = False
    """Screen found plans on the bundled reference of the scenario's kind (implied, on the
    same reference without the bug, by ``bug``)."""


def check_options(opts: Options) -> None:
    """The numbers given are usable."""
    if opts.max_examples < 1:
        raise ExploreError("--max-examples must be 1 or more")
    if not opts.time_budget > 0:
        raise ExploreError("--time-budget must be a positive duration")
    if not opts.time_scale > 0:
        raise ExploreError("--time-scale must be a positive number")


def check_target(opts: Options, kind: str) -> None:
    """The requirement, target and bug named exist and fit a scenario of ``kind``."""
    if opts.requirement is not None:
        from streamproof.core.requirements import REGISTRY

        suite(kind)  # registers the suite's requirements
        known = REGISTRY.get(opts.requirement)
        if known is None or not opts.requirement.startswith(_PREFIX[kind]):
            raise ExploreError(
                f"--requirement {opts.requirement}: no requirement of the {kind} suite has that id"
            )
        if known.level != Level.MUST and not opts.strict:
            raise ExploreError(
                f"--requirement {opts.requirement} is a {known.level}: it counts with --strict"
            )
    if opts.target is not None:
        from streamproof.suites.input_files import check_target_file

        checked = check_target_file(opts.target)
        if checked.problems:
            raise ExploreError("\n".join(map(str, checked.problems)))
        target_kind = checked.target_kind or "gateway"
        if target_kind != kind:
            raise ExploreError(
                f"--target {opts.target} is of kind {target_kind}, the scenario of kind {kind}"
            )
        try:
            suite(kind).load_target(opts.target)
        except TargetConfigError as exc:
            raise ExploreError(str(exc)) from None
    if opts.bug is not None:
        from streamproof.suites import known_bugs

        names = known_bugs(opts.target)
        if opts.bug not in names:
            raise ExploreError(f"--bug {opts.bug}: unknown; choose one of {', '.join(names)}")
