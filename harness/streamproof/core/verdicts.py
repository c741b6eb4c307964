"""Verdicts: what a check says about one requirement for one observation."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class Level(StrEnum):
    """RFC 2119 strength of a requirement."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Outcome(StrEnum):
    PASS = "pass"  # the rule was judged on something the run exercised, and it held
    FAIL = "fail"
    NON_STRICT = "non-strict"  # a SHOULD (or MAY) that was not met
    NOT_APPLICABLE = "not-applicable"  # the run gave the rule nothing to judge
    INFO = "info"  # something worth knowing that is not a verdict (e.g. a retried model call)
    SKIP = "skip"  # the target did not declare the capability the check needs


class Kind(StrEnum):
    """What a verdict judges: a requirement of the registry, a scenario's own expectation
    (``expect.frames``, ``expect.ledger``, ...), which is reported under its own name so that a
    mismatch with what one scenario expects is never filed under an unrelated rule, or whether a
    planned fault fired."""

    REQUIREMENT = "requirement"
    EXPECTATION = "expectation"
    FAULT = "fault"
    """Whether a fault the scenario planned on a link fired (``fault.fired``): a run whose
    fault never fired did not exercise what the scenario is built for."""


class Verdict(BaseModel):
    """One requirement judged on one observation.

    ``expected`` and ``observed`` are short, human-readable renderings; a failure message
    always starts with the requirement id so a CI log line is enough to find the rule.
    """

    model_config = ConfigDict(frozen=True)

    requirement: str
    """The requirement id, or for an expectation its name (``expect.frames``)."""
    level: Level
    outcome: Outcome
    message: str
    expected: Any = None
    observed: Any = None
    kind: Kind = Kind.REQUIREMENT
    at: float | None = None
    """When the broken rule first showed (real seconds since the scenario's epoch), for the
    report's timeline; ``None``: no single moment (the picture marks the end of the run)."""

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAIL

    def render(self) -> str:
        message = self.message.removeprefix(f"{self.requirement}: ")
        lines = [f"[{self.requirement} {self.level}] {self.outcome}: {message}"]
        if self.expected is not None:
            lines.append(f"    expected: {self.expected}")
        if self.observed is not None:
            lines.append(f"    observed: {self.observed}")
        return "\n".join(lines)


_BROKEN_WORDS = {
    Kind.REQUIREMENT: "requirement(s) broken",
    Kind.EXPECTATION: "expectation(s) not met",
    Kind.FAULT: "planned fault(s) that never fired",
}


def broken_summary(verdicts: Iterable[Verdict]) -> str:
    """What ``verdicts`` (the failing ones of a scenario) break, counted by kind:
    ``1 requirement(s) broken, 2 expectation(s) not met``; never a requirement count for an
    expectation."""
    counts = {kind: 0 for kind in Kind}
    for verdict in verdicts:
        counts[verdict.kind] += 1
    return ", ".join(f"{n} {_BROKEN_WORDS[kind]}" for kind, n in counts.items() if n) or "nothing"
