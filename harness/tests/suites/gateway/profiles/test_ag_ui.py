"""The ``ag-ui`` profile: the seed's rules on AG-UI events, and AG-UI's own ordering rules."""

from __future__ import annotations

import json

import pytest

from harness.tests.suites.gateway.observations import ANSWER, CHUNKS, MARKER
from harness.tests.suites.gateway.profiles.wires import (
    FINISHED,
    STARTED,
    THREAD,
    ag,
    agui_answer,
    agui_result,
    agui_tool_call,
    agui_worked_example,
    data_frames,
)
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.profiles.ag_ui import (
    AG_UI,
    agui_request,
    agui_screens,
    agui_seed_frames,
)
from streamproof.suites.gateway.profiles.registry import check_gateway

STEP_STARTED = ag("STEP_STARTED", stepName="answer")
STEP_FINISHED = ag("STEP_FINISHED", stepName="answer")


def outcomes(verdicts: list[Verdict]) -> dict[str, Outcome]:
    return {v.requirement: v.outcome for v in verdicts}


def failed(verdicts: list[Verdict]) -> set[str]:
    return {v.requirement for v in verdicts if v.outcome in (Outcome.FAIL, Outcome.NON_STRICT)}


def test_the_request_is_a_run_agent_input_on_the_session_thread() -> None:
    body = agui_request("Where is order 1042?", "sp-1", True)
    assert body.content_type == "application/json"
    sent = json.loads(body.data)
    assert sent == body.json
    assert sent["threadId"] == "sp-1"
    assert sent["runId"].startswith("run-")
    assert sent["messages"] == [
        {"id": sent["messages"][0]["id"], "role": "user", "content": "Where is order 1042?"}
    ]
    assert agui_request("x", "sp-1", True).json["runId"] != sent["runId"]


def test_the_seed_view_of_the_worked_example_is_the_seeds_own_sequence() -> None:
    view = agui_seed_frames(agui_worked_example().frames)
    assert [f.event for f in view] == [
        "tool_call",
        "tool_result",
        "delta",
        "delta",
        "delta",
        "message",
        "done",
    ]
    assert [f.wire for f in view][:2] == ["TOOL_CALL_START", "TOOL_CALL_RESULT"]
    assert json.loads(view[5].data) == {"author": None, "text": ANSWER}
    assert view[5].index == 9  # the TEXT_MESSAGE_END it was read from


def test_the_worked_example_passes_every_rule_it_exercises() -> None:
    verdicts = check_gateway(agui_worked_example())
    assert not failed(verdicts), [v.render() for v in verdicts if v.requirement in failed(verdicts)]
    got = outcomes(verdicts)
    for rid in (
        "GW-FRAME-TYPES",
        "GW-STREAM-TERMINAL",
        "GW-FRAME-SEQUENCE",
        "GW-NO-DOUBLE-RENDER",
        "GW-ANSWER-AS-MESSAGE",
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "GW-NO-TOOL-LEAK",
        "GW-PERSIST-MATCHES-MESSAGE",
        "AGUI-RUN-STARTED-FIRST",
        "AGUI-EVENTS-PAIRED",
        "AGUI-NO-REOPEN",
        "AGUI-CLOSED-AT-FINISH",
        "AGUI-RUN-IDS",
    ):
        assert got[rid] is Outcome.PASS, rid
    for rid in ("GW-FINAL-FLAG", "GW-FRAME-ID-COUNTER", "GW-FRAME-ID-FRESH"):
        assert got[rid] is Outcome.NOT_APPLICABLE, rid
    assert got["expect.frames"] is Outcome.PASS


def test_every_rule_of_the_profile_gives_a_verdict_once() -> None:
    verdicts = check_gateway(agui_worked_example())
    ids = [v.requirement for v in verdicts if not v.requirement.startswith("expect.")]
    assert ids == list(AG_UI.rules)


@pytest.mark.parametrize(
    ("stream", "broken"),
    [
        pytest.param(  # ag-ui PR #810's bug: the aggregate's text sent again after it streamed
            (
                STARTED,
                *agui_tool_call(),
                agui_result(),
                *agui_answer(chunks=(*CHUNKS, ANSWER)),
                FINISHED,
            ),
            {"GW-NO-DOUBLE-RENDER"},
            id="answer-resent-as-content",
        ),
        pytest.param(  # ag-ui #968: a partial function call shown as a tool call too
            (
                STARTED,
                *agui_tool_call("p-1"),
                *agui_tool_call(),
                agui_result(),
                *agui_answer(),
                FINISHED,
            ),
            {"GW-TOOL-CALL-FROM-AGGREGATE"},
            id="tool-call-from-partial",
        ),
        pytest.param(
            (STARTED, *agui_tool_call(), agui_result(), *agui_answer()[:-1], FINISHED),
            {"AGUI-CLOSED-AT-FINISH"},
            id="message-open-at-finish",
        ),
        pytest.param(
            (
                STARTED,
                *agui_tool_call(),
                agui_result(content=json.dumps({"secret": MARKER})),
                *agui_answer(),
                FINISHED,
            ),
            {"GW-NO-TOOL-LEAK"},
            id="tool-result-forwarded",
        ),
        pytest.param(
            (*agui_tool_call(), agui_result(), *agui_answer(), FINISHED),
            {"AGUI-RUN-STARTED-FIRST"},
            id="no-run-started",
        ),
        pytest.param(
            (STARTED, *agui_tool_call(), agui_result(), *agui_answer()[1:], FINISHED),
            {"AGUI-EVENTS-PAIRED"},
            id="content-before-start",
        ),
        pytest.param(
            (
                STARTED,
                *agui_tool_call(),
                agui_result(),
                agui_answer()[0],
                *agui_answer(),
                FINISHED,
            ),
            {"AGUI-NO-REOPEN"},
            id="message-started-twice",
        ),
        pytest.param(
            (
                STARTED,
                *agui_tool_call(),
                agui_result(),
                *agui_answer(),
                ag("RUN_FINISHED", threadId=THREAD, runId="another-run"),
            ),
            {"AGUI-RUN-IDS"},
            id="run-id-changes",
        ),
        pytest.param(
            (STARTED, *agui_tool_call(), agui_result(), *agui_answer()),
            {"GW-STREAM-TERMINAL"},
            id="no-run-finished",
        ),
        pytest.param(  # both libraries reject it (ag-ui-validate AGUI006, @ag-ui/client verify)
            (STARTED, *agui_tool_call(), agui_result(), *agui_answer(), STEP_FINISHED, FINISHED),
            {"AGUI-EVENTS-PAIRED"},
            id="step-finished-never-started",
        ),
        pytest.param(  # @ag-ui/client's verify rejects it
            (
                STARTED,
                STEP_STARTED,
                STEP_STARTED,
                *agui_tool_call(),
                agui_result(),
                *agui_answer(),
                STEP_FINISHED,
                FINISHED,
            ),
            {"AGUI-NO-REOPEN"},
            id="step-started-twice",
        ),
    ],
)
def test_each_defect_fails_its_own_rule(
    stream: tuple[dict[str, object], ...], broken: set[str]
) -> None:
    verdicts = check_gateway(agui_worked_example(*stream))
    requirement_failures = {r for r in failed(verdicts) if not r.startswith("expect.")}
    assert requirement_failures == broken, [
        v.render() for v in verdicts if v.outcome is Outcome.FAIL
    ]


def test_a_step_started_and_finished_around_the_run_is_paired() -> None:
    stream = (
        STARTED,
        STEP_STARTED,
        *agui_tool_call(),
        agui_result(),
        *agui_answer(),
        STEP_FINISHED,
        FINISHED,
    )
    verdicts = check_gateway(agui_worked_example(*stream))
    assert not failed(verdicts)
    judged = outcomes(verdicts)
    assert judged["AGUI-EVENTS-PAIRED"] is judged["AGUI-NO-REOPEN"] is Outcome.PASS


def test_a_forwarded_tool_result_says_ag_ui_does_it_by_design() -> None:
    stream = (
        STARTED,
        *agui_tool_call(),
        agui_result(content=json.dumps({"secret": MARKER})),
        *agui_answer(),
        FINISHED,
    )
    leak = next(
        v for v in check_gateway(agui_worked_example(*stream)) if v.requirement == "GW-NO-TOOL-LEAK"
    )
    assert leak.outcome is Outcome.FAIL
    assert "TOOL_CALL_RESULT carries the tool's answer by design" in leak.message


def test_nothing_after_run_error() -> None:
    stream = (STARTED, *agui_answer()[:2], ag("RUN_ERROR", message="model failed"), FINISHED)
    view = agui_seed_frames(data_frames(*stream))
    assert [f.event for f in view] == ["delta", "error", "after-RUN_ERROR"]
    terminal = next(
        v
        for v in check_gateway(agui_worked_example(*stream))
        if v.requirement == "GW-STREAM-TERMINAL"
    )
    assert terminal.outcome is Outcome.FAIL


def test_a_message_left_open_at_finish_is_settled_in_the_seed_view() -> None:
    stream = (STARTED, *agui_answer()[:-1], FINISHED)
    view = agui_seed_frames(data_frames(*stream))
    assert [f.event for f in view][-2:] == ["message", "done"]
    assert view[-2].wire is not None and "never ended" in view[-2].wire
    assert view[-2].index == view[-3].index  # settled where it stopped: after its last content


def test_a_named_author_is_kept() -> None:
    stream = (
        STARTED,
        ag("TEXT_MESSAGE_START", messageId="a", role="assistant", name="support"),
        ag("TEXT_MESSAGE_CONTENT", messageId="a", delta="hi"),
        ag("TEXT_MESSAGE_END", messageId="a"),
        FINISHED,
    )
    view = agui_seed_frames(data_frames(*stream))
    assert [json.loads(f.data).get("author") for f in view[:2]] == ["support", "support"]


def test_two_tool_calls_of_one_aggregate_are_one_tool_call() -> None:
    stream = (
        STARTED,
        *agui_tool_call("a"),
        *agui_tool_call("b", "lookupCourier"),
        agui_result("a"),
        agui_result("b"),
        FINISHED,
    )
    view = agui_seed_frames(data_frames(*stream))
    assert [(f.event, json.loads(f.data)) for f in view] == [
        ("tool_call", {"names": ["lookupOrder", "lookupCourier"]}),
        ("tool_result", {"count": 2}),
        ("done", {}),
    ]


def test_chunk_events_read_as_one_message() -> None:
    stream = (
        STARTED,
        ag("TEXT_MESSAGE_CHUNK", messageId="a", delta="Order "),
        ag("TEXT_MESSAGE_CHUNK", delta="1042"),
        FINISHED,
    )
    view = agui_seed_frames(data_frames(*stream))
    assert [(f.event, json.loads(f.data).get("text")) for f in view] == [
        ("delta", "Order "),
        ("delta", "1042"),
        ("message", "Order 1042"),
        ("done", None),
    ]


def test_an_unknown_event_type_fails_frame_types() -> None:
    stream = (
        STARTED,
        ag("THINKING_START"),
        *agui_tool_call(),
        agui_result(),
        *agui_answer(),
        FINISHED,
    )
    verdicts = check_gateway(agui_worked_example(*stream))
    assert failed(verdicts) == {"GW-FRAME-TYPES"}


def test_screens_keep_a_message_per_id_and_a_snapshot_replaces_them() -> None:
    stream = (
        STARTED,
        *agui_answer(),
        ag("MESSAGES_SNAPSHOT", messages=[{"id": "a-1", "role": "assistant", "content": ANSWER}]),
        FINISHED,
    )
    screens = agui_screens(data_frames(*stream))
    assert [d.text for d in screens[2].drafts] == [CHUNKS[0]]
    assert [m.text for m in screens[5].messages] == [ANSWER] and not screens[5].drafts
    assert [m.text for m in screens[6].messages] == [ANSWER]  # replaced, not added
    assert screens[-1].status == "RUN_FINISHED"
    verdicts = check_gateway(
        agui_worked_example(STARTED, *agui_tool_call(), agui_result(), *stream[1:])
    )
    assert "GW-NO-DOUBLE-RENDER" not in failed(verdicts)


def test_an_answer_on_screen_twice_for_one_event_fails_render_once() -> None:
    # The answer settles, then a second message with the same text starts streaming: for the
    # events until it ends the screen holds the answer twice.
    stream = (
        STARTED,
        *agui_tool_call(),
        agui_result(),
        *agui_answer("a-1"),
        *agui_answer("a-2", chunks=(ANSWER,)),
        FINISHED,
    )
    render = next(
        v
        for v in check_gateway(agui_worked_example(*stream))
        if v.requirement == "GW-NO-DOUBLE-RENDER"
    )
    assert render.outcome is Outcome.FAIL
    assert "TEXT_MESSAGE" in render.message
