"""Say what you see: one line naming what the chat response was, when it is not what the
target's profile expects; nothing when it is."""

from __future__ import annotations

from harness.tests.suites.gateway.checks.test_adk_events import raw, raw_worked_example
from harness.tests.suites.gateway.observations import (
    ANSWER,
    frame,
    observation,
    text_event,
    worked_example,
)
from streamproof.suites.gateway.checks.diagnosis import diagnose, looks_like_adk_event
from streamproof.suites.gateway.observation import ChatResponse


def test_what_each_profile_expects_gets_no_diagnosis() -> None:
    assert diagnose(worked_example()) is None
    assert diagnose(raw_worked_example()) is None


def test_raw_adk_events_on_a_typed_target_suggest_the_profile() -> None:
    said = diagnose(raw_worked_example(profile="typed-frames"))
    assert said is not None
    assert said.startswith("the stream carries raw ADK event JSON (7 of 7 frames")
    assert "profile: adk-events" in said
    assert "\n" not in said


def test_typed_frames_on_an_adk_events_target_suggest_typed_frames() -> None:
    said = diagnose(worked_example(profile="adk-events"))
    assert said is not None and "profile: typed-frames" in said


def test_untyped_frames_are_named() -> None:
    typed = worked_example()
    untyped = tuple(
        f.model_copy(update={"event": "message", "id_line": False}) for f in typed.frames
    )
    said = diagnose(typed.model_copy(update={"frames": untyped}))
    assert said is not None and said.startswith("no frame names its type")


def test_sse_served_as_json_is_named() -> None:
    response = ChatResponse(
        status=200,
        content_type="application/json",
        end="not-sse",
        body_excerpt='id:1\nevent:delta\ndata:{"author":"support","text":"Hi"}\n\n',
    )
    said = diagnose(observation(response=response))
    assert said is not None
    assert "served as Content-Type 'application/json'" in said
    assert "text/event-stream" in said


def test_a_plain_json_body_is_named_and_adk_events_in_it_suggest_the_profile() -> None:
    plain = ChatResponse(
        status=200, content_type="application/json", end="not-sse", body_excerpt='{"answer": 1}'
    )
    said = diagnose(observation(response=plain))
    assert said is not None and said.startswith("the chat endpoint answered a plain JSON body")
    events = plain.model_copy(update={"body_excerpt": f"[{frame(0, 'm', text_event()).data}]"})
    said = diagnose(observation(response=events))
    assert said is not None and "ADK event JSON" in said and "adk-events" in said


def test_a_refused_request_names_the_status_and_a_failed_session_set_up() -> None:
    refused = ChatResponse(
        status=404, content_type="application/json", end="not-sse", body_excerpt='{"detail":"x"}'
    )
    said = diagnose(observation(response=refused, session_error="POST /s answered 500"))
    assert said is not None
    assert "HTTP 404" in said and "creating the session failed first" in said


def test_no_sse_at_all_is_named() -> None:
    html = ChatResponse(status=200, content_type="text/html", end="not-sse", body_excerpt="<p>")
    said = diagnose(observation(response=html))
    assert said is not None and "no SSE at all" in said


def test_an_adk_event_is_recognised_by_its_keys() -> None:
    assert looks_like_adk_event(text_event(ANSWER))
    assert not looks_like_adk_event({"author": "support", "text": ANSWER})
    assert not looks_like_adk_event([text_event(ANSWER)])
    assert diagnose(raw_worked_example(frames=raw())) is None


def test_a_session_the_gateway_did_not_find_suggests_endpoints_session() -> None:
    missing = ChatResponse(
        status=404,
        content_type="application/json",
        end="not-sse",
        body_excerpt='{"detail":"Session not found: sp-1"}',
    )
    said = diagnose(observation(response=missing, profile="adk-events"))
    assert said is not None and "declare endpoints.session" in said
