"""The ``adk-events`` profile: ADK's raw event JSON (``adk api_server``'s ``POST /run_sse``).

The seed calls ``/run_sse`` "a good reference but ... a development tool" and asks for a typed
protocol instead. What its rules still say about a raw event stream is judged by
:mod:`streamproof.suites.gateway.checks.adk_events` (which says how each reads there); the rules
about the typed frames themselves are not applicable, with the reason. The wire has no request
of its own: a target gives ``chat_body`` (ADK's ``appName``, ``userId``, ``sessionId``,
``newMessage``, ``streaming``).
"""

from __future__ import annotations

from collections.abc import Sequence

from streamproof.suites.gateway.checks import (
    auth_verdicts,
    detach_verdicts,
    dispose_idle_verdicts,
    dispose_verdicts,
    history_isolation_verdicts,
    llm_budget_verdicts,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
    proxy_honoured_verdicts,
    run_bound_verdicts,
    sse_response_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.checks.adk_events import (
    REASON,
    TYPED_FRAME_REQUIREMENTS,
    raw_answer_verdicts,
    raw_error_event_verdicts,
    raw_expectation_verdicts,
    raw_persist_matches_verdicts,
    raw_tool_leak_verdicts,
)
from streamproof.suites.gateway.observation import Frame
from streamproof.suites.gateway.profiles.base import (
    STREAMING,
    Profile,
    ReadAs,
    Rule,
    judged,
    not_on_this_wire,
    on_wire,
)
from streamproof.suites.gateway.profiles.typed_frames import SEED_RULES

__all__ = ["ADK_EVENTS"]

_RAW: dict[str, Rule] = {
    "GW-SSE-RESPONSE": judged(
        "the endpoint answers 200 text/event-stream", on_wire(sse_response_verdicts)
    ),
    "GW-ANSWER-AS-MESSAGE": judged(
        "partials, then one non-partial aggregate whose text is theirs",
        on_wire(raw_answer_verdicts),
    ),
    "GW-TOOL-ONCE": judged("each aggregated call runs its tool once", on_wire(tool_once_verdicts)),
    "GW-NO-TOOL-LEAK": judged(
        "no event carries a function response (a raw stream forwards them: fails when a tool ran)",
        on_wire(raw_tool_leak_verdicts),
    ),
    "GW-LLM-BUDGET": judged("a runaway loop meets a budget", on_wire(llm_budget_verdicts)),
    "GW-ERROR-EVENT": judged(
        "an event with an error code reaches the browser with its errorCode",
        on_wire(raw_error_event_verdicts),
    ),
    "GW-PERSIST-AGGREGATES": judged(
        "the session stores aggregates only", on_wire(persist_aggregates_verdicts)
    ),
    "GW-PERSIST-MATCHES-MESSAGE": judged(
        "the stored text is the aggregate event's text", on_wire(raw_persist_matches_verdicts)
    ),
    "GW-NO-HALF-RECORD": judged(
        "a broken answer's partials are never stored", on_wire(no_half_record_verdicts)
    ),
    "GW-DISPOSE": judged("a closed tab disposes the run", on_wire(dispose_verdicts)),
    "GW-DISPOSE-IDLE": judged(
        "a closed tab is noticed while nothing flows", on_wire(dispose_idle_verdicts)
    ),
    "GW-DETACH-PERSIST-ONCE": judged(
        "a detached run ends and is stored once", on_wire(detach_verdicts)
    ),
    "GW-RUN-BOUND": judged(
        "a run still going at its bound is stopped", on_wire(run_bound_verdicts)
    ),
    "GW-PROXY-HONOURED": judged(
        "on a proxy path every model call goes through HTTPS_PROXY",
        on_wire(proxy_honoured_verdicts),
    ),
    "GW-AUTH": judged("the endpoints need a valid bearer token", on_wire(auth_verdicts)),
    "GW-HISTORY-ISOLATION": judged(
        "one user cannot read another's history", on_wire(history_isolation_verdicts)
    ),
}


def _rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for rid, meaning, _ in SEED_RULES:
        if rid in TYPED_FRAME_REQUIREMENTS:
            rules[rid] = not_on_this_wire(meaning, REASON)
        else:
            rules[rid] = _RAW[rid]
    return rules


def _as_received(frames: Sequence[Frame], read_as: ReadAs = STREAMING) -> tuple[Frame, ...]:
    """A raw event stream has no typed frames to read: the shared checks that run here read
    the events themselves."""
    return tuple(frames)


ADK_EVENTS = Profile(
    name="adk-events",
    title="ADK's raw event JSON, one data-only SSE event per ADK event (adk api_server's /run_sse)",
    rules=_rules(),
    expectations=on_wire(raw_expectation_verdicts),
    seed_frames=_as_received,
)
