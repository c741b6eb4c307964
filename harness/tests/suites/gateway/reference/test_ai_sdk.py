"""The AI SDK UI message stream mapping of the reference gateway, event by event (ai_sdk.py),
its request, and the wire difference of each AI SDK mutant. Every chunk's keys are those of
the ``ai`` package's chunk schema (``ui-message-chunks.ts``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("google.adk")

from harness.tests.suites.gateway.reference.events import (
    ANSWER,
    MARKER,
    call,
    event,
    ids,
    mid_stream_error,
    response,
    text,
    worked_example,
)
from streamproof.suites.gateway.reference.ai_sdk import AiSdkMapper, read_request
from streamproof.suites.gateway.reference.stream import BadRequestError, Ending

# The keys each chunk type may carry (ai 7.0.173, src/ui-message-stream/ui-message-chunks.ts),
# restricted to those the reference uses: required ones first.
SCHEMA_KEYS: dict[str, tuple[set[str], set[str]]] = {
    "start": (set(), {"messageId", "messageMetadata"}),
    "text-start": ({"id"}, {"providerMetadata"}),
    "text-delta": ({"id", "delta"}, {"providerMetadata"}),
    "text-end": ({"id"}, {"citations", "providerMetadata"}),
    "tool-input-start": ({"toolCallId", "toolName"}, {"providerExecuted", "dynamic", "title"}),
    "tool-input-available": (
        {"toolCallId", "toolName", "input"},
        {"providerExecuted", "dynamic", "title"},
    ),
    "tool-output-available": ({"toolCallId", "output"}, {"providerExecuted", "preliminary"}),
    "error": ({"errorText"}, set()),
    "finish": (set(), {"finishReason", "messageMetadata"}),
}
FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"}


def mapper(bug: str | None = None) -> AiSdkMapper:
    return AiSdkMapper(bug, make_id=ids())


def run(events: list[Any], bug: str | None = None, ending: Ending = Ending.DONE) -> list[Any]:
    """Every chunk of a turn (``[DONE]`` included), as the gateway's run loop produces them."""
    m = mapper(bug)
    out: list[Any] = m.started()
    for e in events:
        out += m.event(e)
        if m.ended:
            return out + m.closing()
    return out + m.ending(ending) + m.closing()


def types_of(out: list[Any]) -> list[str]:
    return [c if isinstance(c, str) else c["type"] for c in out]


def check_schema(out: list[Any]) -> None:
    for chunk in out:
        if chunk == "[DONE]":
            continue
        required, optional = SCHEMA_KEYS[chunk["type"]]
        keys = set(chunk) - {"type"}
        assert required <= keys <= required | optional, chunk
    finishes = [c for c in out if isinstance(c, dict) and c["type"] == "finish"]
    assert all(c.get("finishReason", "stop") in FINISH_REASONS for c in finishes)


TOOL = [
    {"type": "tool-input-start", "toolCallId": "adk-1", "toolName": "lookupOrder"},
    {
        "type": "tool-input-available",
        "toolCallId": "adk-1",
        "toolName": "lookupOrder",
        "input": {"orderId": "1042"},
    },
    {"type": "tool-output-available", "toolCallId": "adk-1", "output": "lookupOrder answered"},
]


def test_the_worked_example_streamed() -> None:
    out = run(worked_example())
    assert out == [
        {"type": "start", "messageId": "m1"},
        *TOOL,
        {"type": "text-start", "id": "m2"},
        *({"type": "text-delta", "id": "m2", "delta": chunk} for chunk in ANSWER),
        {"type": "text-end", "id": "m2"},
        {"type": "finish", "finishReason": "stop"},
        "[DONE]",
    ]
    check_schema(out)


def test_none_mode_sends_the_aggregate_whole() -> None:
    out = run(worked_example(streamed=False))
    assert types_of(out) == [
        "start",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "text-start",
        "text-delta",
        "text-end",
        "finish",
        "[DONE]",
    ]
    assert out[5]["delta"] == "".join(ANSWER)
    check_schema(out)


def test_a_function_call_in_a_partial_sends_nothing() -> None:
    assert mapper().event(event(call("adk-preview"), partial=True)) == []


def test_a_function_response_is_a_summary_never_the_payload() -> None:
    out = mapper().event(event(response()))
    assert out == [TOOL[2]] and MARKER not in json.dumps(out)


def test_an_error_event_ends_the_stream_with_error_then_done() -> None:
    out = run(mid_stream_error())
    assert types_of(out) == ["start", "text-start", "text-delta", "error", "[DONE]"]
    assert out[3] == {"type": "error", "errorText": "The model ended with an error: UNAVAILABLE."}
    check_schema(out)


@pytest.mark.parametrize(
    ("ending", "error_text"),
    [
        (Ending.FAILED, "The run failed; try again."),
        (Ending.TIMED_OUT, "The run took too long and was stopped; try again."),
    ],
)
def test_a_failed_run_ends_with_error_then_done(ending: Ending, error_text: str) -> None:
    out = run([], ending=ending)
    assert out[-2:] == [{"type": "error", "errorText": error_text}, "[DONE]"]


def test_multi_agent_answers_are_separate_text_parts() -> None:
    events = [
        event(text("Let me ask. "), partial=True),
        event(text("Let me ask. "), call("adk-c", "courier")),
        event(text("Parcel "), partial=True, author="courier"),
        event(text("Parcel is out."), author="courier"),
        event(response("adk-c", "courier")),
        event(text("Due today."), partial=True),
        event(text("Due today.")),
    ]
    out = run(events)
    starts = [c["id"] for c in out if isinstance(c, dict) and c["type"] == "text-start"]
    ends = [c["id"] for c in out if isinstance(c, dict) and c["type"] == "text-end"]
    assert starts == ends == ["m2", "m3", "m4"]
    check_schema(out)


# --- the mutants' wire differences ------------------------------------------------------------


def test_mutant_aisdk_tool_call_from_partial() -> None:
    out = run(worked_example(), "aisdk-tool-call-from-partial")
    starts = [c for c in out if isinstance(c, dict) and c["type"] == "tool-input-start"]
    assert [c["toolCallId"] for c in starts] == ["adk-preview", "adk-1"]


def test_mutant_aisdk_resend_text() -> None:
    out = run(worked_example(), "aisdk-resend-text")
    deltas = [c["delta"] for c in out if isinstance(c, dict) and c["type"] == "text-delta"]
    assert deltas == [*ANSWER, "".join(ANSWER)]


def test_mutant_aisdk_open_at_finish() -> None:
    out = run(worked_example(), "aisdk-open-at-finish")
    assert "text-end" not in types_of(out) and types_of(out)[-2:] == ["finish", "[DONE]"]


def test_mutant_aisdk_finish_on_error() -> None:
    assert types_of(run(mid_stream_error(), "aisdk-finish-on-error"))[-2:] == ["finish", "[DONE]"]
    assert "error" not in types_of(run([], "aisdk-finish-on-error", Ending.FAILED))


def test_mutant_aisdk_no_done() -> None:
    assert types_of(run(worked_example(), "aisdk-no-done"))[-1] == "finish"
    assert types_of(run(mid_stream_error(), "aisdk-no-done"))[-1] == "error"


def test_mutant_aisdk_delta_before_start() -> None:
    out = run(worked_example(), "aisdk-delta-before-start")
    assert types_of(out)[4:6] == ["text-delta", "text-start"]


def test_mutant_swallow_error_event() -> None:
    m = mapper("swallow-error-event")
    m.event(event(text("shipped on"), partial=True))
    out = m.event(event(text("shipped on"), error_code="MAX_TOKENS"))
    assert out == [{"type": "text-end", "id": "m1"}] and not m.ended


# --- the request -------------------------------------------------------------------------------


def chat_request(**overrides: Any) -> dict[str, Any]:
    parts = [{"type": "text", "text": "Where is order 1042?"}]
    body = {
        "id": "s1",
        "messages": [{"id": "u1", "role": "user", "parts": parts}],
        "trigger": "submit-message",
    }
    return {**body, **overrides}


def test_the_request_names_the_session_and_the_last_user_text() -> None:
    turn = read_request(chat_request())
    assert (turn.session_id, turn.text, turn.run_id) == ("s1", "Where is order 1042?", "")


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("hi", "JSON object"),
        (chat_request(id=None), "id"),
        (chat_request(messages=None), "messages"),
        (chat_request(messages=[{"id": "a", "role": "assistant", "parts": []}]), "user"),
        (chat_request(messages=[{"id": "u", "role": "user", "content": "x"}]), "parts"),
        (chat_request(messages=[{"id": "u", "role": "user", "parts": [{"type": "file"}]}]), "text"),
    ],
)
def test_a_bad_request_names_what_is_wrong(body: Any, key: str) -> None:
    with pytest.raises(BadRequestError, match=key):
        read_request(body)
