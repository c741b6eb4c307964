"""Checks on each frame (harness/streamproof/suites/gateway/checks/frames.py): its type and
payload (GW-FRAME-TYPES), the order of the tool steps (GW-FRAME-SEQUENCE)."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    EV_ANSWER,
    LOOKUP,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    delta,
    error,
    frame,
    frames,
    message,
    model_call,
    observation,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.suites.gateway.checks.frames import frame_sequence_verdicts, frame_type_verdicts
from streamproof.suites.gateway.checks.rendering import double_render_verdicts
from streamproof.suites.gateway.observation import ChatResponse, Frame
from streamproof.suites.gateway.scenario import GatewayExpect

WORKED_SEQUENCE = "tool_call tool_result delta\u00d73 message done"


# --- GW-FRAME-TYPES ----------------------------------------------------------------------------


def test_frame_types_pass_on_the_worked_example() -> None:
    assert_passes(frame_type_verdicts(worked_example()), "GW-FRAME-TYPES")


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (frame(6, "text", {"author": "support", "text": "x"}), "unknown type 'text'"),
        (frame(6, "delta", "Order 1042"), "not a JSON object"),
        (frame(6, "done", "[]"), "not a JSON object"),
        (frame(6, "delta", {"author": "support"}), "'text' is not a string"),
        (frame(6, "message", {"author": "support", "text": "x"}), "'final' is not true/false"),
        (
            frame(6, "message", {"author": 7, "text": "x", "final": True}),
            "'author' is not a string",
        ),
        (frame(6, "tool_call", {"names": []}), "'names' is not a non-empty list"),
        (frame(6, "tool_call", {"names": "lookupOrder"}), "'names' is not a non-empty list"),
        (frame(6, "tool_result", {"count": 0}), "'count' is not an integer >= 1"),
        (frame(6, "tool_result", {"count": True}), "'count' is not an integer >= 1"),
        (frame(6, "tool_result", {"responses": [{}]}), "'count' is not an integer >= 1"),
        (frame(6, "error", {"code": 503}), "'code' is not a string"),
        (frame(6, "error", {"retryable": "yes"}), "'retryable' is not true/false"),
    ],
)
def test_frame_types_fail_naming_the_frame(bad: Frame, fragment: str) -> None:
    obs = worked_example(frames=(*worked_example().frames[:6], bad))
    verdict = assert_fails(frame_type_verdicts(obs), "GW-FRAME-TYPES", "frame #6", fragment)
    assert "tool_call {names: [string, ...]}" in verdict.message  # the rule is spelled out


def test_a_frame_without_an_event_line_is_a_message_and_must_have_its_shape() -> None:
    # WHATWG: a block with no event: line dispatches as "message" (raw ADK JSON, for instance).
    raw = frame(0, "message", {"id": EV_ANSWER, "author": "support", "content": {}})
    verdict = assert_fails(frame_type_verdicts(observation(frames=(raw,))), "GW-FRAME-TYPES")
    assert "'text' is not a string" in verdict.message


def test_frame_types_lists_a_few_violations_and_counts_the_rest() -> None:
    obs = observation(frames=tuple(frame(i, "chunk", {}) for i in range(7)))
    verdict = assert_fails(frame_type_verdicts(obs), "GW-FRAME-TYPES", "and 4 more")
    assert "frame #3" not in verdict.message


# --- GW-FRAME-SEQUENCE -------------------------------------------------------------------------


def test_frame_sequence_passes_the_worked_example_and_its_pattern() -> None:
    verdict = assert_passes(frame_sequence_verdicts(worked_example()), "GW-FRAME-SEQUENCE")
    assert verdict.observed == WORKED_SEQUENCE


def test_frame_sequence_ignores_the_scenarios_pattern() -> None:
    # expect.frames is judged as that expectation (test_checks_expectations), not here.
    obs = worked_example(
        expect=GatewayExpect(frames="tool_call tool_result delta+ message done"),
        frames=frames(
            tool_call("lookupOrder"), tool_result(), message("Order 1042 shipped."), DONE
        ),
    )
    verdict = assert_passes(frame_sequence_verdicts(obs), "GW-FRAME-SEQUENCE")
    assert verdict.expected is None


def test_frame_sequence_is_not_applicable_without_a_tool_step_or_streamed_text() -> None:
    for obs in (
        observation(frames=frames(message(ANSWER), DONE)),
        observation(frames=frames(delta(ANSWER), DONE)),
        observation(frames=frames(DONE)),
    ):
        assert_not_applicable(frame_sequence_verdicts(obs), "GW-FRAME-SEQUENCE", "no tool step")


def test_a_message_before_the_deltas_that_spell_it_is_a_double_render_alone() -> None:
    """One behaviour, one rule: deltas after the message that settles them show the answer
    twice (the message, and a draft of it); the frame order rule does not judge it again."""
    obs = observation(
        frames=frames(message(ANSWER), *(delta(c) for c in CHUNKS), DONE),
        model_calls=(model_call(0, text=ANSWER),),
    )
    assert_not_applicable(frame_sequence_verdicts(obs), "GW-FRAME-SEQUENCE", "no tool step")
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "after frame #1 (event:delta id:2) the draft of 'support' reads",
        "repeats the answer already settled by frame #0 (event:message id:1)",
    )


def test_deltas_of_the_next_answer_after_a_message_are_fine() -> None:
    intro = "Let me check."
    obs = observation(
        frames=frames(
            delta(intro), message(intro, final=False), delta(ANSWER), message(ANSWER), DONE
        ),
        model_calls=(model_call(0, text=intro, calls=[LOOKUP]), model_call(1, text=ANSWER)),
    )
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_a_tool_result_before_any_tool_call_fails() -> None:
    obs = observation(frames=frames(tool_result(), delta("x"), message("x"), DONE))
    assert_fails(
        frame_sequence_verdicts(obs),
        "GW-FRAME-SEQUENCE",
        "frame #0 (event:tool_result id:1) answers 1 call(s) but no tool_call came first",
    )


def test_more_results_than_calls_fail() -> None:
    obs = observation(frames=frames(tool_call("lookupOrder"), tool_result(), tool_result(), DONE))
    assert_fails(frame_sequence_verdicts(obs), "GW-FRAME-SEQUENCE", "frame #2")


def test_parallel_calls_may_be_answered_together_or_one_by_one() -> None:
    together = observation(frames=frames(tool_call("a", "b"), tool_result(2), DONE))
    apart = observation(frames=frames(tool_call("a", "b"), tool_result(1), tool_result(1), DONE))
    assert_passes(frame_sequence_verdicts(together), "GW-FRAME-SEQUENCE")
    assert_passes(frame_sequence_verdicts(apart), "GW-FRAME-SEQUENCE")


def test_an_error_coded_function_call_aggregate_may_stand_for_the_tool_call() -> None:
    # MAX_TOKENS on a function-call answer: ADK sets errorCode and still runs the tool; the
    # seed's send() checks the error code first, so an error frame replaces the tool_call.
    obs = observation(
        frames=frames(error(code="MAX_TOKENS"), tool_result(), message("x"), DONE),
        model_calls=(model_call(0, calls=[LOOKUP], finish="MAX_TOKENS"), model_call(1, text="x")),
    )
    assert_passes(frame_sequence_verdicts(obs), "GW-FRAME-SEQUENCE")
    assert_not_applicable(
        frame_sequence_verdicts(
            observation(response=ChatResponse(status=500, content_type=None, end="not-sse"))
        ),
        "GW-FRAME-SEQUENCE",
        "no event stream",
    )


def test_the_same_answer_twice_in_a_row_is_two_settled_answers_not_a_reordering() -> None:
    """A loop that says "Working." on two calls: each message settles its own deltas."""
    obs = observation(
        frames=frames(
            delta("Working."), message("Working."), delta("Working."), message("Working."), DONE
        ),
        model_calls=(model_call(0, text="Working."), model_call(1, text="Working.")),
    )
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_a_message_sent_before_its_deltas_fails_double_render() -> None:
    obs = observation(
        frames=frames(message("Working."), delta("Work"), delta("ing."), DONE),
        model_calls=(model_call(0, text="Working."),),
    )
    assert_fails(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER", "repeats the answer")
