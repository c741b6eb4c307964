"""Checks on an AG-UI event stream itself: the events' shapes and the protocol's ordering rules.

AG-UI (the Agent-User Interaction protocol, 1.0) sends one JSON object per data-only SSE event,
typed by its ``type`` field (``RUN_STARTED``, ``TEXT_MESSAGE_START`` ...). Its client checks the
order of what it receives (``@ag-ui/client``'s verify middleware): the run starts with
``RUN_STARTED``; each text message and tool call goes START, CONTENT/ARGS, END under one id, and
each step STEP_STARTED, STEP_FINISHED under one name; a second START for an id (or step) that is
open is rejected, and so is ``RUN_FINISHED`` while a message, a tool call or a step is open.
Those rules are requirements of their own (``AGUI-``, judged on every ``ag-ui`` target); how
the seed's rules read on this wire is :mod:`streamproof.suites.gateway.profiles.ag_ui`'s business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import compress, short
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.stream import no_frames, no_stream
from streamproof.suites.gateway.observation import Frame, GatewayObservation

__all__ = [
    "EVENT_FIELDS",
    "AgUiEvent",
    "agui_closed_at_finish_verdicts",
    "agui_event_types_verdicts",
    "agui_events",
    "agui_events_paired_verdicts",
    "agui_no_reopen_verdicts",
    "agui_run_ids_verdicts",
    "agui_run_started_first_verdicts",
    "agui_sequence",
]

EVENT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "RUN_STARTED": ("threadId", "runId"),
    "RUN_FINISHED": ("threadId", "runId"),
    "RUN_ERROR": ("message",),
    "STEP_STARTED": ("stepName",),
    "STEP_FINISHED": ("stepName",),
    "TEXT_MESSAGE_START": ("messageId",),
    "TEXT_MESSAGE_CONTENT": ("messageId", "delta"),
    "TEXT_MESSAGE_END": ("messageId",),
    "TEXT_MESSAGE_CHUNK": (),
    "TOOL_CALL_START": ("toolCallId", "toolCallName"),
    "TOOL_CALL_ARGS": ("toolCallId", "delta"),
    "TOOL_CALL_END": ("toolCallId",),
    "TOOL_CALL_CHUNK": (),
    "TOOL_CALL_RESULT": ("messageId", "toolCallId"),
    "STATE_SNAPSHOT": (),
    "STATE_DELTA": (),
    "MESSAGES_SNAPSHOT": (),
    "ACTIVITY_SNAPSHOT": ("messageId", "activityType"),
    "ACTIVITY_DELTA": ("messageId", "activityType"),
    "RAW": (),
    "CUSTOM": ("name",),
    "REASONING_START": ("messageId",),
    "REASONING_MESSAGE_START": ("messageId",),
    "REASONING_MESSAGE_CONTENT": ("messageId", "delta"),
    "REASONING_MESSAGE_END": ("messageId",),
    "REASONING_MESSAGE_CHUNK": (),
    "REASONING_END": ("messageId",),
    "REASONING_ENCRYPTED_VALUE": ("entityId", "encryptedValue"),
    "SUBAGENT_STARTED": ("subagentRunId", "name"),
    "SUBAGENT_FINISHED": ("subagentRunId",),
    "SUBAGENT_ERROR": ("subagentRunId", "message"),
}
"""Every AG-UI 1.0 event type and the fields it requires as strings (``ag-ui-protocol``'s
event models; ``EventType`` lists the types)."""

_OTHER_REQUIRED: Final[Mapping[str, tuple[str, type | tuple[type, ...]]]] = {
    "STATE_SNAPSHOT": ("snapshot", object),
    "STATE_DELTA": ("delta", list),
    "MESSAGES_SNAPSHOT": ("messages", list),
    "RAW": ("event", object),
    "CUSTOM": ("value", object),
    "TOOL_CALL_RESULT": ("content", (str, list)),
}
"""Required fields that are not strings, with the JSON type they must have."""

OPENS: Final[Mapping[str, str]] = {
    "TEXT_MESSAGE_START": "message",
    "TOOL_CALL_START": "tool call",
    "REASONING_MESSAGE_START": "reasoning message",
}
CONTINUES: Final[Mapping[str, str]] = {
    "TEXT_MESSAGE_CONTENT": "message",
    "TOOL_CALL_ARGS": "tool call",
    "REASONING_MESSAGE_CONTENT": "reasoning message",
}
CLOSES: Final[Mapping[str, str]] = {
    "TEXT_MESSAGE_END": "message",
    "TOOL_CALL_END": "tool call",
    "REASONING_MESSAGE_END": "reasoning message",
}
_ID_FIELD: Final[Mapping[str, str]] = {
    "message": "messageId",
    "tool call": "toolCallId",
    "reasoning message": "messageId",
}


@dataclass(frozen=True)
class AgUiEvent:
    """One frame read as an AG-UI event: its ``type`` and its JSON (``None``: not an object)."""

    frame: Frame
    payload: Mapping[str, Any] | None

    @property
    def type(self) -> str | None:
        t = self.payload.get("type") if self.payload is not None else None
        return t if isinstance(t, str) else None

    def get(self, key: str) -> Any:
        return self.payload.get(key) if self.payload is not None else None

    def label(self) -> str:
        return f"event #{self.frame.index} ({self.type or 'untyped'})"


def agui_events(frames: Sequence[Frame]) -> list[AgUiEvent]:
    """Each frame as an AG-UI event."""
    out: list[AgUiEvent] = []
    for frame in frames:
        payload = frame.payload()
        out.append(AgUiEvent(frame, payload if isinstance(payload, dict) else None))
    return out


def agui_sequence(events: Sequence[AgUiEvent]) -> str:
    return compress([e.type or "?" for e in events]) or "(no events)"


# --- GW-FRAME-TYPES, as it reads on AG-UI ------------------------------------------------------


def _shape_problem(event: AgUiEvent) -> str | None:
    if event.payload is None:
        return f"event #{event.frame.index} is not a JSON object: {short(event.frame.data)}"
    kind = event.type
    if kind is None:
        return f"event #{event.frame.index} has no string 'type': {short(event.frame.data)}"
    if kind not in EVENT_FIELDS:
        return f"{event.label()} is not an AG-UI 1.0 event type"
    wrong = [
        f"{f!r} is not a string" for f in EVENT_FIELDS[kind] if not isinstance(event.get(f), str)
    ]
    other = _OTHER_REQUIRED.get(kind)
    if other is not None:
        name, types = other
        if event.payload.get(name, _ABSENT) is _ABSENT:
            wrong.append(f"{name!r} is missing")
        elif not isinstance(event.payload[name], types):
            wrong.append(f"{name!r} has the wrong JSON type")
    if wrong:
        return f"{event.label()} {short(event.frame.data, 80)}: {', '.join(wrong)}"
    return None


_ABSENT: Final = object()


def agui_event_types_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-FRAME-TYPES on AG-UI: every event is typed (the seed's "Frames are typed by event
    kind"), here by a known AG-UI ``type`` with the fields that type requires."""
    rid = "GW-FRAME-TYPES"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    events = agui_events(obs.frames)
    problems = [p for e in events if (p := _shape_problem(e)) is not None]
    return [
        from_violations(
            rid,
            problems,
            rule="every event is a JSON object whose 'type' is an AG-UI 1.0 event type, with the "
            "fields that type requires (TEXT_MESSAGE_CONTENT: messageId and delta strings, ...)",
            ok=f"{len(events)} event(s), each a known AG-UI event with its fields",
            observed=agui_sequence(events),
        )
    ]


# --- the protocol's own rules ------------------------------------------------------------------


def agui_run_started_first_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AGUI-RUN-STARTED-FIRST"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    first = agui_events(obs.frames)[0]
    problems = (
        []
        if first.type in ("RUN_STARTED", "RUN_ERROR")
        else [f"the first event is {first.label()}, not RUN_STARTED"]
    )
    return [
        from_violations(
            rid,
            problems,
            rule="an AG-UI stream begins with RUN_STARTED (or RUN_ERROR)",
            ok="the stream begins with " + (first.type or "?"),
        )
    ]


@dataclass(frozen=True)
class _Lifecycle:
    paired: list[str]
    reopened: list[str]
    open_at_finish: list[str]
    finishes: int


def _lifecycle(events: Sequence[AgUiEvent]) -> _Lifecycle:
    """One pass over the stream, tracking what is open per id (and steps by name)."""
    open_ids: dict[tuple[str, str], AgUiEvent] = {}
    steps: dict[str, AgUiEvent] = {}
    paired: list[str] = []
    reopened: list[str] = []
    at_finish: list[str] = []
    finishes = 0
    for event in events:
        kind = event.type
        if kind is None:
            continue
        what = OPENS.get(kind) or CONTINUES.get(kind) or CLOSES.get(kind)
        if what is not None:
            ident = event.get(_ID_FIELD[what])
            if not isinstance(ident, str):
                continue  # GW-FRAME-TYPES reports it
            key = (what, ident)
            if kind in OPENS:
                if key in open_ids:
                    reopened.append(
                        f"{event.label()} starts {what} {ident!r} again while it is open (since "
                        f"{open_ids[key].label()})"
                    )
                open_ids[key] = event
            elif key not in open_ids:
                verb = "continues" if kind in CONTINUES else "ends"
                paired.append(f"{event.label()} {verb} {what} {ident!r}, which is not open")
            elif kind in CLOSES:
                del open_ids[key]
        elif kind == "STEP_STARTED" and isinstance(name := event.get("stepName"), str):
            if name in steps:
                reopened.append(
                    f"{event.label()} starts step {name!r} again while it is open (since "
                    f"{steps[name].label()})"
                )
            steps[name] = event
        elif kind == "STEP_FINISHED" and isinstance(name := event.get("stepName"), str):
            if steps.pop(name, None) is None:
                paired.append(f"{event.label()} finishes step {name!r}, which is not open")
        elif kind == "RUN_FINISHED":
            finishes += 1
            left = [f"{what} {ident!r}" for (what, ident) in open_ids]
            left += [f"step {name!r}" for name in steps]
            if left:
                at_finish.append(f"{event.label()} comes while {', '.join(left)} is still open")
            open_ids.clear()
            steps.clear()
    return _Lifecycle(paired, reopened, at_finish, finishes)


def agui_events_paired_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AGUI-EVENTS-PAIRED"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    events = agui_events(obs.frames)
    if not any(
        e.type in CONTINUES or e.type in CLOSES or e.type == "STEP_FINISHED" for e in events
    ):
        return [
            not_applicable(
                rid, "not judged: no message or tool call content and no step in this stream"
            )
        ]
    return [
        from_violations(
            rid,
            _lifecycle(events).paired,
            rule="TEXT_MESSAGE_CONTENT/END name an open message, TOOL_CALL_ARGS/END an open tool "
            "call (START first, under the same id), STEP_FINISHED an open step",
            ok="every CONTENT, ARGS and END names an open message or tool call, every "
            "STEP_FINISHED an open step",
            observed=agui_sequence(events),
        )
    ]


def agui_no_reopen_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AGUI-NO-REOPEN"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    events = agui_events(obs.frames)
    if not any(e.type in OPENS or e.type == "STEP_STARTED" for e in events):
        return [not_applicable(rid, "not judged: no message, tool call or step was started")]
    return [
        from_violations(
            rid,
            _lifecycle(events).reopened,
            rule="no TEXT_MESSAGE_START or TOOL_CALL_START for an id that is already open, no "
            "STEP_STARTED for a step that is",
            ok="no message, tool call or step was started twice while open",
            observed=agui_sequence(events),
        )
    ]


def agui_closed_at_finish_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AGUI-CLOSED-AT-FINISH"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    life = _lifecycle(agui_events(obs.frames))
    if not life.finishes:
        return [not_applicable(rid, "not judged: the stream carried no RUN_FINISHED")]
    return [
        from_violations(
            rid,
            life.open_at_finish,
            rule="RUN_FINISHED comes with every message, tool call and step closed",
            ok="nothing was left open at RUN_FINISHED",
        )
    ]


def agui_run_ids_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AGUI-RUN-IDS"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    events = agui_events(obs.frames)
    started = next((e for e in events if e.type == "RUN_STARTED"), None)
    if started is None:
        return [not_applicable(rid, "not judged: the stream carried no RUN_STARTED")]
    problems: list[str] = []
    body = obs.request_body if isinstance(obs.request_body, dict) else {}
    thread = body.get("threadId")
    if isinstance(thread, str) and started.get("threadId") != thread:
        problems.append(
            f"{started.label()} names thread {started.get('threadId')!r}, but the request's "
            f"threadId is {thread!r}"
        )
    for event in events:
        if event.type != "RUN_FINISHED":
            continue
        for key in ("threadId", "runId"):
            if event.get(key) != started.get(key):
                problems.append(
                    f"{event.label()} names {key} {event.get(key)!r}, but RUN_STARTED named "
                    f"{started.get(key)!r}"
                )
    return [
        from_violations(
            rid,
            problems,
            rule="RUN_STARTED names the request's threadId, and RUN_FINISHED the threadId and "
            "runId of its RUN_STARTED",
            ok=f"the run's ids are stable (thread {started.get('threadId')!r}, run "
            f"{started.get('runId')!r})",
        )
    ]
