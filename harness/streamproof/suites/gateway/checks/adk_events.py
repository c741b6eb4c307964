"""The ``adk-events`` profile: judging a gateway that streams ADK's raw event JSON.

ADK's dev server (``adk api_server``, ``POST /run_sse``) and any gateway that forwards events
as they come send one data-only SSE event per ADK event: its JSON as ADK dumps it (``author``,
``content.parts``, ``partial``, ``errorCode``...), no ``event:`` type, no ``id:``. The gateway
seed (``docs/explanation/gateway-rules.md``) calls ``/run_sse`` "a good reference but ... a
development
tool" and asks for "a small, typed protocol instead of raw event JSON". What the seed's rules
still say about such a stream, judged here with the same requirement ids:

* the response is an event stream (GW-SSE-RESPONSE, the typed profile's check);
* each streamed answer arrives as partials and then one aggregate whose text is theirs, up to
  whitespace and chunk boundaries ("Inside SSE mode: chunk, partial, aggregate, persist"),
  under GW-ANSWER-AS-MESSAGE: in a raw stream the non-partial event is the message;
* the session stores aggregates only, the stored text is the aggregate's, no half answer is
  stored (GW-PERSIST-AGGREGATES, GW-PERSIST-MATCHES-MESSAGE, GW-NO-HALF-RECORD);
* a closed tab disposes the run (GW-DISPOSE, GW-DISPOSE-IDLE), tools run once (GW-TOOL-ONCE), a
  runaway loop meets a budget (GW-LLM-BUDGET), an event with an error code reaches the browser
  (GW-ERROR-EVENT: the raw event carries its ``errorCode``);
* tool payloads never reach the browser (GW-NO-TOOL-LEAK). A raw stream forwards every
  function call and function response by design, so this FAILS whenever a tool ran: "Leaking
  tool payloads. Forwarding raw events puts function arguments and responses in the browser",
  the seed's reason for a typed gateway.

Every rule about the typed frames themselves (their types, ids, order, the done or error frame
that ends them, the reducer, the final flag, tool_call frames) is "not applicable" with the
reason :data:`REASON`: a raw stream has no such frames, and that is never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import short, squash
from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.suites.gateway.checks.auth import auth_verdicts, history_isolation_verdicts
from streamproof.suites.gateway.checks.disposal import dispose_idle_verdicts, dispose_verdicts
from streamproof.suites.gateway.checks.errors import ABORTED
from streamproof.suites.gateway.checks.expectations import gateway_expectation_verdicts
from streamproof.suites.gateway.checks.persistence import (
    event_text,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
)
from streamproof.suites.gateway.checks.proxy import proxy_honoured_verdicts
from streamproof.suites.gateway.checks.run_bound import run_bound_verdicts
from streamproof.suites.gateway.checks.stream import no_stream, sse_response_verdicts
from streamproof.suites.gateway.checks.tools import (
    llm_budget_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.observation import Frame, GatewayObservation

__all__ = [
    "ADK_EVENTS_CHECKS",
    "REASON",
    "TYPED_FRAME_REQUIREMENTS",
    "adk_events_verdicts",
    "raw_answer_verdicts",
    "raw_error_event_verdicts",
    "raw_events",
    "raw_persist_matches_verdicts",
    "raw_tool_leak_verdicts",
    "run_error",
]

REASON = "profile adk-events streams raw ADK events"
"""Why a typed-frame requirement is not judged on this profile."""

TYPED_FRAME_REQUIREMENTS: tuple[str, ...] = (
    "GW-FRAME-TYPES",
    "GW-FRAME-ID-COUNTER",
    "GW-FRAME-ID-FRESH",
    "GW-STREAM-TERMINAL",
    "GW-FRAME-SEQUENCE",
    "GW-NO-DOUBLE-RENDER",
    "GW-FINAL-FLAG",
    "GW-TOOL-CALL-FROM-AGGREGATE",
    "GW-ERROR-FRAME",
    "GW-RUN-BOUND-ERROR",
    "GW-STREAMS-PROGRESSIVELY",
)
"""The rules about the seed's typed frames (types, ids, order, terminal and error frames, the
reducer, the final flag, tool_call frames, when the first delta frame arrives): a raw event
stream has none of them. (Progressive delivery of raw partial events is not judged yet.)"""

RawEvent = tuple[Frame, Mapping[str, Any]]


# --- reading a raw stream ----------------------------------------------------------------------


def raw_events(obs: GatewayObservation) -> list[RawEvent]:
    """Each frame whose data is a JSON object, with that object (ADK events and the server's
    run-error line alike)."""
    out: list[RawEvent] = []
    for frame in obs.frames:
        payload = frame.payload()
        if isinstance(payload, dict):
            out.append((frame, payload))
    return out


def run_error(event: Mapping[str, Any]) -> str | None:
    """The message of ``adk api_server``'s run-error line (``{"error": "ServerError: ...",
    "error_details": {...}}``, sent after the events when the run raised), else ``None``."""
    error = event.get("error")
    if "author" not in event and isinstance(error, str | dict):
        return short(str(error), 100)
    return None


def _error_code(event: Mapping[str, Any]) -> str | None:
    code = event.get("errorCode", event.get("error_code"))
    return str(code) if code else None


def _partial(event: Mapping[str, Any]) -> bool:
    return event.get("partial") is True


def _text(event: Mapping[str, Any]) -> str:
    """The event's answer text: its text parts, thoughts left out."""
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if not isinstance(parts, list):
        return ""
    return "".join(
        str(p["text"])
        for p in parts
        if isinstance(p, Mapping) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def _where(frame: Frame, event: Mapping[str, Any]) -> str:
    kind = "partial" if _partial(event) else "event"
    return f"frame #{frame.index} ({kind} by {event.get('author', '?')!r})"


def _failed(events: Sequence[RawEvent]) -> bool:
    """The stream reports an error: an event with an error code or a run-error line."""
    return any(_error_code(e) or run_error(e) for _, e in events)


# --- GW-ANSWER-AS-MESSAGE ----------------------------------------------------------------------


def raw_answer_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Partials, then one aggregate whose text is theirs; every completed model text arrives.

    Seed, "Inside SSE mode": "Each non-empty chunk becomes an LlmResponse marked partial(true).
    When the model stream ends, the aggregator emits one more response with the accumulated
    parts and no partial flag", which "may differ from the concatenated deltas in whitespace or
    chunk boundaries". So per author, the partials since its last aggregate must agree with the
    next aggregate up to whitespace; in a streaming turn an aggregate's text comes after its
    partials; and every text the model completed without an error reaches the browser as an
    aggregate (a NONE-mode turn sends the aggregate alone).
    """
    rid = "GW-ANSWER-AS-MESSAGE"
    rule = (
        "each model text reaches the browser as partials (in a streaming turn) and then one "
        "non-partial aggregate by the same author whose text equals theirs up to whitespace and "
        "chunk boundaries; every text the model completed without an error arrives as one"
    )
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    events = raw_events(obs)
    problems: list[str] = []
    pending: dict[str, list[str]] = {}
    aggregates: list[str] = []
    for frame, event in events:
        if run_error(event) is not None:
            continue
        author = str(event.get("author", "?"))
        text = _text(event)
        if _partial(event):
            if text:
                pending.setdefault(author, []).append(text)
            continue
        if not text:
            continue
        aggregates.append(text)
        streamed = pending.pop(author, [])
        if obs.streaming and not streamed:
            problems.append(
                f"{_where(frame, event)} settles {short(text)} with no partial before it: the "
                "answer was not streamed"
            )
        elif streamed and squash("".join(streamed)) != squash(text):
            problems.append(
                f"{_where(frame, event)} says {short(text)} but its partials said "
                f"{short(''.join(streamed))}"
            )
    ended = obs.response.end == "clean" and obs.disconnected_at is None
    if ended and not _failed(events):
        for author, streamed in pending.items():
            problems.append(
                f"the partials by {author!r} ({short(''.join(streamed))}) were never settled by "
                "an aggregate, though the stream ended cleanly"
            )
    completed = [
        c
        for c in obs.model_calls
        if c.completed
        and c.error_sent is None
        and c.finish_reason_sent in (None, "STOP")
        and squash(c.text_sent)
    ]
    if ended:
        arrived = {squash(t) for t in aggregates}
        for call in completed:
            if squash(call.text_sent) not in arrived:
                problems.append(
                    f"model call #{call.index} completed {short(call.text_sent)} but no "
                    "aggregate event carries that text"
                )
    if not aggregates and not completed and not problems:
        return [
            not_applicable(
                rid,
                "not judged: no answer was completed (no aggregate with text on the stream, and "
                "no model call finished a text)",
            )
        ]
    return [
        from_violations(
            rid,
            problems,
            rule=rule,
            ok=f"{len(aggregates)} aggregate(s), each agreeing with the partials before it",
        )
    ]


# --- GW-NO-TOOL-LEAK ---------------------------------------------------------------------------


def raw_tool_leak_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-NO-TOOL-LEAK as the typed profile judges it, with the reason a raw stream fails it."""
    out: list[Verdict] = []
    for verdict in tool_leak_verdicts(obs):
        if verdict.outcome in (Outcome.FAIL, Outcome.NON_STRICT):
            verdict = verdict.model_copy(
                update={
                    "message": verdict.message
                    + ". A raw ADK event stream forwards every function call and function "
                    "response by design: the seed's reason for a typed gateway that summarises "
                    "tool results."
                }
            )
        out.append(verdict)
    return out


# --- GW-ERROR-EVENT ----------------------------------------------------------------------------


def _error_reasons(obs: GatewayObservation) -> list[str]:
    """Why this run must have produced an event with an error code (empty: it need not)."""
    reasons = [
        f"model call #{c.index} ended with finishReason {c.finish_reason_sent}"
        for c in obs.model_calls
        if c.completed and c.finish_reason_sent not in (None, "STOP")
    ]
    reasons += [
        f"model call #{c.index} failed ({short(str(c.error_sent), 60)})"
        for c in obs.model_calls
        if c.error_sent is not None
    ]
    for i, event in enumerate(obs.history or ()):
        code = _error_code(event)
        if code and code != ABORTED and event.get("partial") is not True:
            reasons.append(f"the session stored event #{i} with errorCode {code}")
    return reasons


def raw_error_event_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """An event with an error code reaches the browser: in a raw stream, the event itself.

    Seed, "Errors that are events": "A model error can arrive as an event with errorCode() set
    while the Flowable completes normally. Check the field". A raw stream passes the event on
    as it is, so the browser can check it; the server's run-error line (``{"error": ...}``)
    counts as well, being what the browser sees of a run that failed.
    """
    rid = "GW-ERROR-EVENT"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if obs.disconnected_at is not None:
        return [not_applicable(rid, "not judged: the browser went away by design")]
    reasons = _error_reasons(obs)
    if not reasons:
        return [not_applicable(rid, "not judged: no event in this run carried an error code")]
    events = raw_events(obs)
    shown = next(
        (
            f"{_where(f, e)} carries errorCode {_error_code(e)}"
            if _error_code(e)
            else f"frame #{f.index} reports the run error {run_error(e)}"
            for f, e in events
            if _error_code(e) or run_error(e)
        ),
        None,
    )
    problems = [] if shown else [f"{reasons[0]}, but no event on the stream carries an error"]
    return [
        from_violations(
            rid,
            problems,
            rule="an ADK event with an error code must reach the browser (a raw stream forwards "
            "the event with its errorCode), even when the run then completes normally",
            ok=f"{shown} ({reasons[0]})",
            expected="an event with errorCode, or the run-error line",
            observed=f"{len(events)} event(s); end {obs.response.end}",
        )
    ]


# --- GW-PERSIST-MATCHES-MESSAGE ----------------------------------------------------------------


def raw_persist_matches_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Each streamed aggregate's text is, exactly, the text of a stored event by its author."""
    rid = "GW-PERSIST-MATCHES-MESSAGE"
    rule = (
        "the text of every aggregate (non-partial) event on the stream must equal, exactly, the "
        "text of a stored event by the same author: the aggregate is the record"
    )
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    shown = [
        (f, e)
        for f, e in raw_events(obs)
        if not _partial(e)
        and run_error(e) is None
        and _text(e)
        and isinstance(e.get("author"), str)
    ]
    if not shown:
        return [not_applicable(rid, "not judged: the stream carried no aggregate with text")]
    if obs.history is None:
        if obs.history_error:
            return [
                from_violations(
                    rid, [f"the history could not be read: {obs.history_error}"], rule=rule, ok=""
                )
            ]
        return [not_applicable(rid, "not judged: the target declares no history endpoint")]
    stored: dict[str, list[str]] = {}
    for event in obs.history:
        author = event.get("author")
        if isinstance(author, str):
            stored.setdefault(author, []).append(event_text(event))
    problems = [
        f"{_where(f, e)} says {short(_text(e))} but no stored event by {e['author']!r} holds "
        "exactly that text"
        for f, e in shown
        if _text(e) not in stored.get(str(e["author"]), [])
    ]
    return [
        from_violations(
            rid, problems, rule=rule, ok=f"{len(shown)} aggregate(s), each stored verbatim"
        )
    ]


# --- the profile's checks ----------------------------------------------------------------------


def typed_frame_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Every typed-frame rule, not applicable on this profile, with :data:`REASON`."""
    return [not_applicable(rid, f"not judged: {REASON}") for rid in TYPED_FRAME_REQUIREMENTS]


def raw_expectation_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """The scenario's own expectations; ``expect.frames`` names typed frames, so it is not
    judged on a raw stream (the history, tool and model expectations are)."""
    out: list[Verdict] = []
    for verdict in gateway_expectation_verdicts(obs):
        if verdict.kind is Kind.EXPECTATION and verdict.requirement == "expect.frames":
            verdict = verdict.model_copy(
                update={
                    "outcome": Outcome.NOT_APPLICABLE,
                    "message": f"not judged: {REASON}",
                    "expected": None,
                    "observed": None,
                }
            )
        out.append(verdict)
    return out


ADK_EVENTS_CHECKS: tuple[Callable[[GatewayObservation], list[Verdict]], ...] = (
    sse_response_verdicts,
    typed_frame_verdicts,
    raw_answer_verdicts,
    tool_once_verdicts,
    raw_tool_leak_verdicts,
    llm_budget_verdicts,
    raw_error_event_verdicts,
    persist_aggregates_verdicts,
    raw_persist_matches_verdicts,
    no_half_record_verdicts,
    dispose_verdicts,
    dispose_idle_verdicts,
    run_bound_verdicts,
    proxy_honoured_verdicts,
    auth_verdicts,
    history_isolation_verdicts,
    raw_expectation_verdicts,
)
"""The ``adk-events`` profile's checks: every requirement gets one verdict, as on the typed
profile."""


def adk_events_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Every gateway verdict for a raw ADK event stream."""
    return [verdict for check in ADK_EVENTS_CHECKS for verdict in check(obs)]
