"""The AI SDK's `ai` package (in Node) over the hand-written UI message streams: each valid one
gets no finding and its UI messages, each invalid one exactly the findings streams.AI_SDK
records (rule and chunk index), and the streams it accepts although they are wrong are recorded
there too."""

from __future__ import annotations

import pytest

from harness.tests.conftest import require_oracle
from harness.tests.suites.gateway.oracles.streams import AI, AI_SDK, found, oracle_report, payloads
from streamproof.suites.gateway.oracles.ai_sdk import PACKAGE, ReportedError, read_ai_sdk_stream
from streamproof.suites.gateway.oracles.node_script import require_installed

ANSWER = "Order 1042 shipped on 30 September and is due Monday."


@pytest.fixture(autouse=True)
def _installed() -> None:
    require_oracle(PACKAGE, lambda: require_installed(PACKAGE))


@pytest.mark.parametrize("name", list(AI_SDK))
def test_findings_are_the_recorded_ones(name: str) -> None:
    report = oracle_report(AI, "ai-sdk", name)
    assert found(report) == AI_SDK[name][AI], report.findings
    assert report.events == len(payloads("ai-sdk", name))


def test_a_valid_stream_reduces_to_the_answer() -> None:
    report = read_ai_sdk_stream(payloads("ai-sdk", "valid-text"))
    assert (report.library, report.version) == ("ai", "7.0.173")
    (message,) = report.messages
    assert (message.id, message.role, message.texts()) == ("msg-1", "assistant", (ANSWER,))
    assert report.reduced_through == 8  # the finish chunk; [DONE] is no chunk


def test_a_tool_call_reduces_to_its_part_and_the_answer() -> None:
    (message,) = read_ai_sdk_stream(payloads("ai-sdk", "valid-tool-call")).messages
    tool = next(p for p in message.parts if p.type == "tool-lookupOrder")
    assert (tool.tool_call_id, tool.state) == ("call-1", "output-available")
    assert message.texts() == (ANSWER,)


def test_an_error_chunk_is_reported_not_a_finding() -> None:
    report = read_ai_sdk_stream(payloads("ai-sdk", "valid-error"))
    assert report.errors_reported == (ReportedError(index=1, text="the model failed"),)


def test_the_reducer_stops_at_the_chunk_it_rejects() -> None:
    report = read_ai_sdk_stream(payloads("ai-sdk", "delta-after-end"))
    assert report.reduced_through == 3
    assert report.messages[0].texts() == ("Order 1042 shipped ",)
    assert 'missing text part with ID "text-1"' in report.findings[0].message


def test_the_transport_stops_at_the_first_chunk_the_schema_rejects() -> None:
    report = read_ai_sdk_stream(payloads("ai-sdk", "unknown-type"))
    assert report.reduced_through == 1
    assert report.findings[0].message == "no chunk type of the UI message stream matches"


def test_a_schema_error_names_the_field() -> None:
    (finding,) = read_ai_sdk_stream(payloads("ai-sdk", "bad-finish-reason")).findings
    assert finding.message.startswith("finishReason: ")


def test_what_the_library_accepts_shows_in_the_messages() -> None:
    """Not flagged, but visible: a part left open stays streaming, content after [DONE] is
    rendered, an answer sent twice shows twice."""
    (open_part,) = read_ai_sdk_stream(payloads("ai-sdk", "finish-with-part-open")).messages
    assert [p.state for p in open_part.parts] == ["streaming"]
    (after_done,) = read_ai_sdk_stream(payloads("ai-sdk", "content-after-done")).messages
    assert after_done.texts() == (ANSWER, "again")
    (twice,) = read_ai_sdk_stream(payloads("ai-sdk", "answer-sent-twice")).messages
    assert twice.texts() == (ANSWER, ANSWER)


def test_no_events_is_no_finding() -> None:
    report = read_ai_sdk_stream([])
    assert (report.events, report.findings, report.reduced_through) == (0, (), None)
