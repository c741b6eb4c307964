"""The reference's frame mapping (frames.py) on the seed's typed-frames wire, on hand-built ADK
events: which frames each event becomes, under the reference's rules and under the mutants that
change the mapping, and how one frame is encoded."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

try:
    from google.adk.events import Event
    from google.genai import types
except ImportError as exc:  # pragma: no cover - the reference needs google-adk
    if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
        raise
    pytest.skip(f"google-adk is not installed: {exc}", allow_module_level=True)

from harness.tests.suites.gateway.reference.events import MARKER
from streamproof.suites.gateway.reference.frames import encode_frame, event_frames

# In the slow tier with the end-to-end tests of the reference it was split from
# (test_server_process.py).
pytestmark = pytest.mark.slow


def _event(*parts: types.Part, **kw: Any) -> Event:
    content = types.Content(role="model", parts=list(parts)) if parts else None
    return Event(author="support", content=content, **kw)


TEXT = types.Part(text="Order 1042 shipped.")


CALL = types.Part(function_call=types.FunctionCall(name="lookupOrder", args={"orderId": "1042"}))


RESPONSE = types.Part(
    function_response=types.FunctionResponse(name="lookupOrder", response={"secret": MARKER})
)


def test_partial_text_is_a_delta() -> None:
    assert event_frames(_event(TEXT, partial=True)) == [
        ("delta", {"author": "support", "text": "Order 1042 shipped."})
    ]


def test_partial_function_call_sends_nothing() -> None:
    assert event_frames(_event(CALL, partial=True)) == []


def test_aggregate_text_is_a_final_message_with_the_event_id() -> None:
    event = _event(TEXT, partial=False)
    assert event_frames(event) == [
        (
            "message",
            {"author": "support", "id": event.id, "text": "Order 1042 shipped.", "final": True},
        )
    ]


def test_function_call_with_text_is_a_non_final_message_then_tool_call() -> None:
    assert event_frames(_event(TEXT, CALL, partial=False)) == [
        ("message", {"author": "support", "text": "Order 1042 shipped.", "final": False}),
        ("tool_call", {"names": ["lookupOrder"]}),
    ]


def test_function_responses_are_summarised_as_a_count() -> None:
    assert event_frames(_event(RESPONSE, RESPONSE)) == [("tool_result", {"count": 2})]


def test_error_code_wins_even_over_text() -> None:
    assert event_frames(_event(TEXT, error_code="MAX_TOKENS", partial=False)) == [
        ("error", {"code": "MAX_TOKENS"})
    ]


def test_empty_event_sends_nothing() -> None:
    assert event_frames(_event()) == []


def test_mutant_branches_of_the_mapping() -> None:
    aggregate = _event(TEXT, partial=False)
    assert event_frames(aggregate, "aggregate-as-delta")[0][0] == "delta"
    assert event_frames(_event(CALL, partial=True), "tool-call-from-partial") == [
        ("tool_call", {"names": ["lookupOrder"]})
    ]
    leaked = event_frames(_event(RESPONSE), "leak-tool-payload")
    assert MARKER in json.dumps(leaked)
    swallowed = event_frames(
        _event(TEXT, error_code="MAX_TOKENS", partial=False), "swallow-error-event"
    )
    assert [f[0] for f in swallowed] == ["message"]


def test_text_frames_name_the_event_author() -> None:
    """A sub-agent's text is shown under its own name; the mutant names the root instead."""
    partial = Event(
        author="billing", content=types.Content(role="model", parts=[TEXT]), partial=True
    )
    aggregate = Event(author="billing", content=types.Content(role="model", parts=[TEXT]))
    assert event_frames(partial)[0][1]["author"] == "billing"
    assert event_frames(aggregate)[0][1]["author"] == "billing"
    for event in (partial, aggregate):
        assert event_frames(event, "author-from-root")[0][1]["author"] == "support"


def test_encode_frame_is_one_sse_event() -> None:
    assert encode_frame("7", "done", {}) == b"id: 7\nevent: done\ndata: {}\n\n"
    line = encode_frame("1", "delta", {"text": "a\nb"}).split(b"\n")[2]
    assert line == b'data: {"text":"a\\nb"}'
