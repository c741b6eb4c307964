"""Checks on the frame stream: response, types, ids, the end, the order."""

from __future__ import annotations

from collections.abc import Callable

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
    error_then_done,
    error_twice,
    frame,
    frames,
    message,
    model_call,
    observation,
    renumber,
    text_with_tool_call,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.core.texts import squash
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.checks.frames import (
    compress,
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
    frame_sequence_verdicts,
    frame_type_verdicts,
    sequence,
    sse_response_verdicts,
    stream_terminal_verdicts,
)
from streamproof.suites.gateway.checks.rendering import double_render_verdicts
from streamproof.suites.gateway.observation import ChatResponse, Frame, GatewayObservation
from streamproof.suites.gateway.scenario import GatewayExpect, GatewayLimits

WORKED_SEQUENCE = "tool_call tool_result delta\u00d73 message done"

STREAM_CHECKS = [
    frame_type_verdicts,
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
    stream_terminal_verdicts,
    frame_sequence_verdicts,
]


@pytest.mark.parametrize(
    "tokens, text",
    [
        (["tool_call", "tool_result"] * 20 + ["error"], "(tool_call tool_result)\u00d720 error"),
        (["a", "a", "b", "a", "b"], "a\u00d72 b a b"),  # greedy, left to right
        (["a", "a", "a", "a"], "a\u00d74"),
        ([], ""),
    ],
)
def test_compress(tokens: list[str], text: str) -> None:
    assert compress(tokens) == text


def test_compress_shows_the_ends_of_a_long_sequence() -> None:
    text = compress([str(i) for i in range(100)], limit=6)
    assert text == "0 1 2 \u2026 94 more \u2026 97 98 99"


def test_helpers() -> None:
    assert squash(" a b\n\tc ") == "abc"
    assert sequence(worked_example().frames) == WORKED_SEQUENCE
    assert sequence(()) == "(no frames)"


# --- GW-SSE-RESPONSE ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/event-stream", "text/event-stream; charset=utf-8", "Text/Event-Stream"]
)
def test_sse_response_passes_with_parameters(content_type: str) -> None:
    obs = worked_example(response=ChatResponse(status=200, content_type=content_type, end="clean"))
    assert_passes(sse_response_verdicts(obs), "GW-SSE-RESPONSE")


@pytest.mark.parametrize(
    "response, fragment",
    [
        (
            ChatResponse(
                status=500,
                content_type="application/json",
                end="not-sse",
                body_excerpt='{"detail": "boom"}',
            ),
            "status 500, not 200",
        ),
        (
            ChatResponse(status=200, content_type="application/json", end="not-sse"),
            "application/json",
        ),
        (
            ChatResponse(status=None, content_type=None, end="refused", error="connection refused"),
            "no connection",
        ),
        (
            ChatResponse(status=200, content_type="text/event-stream", end="not-sse"),
            "did not parse",
        ),
    ],
)
def test_sse_response_fails_without_an_event_stream(response: ChatResponse, fragment: str) -> None:
    obs = observation(response=response)
    assert_fails(sse_response_verdicts(obs), "GW-SSE-RESPONSE", fragment)


def test_without_an_event_stream_the_frame_checks_say_so_once_each() -> None:
    obs = observation(response=ChatResponse(status=404, content_type="text/html", end="not-sse"))
    for check in STREAM_CHECKS:
        (verdict,) = check(obs)
        assert verdict.outcome is Outcome.NOT_APPLICABLE
        assert verdict.message == "not judged: no event stream (see GW-SSE-RESPONSE)"


@pytest.mark.parametrize(
    "check",
    [
        frame_type_verdicts,
        frame_id_counter_verdicts,
        frame_id_fresh_verdicts,
        frame_sequence_verdicts,
    ],
)
def test_a_stream_without_frames_gives_the_frame_checks_nothing_to_judge(
    check: Callable[[GatewayObservation], list[Verdict]],
) -> None:
    (verdict,) = check(observation())
    assert verdict.outcome is Outcome.NOT_APPLICABLE, verdict.render()
    assert verdict.message == "not judged: the stream carried no frame"


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


# --- GW-FRAME-ID-COUNTER and GW-FRAME-ID-FRESH ------------------------------------------------


def test_frame_ids_pass_on_the_worked_example() -> None:
    assert_passes(frame_id_counter_verdicts(worked_example()), "GW-FRAME-ID-COUNTER")
    # no message comes with a tool_call: the one pair GW-FRAME-ID-FRESH judges is absent
    assert_not_applicable(
        frame_id_fresh_verdicts(worked_example()), "GW-FRAME-ID-FRESH", "no message came with"
    )
    assert_passes(frame_id_fresh_verdicts(text_with_tool_call(fresh=True)), "GW-FRAME-ID-FRESH")


def test_a_shared_id_for_message_and_tool_call_is_only_a_should() -> None:
    # The seed's controller numbers per ADK event: message and tool_call share one id.
    obs = text_with_tool_call()
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")
    assert_fails(
        frame_id_fresh_verdicts(obs),
        "GW-FRAME-ID-FRESH",
        "frame #1 (event:message id:3) and frame #2 (event:tool_call id:3) share id 3",
        "Last-Event-ID",
        outcome=Outcome.NON_STRICT,
    )


def test_gaps_in_the_counter_are_fine() -> None:
    obs = worked_example(
        frames=frames(
            *((f.event, f.data) for f in worked_example().frames), ids=[2, 3, 5, 6, 7, 9, 12]
        )
    )
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")


def _with_ids(ids: list[str | int]) -> list[Frame]:
    return list(frames(*((f.event, f.data) for f in worked_example().frames), ids=ids))


def test_adk_event_ids_as_frame_ids_fail() -> None:
    obs = worked_example(
        frames=tuple(_with_ids([f"9a7b{i}c00-1b2c-4d5e-8f90-0a1b2c3d4e0{i}" for i in range(7)]))
    )
    assert_fails(
        frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "looks like an ADK event id"
    )


def test_a_stored_event_id_as_frame_id_fails() -> None:
    ids: list[str | int] = [1, 2, 3, 4, 5, EV_ANSWER, 7]
    obs = worked_example(frames=tuple(_with_ids(ids)))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #5 (event:message id:6f1d2c3a",
        "uses the id of stored ADK event #3, not the gateway's own counter",
    )


def test_frame_ids_that_go_backwards_or_are_not_integers_fail() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 3, 2, "x5", 6, 7])))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #3 (event:delta id:2) goes backwards after id 3",
        "id 'x5' is not a decimal integer",
    )


def test_a_frame_without_its_own_id_line_fails() -> None:
    fs = _with_ids([1, 2, 3, 4, 5, 6, 7])
    fs[4] = fs[4].model_copy(update={"id": "4", "id_line": False})
    verdict = assert_fails(
        frame_id_counter_verdicts(worked_example(frames=tuple(fs))),
        "GW-FRAME-ID-COUNTER",
        "frame #4",
        "has no id: line of its own (the browser keeps the previous id '4')",
    )
    assert verdict.observed == "1 2 3 4 4 6 7"


def test_frames_with_no_id_at_all_fail_the_counter_alone() -> None:
    """One behaviour, one rule: missing ids are the MUST's; the SHOULD has nothing left."""
    plain = text_with_tool_call()
    fs = tuple(f.model_copy(update={"id": "", "id_line": False}) for f in plain.frames)
    obs = plain.model_copy(update={"frames": fs})
    assert_fails(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "has no id: line")
    assert_not_applicable(frame_id_fresh_verdicts(obs), "GW-FRAME-ID-FRESH", "no message came")


def test_ids_that_do_not_increase_fail_the_counter_alone() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 5, 3, 6, 7, 8])))
    assert_fails(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "goes backwards after id 5")
    assert_not_applicable(frame_id_fresh_verdicts(obs), "GW-FRAME-ID-FRESH", "no message came")


def test_frames_of_different_events_sharing_an_id_fail_the_counter() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 3, 3, 3, 3, 4])))
    verdict = assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #3 (event:delta id:3) repeats the id of frame #2 (event:delta id:3)",
        "frame #5 (event:message id:3) repeats the id of frame #4",
    )
    assert verdict.message.count("repeats the id") == 3


def test_a_tool_result_reusing_its_tool_calls_id_fails_the_counter() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 1, 2, 3, 4, 5, 6])))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #1 (event:tool_result id:1) repeats the id of frame #0 (event:tool_call id:1): "
        "only a message and the tool_call of the same event may share an id",
    )


def test_the_seeds_per_event_numbering_passes_the_counter() -> None:
    # The seed's send(): one seq.incrementAndGet() per ADK event, so the message and tool_call
    # of a function-call event with text share an id, and a partial event leaves a gap.
    obs = text_with_tool_call()
    assert [f.id for f in obs.frames] == ["1", "3", "3", "4", "5", "6", "7", "8", "9"]
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")


def test_a_tool_call_before_its_message_may_not_share_the_id() -> None:
    obs = text_with_tool_call()
    swapped = (obs.frames[0], obs.frames[2], obs.frames[1], *obs.frames[3:])
    assert_fails(
        frame_id_counter_verdicts(
            obs.model_copy(update={"frames": renumber(swapped, [1, 3, 3, 4, 5, 6, 7, 8, 9])})
        ),
        "GW-FRAME-ID-COUNTER",
        "frame #2 (event:message id:3) repeats the id of frame #1 (event:tool_call id:3)",
    )


# --- GW-STREAM-TERMINAL ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build", [worked_example, error_then_done, error_twice, text_with_tool_call]
)
def test_stream_terminal_passes_done_error_done_and_error_error(
    build: Callable[[], GatewayObservation],
) -> None:
    assert_passes(stream_terminal_verdicts(build()), "GW-STREAM-TERMINAL")


def test_a_body_that_just_ends_leaves_a_draft_and_fails() -> None:
    obs = worked_example(
        frames=frames(tool_call("lookupOrder"), tool_result(), *(delta(c) for c in CHUNKS))
    )
    assert_fails(
        stream_terminal_verdicts(obs),
        "GW-STREAM-TERMINAL",
        "the last frame is frame #4 (event:delta id:5), not done or error",
        "a draft from 'support' is left on screen",
    )


def test_a_stream_still_open_at_the_run_timeout_fails() -> None:
    obs = worked_example(
        frames=frames(tool_call("lookupOrder"), tool_result()),
        response=ChatResponse(status=200, content_type="text/event-stream", end="timeout"),
        limits=GatewayLimits(run_timeout="7s"),
        time_scale=0.1,
        stream_wait_s=10.0,  # the scaled 0.7 s was raised to the harness's floor
    )
    assert_fails(
        stream_terminal_verdicts(obs),
        "GW-STREAM-TERMINAL",
        # both clocks: what the harness waited, and the scenario's own figure
        "the stream was still open after 10.00s (7s scenario time): the gateway never ended it",
    )


def test_a_broken_connection_fails() -> None:
    obs = worked_example(
        response=ChatResponse(
            status=200, content_type="text/event-stream", end="error", error="connection reset"
        )
    )
    assert_fails(stream_terminal_verdicts(obs), "GW-STREAM-TERMINAL", "connection reset")


def test_a_frame_after_done_fails() -> None:
    obs = worked_example(
        frames=frames(
            tool_call("lookupOrder"), tool_result(), message("x"), DONE, error(code="LATE")
        )
    )
    assert_fails(
        stream_terminal_verdicts(obs),
        "GW-STREAM-TERMINAL",
        "frame #4 (event:error id:5) follows frame #3 (event:done id:4)",
    )


def test_an_empty_stream_fails() -> None:
    assert_fails(stream_terminal_verdicts(observation()), "GW-STREAM-TERMINAL", "no frame at all")


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
