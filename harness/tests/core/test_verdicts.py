"""Verdicts (harness/streamproof/core/verdicts.py): what a scenario's failing verdicts break,
counted by kind."""

from __future__ import annotations

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict, broken_summary


def _failed(requirement: str, kind: Kind) -> Verdict:
    return Verdict(
        requirement=requirement, level=Level.MUST, outcome=Outcome.FAIL, message="m", kind=kind
    )


def test_failing_verdicts_are_counted_by_kind() -> None:
    verdicts = [
        _failed("GW-AUTH", Kind.REQUIREMENT),
        _failed("expect.frames", Kind.EXPECTATION),
        _failed("expect.history", Kind.EXPECTATION),
        _failed("fault.fired", Kind.FAULT),
    ]
    assert broken_summary(verdicts) == (
        "1 requirement(s) broken, 2 expectation(s) not met, 1 planned fault(s) that never fired"
    )
    assert broken_summary(verdicts[1:2]) == "1 expectation(s) not met"
    assert broken_summary([]) == "nothing"
