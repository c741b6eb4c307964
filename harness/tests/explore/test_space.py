"""The pure part of explore: the strategies draw valid plans within the scenario's horizon."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import find, given, settings

from harness.durations import parse_duration
from harness.explore.space import (
    BROWSER_ACTIONS,
    MAX_FAULTS,
    Space,
    a2a_matches,
    describe_plan,
    fault_count,
    plans,
)
from harness.faults.plan import Fault, parse_plan

A2A = Space(("a2a",), 30.0, a2a_matches("0.3"), active=5.0, events=5)
GATEWAY = Space(("browser", "model"), 30.0, events=15, only={"browser": BROWSER_ACTIONS})


def _check(space: Space, plan: dict[str, list[dict[str, Any]]]) -> None:
    assert set(plan) == set(space.links)
    assert fault_count(plan) <= MAX_FAULTS
    for faults in plan.values():
        parsed = parse_plan(faults)  # the loader's own plan parser accepts it
        for fault in parsed:
            trigger = fault.trigger
            if trigger.kind in ("after", "idle"):
                assert trigger.value is not None
                assert 0 <= trigger.value <= space.trigger_horizon
            if trigger.kind == "after_event":
                assert trigger.value is not None and 0 <= trigger.value <= space.events
            if trigger.kind == "idle":
                assert trigger.value is not None and trigger.value > 0


@settings(max_examples=300, deadline=None)
@given(plans(A2A))
def test_a2a_plans_are_valid_and_within_the_active_time(plan: dict[str, Any]) -> None:
    _check(A2A, plan)
    for fault in plan["a2a"]:
        # Never the agent card's GET: every fault names a JSON-RPC call or POST.
        when = fault["when"]
        assert when.get("rpc") or when.get("method") == "POST"
        for key in ("delay",):
            if isinstance(fault["do"], dict) and key in fault["do"]:
                assert parse_duration(fault["do"][key]) <= A2A.horizon


@settings(max_examples=300, deadline=None)
@given(plans(GATEWAY))
def test_gateway_plans_are_valid(plan: dict[str, Any]) -> None:
    _check(GATEWAY, plan)
    for faults in plan.values():
        for fault in faults:
            assert "rpc" not in fault["when"]
    for fault in plan["browser"]:
        # The browser leaves, is slow, or gets its bytes shaped; it never gets words put in
        # the gateway's mouth (a status, a refusal, a corruption), and its request always
        # reaches the gateway.
        model = Fault.model_validate(fault)
        assert model.action in ("rst", "fin", "end_clean", "stall", "drip", "split")
        assert model.trigger.kind != "on_request"


def test_the_first_plan_drawn_is_the_empty_plan_and_a_minimal_fault_is_a_reset() -> None:
    # What shrinking goes towards: no fault; one fault is a reset at the response's start on
    # the streaming call's first request.
    assert find(plans(A2A), lambda p: True) == {"a2a": []}
    one = find(plans(A2A), lambda p: fault_count(p) >= 1)
    assert one == {
        "a2a": [
            {
                "when": {"rpc": "message/stream", "occurrence": 1, "on_response_headers": True},
                "do": "rst",
            }
        ]
    }


def test_the_1_0_wire_spells_its_methods() -> None:
    assert a2a_matches("1.0")[0] == {"rpc": "SendStreamingMessage"}
    assert {"rpc": "tasks/resubscribe"} in a2a_matches("0.3")


def test_describe_plan_names_link_match_trigger_and_action() -> None:
    plan = {"a2a": [{"when": {"rpc": "message/stream", "after": "4s"}, "do": "stall"}]}
    assert describe_plan(plan) == "a2a (rpc message/stream): after: 4s -> stall"
    assert describe_plan({"a2a": []}) == "no fault"
    Fault.model_validate(plan["a2a"][0])


def test_a_space_needs_links_and_a_horizon() -> None:
    with pytest.raises(ValueError, match="at least one link"):
        Space((), 10.0)
    with pytest.raises(ValueError, match="horizon"):
        Space(("a2a",), 0.0)
    assert Space(("a2a",), 30.0, active=50.0).trigger_horizon == 30.0
    with pytest.raises(ValueError, match="only"):
        Space(("a2a",), 30.0, only={"a2a": ("explode",)})
