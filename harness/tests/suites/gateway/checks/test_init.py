"""check_gateway: every requirement judged, in a fixed order, and the package's exports."""

from __future__ import annotations

import pytest

import streamproof.suites.gateway.checks as gateway_checks
from harness.tests.suites.gateway.observations import LEGITIMATE, with_auth, worked_example
from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.suites import REGISTRY
from streamproof.suites.gateway.profiles.registry import check_gateway
from streamproof.suites.gateway.profiles.typed_frames import SEED_RULES

GATEWAY_IDS = [
    r.id
    for r in REGISTRY.values()
    if r.kind == "gateway" and not r.concurrent and r.profile is None
]
"""What check_gateway judges on one observation of the seed's wire (the GW-CONC-* rules judge
K at once; the AGUI- and AISDK- rules judge their own wires)."""


NOT_EXERCISED_BY_THE_WORKED_EXAMPLE = {
    "GW-LLM-BUDGET",  # two scripted calls, far within the budget
    "GW-ERROR-EVENT",  # no error code
    "GW-ERROR-FRAME",  # the run did not fail
    "GW-NO-HALF-RECORD",  # no stream broke
    "GW-DISPOSE",  # the browser stayed
    "GW-DISPOSE-IDLE",
    "GW-DETACH-PERSIST-ONCE",  # the target disposes (and the browser stayed)
    "GW-RUN-BOUND",  # no run bound declared, and the run ended at once
    "GW-RUN-BOUND-ERROR",
    "GW-STREAMS-PROGRESSIVELY",  # the fake model's chunks came in one burst, no pause
    "GW-PROXY-HONOURED",  # the model is reached directly
    "GW-FRAME-ID-FRESH",  # no message came with a tool_call, the one pair it judges
}


def _requirements(verdicts: list[Verdict]) -> dict[str, Outcome]:
    return {v.requirement: v.outcome for v in verdicts if v.kind is Kind.REQUIREMENT}


def test_the_worked_example_passes_what_it_exercises_and_skips_the_undeclared_auth() -> None:
    verdicts = check_gateway(worked_example())
    outcomes = _requirements(verdicts)
    assert sorted(outcomes) == sorted(GATEWAY_IDS)
    assert {r for r, o in outcomes.items() if o is Outcome.SKIP} == {
        "GW-AUTH",
        "GW-HISTORY-ISOLATION",
    }
    assert {
        r for r, o in outcomes.items() if o is Outcome.NOT_APPLICABLE
    } == NOT_EXERCISED_BY_THE_WORKED_EXAMPLE
    assert {r for r, o in outcomes.items() if o is Outcome.PASS} == set(GATEWAY_IDS) - {
        "GW-AUTH",
        "GW-HISTORY-ISOLATION",
        *NOT_EXERCISED_BY_THE_WORKED_EXAMPLE,
    }, [v.render() for v in verdicts]


def test_the_scenarios_expectations_are_reported_last_under_their_own_names() -> None:
    verdicts = check_gateway(worked_example())
    expectations = [v for v in verdicts if v.kind is Kind.EXPECTATION]
    assert [v.requirement for v in expectations] == [
        "expect.frames",
        "expect.history",
        "expect.tool_calls",
    ]
    assert all(v.outcome is Outcome.PASS for v in expectations)
    assert verdicts[-len(expectations) :] == expectations


def test_with_auth_probes_nothing_fails_and_auth_passes() -> None:
    outcomes = _requirements(check_gateway(with_auth()))
    assert sorted(outcomes) == sorted(GATEWAY_IDS)
    assert outcomes["GW-AUTH"] is Outcome.PASS
    assert outcomes["GW-HISTORY-ISOLATION"] is Outcome.PASS
    assert {r for r, o in outcomes.items() if o is not Outcome.PASS} == (
        NOT_EXERCISED_BY_THE_WORKED_EXAMPLE
    )


def test_without_auth_probes_auth_is_not_applicable() -> None:
    outcomes = _requirements(check_gateway(worked_example(auth_probes=None)))
    assert sorted(outcomes) == sorted(GATEWAY_IDS)
    assert outcomes["GW-AUTH"] is Outcome.NOT_APPLICABLE
    assert outcomes["GW-HISTORY-ISOLATION"] is Outcome.NOT_APPLICABLE


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_no_check_fails_a_legitimate_gateway(name: str) -> None:
    verdicts = check_gateway(LEGITIMATE[name]())
    failing = [v for v in verdicts if v.outcome is Outcome.FAIL]
    assert not failing, [v.render() for v in failing]
    non_strict = {v.requirement for v in verdicts if v.outcome is Outcome.NON_STRICT}
    expected = {"GW-FRAME-ID-FRESH"} if name == "shared-id-message-and-tool-call" else set()
    assert non_strict == expected


def test_the_order_is_fixed() -> None:
    verdicts = check_gateway(with_auth())
    order = [v.requirement for v in verdicts]
    assert order == [v.requirement for v in check_gateway(with_auth())]
    assert order[0] == "GW-SSE-RESPONSE"
    # One verdict per requirement of the seed's wire, then the expectations.
    kinds = [v.kind for v in verdicts]
    assert kinds.count(Kind.REQUIREMENT) == len(SEED_RULES)
    assert kinds == sorted(kinds, key=[Kind.REQUIREMENT, Kind.EXPECTATION].index)


def test_every_verdict_renders_with_its_id() -> None:
    for verdict in check_gateway(with_auth()):
        assert verdict.render().startswith(f"[{verdict.requirement} ")


def test_exports_are_sorted_and_public() -> None:
    assert gateway_checks.__all__ == sorted(gateway_checks.__all__)
    for name in gateway_checks.__all__:
        assert hasattr(gateway_checks, name)
    checks = {check.__name__ for _, _, check in SEED_RULES}
    assert checks <= set(gateway_checks.__all__)
