"""GW-TOOL-CALL-FROM-AGGREGATE, GW-TOOL-ONCE, GW-NO-TOOL-LEAK, GW-LLM-BUDGET."""

from __future__ import annotations

import json

import pytest

from harness.checks.tools import (
    llm_budget_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from harness.observation import ChatResponse
from harness.scenario import GatewayExpect, GatewayLimits
from harness.tests.gateway_observations import (
    ANSWER,
    CHUNKS,
    DONE,
    LEGITIMATE,
    LOOKUP,
    MARKER,
    TOOL_ANSWER,
    assert_fails,
    assert_passes,
    assert_skips,
    budget_stopped,
    delta,
    error,
    frame,
    frames,
    message,
    model_call,
    observation,
    tool_call,
    tool_result,
    tool_run,
    worked_example,
)

ANSWER_FRAMES = (*(delta(c) for c in CHUNKS), message(ANSWER))


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_passes(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    assert_passes(tool_leak_verdicts(obs), "GW-NO-TOOL-LEAK")
    assert_passes(llm_budget_verdicts(obs), "GW-LLM-BUDGET")


# --- GW-TOOL-CALL-FROM-AGGREGATE ---------------------------------------------------------------


def test_a_tool_call_frame_from_the_partial_event_fails() -> None:
    obs = worked_example(
        frames=frames(
            tool_call("lookupOrder"), tool_call("lookupOrder"), tool_result(), *ANSWER_FRAMES, DONE
        )
    )
    verdict = assert_fails(
        tool_call_from_aggregate_verdicts(obs),
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "2 tool_call frame(s) for 1 aggregated function-call event(s): 1 came from partial "
        "events (the aggregate is the only source); e.g. frame #1 (event:tool_call id:2) repeats "
        "frame #0 (event:tool_call id:1) with no tool_result between them",
    )
    assert verdict.expected == "[lookupOrder]"
    assert verdict.observed == "[lookupOrder]\u00d72"


def test_a_missing_tool_call_frame_fails_when_the_run_completed() -> None:
    obs = worked_example(frames=frames(tool_result(), *ANSWER_FRAMES, DONE))
    assert_fails(
        tool_call_from_aggregate_verdicts(obs),
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "the run completed (done) but 1 aggregated function-call event(s) got no tool_call frame: "
        "[lookupOrder]",
    )


def test_wrong_names_fail() -> None:
    obs = worked_example(frames=frames(tool_call("lookup"), tool_result(), *ANSWER_FRAMES, DONE))
    assert_fails(
        tool_call_from_aggregate_verdicts(obs),
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "frame #0 (event:tool_call id:1) names ['lookup'] but the aggregated answer of model call "
        "#0 called ['lookupOrder']",
    )


def test_a_run_that_failed_may_stop_before_the_expected_tool_calls() -> None:
    obs = worked_example(frames=frames(error(retryable=True)))
    assert_passes(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")


def test_an_error_coded_or_unfinished_call_expects_no_tool_call() -> None:
    obs = observation(
        frames=frames(error(code="MAX_TOKENS"), DONE),
        model_calls=(
            model_call(0, calls=[LOOKUP], finish="MAX_TOKENS"),
            model_call(1, calls=[LOOKUP], completed=False, closed_early=True),
        ),
    )
    assert_passes(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")


def test_tool_call_frames_without_model_records_are_not_judged() -> None:
    obs = worked_example(model_calls=())
    assert_skips(
        tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE", "no model calls"
    )


# --- GW-TOOL-ONCE ------------------------------------------------------------------------------


def test_a_tool_run_twice_fails() -> None:
    obs = worked_example(tool_calls=(tool_run(), tool_run(t=0.16)))
    assert_fails(
        tool_once_verdicts(obs),
        "GW-TOOL-ONCE",
        "lookupOrder ran 2 time(s) but the model's completed answers called it 1 time(s): "
        "something acted on a partial function call",
        "the scenario expects 1",
    )


def test_a_tool_never_run_fails_when_the_run_completed() -> None:
    obs = worked_example(tool_calls=(), expect=GatewayExpect())
    assert_fails(
        tool_once_verdicts(obs),
        "GW-TOOL-ONCE",
        "lookupOrder ran 0 time(s) but aggregated events called it 1 time(s) and the run "
        "completed (done)",
    )


def test_a_failed_run_may_stop_before_running_a_tool() -> None:
    obs = worked_example(
        tool_calls=(), frames=frames(error(retryable=True)), expect=GatewayExpect()
    )
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")


def test_the_scenario_count_is_enforced() -> None:
    obs = worked_example(expect=GatewayExpect(tool_calls={"lookupOrder": 2}))
    assert_fails(
        tool_once_verdicts(obs), "GW-TOOL-ONCE", "lookupOrder ran 1 time(s); the scenario expects 2"
    )


def test_an_error_coded_function_call_may_still_run_its_tool() -> None:
    obs = observation(
        frames=frames(error(code="MAX_TOKENS"), tool_result(), message("ok"), DONE),
        model_calls=(model_call(0, calls=[LOOKUP], finish="MAX_TOKENS"), model_call(1, text="ok")),
        tool_calls=(tool_run(),),
    )
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    # ... or not: for an error-coded aggregate only "at most once" applies.
    assert_passes(tool_once_verdicts(obs.model_copy(update={"tool_calls": ()})), "GW-TOOL-ONCE")


def test_a_tool_whose_call_errored_mid_stream_must_not_run() -> None:
    obs = observation(
        frames=frames(error(code="UNAVAILABLE"), error(retryable=True)),
        model_calls=(
            model_call(0, calls=[LOOKUP], finish=None, error_sent={"status": "UNAVAILABLE"}),
        ),
        tool_calls=(tool_run(),),
    )
    assert_fails(tool_once_verdicts(obs), "GW-TOOL-ONCE", "lookupOrder ran 1 time(s)")


# --- GW-NO-TOOL-LEAK ---------------------------------------------------------------------------


def test_a_forwarded_tool_payload_fails() -> None:
    leaky = (
        "tool_result",
        {"count": 1, "responses": [{"name": "lookupOrder", "response": TOOL_ANSWER}]},
    )
    obs = worked_example(frames=frames(tool_call("lookupOrder"), leaky, *ANSWER_FRAMES, DONE))
    assert_fails(
        tool_leak_verdicts(obs),
        "GW-NO-TOOL-LEAK",
        f"frame #1 (event:tool_result id:2) carries the tool's secret {MARKER!r} in its data",
    )


def test_a_leak_through_text_or_the_id_fails() -> None:
    said = frame(5, "message", {"author": "support", "text": f"Secret is {MARKER}", "final": True})
    obs = worked_example(frames=(said, frame(6, "done", {}, id=MARKER)))
    assert_fails(tool_leak_verdicts(obs), "GW-NO-TOOL-LEAK", "frame #5", "in its id")


def test_a_json_escaped_marker_is_found_too() -> None:
    marker = 'sec"ret'
    data = json.dumps({"count": 1, "raw": json.dumps({"secret": marker})})
    obs = worked_example(marker=marker, frames=(frame(0, "tool_result", data),))
    assert_fails(tool_leak_verdicts(obs), "GW-NO-TOOL-LEAK", "frame #0")


def test_no_marker_no_judgement() -> None:
    assert_skips(
        tool_leak_verdicts(worked_example(marker="")), "GW-NO-TOOL-LEAK", "no tool payload marker"
    )


# --- GW-LLM-BUDGET -----------------------------------------------------------------------------


def test_a_loop_stopped_by_the_budget_passes() -> None:
    verdict = assert_passes(llm_budget_verdicts(budget_stopped(20)), "GW-LLM-BUDGET")
    assert verdict.message == "20 model call(s), within the budget of 50"


def test_a_loop_beyond_the_budget_fails() -> None:
    obs = budget_stopped(12).model_copy(update={"limits": GatewayLimits(model_calls=10)})
    assert_fails(
        llm_budget_verdicts(obs),
        "GW-LLM-BUDGET",
        "12 model calls for one request; an interactive budget must stop a loop by 10",
    )


def test_a_loop_that_never_ends_fails() -> None:
    hung = budget_stopped(30)
    obs = hung.model_copy(
        update={
            "frames": hung.frames[:-1],
            "response": ChatResponse(status=200, content_type="text/event-stream", end="timeout"),
        }
    )
    assert_fails(
        llm_budget_verdicts(obs),
        "GW-LLM-BUDGET",
        "the stream was still open after 30s with 30 model call(s) made",
    )


def test_a_stream_that_just_stops_fails_the_budget_too() -> None:
    obs = budget_stopped(3)
    obs = obs.model_copy(update={"frames": obs.frames[:-1]})
    assert_fails(
        llm_budget_verdicts(obs), "GW-LLM-BUDGET", "the stream ended (clean) with tool_result"
    )


def test_the_budget_is_judged_even_without_a_stream() -> None:
    broken = ChatResponse(status=502, content_type="text/html", end="not-sse")
    over = observation(response=broken, model_calls=tuple(model_call(i) for i in range(51)))
    assert_fails(llm_budget_verdicts(over), "GW-LLM-BUDGET", "51 model calls")
    assert_skips(
        llm_budget_verdicts(observation(response=broken)), "GW-LLM-BUDGET", "no event stream"
    )


def test_agent_tools_answered_inside_adk_are_not_owed_to_the_tool_service() -> None:
    # A sub-agent used as a tool ("courier") is run by ADK itself: the tool service never
    # sees it, so only the tools the service serves are owed an execution.
    from harness.checks.tools import tool_once_verdicts
    from harness.tests.gateway_observations import LOOKUP, assert_fails, assert_passes
    from harness.tests.gateway_observations import model_call as call
    from harness.tests.gateway_observations import worked_example as example

    courier = {"name": "courier", "args": {"request": "where?"}}
    calls = (call(0, calls=[LOOKUP]), call(1, calls=[courier]), call(2, text="Monday."))
    obs = example(model_calls=calls, service_tools=("lookupOrder",), expect=GatewayExpect())
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    unknown = example(model_calls=calls, service_tools=None, expect=GatewayExpect())
    assert_fails(tool_once_verdicts(unknown), "GW-TOOL-ONCE", "courier ran 0 time(s)")
