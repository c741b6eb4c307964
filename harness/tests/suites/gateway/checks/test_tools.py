"""GW-TOOL-CALL-FROM-AGGREGATE, GW-TOOL-ONCE, GW-NO-TOOL-LEAK, GW-LLM-BUDGET."""

from __future__ import annotations

import json

import pytest

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    LEGITIMATE,
    LOOKUP,
    MARKER,
    TOOL_ANSWER,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
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
from streamproof.suites.gateway.checks.stream import stream_terminal_verdicts
from streamproof.suites.gateway.checks.tools import (
    llm_budget_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.observation import ChatResponse
from streamproof.suites.gateway.scenario import GatewayExpect, GatewayLimits

ANSWER_FRAMES = (*(delta(c) for c in CHUNKS), message(ANSWER))


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_holds(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")
    assert_holds(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    assert_holds(tool_leak_verdicts(obs), "GW-NO-TOOL-LEAK")
    assert_holds(llm_budget_verdicts(obs), "GW-LLM-BUDGET")


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
    assert_not_applicable(
        tool_call_from_aggregate_verdicts(obs),
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "no function-call event and no tool_call frame",
    )


def test_a_tool_call_frame_without_any_function_call_fails() -> None:
    obs = observation(
        frames=frames(tool_call("lookupOrder"), tool_result(), message("ok"), DONE),
        model_calls=(model_call(0, text="ok"),),
    )
    assert_fails(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")


def test_tool_call_frames_without_model_records_are_not_judged() -> None:
    obs = worked_example(model_calls=())
    assert_not_applicable(
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


def test_the_scenario_count_is_not_judged_here() -> None:
    # expect.tool_calls is judged as that expectation (test_checks_expectations).
    obs = worked_example(expect=GatewayExpect(tool_calls={"lookupOrder": 2}))
    verdict = assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    assert verdict.expected == {"lookupOrder": 1}


def test_no_tool_called_and_none_run_is_not_applicable() -> None:
    obs = observation(
        frames=frames(delta(ANSWER), message(ANSWER), DONE),
        model_calls=(model_call(0, text=ANSWER),),
    )
    assert_not_applicable(tool_once_verdicts(obs), "GW-TOOL-ONCE", "the model called no tool")


def test_a_tool_run_that_nothing_asked_for_fails() -> None:
    obs = observation(
        frames=frames(delta(ANSWER), message(ANSWER), DONE),
        model_calls=(model_call(0, text=ANSWER),),
        tool_calls=(tool_run(),),
    )
    assert_fails(tool_once_verdicts(obs), "GW-TOOL-ONCE", "lookupOrder ran 1 time(s)")


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
    assert_not_applicable(
        tool_leak_verdicts(worked_example(marker="")),
        "GW-NO-TOOL-LEAK",
        "no tool payload carried a marker",
    )


def test_no_tool_executed_no_judgement() -> None:
    assert_not_applicable(
        tool_leak_verdicts(worked_example(tool_calls=())),
        "GW-NO-TOOL-LEAK",
        "no tool was executed",
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
        "the loop was not stopped: the stream was still open after 30.00s with 30 model call(s) "
        "made",
    )


def test_how_a_stopped_loop_ends_is_not_the_budgets_rule() -> None:
    # A stream that just stops after the loop is GW-STREAM-TERMINAL's and GW-ERROR-FRAME's.
    obs = budget_stopped(3)
    obs = obs.model_copy(update={"frames": obs.frames[:-1]})
    assert_passes(llm_budget_verdicts(obs), "GW-LLM-BUDGET")
    assert_fails(stream_terminal_verdicts(obs), "GW-STREAM-TERMINAL", "not done or error")


def test_a_loop_the_run_bound_ended_before_the_budget_is_not_judged() -> None:
    """A gateway without a budget, on a machine slow enough that its bound came first, makes
    no more calls than one with a budget: nothing to tell them apart, so no pass."""
    obs = budget_stopped(30).model_copy(
        update={
            "run_bound_s": 6.0,
            "response": ChatResponse(
                status=200, content_type="text/event-stream", end="clean", elapsed=6.3
            ),
        }
    )
    assert_not_applicable(
        llm_budget_verdicts(obs),
        "GW-LLM-BUDGET",
        "ended the loop after 30 model call(s), before the budget of 50 could show whether "
        "one is set",
    )
    # Past the budget before the bound came, it fails all the same.
    over = budget_stopped(51).model_copy(update={"run_bound_s": 6.0, "response": obs.response})
    assert_fails(llm_budget_verdicts(over), "GW-LLM-BUDGET", "51 model calls")
    # Stopped before its bound: the budget did it.
    early = obs.model_copy(update={"response": obs.response.model_copy(update={"elapsed": 2.0})})
    assert_passes(llm_budget_verdicts(early), "GW-LLM-BUDGET")


def test_the_budget_is_judged_even_without_a_stream() -> None:
    broken = ChatResponse(status=502, content_type="text/html", end="not-sse")
    over = observation(response=broken, model_calls=tuple(model_call(i) for i in range(51)))
    assert_fails(llm_budget_verdicts(over), "GW-LLM-BUDGET", "51 model calls")


def test_a_script_that_ends_within_the_budget_is_not_applicable() -> None:
    for scripted in (None, 2, 50):
        assert_not_applicable(
            llm_budget_verdicts(worked_example(scripted_calls=scripted)),
            "GW-LLM-BUDGET",
            "2 model call(s), and the model's script ends within the budget of 50",
        )


def test_a_script_longer_than_the_budget_is_judged() -> None:
    obs = budget_stopped(20).model_copy(update={"scripted_calls": 60})
    verdict = assert_passes(llm_budget_verdicts(obs), "GW-LLM-BUDGET")
    assert verdict.message == "20 model call(s), within the budget of 50"


def test_agent_tools_answered_inside_adk_are_not_owed_to_the_tool_service() -> None:
    # A sub-agent used as a tool ("courier") is run by ADK itself: the tool service never
    # sees it, so only the tools the service serves are owed an execution.
    from harness.tests.suites.gateway.observations import LOOKUP, assert_fails, assert_passes
    from harness.tests.suites.gateway.observations import model_call as call
    from harness.tests.suites.gateway.observations import worked_example as example
    from streamproof.suites.gateway.checks.tools import tool_once_verdicts

    courier = {"name": "courier", "args": {"request": "where?"}}
    calls = (call(0, calls=[LOOKUP]), call(1, calls=[courier]), call(2, text="Monday."))
    obs = example(model_calls=calls, service_tools=("lookupOrder",), expect=GatewayExpect())
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    unknown = example(model_calls=calls, service_tools=None, expect=GatewayExpect())
    assert_fails(tool_once_verdicts(unknown), "GW-TOOL-ONCE", "courier ran 0 time(s)")
