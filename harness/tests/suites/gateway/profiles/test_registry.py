"""Every profile judges every requirement once, and never passes what a run did not give."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.observations import observation
from streamproof.core.verdicts import Outcome
from streamproof.suites import REGISTRY
from streamproof.suites.gateway.observation import ChatResponse
from streamproof.suites.gateway.profiles.registry import PROFILES, check_gateway, profile

NO_RESPONSE = ChatResponse(status=None, content_type=None, end="refused", error="refused")


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_profile_names_every_shared_rule_and_only_its_own(name: str) -> None:
    rules = set(profile(name).rules)
    shared = {r.id for r in REGISTRY.values() if r.kind == "gateway" and r.everywhere() is None}
    own = {r.id for r in REGISTRY.values() if r.profile == name}
    assert rules == shared | own


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize(
    "empty",
    [
        pytest.param({"response": NO_RESPONSE}, id="no-response"),
        pytest.param({"frames": (), "model_calls": ()}, id="empty-stream"),
    ],
)
def test_nothing_to_judge_is_never_a_pass(name: str, empty: dict[str, object]) -> None:
    obs = observation(profile=name, auth_probes=None, **empty)
    passed = {v.requirement for v in check_gateway(obs) if v.outcome is Outcome.PASS}
    assert passed <= {"GW-SSE-RESPONSE"}


def test_an_unknown_profile_is_named() -> None:
    with pytest.raises(KeyError, match="unknown gateway profile 'grpc'"):
        profile("grpc")
