"""The known differences (differences.py): each explains its own case, and nothing else that
looks like it."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.oracles.builders import (
    FINISHED,
    STARTED,
    VALID,
    ev,
    finding,
    report,
    stream,
)
from streamproof.suites.gateway.oracles.differences import KNOWN_DIFFERENCES, Side, explain
from streamproof.suites.gateway.oracles.finding import Finding, OracleReport
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.stream import Stream

TRUNCATED = stream(STARTED, ev("TEXT_MESSAGE_START", messageId="m"))
REUSED = stream(
    STARTED,
    ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
    ev("TOOL_CALL_END", toolCallId="c"),
    ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
    ev("TOOL_CALL_ARGS", toolCallId="c", delta="{}"),
    ev("TOOL_CALL_END", toolCallId="c"),
    FINISHED,
)
STEP_TWICE = stream(
    STARTED,
    ev("STEP_STARTED", stepName="s"),
    ev("STEP_STARTED", stepName="s"),
    ev("STEP_FINISHED", stepName="s"),
    FINISHED,
)
UI_TRUNCATED = stream('{"type":"start"}', '{"type":"text-start","id":"t"}', profile="ai-sdk-ui")
UI_DONE = stream('{"type":"start"}', '{"type":"finish"}', profile="ai-sdk-ui")

Case = tuple[Stream, OracleReport, Side, str | None, Finding | None]

CASES: dict[str, Case] = {
    "empty delta": (VALID, report(VALIDATE), "oracle only", None, finding("AGUI105")),
    "id reused after its end": (
        REUSED,
        report(VALIDATE),
        "oracle only",
        "AGUI-NO-REOPEN",
        finding("AGUI205", index=3),
    ),
    "validator lost a reused id": (
        REUSED,
        report(VALIDATE),
        "oracle only",
        "AGUI-EVENTS-PAIRED",
        finding("AGUI201", index=4),
    ),
    "browser left": (
        stream(STARTED, end="client-closed"),
        report(VALIDATE),
        "oracle only",
        "GW-STREAM-TERMINAL",
        finding("AGUI003", index=None),
    ),
    "validator counts a step started twice": (
        STEP_TWICE,
        report(VALIDATE),
        "oracle only",
        "AGUI-CLOSED-AT-FINISH",
        finding("AGUI007", index=5),
    ),
    "validator lets a step start twice": (
        STEP_TWICE,
        report(VALIDATE),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "client has no end-of-stream check": (
        TRUNCATED,
        report(CLIENT),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "client takes a result for an unknown call": (
        stream(STARTED, ev("TOOL_CALL_RESULT", toolCallId="c", messageId="t", content="x")),
        report(CLIENT),
        "ours only",
        "GW-FRAME-SEQUENCE",
        None,
    ),
    "client compares no run ids": (VALID, report(CLIENT), "ours only", "AGUI-RUN-IDS", None),
    "validator not given the request": (
        stream(STARTED, FINISHED, request_thread="other"),
        report(VALIDATE),
        "ours only",
        "AGUI-RUN-IDS",
        None,
    ),
    "client strips an unknown key": (
        VALID,
        report(CLIENT),
        "oracle only",
        None,
        finding(
            "enforce", kind="warning", message="[ag-ui][enforce] Removed unrecognised material"
        ),
    ),
    "not given the connection": (
        stream(STARTED, FINISHED, end="error"),
        report(CLIENT),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "client stops at its first error": (
        VALID,
        report(CLIENT, finding("AGUIError", index=0)),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "ai stops at its first error": (
        UI_DONE,
        report(AI, finding("AI_TypeValidationError", index=0, kind="schema")),
        "ours only",
        "AISDK-PART-ENDED",
        None,
    ),
    "ai requires no [DONE]": (UI_DONE, report(AI), "ours only", "AISDK-DONE", None),
    "ai checks nothing at finish": (UI_DONE, report(AI), "ours only", "AISDK-PART-ENDED", None),
    "ai is not given the headers": (
        UI_DONE,
        report(AI),
        "ours only",
        "AISDK-STREAM-HEADER",
        None,
    ),
    "ai has no end-of-stream check": (
        UI_TRUNCATED,
        report(AI),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
}


def test_every_known_difference_has_its_case() -> None:
    assert set(CASES) == {k.name for k in KNOWN_DIFFERENCES}


@pytest.mark.parametrize("name", list(CASES))
def test_a_known_difference_explains_its_case(name: str) -> None:
    known = explain(*CASES[name])
    assert known is not None and known.name == name


@pytest.mark.parametrize("library", [VALIDATE, CLIENT, AI])
def test_no_library_is_given_the_connection(library: str) -> None:
    broke = stream(STARTED, FINISHED, '{"type":"finish"}', end="timeout")
    known = explain(broke, report(library), "ours only", "GW-STREAM-TERMINAL")
    assert known is not None and known.name == "not given the connection"


NOT_EXPLAINED: dict[str, Case] = {
    # the client does reject a stream that ends, in order, with a RUN_FINISHED it refused
    "a terminated stream the client accepts": (
        VALID,
        report(CLIENT),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "an id started twice while open": (
        stream(
            STARTED,
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
        ),
        report(VALIDATE),
        "oracle only",
        "AGUI-NO-REOPEN",
        finding("AGUI205", index=2),
    ),
    "a stream the browser did not leave": (
        TRUNCATED,
        report(VALIDATE),
        "oracle only",
        "GW-STREAM-TERMINAL",
        finding("AGUI003", index=None),
    ),
    "the run ids changing within the stream": (
        stream(STARTED, ev("RUN_FINISHED", threadId="t", runId="other")),
        report(VALIDATE),
        "ours only",
        "AGUI-RUN-IDS",
        None,
    ),
    "a client that read the whole stream": (
        VALID,
        report(CLIENT, finding("AGUIError", index=1)),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "a step started again after its end": (
        stream(
            STARTED,
            ev("STEP_STARTED", stepName="s"),
            ev("STEP_FINISHED", stepName="s"),
            ev("STEP_STARTED", stepName="s"),
            FINISHED,
        ),
        report(VALIDATE),
        "oracle only",
        "AGUI-CLOSED-AT-FINISH",
        finding("AGUI007", index=4),
    ),
    "a result for a call that was started": (
        stream(
            STARTED,
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
            ev("TOOL_CALL_END", toolCallId="c"),
            ev("TOOL_CALL_RESULT", toolCallId="c", messageId="t", content="x"),
        ),
        report(CLIENT),
        "ours only",
        "GW-FRAME-SEQUENCE",
        None,
    ),
    "a connection broken before the terminal event": (
        stream(STARTED, end="error"),
        report(VALIDATE),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "another library's difference": (UI_DONE, report(CLIENT), "ours only", "AISDK-DONE", None),
    "a finished UI stream": (UI_DONE, report(AI), "ours only", "GW-STREAM-TERMINAL", None),
}


@pytest.mark.parametrize("name", list(NOT_EXPLAINED))
def test_a_known_difference_explains_nothing_else(name: str) -> None:
    assert explain(*NOT_EXPLAINED[name]) is None
