"""Verdict builders: ``at`` (when the broken rule showed) is kept on a verdict that did not
pass, and dropped from a pass, so a picture never marks a moment for a rule that held."""

from __future__ import annotations

from harness.requirements import expectation, from_violations, judge
from harness.suites.gateway import requirements as _gateway_rules  # noqa: F401  (registers them)
from harness.verdicts import Outcome


def test_a_failed_or_unmet_verdict_keeps_its_moment() -> None:
    failed = from_violations("GW-FRAME-ID-COUNTER", ["frame #4 repeats"], rule="r", ok="ok", at=0.5)
    assert failed.outcome is Outcome.FAIL and failed.at == 0.5
    unmet = judge("GW-FRAME-ID-FRESH", False, "GW-FRAME-ID-FRESH: shared", at=0.7)
    assert unmet.outcome is Outcome.NON_STRICT and unmet.at == 0.7
    missed = expectation("expect.frames", False, "other frames", at=1.5)
    assert missed.outcome is Outcome.FAIL and missed.at == 1.5


def test_a_pass_has_no_moment_even_when_one_is_given() -> None:
    assert from_violations("GW-FRAME-ID-COUNTER", [], rule="r", ok="ok", at=0.5).at is None
    assert judge("GW-FRAME-ID-FRESH", True, "fine", at=0.7).at is None
    assert expectation("expect.frames", True, "as expected", at=1.5).at is None
    assert judge("GW-FRAME-ID-FRESH", False, "GW-FRAME-ID-FRESH: x").at is None  # none given
