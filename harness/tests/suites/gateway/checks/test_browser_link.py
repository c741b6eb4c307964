"""Faults on the browser link (the harness's own connection to the gateway) are judged as what
the browser did: a cut is the browser leaving (a closed tab), a stall is a slow browser.

Issue 14: explore could only drip or split that link, because a cut there was judged as the
gateway's own stream breaking and "broke" the correct reference too.
"""

from __future__ import annotations

from typing import Any

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    MARKER,
    delta,
    frames,
    message,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.core.verdicts import Kind, Outcome
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.suites.gateway.checks import WHOLE_STREAM_REQUIREMENTS
from streamproof.suites.gateway.checks.link_faults import (
    browser_link_cut,
    browser_link_history_fault,
    browser_link_stall,
)
from streamproof.suites.gateway.checks.stream import sse_response_verdicts
from streamproof.suites.gateway.drivers.chat import browser_left
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.profiles.registry import check_gateway


def _record(request: int, kind: str, t: float, **extra: Any) -> LinkEvent:
    return LinkEvent(t=t, link="browser", connection=0, request=request, kind=kind, **extra)


def _browser(action: str, t: float = 0.3, *, on_history: bool = False) -> tuple[LinkEvent, ...]:
    """The chat request (0) and the history read (1); ``action`` fires on one of them."""
    hit = 1 if on_history else 0
    return (
        _record(0, "request", 0.0, method="POST", path="/chat/s"),
        _record(0, "response_headers", 0.01, status=200),
        _record(
            hit, "fault", t, detail="after_event 3 -> x", fault=FaultRef(index=0, action=action)
        ),
        _record(1, "request", t + 0.5, method="GET", path="/history/s"),
    )


def _outcomes(obs: GatewayObservation) -> dict[str, Outcome]:
    return {v.requirement: v.outcome for v in check_gateway(obs)}


# Three frames arrived, then the link held or cut the stream: no message, no done.
_CUT_SHORT = frames(tool_call("lookupOrder"), tool_result(1), delta(CHUNKS[0]))


def test_the_cut_and_the_stall_are_found_on_the_chat_request_only() -> None:
    rst = _browser("rst")
    assert browser_link_cut(rst) is rst[2]
    assert browser_link_stall(rst) is None
    stall = _browser("stall")
    assert browser_link_stall(stall) is stall[2] and browser_link_cut(stall) is None
    assert browser_link_cut(_browser("rst", on_history=True)) is None
    assert browser_link_cut(_browser("drip")) is None
    assert browser_link_cut(()) is None


def test_the_runner_records_a_browser_link_cut_as_the_browser_leaving() -> None:
    broke = ChatResponse(status=200, content_type="text/event-stream", end="error", error="reset")
    left, at = browser_left(broke, _browser("rst", t=0.3456))
    assert at == 0.3456
    assert left.end == "client-closed" and left.status == 200
    assert left.error is not None and "rst" in left.error and "reset" in left.error
    untouched, none = browser_left(broke, _browser("split"))
    assert untouched is broke and none is None


def _left_by_link(**overrides: Any) -> GatewayObservation:
    fields: dict[str, Any] = {
        "frames": _CUT_SHORT,
        "response": ChatResponse(
            status=200, content_type="text/event-stream", end="client-closed", error="rst"
        ),
        "disconnected_at": 0.3,
        "link_events": {"browser": _browser("rst")},
    }
    fields.update(overrides)
    return worked_example(**fields)


def test_a_browser_link_cut_leaves_the_streams_end_unjudged_with_its_reason() -> None:
    verdicts = {v.requirement: v for v in check_gateway(_left_by_link())}
    for rid in ("GW-STREAM-TERMINAL", "GW-ERROR-FRAME"):
        assert verdicts[rid].outcome is Outcome.NOT_APPLICABLE, verdicts[rid].render()
        assert "browser link cut the stream (rst" in verdicts[rid].message
    assert verdicts["expect.frames"].outcome is Outcome.NOT_APPLICABLE
    assert verdicts["expect.frames"].kind is Kind.EXPECTATION
    # the gateway's side is judged as usual: the tool ran once, nothing leaked
    assert verdicts["GW-TOOL-ONCE"].outcome is Outcome.PASS
    assert verdicts["GW-NO-TOOL-LEAK"].outcome is Outcome.PASS


def test_a_browser_that_left_before_the_response_began_leaves_the_response_unjudged() -> None:
    before = ChatResponse(status=None, content_type=None, end="client-closed", error="rst")
    (verdict,) = sse_response_verdicts(_left_by_link(response=before, frames=()))
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert "before the response began" in verdict.message
    refused = ChatResponse(status=None, content_type=None, end="refused", error="no listener")
    (verdict,) = sse_response_verdicts(_left_by_link(response=refused, frames=()))
    assert verdict.outcome is Outcome.FAIL


def _stalled(*frame_specs: Any) -> GatewayObservation:
    return worked_example(
        frames=frames(*frame_specs),
        response=ChatResponse(
            status=200,
            content_type="text/event-stream",
            end="timeout",
            error="no end of stream within 14.20s real time",
        ),
        link_events={"browser": _browser("stall")},
    )


def test_a_browser_link_stall_leaves_the_whole_stream_rules_unjudged() -> None:
    outcomes = _outcomes(_stalled(tool_call("lookupOrder"), tool_result(1), delta(CHUNKS[0])))
    for rid in WHOLE_STREAM_REQUIREMENTS:
        assert outcomes[rid] is Outcome.NOT_APPLICABLE, rid
    assert outcomes["expect.frames"] is Outcome.NOT_APPLICABLE
    assert outcomes["GW-DISPOSE"] is Outcome.NOT_APPLICABLE  # the browser stayed
    assert outcomes["GW-TOOL-ONCE"] is Outcome.PASS
    assert outcomes["GW-PERSIST-AGGREGATES"] is Outcome.PASS
    assert outcomes["GW-FRAME-TYPES"] is Outcome.PASS


def test_a_browser_link_stall_still_judges_every_frame_that_arrived() -> None:
    leaked = _stalled(tool_call("lookupOrder"), ("tool_result", {"count": 1, "note": MARKER}))
    assert _outcomes(leaked)["GW-NO-TOOL-LEAK"] is Outcome.FAIL
    untyped = _stalled(tool_call("lookupOrder"), ("message", {"text": ANSWER}))
    assert _outcomes(untyped)["GW-FRAME-TYPES"] is Outcome.FAIL


def test_without_a_browser_link_fault_the_same_short_stream_fails() -> None:
    short = worked_example(
        frames=_CUT_SHORT,
        response=ChatResponse(status=200, content_type="text/event-stream", end="error"),
    )
    outcomes = _outcomes(short)
    assert outcomes["GW-STREAM-TERMINAL"] is Outcome.FAIL
    assert outcomes["expect.frames"] is Outcome.FAIL
    whole = worked_example(frames=frames(*_CUT_SHORT_SPECS, message(ANSWER), ("done", {})))
    assert _outcomes(whole)["GW-STREAM-TERMINAL"] is Outcome.PASS


_CUT_SHORT_SPECS = (tool_call("lookupOrder"), tool_result(1), *(delta(c) for c in CHUNKS))


def test_a_browser_link_fault_on_the_history_read_leaves_the_history_unjudged() -> None:
    events = _browser("rst", on_history=True)
    assert browser_link_history_fault(events) is events[2]
    assert browser_link_history_fault(_browser("rst")) is None  # that one hit the chat
    unread = worked_example(link_events={"browser": events}, history_error="reset by peer")
    verdicts = {v.requirement: v for v in check_gateway(unread)}
    for rid in ("GW-PERSIST-AGGREGATES", "GW-PERSIST-MATCHES-MESSAGE", "expect.history"):
        assert verdicts[rid].outcome is Outcome.NOT_APPLICABLE, verdicts[rid].render()
        assert "hit the history read" in verdicts[rid].message
    assert verdicts["GW-STREAM-TERMINAL"].outcome is Outcome.PASS  # the chat was untouched
    # without the link's fault, a history that cannot be read fails
    broken = worked_example(history_error="reset by peer")
    outcomes = _outcomes(broken)
    assert outcomes["GW-PERSIST-AGGREGATES"] is Outcome.FAIL
    assert outcomes["expect.history"] is Outcome.FAIL


def test_a_run_disposed_before_it_began_owes_no_stored_user_message() -> None:
    """explore: a browser-link reset at the response's start; the reference disposed the run
    before ADK appended the user message, so the session is empty."""
    gone = _left_by_link(frames=(), model_calls=(), tool_calls=(), history=())
    verdicts = {v.requirement: v for v in check_gateway(gone)}
    assert verdicts["GW-PERSIST-AGGREGATES"].outcome is Outcome.NOT_APPLICABLE
    assert "before the run called the model" in verdicts["GW-PERSIST-AGGREGATES"].message
    assert verdicts["expect.history"].outcome is Outcome.NOT_APPLICABLE
    # once the model was called the user message had been stored: losing it still fails
    lost = _left_by_link(history=())
    assert _outcomes(lost)["GW-PERSIST-AGGREGATES"] is Outcome.FAIL
    # and a stored partial chunk fails whenever the browser left
    partial = {**worked_example().history[-1], "partial": True}  # type: ignore[index]
    stored = _left_by_link(history=(*worked_example().history[:-1], partial))  # type: ignore[index]
    assert _outcomes(stored)["GW-PERSIST-AGGREGATES"] is Outcome.FAIL
