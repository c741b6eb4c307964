"""The AG-UI mapping of the reference gateway, event by event (ag_ui.py), its request, and the
wire difference of each AG-UI mutant."""

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
from streamproof.suites.gateway.reference.ag_ui import AgUiMapper, read_request
from streamproof.suites.gateway.reference.stream import BadRequestError, Ending

STARTED = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1", "protocolVersion": "1.0"}
FINISHED = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def mapper(bug: str | None = None) -> AgUiMapper:
    return AgUiMapper("t1", "r1", bug, make_id=ids())


def run(events: list[Any], bug: str | None = None, ending: Ending = Ending.DONE) -> list[Any]:
    """Every AG-UI event of a turn, as the gateway's run loop produces them."""
    m = mapper(bug)
    out = m.started()
    for e in events:
        out += m.event(e)
        if m.ended:
            return out
    return out + m.ending(ending)


def types_of(out: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in out]


TOOL_CALL = [
    {"type": "TOOL_CALL_START", "toolCallId": "adk-1", "toolCallName": "lookupOrder"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "adk-1", "delta": '{"orderId":"1042"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "adk-1"},
]
TOOL_RESULT = {
    "type": "TOOL_CALL_RESULT",
    "messageId": "m1",
    "toolCallId": "adk-1",
    "content": "lookupOrder answered",
    "role": "tool",
}
START = {"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "assistant", "name": "support"}


def content(delta: str, message_id: str = "m2") -> dict[str, str]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta}


END = {"type": "TEXT_MESSAGE_END", "messageId": "m2"}


def test_the_worked_example_streamed() -> None:
    assert run(worked_example()) == [
        STARTED,
        *TOOL_CALL,
        TOOL_RESULT,
        START,
        *(content(chunk) for chunk in ANSWER),
        END,
        FINISHED,
    ]


def test_none_mode_sends_the_aggregate_whole() -> None:
    assert run(worked_example(streamed=False)) == [
        STARTED,
        *TOOL_CALL,
        TOOL_RESULT,
        START,
        content("".join(ANSWER)),
        END,
        FINISHED,
    ]


def test_a_partial_opens_the_message_once_and_streams_each_chunk() -> None:
    m = mapper()
    assert m.event(event(text("Order "), partial=True)) == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant", "name": "support"},
        content("Order ", "m1"),
    ]
    assert m.event(event(text("1042"), partial=True)) == [content("1042", "m1")]


def test_the_aggregate_closes_the_streamed_message_without_its_text() -> None:
    m = mapper()
    m.event(event(text("Order 1042"), partial=True))
    assert m.event(event(text("Order 1042"))) == [{"type": "TEXT_MESSAGE_END", "messageId": "m1"}]


def test_a_function_call_in_a_partial_sends_nothing() -> None:
    assert mapper().event(event(call("adk-preview"), partial=True)) == []


def test_text_with_a_call_is_the_calls_parent_message() -> None:
    m = mapper()
    m.event(event(text("Let me check."), partial=True))
    out = m.event(event(text("Let me check."), call()))
    assert out[0] == {"type": "TEXT_MESSAGE_END", "messageId": "m1"}
    assert out[1] == {**TOOL_CALL[0], "parentMessageId": "m1"}
    assert out[2:] == TOOL_CALL[1:]


def test_a_function_response_is_a_summary_never_the_payload() -> None:
    out = mapper().event(event(response()))
    assert out == [{**TOOL_RESULT, "messageId": "m1"}]
    assert MARKER not in json.dumps(out)


def test_a_response_without_an_id_answers_the_oldest_open_call_of_its_tool() -> None:
    m = mapper()
    m.event(event(call(None)))  # shown as m1
    assert m.event(event(response(None)))[0]["toolCallId"] == "m1"


def test_an_error_event_ends_the_run_with_run_error_and_nothing_after() -> None:
    out = run(mid_stream_error())
    assert types_of(out) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    assert out[-1] == {
        "type": "RUN_ERROR",
        "message": "The model ended with an error: UNAVAILABLE.",
        "code": "UNAVAILABLE",
    }


def test_an_error_code_wins_over_the_aggregates_text() -> None:
    m = mapper()
    out = m.event(event(text("shipped on"), error_code="MAX_TOKENS"))
    assert types_of(out) == ["RUN_ERROR"] and out[0]["code"] == "MAX_TOKENS"
    assert m.ended and m.event(event(text("more"), partial=True)) == []


@pytest.mark.parametrize(
    ("ending", "error"),
    [
        (Ending.FAILED, {"type": "RUN_ERROR", "message": "The run failed; try again."}),
        (
            Ending.TIMED_OUT,
            {
                "type": "RUN_ERROR",
                "message": "The run took too long and was stopped; try again.",
                "code": "TIMEOUT",
            },
        ),
    ],
)
def test_a_failed_run_ends_with_run_error(ending: Ending, error: dict[str, str]) -> None:
    assert run([event(text("Or"), partial=True)], ending=ending)[-1] == error


def test_multi_agent_answers_are_separate_messages_named_by_author() -> None:
    """A transfer: support's text and call, ADK's response, then billing's own answer."""
    to_billing = call("adk-t", "transfer_to_agent")
    events = [
        event(text("Refunds are for billing. "), partial=True),
        event(text("Refunds are for billing. "), to_billing),
        event(response("adk-t", "transfer_to_agent")),
        event(text("Your refund "), partial=True, author="billing"),
        event(text("was issued."), partial=True, author="billing"),
        event(text("Your refund was issued."), author="billing"),
    ]
    out = run(events)
    starts = [e for e in out if e["type"] == "TEXT_MESSAGE_START"]
    assert [(s["messageId"], s["name"]) for s in starts] == [("m1", "support"), ("m3", "billing")]
    ends = [e["messageId"] for e in out if e["type"] == "TEXT_MESSAGE_END"]
    assert ends == ["m1", "m3"]
    assert [e["delta"] for e in out if e.get("messageId") == "m3" and "delta" in e] == [
        "Your refund ",
        "was issued.",
    ]


def test_open_messages_are_kept_per_author() -> None:
    """A sub-agent's partials while the coordinator's message is open go to a message of their
    own; each aggregate closes its author's message."""
    m = mapper()
    m.event(event(text("a"), partial=True))
    out = m.event(event(text("b"), partial=True, author="courier"))
    assert out[0]["messageId"] == "m2" and out[1] == content("b", "m2")
    assert m.event(event(text("b"), author="courier")) == [
        {"type": "TEXT_MESSAGE_END", "messageId": "m2"}
    ]
    assert m.event(event(text("a"))) == [{"type": "TEXT_MESSAGE_END", "messageId": "m1"}]


# --- the mutants' wire differences ------------------------------------------------------------


def test_mutant_agui_tool_call_from_partial() -> None:
    out = run(worked_example(), "agui-tool-call-from-partial")
    starts = [e["toolCallId"] for e in out if e["type"] == "TOOL_CALL_START"]
    assert starts == ["adk-preview", "adk-1"]


def test_mutant_agui_resend_text() -> None:
    out = run(worked_example(), "agui-resend-text")
    deltas = [e["delta"] for e in out if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert deltas == [*ANSWER, "".join(ANSWER)]
    assert types_of(out)[-3:] == ["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]


def test_mutant_agui_open_at_finish() -> None:
    out = run(worked_example(), "agui-open-at-finish")
    assert "TEXT_MESSAGE_END" not in types_of(out)
    assert types_of(out)[-2:] == ["TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]


def test_mutant_agui_finished_on_error() -> None:
    assert run(mid_stream_error(), "agui-finished-on-error")[-1] == FINISHED
    assert run([], "agui-finished-on-error", Ending.FAILED) == [STARTED, FINISHED]


def test_mutant_agui_leak_tool_result() -> None:
    out = mapper("agui-leak-tool-result").event(event(response()))
    assert json.loads(out[0]["content"]) == {"status": "shipped", "secret": MARKER}


def test_mutant_agui_no_run_started() -> None:
    out = run(worked_example(), "agui-no-run-started")
    assert types_of(out)[0] == "TOOL_CALL_START" and "RUN_STARTED" not in types_of(out)
    assert out[-1] == FINISHED


def test_mutant_agui_content_before_start() -> None:
    out = run(worked_example(), "agui-content-before-start")
    assert out[5:7] == [content(ANSWER[0]), START]
    assert out[7:] == [*(content(chunk) for chunk in ANSWER[1:]), END, FINISHED]


def test_mutant_agui_start_twice() -> None:
    out = run(worked_example(), "agui-start-twice")
    assert out[5:8] == [START, START, content(ANSWER[0])]
    assert types_of(out).count("TEXT_MESSAGE_START") == 2  # once more per message, no more


def test_mutant_agui_run_id_changes() -> None:
    out = run(worked_example(), "agui-run-id-changes")
    assert out[0] == STARTED
    assert out[-1]["type"] == "RUN_FINISHED" and out[-1]["threadId"] == "t1"
    assert out[-1]["runId"] not in ("r1", "")


def test_mutant_swallow_error_event() -> None:
    m = mapper("swallow-error-event")
    m.event(event(text("shipped on"), partial=True))
    out = m.event(event(text("shipped on"), error_code="MAX_TOKENS"))
    assert out == [{"type": "TEXT_MESSAGE_END", "messageId": "m1"}] and not m.ended


# --- the request -------------------------------------------------------------------------------


def run_agent_input(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [
            {"id": "u0", "role": "user", "content": "Hello"},
            {"id": "a0", "role": "assistant", "content": "Hi."},
            {"id": "u1", "role": "user", "content": "Where is order 1042?"},
        ],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    return {**body, **overrides}


def test_the_request_names_the_session_and_the_last_user_text() -> None:
    turn = read_request(run_agent_input())
    assert (turn.session_id, turn.run_id, turn.text) == ("t1", "r1", "Where is order 1042?")
    parts = [{"type": "text", "text": "Where is "}, {"type": "text", "text": "1042?"}]
    multimodal = run_agent_input(messages=[{"id": "u", "role": "user", "content": parts}])
    assert read_request(multimodal).text == "Where is 1042?"


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ([], "JSON object"),
        (run_agent_input(threadId=""), "threadId"),
        (run_agent_input(runId=7), "runId"),
        (run_agent_input(messages={}), "messages"),
        (run_agent_input(messages=[{"id": "a", "role": "assistant", "content": "x"}]), "user"),
        (run_agent_input(messages=[{"id": "u", "role": "user", "content": " "}]), "no text"),
    ],
)
def test_a_bad_request_names_what_is_wrong(body: Any, key: str) -> None:
    with pytest.raises(BadRequestError, match=key):
        read_request(body)
