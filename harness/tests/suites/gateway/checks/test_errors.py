"""GW-ERROR-EVENT and GW-ERROR-FRAME."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.tests.suites.gateway.observations import (
    DONE,
    LEGITIMATE,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
    budget_stopped,
    delta,
    error,
    error_event,
    error_then_done,
    error_twice,
    frames,
    http_error_retried,
    http_error_twice,
    model_call,
    observation,
    renumber,
    text_event,
    user_event,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks.errors import error_event_verdicts, error_frame_verdicts
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation

OVERLOADED = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_holds(error_event_verdicts(obs), "GW-ERROR-EVENT")
    assert_holds(error_frame_verdicts(obs), "GW-ERROR-FRAME")


def test_a_run_without_errors_gives_the_error_checks_nothing_to_judge() -> None:
    assert_not_applicable(
        error_event_verdicts(worked_example()), "GW-ERROR-EVENT", "no event in this run"
    )
    assert_not_applicable(
        error_frame_verdicts(worked_example()), "GW-ERROR-FRAME", "the run did not fail"
    )


# --- GW-ERROR-EVENT ----------------------------------------------------------------------------


def test_error_then_done_passes() -> None:
    verdict = assert_passes(error_event_verdicts(error_then_done()), "GW-ERROR-EVENT")
    assert "finishReason MAX_TOKENS" in verdict.message


def test_an_error_event_handled_as_a_plain_event_fails() -> None:
    # The "swallow-error-event" bug: the MAX_TOKENS aggregate became a message, then done.
    cut = "Order 1042 shipped on 30 September and"
    obs = error_then_done().model_copy(
        update={
            "frames": frames(
                delta(cut), ("message", {"author": "support", "text": cut, "final": True}), DONE
            )
        }
    )
    assert_fails(
        error_event_verdicts(obs),
        "GW-ERROR-EVENT",
        "model call #0 ended with finishReason MAX_TOKENS (ADK gives that aggregate errorCode "
        "MAX_TOKENS), but the stream has no error frame",
        "even when the run then completes normally",
    )


def test_a_stored_error_event_requires_an_error_frame() -> None:
    obs = worked_example(history=(user_event(), error_event("SAFETY")), frames=frames(DONE))
    assert_fails(
        error_event_verdicts(obs),
        "GW-ERROR-EVENT",
        "the session stored event #1 with errorCode SAFETY, but the stream has no error frame",
    )


def test_an_aborted_invocation_in_history_is_a_record_not_an_error() -> None:
    obs = worked_example(history=(error_event("INVOCATION_ABORTED"), user_event(), text_event()))
    assert_not_applicable(error_event_verdicts(obs), "GW-ERROR-EVENT")


# --- GW-ERROR-FRAME ----------------------------------------------------------------------------


@pytest.mark.parametrize("build", [error_twice, http_error_twice])
def test_error_twice_passes(build: Callable[[], GatewayObservation]) -> None:
    verdict = assert_passes(error_frame_verdicts(build()), "GW-ERROR-FRAME")
    assert "model call #0" in verdict.message


def test_error_then_done_after_a_model_failure_passes() -> None:
    obs = error_twice().model_copy(
        update={"frames": frames(delta("Order 1042 "), error(code="UNAVAILABLE"), DONE)}
    )
    assert_passes(error_frame_verdicts(obs), "GW-ERROR-FRAME")


def test_a_bare_done_after_a_model_failure_fails() -> None:
    obs = error_twice().model_copy(update={"frames": frames(delta("Order 1042 "), DONE)})
    assert_fails(
        error_frame_verdicts(obs),
        "GW-ERROR-FRAME",
        "model call #0 failed mid-stream with UNAVAILABLE, but the stream has no error frame (a "
        "bare done)",
    )


def test_done_before_the_error_fails() -> None:
    obs = http_error_twice().model_copy(update={"frames": frames(DONE, error(retryable=True))})
    assert_fails(
        error_frame_verdicts(obs),
        "GW-ERROR-FRAME",
        "model call #0 answered HTTP 503, but frame #0 (event:done id:1) came "
        "before the first error frame",
    )


def test_a_hang_after_a_model_failure_fails() -> None:
    obs = http_error_twice().model_copy(
        update={
            "frames": (),
            "response": ChatResponse(status=200, content_type="text/event-stream", end="timeout"),
        }
    )
    verdict = assert_fails(error_frame_verdicts(obs), "GW-ERROR-FRAME", "(it hung)")
    assert "no error frame" in verdict.message


def test_an_http_error_status_alone_is_a_failure() -> None:
    obs = observation(frames=frames(DONE), model_calls=(model_call(0, status=500, finish=None),))
    assert_fails(error_frame_verdicts(obs), "GW-ERROR-FRAME", "model call #0 answered HTTP 500")


def test_a_broken_response_needs_an_error_frame_first() -> None:
    response = ChatResponse(
        status=200, content_type="text/event-stream", end="error", error="reset"
    )
    obs = worked_example(response=response, frames=frames(delta("Order")))
    assert_fails(error_frame_verdicts(obs), "GW-ERROR-FRAME", "the response broke off: reset")


def test_a_failure_the_model_client_retried_away_is_not_a_run_failure() -> None:
    # java-genai retries 5xx: the same request again, answered this time.
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    obs = worked_example(
        model_calls=(
            model_call(0, status=503, finish=None, error_sent=OVERLOADED, body=body),
            model_call(1, text="Hello", body=body),
        ),
        frames=frames(
            delta("Hello"), ("message", {"author": "support", "text": "Hello", "final": True}), DONE
        ),
        history=None,
        tool_calls=(),
    )
    note, verdict = error_frame_verdicts(obs)
    assert note.requirement == "GW-ERROR-FRAME" and note.outcome is Outcome.INFO
    assert "retried 1 failed model call(s) (#0 HTTP 503)" in note.message
    assert_not_applicable([verdict], "GW-ERROR-FRAME", "the run did not fail")


def test_a_call_abandoned_by_the_gateway_is_not_a_failure() -> None:
    obs = worked_example(
        model_calls=(model_call(0, status=503, finish=None, completed=False, closed_early=True),)
    )
    assert_not_applicable(error_frame_verdicts(obs), "GW-ERROR-FRAME", "the run did not fail")


def test_without_a_stream_the_error_checks_are_not_applicable() -> None:
    obs = http_error_twice().model_copy(
        update={
            "response": ChatResponse(status=500, content_type="application/json", end="not-sse")
        }
    )
    assert_not_applicable(error_frame_verdicts(obs), "GW-ERROR-FRAME", "no event stream")
    assert_not_applicable(error_event_verdicts(obs), "GW-ERROR-EVENT", "no event stream")


def test_a_connection_that_breaks_after_done_is_not_a_run_failure() -> None:
    response = ChatResponse(status=200, content_type="text/event-stream", end="error", error="eof")
    assert_not_applicable(error_frame_verdicts(worked_example(response=response)), "GW-ERROR-FRAME")


def test_a_retry_chain_that_keeps_failing_is_a_run_failure() -> None:
    # java-genai retried the 503; past the script the fake answers 500: the run failed.
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    calls = (
        model_call(0, status=503, finish=None, error_sent=OVERLOADED, body=body),
        model_call(1, status=500, finish=None, error_sent={"status": "INTERNAL"}, body=body),
    )
    obs = observation(frames=frames(DONE), model_calls=calls)
    note, verdict = error_frame_verdicts(obs)
    assert note.outcome is Outcome.INFO and "#0 HTTP 503" in note.message
    assert_fails(
        [verdict],
        "GW-ERROR-FRAME",
        "model call #1 answered HTTP 500, but the stream has no error frame (a bare done)",
    )
    _, verdict = error_frame_verdicts(obs.model_copy(update={"frames": frames(error())}))
    assert_passes([verdict], "GW-ERROR-FRAME")


def test_a_budget_stopped_run_that_ends_with_a_bare_done_fails() -> None:
    stopped = budget_stopped(3)
    obs = stopped.model_copy(update={"frames": renumber([*stopped.frames[:-1], *frames(DONE)])})
    assert_fails(
        error_frame_verdicts(obs),
        "GW-ERROR-FRAME",
        "the run stopped after model call #2 asked for lookupOrder: no model call followed",
        "no error frame (a bare done)",
    )


def test_a_budget_stopped_run_that_ends_with_an_error_frame_passes() -> None:
    verdict = assert_passes(error_frame_verdicts(budget_stopped(3)), "GW-ERROR-FRAME")
    assert "the run stopped after model call #2" in verdict.message


def test_when_the_browser_leaves_the_run_end_is_not_judged() -> None:
    left = ChatResponse(status=200, content_type="text/event-stream", end="client-closed")
    obs = error_twice().model_copy(update={"response": left, "frames": frames(delta("Order "))})
    assert_not_applicable(error_frame_verdicts(obs), "GW-ERROR-FRAME", "the browser went away")


def test_a_run_that_ends_after_a_tool_outside_the_contract_is_not_judged_stopped() -> None:
    """A user's long-running or skip_summarization tool may end ADK's run right after its
    answer: only the contract's own tools are known to be followed by another model call."""
    obs = budget_stopped(calls=1).model_copy(update={"service_tools": ()})
    frames_ = (*obs.frames[:-1], obs.frames[-1].model_copy(update={"event": "done", "data": "{}"}))
    verdicts = error_frame_verdicts(obs.model_copy(update={"frames": frames_}))
    assert all(v.outcome is not Outcome.FAIL for v in verdicts), verdicts


def test_java_retries_then_an_exception_without_error_event_is_judged_by_the_error_frame() -> None:
    # ADK Java on defaults: the 503 is retried (the fake repeats it), the last failure reaches
    # the gateway as an exception: no error event, one error frame from onError.
    obs = http_error_retried(4)
    note, verdict = error_frame_verdicts(obs)
    assert note.outcome is Outcome.INFO
    assert "retried 4 failed model call(s) (#0 HTTP 503, #1 HTTP 503" in note.message
    assert_passes([verdict], "GW-ERROR-FRAME")
    assert "model call #4 answered HTTP 503" in verdict.message
    # No event carried an error code: GW-ERROR-EVENT has nothing to judge, never a pass.
    assert_not_applicable(error_event_verdicts(obs), "GW-ERROR-EVENT", "no event")
    # The same run ending with a bare done is still caught.
    bare = obs.model_copy(update={"frames": frames(DONE)})
    _, failed = error_frame_verdicts(bare)
    assert_fails([failed], "GW-ERROR-FRAME", "no error frame (a bare done)")


def test_a_mid_stream_failure_sent_again_is_reported_as_a_retry() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    calls = tuple(
        model_call(i, text="half ", finish=None, error_sent=OVERLOADED, body=body, turn=0)
        for i in range(2)
    )
    obs = observation(frames=frames(error(retryable=True)), model_calls=calls)
    note, verdict = error_frame_verdicts(obs)
    assert "retried 1 failed model call(s) (#0 mid-stream)" in note.message
    assert_passes([verdict], "GW-ERROR-FRAME")


def test_a_new_step_with_another_body_is_not_a_retry() -> None:
    first = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    second = {"contents": [*first["contents"], {"role": "model", "parts": [{"text": "x"}]}]}
    calls = (
        model_call(0, status=503, finish=None, error_sent=OVERLOADED, body=first),
        model_call(1, text="Hello", body=second),
    )
    obs = observation(frames=frames(DONE), model_calls=calls)
    assert_fails(error_frame_verdicts(obs), "GW-ERROR-FRAME", "model call #0 answered HTTP 503")
