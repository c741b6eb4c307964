"""Checks on the stream as a whole (harness/streamproof/suites/gateway/checks/stream.py): the
helpers, the response (GW-SSE-RESPONSE), the end (GW-STREAM-TERMINAL)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.tests.suites.gateway.observations import (
    CHUNKS,
    DONE,
    assert_fails,
    assert_passes,
    delta,
    error,
    error_then_done,
    error_twice,
    frames,
    message,
    observation,
    text_with_tool_call,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.core.texts import compress, squash
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.checks.frame_ids import (
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
)
from streamproof.suites.gateway.checks.frames import frame_sequence_verdicts, frame_type_verdicts
from streamproof.suites.gateway.checks.stream import (
    sequence,
    sse_response_verdicts,
    stream_terminal_verdicts,
)
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.scenario import GatewayLimits

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
