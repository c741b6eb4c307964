"""check_gateway: every requirement judged, in a fixed order, and the package's exports."""

from __future__ import annotations

import pytest

import harness.checks
from harness.checks import GATEWAY_CHECKS, check_gateway
from harness.requirements import REGISTRY
from harness.tests.gateway_observations import LEGITIMATE, with_auth, worked_example
from harness.verdicts import Outcome

GATEWAY_IDS = [r.id for r in REGISTRY.values() if r.kind == "gateway"]


def test_the_worked_example_passes_everything_but_the_unprobed_auth() -> None:
    verdicts = check_gateway(worked_example())
    assert sorted(v.requirement for v in verdicts) == sorted(GATEWAY_IDS)
    outcomes = {v.requirement: v.outcome for v in verdicts}
    skipped = {"GW-AUTH", "GW-HISTORY-ISOLATION"}
    assert {r for r, o in outcomes.items() if o is Outcome.SKIP} == skipped
    # The browser stayed to the end, so disposal is not judged.
    assert outcomes["GW-DISPOSE"] is Outcome.INFO
    assert all(
        o is Outcome.PASS for r, o in outcomes.items() if r not in {*skipped, "GW-DISPOSE"}
    ), [v.render() for v in verdicts if v.outcome is not Outcome.PASS]


def test_with_auth_probes_everything_passes() -> None:
    verdicts = check_gateway(with_auth())
    assert sorted(v.requirement for v in verdicts) == sorted(GATEWAY_IDS)
    assert all(
        v.outcome is (Outcome.INFO if v.requirement == "GW-DISPOSE" else Outcome.PASS)
        for v in verdicts
    ), [v.render() for v in verdicts]


def test_without_auth_probes_auth_is_not_reported() -> None:
    verdicts = check_gateway(worked_example(auth_probes=None))
    assert {v.requirement for v in verdicts} == set(GATEWAY_IDS) - {
        "GW-AUTH",
        "GW-HISTORY-ISOLATION",
    }


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_no_check_fails_a_legitimate_gateway(name: str) -> None:
    verdicts = check_gateway(LEGITIMATE[name]())
    failing = [v for v in verdicts if v.outcome is Outcome.FAIL]
    assert not failing, [v.render() for v in failing]
    non_strict = {v.requirement for v in verdicts if v.outcome is Outcome.NON_STRICT}
    expected = {"GW-FRAME-ID-FRESH"} if name == "shared-id-message-and-tool-call" else set()
    assert non_strict == expected


def test_the_order_is_fixed() -> None:
    order = [v.requirement for v in check_gateway(with_auth())]
    assert order == [v.requirement for v in check_gateway(with_auth())]
    assert order[0] == "GW-SSE-RESPONSE"
    assert len(order) == len(GATEWAY_CHECKS)


def test_every_verdict_renders_with_its_id() -> None:
    for verdict in check_gateway(with_auth()):
        assert verdict.render().startswith(f"[{verdict.requirement} ")


def test_exports_are_sorted_and_public() -> None:
    assert harness.checks.__all__ == sorted(harness.checks.__all__)
    for name in harness.checks.__all__:
        assert hasattr(harness.checks, name)
    checks = {c.__name__ for c in GATEWAY_CHECKS}
    assert checks <= set(harness.checks.__all__)
