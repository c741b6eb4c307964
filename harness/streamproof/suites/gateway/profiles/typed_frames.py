"""The ``typed-frames`` profile: the seed's own wire, optionally under the team's own names.

The seed's controller sends six typed frames (``delta {author, text}``, ``message {author, id?,
text, final}``, ``tool_call {names}``, ``tool_result {count}``, ``error``, ``done``), each with
the gateway's own counter as its SSE id. Every GW- rule was written for this wire, so each is
judged as it stands.

A team that kept the seed's design but chose its own names declares them in the target file
(``frames:``, :class:`~streamproof.suites.gateway.profiles.wire.FrameMapping`): each kind's event
name and where its fields live in the payload. The seed view renames such frames back, so the
same checks judge them; a frame the mapping does not name keeps its name and GW-FRAME-TYPES
reports it. The request is the user's text as the body (or the target's ``chat_body``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamproof.suites.gateway.checks import (
    answer_as_message_verdicts,
    auth_verdicts,
    detach_verdicts,
    dispose_idle_verdicts,
    dispose_verdicts,
    double_render_verdicts,
    error_event_verdicts,
    error_frame_verdicts,
    final_flag_verdicts,
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
    frame_sequence_verdicts,
    frame_type_verdicts,
    gateway_expectation_verdicts,
    history_isolation_verdicts,
    llm_budget_verdicts,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
    proxy_honoured_verdicts,
    run_bound_error_verdicts,
    run_bound_verdicts,
    sse_response_verdicts,
    stream_terminal_verdicts,
    streams_progressively_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.observation import Frame
from streamproof.suites.gateway.profiles.base import (
    STREAMING,
    ChatBody,
    GatewayCheck,
    Profile,
    ReadAs,
    Rule,
    judged,
    on_view,
    on_wire,
    seed_frame,
)
from streamproof.suites.gateway.profiles.wire import field_at, has_field

__all__ = ["SEED_RULES", "TYPED_FRAMES", "WIRE_CHECKED", "mapped_frames"]

UNMAPPED = "unmapped:"
"""Prefix of a seed frame name a mapping moved elsewhere: sent under its old name, it is no
longer that kind (GW-FRAME-TYPES reports it as unknown)."""


SEED_RULES: tuple[tuple[str, str, GatewayCheck], ...] = (
    ("GW-SSE-RESPONSE", "the chat endpoint answers 200 text/event-stream", sse_response_verdicts),
    (
        "GW-FRAME-TYPES",
        "every frame is one of the six types with that type's payload",
        frame_type_verdicts,
    ),
    (
        "GW-FRAME-ID-COUNTER",
        "every frame's SSE id is the gateway's own increasing counter",
        frame_id_counter_verdicts,
    ),
    ("GW-FRAME-ID-FRESH", "each frame gets a fresh id", frame_id_fresh_verdicts),
    (
        "GW-STREAM-TERMINAL",
        "the stream ends with done or error and leaves no draft",
        stream_terminal_verdicts,
    ),
    (
        "GW-FRAME-SEQUENCE",
        "tool_result after its tool_call; a message after its deltas",
        frame_sequence_verdicts,
    ),
    ("GW-NO-DOUBLE-RENDER", "the seed's reducer shows each answer once", double_render_verdicts),
    (
        "GW-STREAMS-PROGRESSIVELY",
        "the first delta arrives before the model's last chunk",
        streams_progressively_verdicts,
    ),
    (
        "GW-ANSWER-AS-MESSAGE",
        "each clean model text ends as one message holding the aggregate",
        answer_as_message_verdicts,
    ),
    ("GW-FINAL-FLAG", "message.final is the event's finalResponse()", final_flag_verdicts),
    (
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "one tool_call per aggregated function-call event",
        tool_call_from_aggregate_verdicts,
    ),
    ("GW-TOOL-ONCE", "each aggregated call runs its tool once", tool_once_verdicts),
    ("GW-NO-TOOL-LEAK", "no frame carries a function response's data", tool_leak_verdicts),
    ("GW-LLM-BUDGET", "a runaway tool loop meets an LLM-call budget", llm_budget_verdicts),
    ("GW-ERROR-EVENT", "an event with an error code becomes an error frame", error_event_verdicts),
    ("GW-ERROR-FRAME", "a failed run ends with an error frame", error_frame_verdicts),
    ("GW-PERSIST-AGGREGATES", "the session stores aggregates only", persist_aggregates_verdicts),
    (
        "GW-PERSIST-MATCHES-MESSAGE",
        "the stored text is the message's text, exactly",
        persist_matches_message_verdicts,
    ),
    (
        "GW-NO-HALF-RECORD",
        "a broken answer's deltas are never stored as the record",
        no_half_record_verdicts,
    ),
    ("GW-DISPOSE", "a closed tab disposes the run by its next send", dispose_verdicts),
    ("GW-DISPOSE-IDLE", "a closed tab is noticed while nothing flows", dispose_idle_verdicts),
    (
        "GW-DETACH-PERSIST-ONCE",
        "a detached run ends within its bound and is stored exactly once",
        detach_verdicts,
    ),
    ("GW-RUN-BOUND", "a run still going at its bound is stopped", run_bound_verdicts),
    (
        "GW-RUN-BOUND-ERROR",
        "a run stopped by its bound ends with an error frame",
        run_bound_error_verdicts,
    ),
    (
        "GW-PROXY-HONOURED",
        "on a proxy path every model call goes through HTTPS_PROXY, trusting its CA",
        proxy_honoured_verdicts,
    ),
    ("GW-AUTH", "chat and history need a valid bearer token", auth_verdicts),
    ("GW-HISTORY-ISOLATION", "one user cannot read another's history", history_isolation_verdicts),
)
"""Every GW- rule on the seed's own wire: its id, what it means here in short, its check."""

WIRE_CHECKED: frozenset[str] = frozenset({"GW-NO-TOOL-LEAK"})
"""Rules judged on the frames as sent, not the seed view: a tool payload is a leak wherever it
is on the wire, whatever the event around it."""

SEED_KINDS: frozenset[str] = frozenset(
    {"delta", "message", "tool_call", "tool_result", "error", "done"}
)


def _rules() -> dict[str, Rule]:
    return {
        rid: judged(meaning, on_wire(check) if rid in WIRE_CHECKED else on_view(check))
        for rid, meaning, check in SEED_RULES
    }


def mapped_frames(frames: Sequence[Frame], read_as: ReadAs = STREAMING) -> tuple[Frame, ...]:
    """The frames as the seed names them: identity without a mapping; with one, each frame
    sent under a mapped name becomes that kind, its payload fields read from where the mapping
    says (a field that is not there is left out, for GW-FRAME-TYPES to report)."""
    mapping = read_as.mapping
    if mapping is None:
        return tuple(frames)
    out: list[Frame] = []
    for frame in frames:
        kind = mapping.kind_of(frame.event)
        if kind is None:
            # A seed name the mapping moved to another event is no longer that kind.
            moved = frame.event in SEED_KINDS
            event = UNMAPPED + frame.event if moved else frame.event
            out.append(frame.model_copy(update={"event": event, "wire": frame.event}))
            continue
        payload = frame.payload()
        if not isinstance(payload, dict):
            out.append(frame.model_copy(update={"event": kind, "wire": frame.event}))
            continue
        fields: dict[str, Any] = {}
        for name, path in mapping.fields(kind).items():
            value = field_at(payload, path)
            if has_field(value):
                fields[name] = value
        out.append(seed_frame(frame, kind, fields, frame.event))
    return tuple(out)


def _text_body(text: str, session_id: str, streaming: bool) -> ChatBody:
    return ChatBody(text.encode("utf-8"), "text/plain; charset=utf-8")


TYPED_FRAMES = Profile(
    name="typed-frames",
    title="the seed's typed SSE frames (delta, message, tool_call, tool_result, error, done), "
    "optionally under the team's own event names and fields",
    rules=_rules(),
    expectations=on_view(gateway_expectation_verdicts),
    seed_frames=mapped_frames,
    request=_text_body,
)
