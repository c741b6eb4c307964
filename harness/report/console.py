"""What a run prints for people at its end."""

from __future__ import annotations

from harness.verdicts import Kind

__all__ = ["render_counts"]


def render_counts(counts: dict[str, dict[str, int]]) -> str:
    """``requirements: 300 passed (judged), 2 failed, ... ; expectations: ...``."""
    req, exp = counts[Kind.REQUIREMENT.value], counts[Kind.EXPECTATION.value]
    return (
        f"requirements: {req['pass']} passed (judged), {req['fail']} failed, "
        f"{req['non-strict']} SHOULD unmet, {req['not-applicable']} not applicable, "
        f"{req['skip']} skipped; expectations: {exp['pass']} met, {exp['fail']} not met"
    )
