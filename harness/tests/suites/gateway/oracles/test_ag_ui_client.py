"""@ag-ui/client (HttpAgent.runAgent in Node) over the hand-written AG-UI streams: each valid one
gets no finding and the messages an application would render, each invalid one exactly the
findings streams.AG_UI records (the client stops at its first error; it goes on after a
warning), and the streams it accepts although they are wrong are recorded there too."""

from __future__ import annotations

import pytest

from harness.tests.conftest import require_oracle
from harness.tests.suites.gateway.oracles.streams import (
    AG_UI,
    CLIENT,
    found,
    oracle_report,
    payloads,
)
from streamproof.suites.gateway.oracles.ag_ui_client import (
    PACKAGE,
    AgUiMessage,
    AgUiToolCall,
    run_ag_ui_client,
)
from streamproof.suites.gateway.oracles.node_script import require_installed

ANSWER = "Order 1042 shipped on 30 September and is due Monday."


@pytest.fixture(autouse=True)
def _installed() -> None:
    require_oracle(PACKAGE, lambda: require_installed(PACKAGE))


@pytest.mark.parametrize("name", list(AG_UI))
def test_findings_are_the_recorded_ones(name: str) -> None:
    report = oracle_report(CLIENT, "ag-ui", name)
    assert found(report) == AG_UI[name][CLIENT], report.findings
    assert report.events == len(payloads("ag-ui", name))


def test_a_valid_run_leaves_the_answer_as_one_message() -> None:
    report = run_ag_ui_client(payloads("ag-ui", "valid-text"))
    assert (report.library, report.version) == ("@ag-ui/client", "1.0.0")
    assert report.messages == (AgUiMessage(id="msg-1", role="assistant", content=ANSWER),)


def test_a_tool_call_leaves_the_call_its_result_and_the_answer() -> None:
    report = run_ag_ui_client(payloads("ag-ui", "valid-tool-call"))
    call, result, answer = report.messages
    assert call.tool_calls == (
        AgUiToolCall(id="call-1", name="lookupOrder", arguments='{"orderId":"1042"}'),
    )
    assert (result.role, result.tool_call_id) == ("tool", "call-1")
    assert "shipped" in (result.content or "")
    assert (answer.id, answer.content) == ("msg-1", ANSWER)


def test_the_client_renders_an_answer_sent_twice_twice() -> None:
    """Why the seed's render-once rule is ours to judge: the client shows both."""
    report = run_ag_ui_client(payloads("ag-ui", "answer-sent-twice"))
    assert [m.content for m in report.messages] == [ANSWER, ANSWER]


def test_the_error_names_the_rule_broken() -> None:
    (finding,) = run_ag_ui_client(payloads("ag-ui", "finished-with-message-open")).findings
    assert "Cannot send 'RUN_FINISHED' while text messages are still active: msg-1" in (
        finding.message
    )


def test_a_schema_error_lists_the_fields() -> None:
    (finding,) = run_ag_ui_client(payloads("ag-ui", "missing-field")).findings
    assert finding.message.startswith("delta: ")


def test_after_a_warning_the_client_goes_on_without_the_event() -> None:
    report = run_ag_ui_client(payloads("ag-ui", "unknown-event-type"))
    assert "TEXT_MESSAGE_DELTA" in report.findings[0].message
    assert [m.content for m in report.messages] == ["on 30 September and "]


def test_no_events_is_no_finding() -> None:
    report = run_ag_ui_client([])
    assert (report.events, report.findings, report.messages) == (0, (), ())
