"""The A2A client checks as a whole (checks/__init__.py): one check per requirement, in the
registry's order, the seed's worked example passing every one, and a client that asked nothing
earning no pass."""

from __future__ import annotations

import pytest

from harness.tests.suites.a2a_client.observations import (
    Story,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    judged,
    not_passed,
    worked_example,
)
from streamproof.core.verdicts import Kind, Level, Outcome
from streamproof.suites import REGISTRY
from streamproof.suites.a2a_client.checks import (
    A2A_CLIENT_CHECKS,
    A2AClientCheck,
    a2a_expectation_verdicts,
    check_a2a_client,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.requirements import A2A_CLIENT
from streamproof.suites.a2a_client.result import ClientResult

# --- the registry and the correct recovery ---------------------------------------------------


def test_every_requirement_has_one_check_and_a_seed_section() -> None:
    # the concurrency rules are judged over K calls (checks/concurrency.py), not per call
    ids = [r.id for r in A2A_CLIENT if not r.concurrent]
    # one check per requirement, then the scenario's own expectations
    assert len(ids) == len(set(ids)) == len(A2A_CLIENT_CHECKS) - 1
    assert A2A_CLIENT_CHECKS[-1] is a2a_expectation_verdicts
    assert all(REGISTRY[i].kind == "a2a-client" and REGISTRY[i].section for i in ids)
    assert [r.id for r in A2A_CLIENT if r.level is Level.SHOULD] == ["A2A-C-GAP"]
    verdicts = check_a2a_client(worked_example())
    assert [v.requirement for v in verdicts if v.kind is Kind.REQUIREMENT] == ids
    assert [v.requirement for v in verdicts if v.kind is Kind.EXPECTATION] == [
        "expect.ledger",
        "expect.tasks_created",
        "expect.result",
    ]
    assert not [v for v in verdicts if v.kind is Kind.EXPECTATION and v.requirement in REGISTRY]


@pytest.mark.parametrize("snapshot", [True, False], ids=["1.x-resubscribe", "0.3-resubscribe"])
@pytest.mark.parametrize("link", [True, False], ids=["through-link", "direct"])
def test_the_worked_example_passes_every_check(snapshot: bool, link: bool) -> None:
    verdicts = check_a2a_client(worked_example(snapshot=snapshot, link=link))
    assert not_passed(verdicts) == []
    assert judged(verdicts) == [
        "A2A-C-RESULT",
        "A2A-C-COMPLETE-ONCE",
        "A2A-C-NO-RESEND",
        "A2A-C-SNAPSHOT-FIRST",
        "A2A-C-RECOVERY",
        "A2A-C-DEADLINE",
        "A2A-C-ARTIFACTS-COMPLETE",
        "A2A-C-REASSEMBLY",
        "A2A-C-STATUS",
        "A2A-C-HEADERS",
        "A2A-C-GAP",
        "expect.ledger",
        "expect.tasks_created",
        "expect.result",
    ]
    # what the worked example does not exercise is said to be not judged, never passed
    for rid in (
        "A2A-C-EARLY-DROP",
        "A2A-C-NO-RESUBSCRIBE-DONE",  # its snapshot showed the task still working
        "A2A-C-CANCEL",  # the task completed well before the deadline
        "A2A-C-STRUCTURED",
        "A2A-C-FAILURE-STATES",
        "A2A-C-INTERRUPTED",
        "A2A-C-DIRECT-MESSAGE",
        "A2A-C-FOLLOW-UP",
    ):
        assert_not_applicable(verdicts, rid)


# --- a client that asks nothing earns nothing ------------------------------------------------


def _asked_nothing() -> A2AClientObservation:
    """A client that made no request at all (not even the agent card) and printed only
    ``{"status": "error"}``, in the worked example's scenario."""
    story = Story(deadline=30, idle=10)
    story.run(ClientResult.model_validate({"status": "error"}), t_result=0.3)
    return story.build(expect=worked_example().expect)


ASKED_NOTHING_JUDGED: frozenset[str] = frozenset({"A2A-C-RESULT"})
"""What the silent client does give to judge: A2A-C-RESULT's own rule (one readable result
line, last on stdout, then exit), which it kept."""


@pytest.mark.parametrize(
    "check",
    list(A2A_CLIENT_CHECKS),
    ids=lambda c: getattr(c, "__name__", str(c)),
)
def test_a_client_that_asked_nothing_earns_no_pass(check: A2AClientCheck) -> None:
    verdicts = check(_asked_nothing())
    passed = [
        v.render()
        for v in verdicts
        if v.outcome is Outcome.PASS and v.requirement not in ASKED_NOTHING_JUDGED
    ]
    assert passed == []


def test_a_client_that_asked_nothing_fails_status() -> None:
    verdicts = check_a2a_client(_asked_nothing())
    assert not [v for v in verdicts if v.outcome is Outcome.SKIP]
    assert_fails(verdicts, "A2A-C-STATUS", "never sent its message", "'error'")
    assert_passes(verdicts, "A2A-C-RESULT")
    for name in ("expect.ledger", "expect.tasks_created", "expect.result"):
        assert_fails(verdicts, name)
    requirements = [v for v in verdicts if v.kind is Kind.REQUIREMENT]
    assert [v.requirement for v in requirements if v.outcome is Outcome.FAIL] == ["A2A-C-STATUS"]
    for v in requirements:
        if v.requirement not in ("A2A-C-STATUS", *ASKED_NOTHING_JUDGED):
            assert_not_applicable(verdicts, v.requirement)
