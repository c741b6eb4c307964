"""The pure part of explore: the strategies draw valid plans within the scenario's horizon."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import find, given, settings

from streamproof.core.durations import parse_duration
from streamproof.explore.space import (
    BROWSER_ACTIONS,
    LEAVE,
    MAX_FAULTS,
    PUSH_ACTIONS,
    PUSH_LINK,
    PUSH_MATCHES,
    TASK,
    TURN_CHANGES,
    TURNS,
    Space,
    a2a_matches,
    describe_plan,
    fault_count,
    plans,
    single_elements,
)
from streamproof.faults.plan import Fault, parse_plan

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
        # Every fault names a JSON-RPC call, any POST, or the agent card's GET.
        when = fault["when"]
        assert when.get("rpc") or when.get("method") in ("POST", "GET")
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
    # The agent card's fetch is faulted too (the deadline bounds it), and last: shrinking
    # prefers a fault on a JSON-RPC call.
    assert a2a_matches("0.3")[-1] == a2a_matches("1.0")[-1] == {"method": "GET"}


def test_a_drawn_plan_can_hold_the_agent_card_request() -> None:
    plan = find(
        plans(A2A),
        lambda p: any(f["when"].get("method") == "GET" for f in p["a2a"]),
        settings=settings(database=None, max_examples=2000),
    )
    # find() raises when no plan holds it; shrinking may keep another fault beside it.
    (card,) = [f for f in plan["a2a"] if f["when"].get("method") == "GET"]
    assert "rpc" not in card["when"]  # the card's fetch is a GET with no JSON-RPC method


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


# --- plan elements that are not link faults (gateway) ------------------------------------------

ELEMENTS = Space(
    ("browser", "model"),
    30.0,
    events=15,
    only={"browser": BROWSER_ACTIONS},
    frames=6,
    turns=((0,), (), (19, 1, 14)),  # a function call; an error turn; three text chunks
)


@settings(max_examples=300, deadline=None)
@given(plans(ELEMENTS))
def test_gateway_elements_stay_within_the_scenario(plan: dict[str, Any]) -> None:
    assert set(plan) == {"browser", "model", LEAVE, TURNS}
    assert fault_count(plan) <= MAX_FAULTS
    assert len(plan[LEAVE]) <= 1
    for leave in plan[LEAVE]:
        assert 1 <= leave["after_frames"] <= 6
    turns = [change["turn"] for change in plan[TURNS]]
    assert len(turns) == len(set(turns))  # a turn changed at most once
    for change in plan[TURNS]:
        assert change["turn"] in (1, 3)  # the error turn is left alone
        chunks = ELEMENTS.turns[change["turn"] - 1]
        kind = next(k for k in TURN_CHANGES if k in change)
        if kind == "error_after":
            assert 0 <= change["error_after"] < len(chunks)
        elif kind == "finish":
            assert change["finish"] in ("MAX_TOKENS", "SAFETY")
        elif kind == "split":
            assert chunks[change["split"] - 1] >= 2  # a text of two characters or more
        else:
            assert 1 <= change["delay"]["chunk"] <= len(chunks)
            assert 0.5 <= parse_duration(change["delay"]["for"]) <= ELEMENTS.horizon
        assert describe_plan({TURNS: [change]}).startswith(f"model turn {change['turn']}: ")


def test_each_element_shrinks_to_its_simplest_form() -> None:
    def only(place: str) -> Any:
        return lambda p: fault_count(p) >= 1 and bool(p[place])

    leave = find(plans(ELEMENTS), only(LEAVE))
    # The element itself shrinks to its simplest; hypothesis may keep another element beside
    # it (the search then tries each alone: see single_elements).
    assert leave[LEAVE] == [{"after_frames": 1}]
    change = find(plans(ELEMENTS), only(TURNS))
    assert change[TURNS] == [{"turn": 1, "error_after": 0}]
    split = find(plans(ELEMENTS), lambda p: any("split" in c for c in p[TURNS]))
    assert split[TURNS] == [{"turn": 3, "split": 1}]
    assert describe_plan({TURNS: split[TURNS]}) == "model turn 3: chunk 1 split in two"
    assert describe_plan({LEAVE: leave[LEAVE]}) == "browser: leaves after frame 1"


def test_elements_are_offered_only_where_the_scenario_allows_them() -> None:
    assert GATEWAY.places == ("browser", "model")
    assert Space(("browser",), 30.0, frames=1).places == ("browser", LEAVE)
    assert Space(("browser",), 30.0, turns=((), ())).places == ("browser",)
    with pytest.raises(ValueError, match="frames"):
        Space(("browser",), 30.0, frames=0)


def test_single_elements_are_each_element_alone() -> None:
    leave = {"after_frames": 2}
    change = {"turn": 1, "finish": "SAFETY"}
    plan = {"browser": [], "model": [], LEAVE: [leave], TURNS: [change]}
    assert single_elements(plan) == [
        {"browser": [], "model": [], LEAVE: [leave], TURNS: []},
        {"browser": [], "model": [], LEAVE: [], TURNS: [change]},
    ]
    assert single_elements({"browser": [], "model": [], LEAVE: [leave], TURNS: []}) == []


def test_a_client_task_may_come_later_from_one_step_on() -> None:
    slower = Space(("a2a",), 30.0, a2a_matches("0.3"), active=5.0, events=5, steps=5)
    assert slower.places == ("a2a", TASK)
    found = find(plans(slower), lambda p: bool(p[TASK]))
    # The element shrinks to its simplest; hypothesis may keep a link fault beside it (the
    # search then tries each element alone: see single_elements).
    assert found[TASK] == [{"from_step": 2, "later": "500ms"}]
    assert describe_plan({TASK: found[TASK]}) == "task: steps from 2 on come 500ms later"

    @settings(max_examples=200, deadline=None)
    @given(plans(slower))
    def each(plan: dict[str, Any]) -> None:
        assert len(plan[TASK]) <= 1
        for element in plan[TASK]:
            assert 2 <= element["from_step"] <= 5  # submitted stays first, at 0s
            assert 0.5 <= parse_duration(element["later"]) <= 30.0

    each()


def test_a_model_may_go_quiet_past_the_gateway_s_run_bound() -> None:
    quiet = Space(
        ("browser", "model"),
        30.0,
        only={"browser": BROWSER_ACTIONS},
        quiet=180.0,
        turns=((10, 10),),
    )

    def long_delay(plan: dict[str, Any]) -> bool:
        return any(
            "delay" in change and parse_duration(change["delay"]["for"]) > 120.0
            for change in plan[TURNS]
        )

    found = find(plans(quiet), long_delay)
    assert found[TURNS] == [{"turn": 1, "delay": {"chunk": 1, "for": "120.5s"}}]
    # Without it, a delay stays within the horizon.
    assert Space(("browser",), 30.0, turns=((10,),)).quiet is None


PUSHED = Space(
    ("a2a", PUSH_LINK),
    30.0,
    a2a_matches("1.0"),
    active=5.0,
    events=5,
    only={PUSH_LINK: PUSH_ACTIONS},
    link_matches={PUSH_LINK: PUSH_MATCHES},
)


@settings(max_examples=300, deadline=None)
@given(plans(PUSHED))
def test_push_link_plans_are_deliveries_cut_held_or_refused(plan: dict[str, Any]) -> None:
    _check(PUSHED, plan)
    for fault in plan[PUSH_LINK]:
        assert "rpc" not in fault["when"] and "after_event" not in fault["when"]
        action = fault["do"] if isinstance(fault["do"], str) else next(iter(fault["do"]))
        assert action in PUSH_ACTIONS


def test_a_push_link_fault_is_in_the_space() -> None:
    found = find(plans(PUSHED), lambda plan: bool(plan[PUSH_LINK]))
    assert found[PUSH_LINK][0]["do"] == "rst"
