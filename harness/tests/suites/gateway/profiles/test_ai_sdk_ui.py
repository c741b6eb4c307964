"""The ``ai-sdk-ui`` profile: the seed's rules on the AI SDK UI message stream, and its own."""

from __future__ import annotations

import json

import pytest

from harness.tests.suites.gateway.observations import ANSWER, CHUNKS, MARKER
from harness.tests.suites.gateway.profiles.wires import (
    data_frames,
    ui,
    ui_answer,
    ui_tool_call,
    ui_worked_example,
)
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.observation import ChatResponse
from streamproof.suites.gateway.profiles.ai_sdk_ui import AI_SDK_UI, ui_request, ui_seed_frames
from streamproof.suites.gateway.profiles.registry import check_gateway


def failed(verdicts: list[Verdict]) -> set[str]:
    return {
        v.requirement
        for v in verdicts
        if v.outcome in (Outcome.FAIL, Outcome.NON_STRICT)
        and not v.requirement.startswith("expect.")
    }


START = ui("start", messageId="m-2")


def test_the_request_is_use_chats() -> None:
    body = ui_request("Where is order 1042?", "sp-1", True)
    sent = json.loads(body.data)
    assert sent["id"] == "sp-1"
    assert sent["trigger"] == "submit-message"
    assert sent["messages"][0]["role"] == "user"
    assert sent["messages"][0]["parts"] == [{"type": "text", "text": "Where is order 1042?"}]


def test_the_seed_view_of_the_worked_example() -> None:
    view = ui_seed_frames(ui_worked_example().frames)
    assert [f.event for f in view] == [
        "tool_call",
        "tool_result",
        "delta",
        "delta",
        "delta",
        "message",
        "done",
    ]
    assert json.loads(view[5].data) == {"author": None, "text": ANSWER}


def test_the_worked_example_passes() -> None:
    verdicts = check_gateway(ui_worked_example())
    assert not failed(verdicts), [v.render() for v in verdicts if v.outcome is Outcome.FAIL]
    got = {v.requirement: v.outcome for v in verdicts}
    for rid in ("AISDK-STREAM-HEADER", "AISDK-PART-STARTED", "AISDK-PART-ENDED", "AISDK-DONE"):
        assert got[rid] is Outcome.PASS, rid
    assert got["GW-ANSWER-AS-MESSAGE"] is Outcome.PASS
    assert got["GW-FINAL-FLAG"] is Outcome.NOT_APPLICABLE
    ids = [v.requirement for v in verdicts if not v.requirement.startswith("expect.")]
    assert ids == list(AI_SDK_UI.rules)


TOOL = ui_tool_call()
END = (ui("finish"), "[DONE]")


@pytest.mark.parametrize(
    ("stream", "broken"),
    [
        pytest.param(
            (START, *ui_tool_call("p-1"), *TOOL, *ui_answer(), *END),
            {"GW-TOOL-CALL-FROM-AGGREGATE"},
            id="tool-call-from-partial",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer(chunks=(*CHUNKS, ANSWER)), *END),
            {"GW-NO-DOUBLE-RENDER"},
            id="answer-resent",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer()[:-1], *END),
            {"AISDK-PART-ENDED"},
            id="part-open-at-finish",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer(), ui("finish")),
            {"AISDK-DONE"},
            id="no-done",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer(), *END, ui("finish")),
            {"AISDK-DONE"},
            id="chunk-after-done",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer()[1:], *END),
            {"AISDK-PART-STARTED"},
            id="delta-before-start",
        ),
        pytest.param(
            (START, *ui_tool_call(output={"secret": MARKER}), *ui_answer(), *END),
            {"GW-NO-TOOL-LEAK"},
            id="tool-output-forwarded",
        ),
        pytest.param(
            (START, *TOOL, *ui_answer(), ui("finish", finishReason="done"), "[DONE]"),
            {"GW-FRAME-TYPES"},
            id="bad-finish-reason",
        ),
    ],
)
def test_each_defect_fails_its_own_rule(stream: tuple[object, ...], broken: set[str]) -> None:
    verdicts = check_gateway(ui_worked_example(*stream))  # type: ignore[arg-type]
    assert failed(verdicts) == broken, [v.render() for v in verdicts if v.outcome is Outcome.FAIL]


def test_the_stream_header_is_required() -> None:
    plain = ChatResponse(status=200, content_type="text/event-stream", end="clean")
    verdicts = check_gateway(ui_worked_example(response=plain))
    assert failed(verdicts) == {"AISDK-STREAM-HEADER"}


def test_an_error_chunk_is_the_seeds_error() -> None:
    stream = (
        START,
        ui("text-start", id="t"),
        ui("text-delta", id="t", delta="Or"),
        ui("error", errorText="boom"),
        "[DONE]",
    )
    view = ui_seed_frames(data_frames(*stream))
    assert [f.event for f in view] == ["delta", "error"]
