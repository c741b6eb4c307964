"""The ``ag-ui`` profile: AG-UI events, as ``ag-ui-adk`` and other AG-UI servers stream them.

The request is an AG-UI ``RunAgentInput`` (``threadId``: the scenario's session, a fresh
``runId``, one user message), POSTed as JSON. The answer is data-only SSE, one JSON event per
frame, typed by ``type``.

How the seed's rules read here (the seed view, :func:`agui_seed_frames`): a
``TEXT_MESSAGE_CONTENT`` is a ``delta`` (in a streaming turn: a NONE-mode turn's text is the
seed's lone ``message``); ``TEXT_MESSAGE_END`` settles the message, a ``message``
whose text is everything its CONTENT events said (AG-UI has no separate aggregate: the closed
message is what the user keeps); the ``TOOL_CALL_START``\\ s of one block of tool calls are one
``tool_call`` naming them (one aggregated function-call event); the ``TOOL_CALL_RESULT``\\ s after
it one ``tool_result``; ``RUN_ERROR`` is ``error`` and ``RUN_FINISHED`` is ``done``. A message
still open at ``RUN_FINISHED`` is settled where it stopped, after its last content
(AGUI-CLOSED-AT-FINISH reports the protocol breach once), and a START for a message already
open keeps its text (AGUI-NO-REOPEN reports it); whatever follows ``RUN_ERROR`` is not one of
the seed's frames (the protocol ends the run there). AG-UI messages name no author unless
``TEXT_MESSAGE_START`` carries ``name``: without it the seed view's author is unknown
(``null``), and the checks take any agent.

What differs from the seed's own wire, said in the verdicts: AG-UI has no ``final`` flag and no
SSE ids; ``TOOL_CALL_RESULT`` carries the tool's answer by design, which the seed forbids
(GW-NO-TOOL-LEAK is judged anyway); and since the message is built from its deltas, the stored
aggregate is compared with it up to whitespace (the seed allows the two to differ there).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streamproof.suites.gateway.checks import (
    answer_as_message_verdicts,
    error_event_verdicts,
    error_frame_verdicts,
    frame_sequence_verdicts,
    gateway_expectation_verdicts,
    run_bound_error_verdicts,
    stream_terminal_verdicts,
    streams_progressively_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
)
from streamproof.suites.gateway.checks.ag_ui import (
    agui_closed_at_finish_verdicts,
    agui_event_types_verdicts,
    agui_events,
    agui_events_paired_verdicts,
    agui_no_reopen_verdicts,
    agui_run_ids_verdicts,
    agui_run_started_first_verdicts,
)
from streamproof.suites.gateway.checks.rendering import screens_render_once
from streamproof.suites.gateway.checks.screen import Screen
from streamproof.suites.gateway.checks.stream import label
from streamproof.suites.gateway.observation import Frame
from streamproof.suites.gateway.profiles.base import (
    STREAMING,
    ChatBody,
    Profile,
    ReadAs,
    Rule,
    by_design,
    judged,
    not_on_this_wire,
    on_view,
    on_wire,
    seed_frame,
)
from streamproof.suites.gateway.profiles.data_only import Texts, wire_rules

__all__ = ["AFTER_RUN_ERROR", "AG_UI", "agui_request", "agui_screens", "agui_seed_frames"]

AFTER_RUN_ERROR = "after-RUN_ERROR"
"""The seed view's name for an event sent after ``RUN_ERROR``: the run had ended there."""


def agui_request(text: str, session_id: str, streaming: bool) -> ChatBody:
    """A ``RunAgentInput`` with the session as its thread and one user message."""
    body = {
        "threadId": session_id,
        "runId": f"run-{uuid.uuid4().hex}",
        "messages": [{"id": f"msg-{uuid.uuid4().hex[:16]}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    return ChatBody(json.dumps(body).encode("utf-8"), "application/json", body)


@dataclass
class _Open:
    author: str | None
    text: str = ""


def _left_open(frames: Sequence[Frame]) -> dict[str, int]:
    """Each message still open at the stream's first ``RUN_FINISHED``, with the index of the
    last frame that added to it: the seed view settles it there, where it stopped, so a message
    the gateway forgot to end is one answer in its place, not one glued to what came after."""
    last: dict[str, int] = {}
    for event in agui_events(frames):
        ident = event.get("messageId")
        if event.type == "TEXT_MESSAGE_CONTENT" and isinstance(ident, str):
            last[ident] = event.frame.index
        elif event.type == "TEXT_MESSAGE_END" and isinstance(ident, str):
            last.pop(ident, None)
        elif event.type == "RUN_FINISHED":
            return last
        elif event.type == "RUN_ERROR":
            return {}
    return {}


def agui_seed_frames(frames: Sequence[Frame], read_as: ReadAs = STREAMING) -> tuple[Frame, ...]:
    """The AG-UI stream read as the seed's typed frames (the module docstring says how)."""
    left_open = _left_open(frames)
    out: list[Frame] = []
    messages: dict[str, _Open] = {}
    chunked: str | None = None  # the message TEXT_MESSAGE_CHUNK events are filling
    tool_group: int | None = None  # the seed frame naming the current block of tool calls
    result_group: int | None = None
    errored = False

    def settle(source: Frame, ident: str, wire: str) -> None:
        message = messages.pop(ident, None)
        if message is not None:
            payload = {"author": message.author, "text": message.text}
            out.append(seed_frame(source, "message", payload, wire))

    for event in agui_events(frames):
        frame, kind = event.frame, event.type
        if errored:
            out.append(seed_frame(frame, AFTER_RUN_ERROR, {}, kind or "untyped"))
            continue
        if kind is None:
            continue  # not an AG-UI event: GW-FRAME-TYPES reports it
        if chunked is not None and kind != "TEXT_MESSAGE_CHUNK":
            settle(frame, chunked, f"{kind} (closing a chunked message)")
            chunked = None
        if kind not in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK"):
            tool_group = None
        if kind != "TOOL_CALL_RESULT":
            result_group = None
        ident = event.get("messageId")
        if kind == "TEXT_MESSAGE_START" and isinstance(ident, str):
            name = event.get("name") if isinstance(event.get("name"), str) else None
            # A message already open (AGUI-NO-REOPEN's) or already holding content
            # (AGUI-EVENTS-PAIRED's) goes on as it was, author and text.
            messages.setdefault(ident, _Open(name))
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"):
            if kind == "TEXT_MESSAGE_CHUNK":
                if isinstance(ident, str) and ident != chunked:
                    if chunked is not None:
                        settle(frame, chunked, kind)
                    chunked = ident
                    name = event.get("name")
                    messages.setdefault(ident, _Open(name if isinstance(name, str) else None))
                ident = chunked
            delta = event.get("delta")
            if isinstance(ident, str) and isinstance(delta, str) and delta:
                message = messages.setdefault(ident, _Open(None))
                message.text += delta
                if read_as.streaming:  # a NONE-mode answer is the lone message at its END
                    said = {"author": message.author, "text": delta}
                    out.append(seed_frame(frame, "delta", said, kind))
        elif kind == "TEXT_MESSAGE_END" and isinstance(ident, str):
            settle(frame, ident, kind)
        if isinstance(ident, str) and left_open.get(ident) == frame.index:
            settle(frame, ident, f"{kind} (the last of a message never ended)")
        elif kind in ("TOOL_CALL_START", "TOOL_CALL_CHUNK"):
            name = event.get("toolCallName")
            if not isinstance(name, str):
                continue  # a chunk that continues a call, or a malformed start
            if tool_group is None:
                tool_group = len(out)
                out.append(seed_frame(frame, "tool_call", {"names": [name]}, kind))
            else:  # one more call of the same aggregated event: its first START names them all
                names = [*json.loads(out[tool_group].data)["names"], name]
                out[tool_group] = _with(out[tool_group], {"names": names})
        elif kind == "TOOL_CALL_RESULT":
            if result_group is None:
                result_group = len(out)
                out.append(seed_frame(frame, "tool_result", {"count": 1}, kind))
            else:
                count = json.loads(out[result_group].data)["count"] + 1
                out[result_group] = _with(out[result_group], {"count": count})
        elif kind == "RUN_ERROR":
            code = event.get("code")
            payload: dict[str, Any] = {"code": str(code)} if code else {}
            out.append(seed_frame(frame, "error", payload, kind))
            errored = True
        elif kind == "RUN_FINISHED":
            out.append(seed_frame(frame, "done", {}, kind))
    return tuple(out)


def agui_screens(frames: Sequence[Frame]) -> tuple[Screen, ...]:
    """What an AG-UI client shows after each event (``@ag-ui/client``'s message reduction): a
    message per ``messageId``, its content appended as it comes (a draft until its
    ``TEXT_MESSAGE_END``), ``MESSAGES_SNAPSHOT`` replacing the assistant messages with the
    snapshot's, a run's end as the status."""
    screens: list[Screen] = []
    texts = Texts()
    status: str | None = None
    for event in agui_events(frames):
        frame, kind, ident = event.frame, event.type, event.get("messageId")
        opening = kind in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK")
        if opening and isinstance(ident, str):
            name = event.get("name")
            texts.open(ident, name if isinstance(name, str) else None, frame.index)
            delta = event.get("delta")
            if kind != "TEXT_MESSAGE_START" and isinstance(delta, str) and delta:
                texts.append(ident, delta, frame.index)
        elif kind == "TEXT_MESSAGE_END" and isinstance(ident, str):
            texts.settle(ident)
        elif kind == "MESSAGES_SNAPSHOT" and isinstance(event.get("messages"), list):
            texts.replace(_snapshot(event.get("messages")), frame.index)
        elif kind in ("RUN_FINISHED", "RUN_ERROR"):
            status = kind
        elif kind == "TOOL_CALL_START":
            status = f"Calling {event.get('toolCallName')}"
        screens.append(texts.screen(frame.index, frame.t, label(_named(frame, kind)), status))
    return tuple(screens)


def _snapshot(messages: list[Any]) -> list[tuple[str, str | None, str]]:
    """The assistant messages of a ``MESSAGES_SNAPSHOT``: (id, name, content)."""
    out: list[tuple[str, str | None, str]] = []
    for i, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "assistant":
            name, content = m.get("name"), m.get("content")
            out.append(
                (
                    str(m.get("id", f"snapshot-{i}")),
                    name if isinstance(name, str) else None,
                    content if isinstance(content, str) else "",
                )
            )
    return out


def _named(frame: Frame, kind: str | None) -> Frame:
    return frame.model_copy(update={"event": kind}) if kind else frame


def _with(frame: Frame, payload: dict[str, Any]) -> Frame:
    return frame.model_copy(update={"data": json.dumps(payload, separators=(",", ":"))})


_TOOL_RESULT_BY_DESIGN = (
    "AG-UI's TOOL_CALL_RESULT carries the tool's answer by design; the seed forbids forwarding "
    "it ('Leaking tool payloads'), so the rule is judged anyway: send a summary as its content"
)

_OWN: dict[str, Rule] = {
    "GW-FRAME-TYPES": judged(
        "every event is a known AG-UI event type with its required fields",
        on_wire(agui_event_types_verdicts),
    ),
    "GW-STREAM-TERMINAL": judged(
        "RUN_FINISHED or RUN_ERROR is the last event, nothing follows it",
        on_view(stream_terminal_verdicts),
    ),
    "GW-FRAME-SEQUENCE": judged(
        "TOOL_CALL_RESULT after its TOOL_CALL_START; a message ends after its content",
        on_view(frame_sequence_verdicts),
    ),
    "GW-NO-DOUBLE-RENDER": judged(
        "the client's messages (content appended per messageId, MESSAGES_SNAPSHOT replacing) "
        "show each answer once on every screen",
        lambda reading: screens_render_once(
            reading.obs,
            agui_screens(reading.obs.frames),
            "replaying the AG-UI client's message reduction (content appended per messageId, "
            "MESSAGES_SNAPSHOT replacing) every answer must show once on every screen",
        ),
    ),
    "GW-STREAMS-PROGRESSIVELY": judged(
        "the first TEXT_MESSAGE_CONTENT arrives before the model's last chunk",
        on_view(streams_progressively_verdicts),
    ),
    "GW-ANSWER-AS-MESSAGE": judged(
        "each clean model text ends as one closed message (START ... END) holding the aggregate",
        on_view(answer_as_message_verdicts),
    ),
    "GW-FINAL-FLAG": not_on_this_wire(
        "(no final flag)",
        "AG-UI messages carry no final flag: a client tells an answer from the text before a "
        "tool call by the TOOL_CALL_START that follows it",
    ),
    "GW-TOOL-CALL-FROM-AGGREGATE": judged(
        "one block of TOOL_CALL_STARTs per aggregated function-call event, none for a partial",
        on_view(tool_call_from_aggregate_verdicts),
    ),
    "GW-NO-TOOL-LEAK": judged(
        "no event carries a function response's data (TOOL_CALL_RESULT content included)",
        by_design(on_wire(tool_leak_verdicts), _TOOL_RESULT_BY_DESIGN),
    ),
    "GW-ERROR-EVENT": judged(
        "an event with an error code becomes RUN_ERROR", on_view(error_event_verdicts)
    ),
    "GW-ERROR-FRAME": judged("a failed run ends with RUN_ERROR", on_view(error_frame_verdicts)),
    "GW-RUN-BOUND-ERROR": judged(
        "a run stopped by its bound ends with RUN_ERROR", on_view(run_bound_error_verdicts)
    ),
}


def _rules() -> dict[str, Rule]:
    return wire_rules(
        _OWN,
        {
            "AGUI-RUN-STARTED-FIRST": judged(
                "the stream begins with RUN_STARTED", on_wire(agui_run_started_first_verdicts)
            ),
            "AGUI-EVENTS-PAIRED": judged(
                "CONTENT/ARGS/END only for an open id, STEP_FINISHED for an open step",
                on_wire(agui_events_paired_verdicts),
            ),
            "AGUI-NO-REOPEN": judged(
                "no second START for an open id or step", on_wire(agui_no_reopen_verdicts)
            ),
            "AGUI-CLOSED-AT-FINISH": judged(
                "nothing open at RUN_FINISHED", on_wire(agui_closed_at_finish_verdicts)
            ),
            "AGUI-RUN-IDS": judged("the run's ids are stable", on_wire(agui_run_ids_verdicts)),
        },
    )


AG_UI = Profile(
    name="ag-ui",
    title="AG-UI events (RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, RUN_FINISHED/RUN_ERROR) as "
    "data-only SSE, answering a RunAgentInput",
    rules=_rules(),
    expectations=on_view(gateway_expectation_verdicts),
    seed_frames=agui_seed_frames,
    request=agui_request,
    typed_by="type",
)
