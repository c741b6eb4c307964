"""The ``ai-sdk-ui`` profile: the Vercel AI SDK UI message stream (protocol v1), as a Python
backend in front of an agent serves it to ``useChat``.

The request is ``useChat``'s default transport body: ``{"id": <chat id>, "messages": [{"id",
"role": "user", "parts": [{"type": "text", "text"}]}], "trigger": "submit-message"}``, the chat
id being the scenario's session. The answer is data-only SSE, one JSON chunk per event, then
``data: [DONE]``.

How the seed's rules read here (the seed view, :func:`ui_seed_frames`): a ``text-delta`` is a
``delta``; ``text-end`` settles the text part, a ``message`` whose text is everything its deltas
said (in a NONE-mode turn the part is the seed's lone ``message``, no delta); the tool-input
chunks of one block of tool calls are one ``tool_call`` naming them (a
``tool-input-start``, or ``tool-input-available`` for a call with no start); the tool outputs
after it one ``tool_result``; ``error`` is ``error`` and ``finish`` is ``done``. A text part still
open at ``finish`` is settled where it stopped, after its last delta (AISDK-PART-ENDED reports
it once), and ``data: [DONE]`` ends the view (AISDK-DONE reports anything after it). The stream
names no author: the seed view's author is unknown (``null``), and the checks take any agent.

What differs from the seed's own wire, said in the verdicts: no ``final`` flag and no SSE ids;
``tool-output-available`` carries the tool's output by design, which the seed forbids
(GW-NO-TOOL-LEAK is judged anyway); and the message is built from its deltas, so the stored
aggregate is compared with it up to whitespace.
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
from streamproof.suites.gateway.checks.ai_sdk_ui import (
    aisdk_chunk_types_verdicts,
    aisdk_done_verdicts,
    aisdk_part_ended_verdicts,
    aisdk_part_started_verdicts,
    aisdk_stream_header_verdicts,
    ui_chunks,
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

__all__ = ["AI_SDK_UI", "ui_request", "ui_screens", "ui_seed_frames"]

_TOOL_CHUNKS = frozenset({"tool-input-start", "tool-input-delta", "tool-input-available"})
_OUTPUT_CHUNKS = frozenset({"tool-output-available", "tool-output-error", "tool-output-denied"})


def ui_request(text: str, session_id: str, streaming: bool) -> ChatBody:
    """``useChat``'s request: the session as the chat id, one user message."""
    body = {
        "id": session_id,
        "messages": [
            {
                "id": f"msg-{uuid.uuid4().hex[:16]}",
                "role": "user",
                "parts": [{"type": "text", "text": text}],
            }
        ],
        "trigger": "submit-message",
    }
    return ChatBody(json.dumps(body).encode("utf-8"), "application/json", body)


@dataclass
class _Part:
    text: str = ""


def _with(frame: Frame, payload: dict[str, Any]) -> Frame:
    return frame.model_copy(update={"data": json.dumps(payload, separators=(",", ":"))})


def _left_open(frames: Sequence[Frame]) -> dict[str, int]:
    """Each text part still open at the stream's first ``finish``, with the index of its last
    delta: the seed view settles it there, where it stopped."""
    last: dict[str, int] = {}
    for chunk in ui_chunks(frames):
        ident = chunk.get("id")
        if chunk.type == "text-delta" and isinstance(ident, str):
            last[ident] = chunk.frame.index
        elif chunk.type == "text-end" and isinstance(ident, str):
            last.pop(ident, None)
        elif chunk.type == "finish":
            return last
        elif chunk.done:
            break
    return {}


def ui_seed_frames(frames: Sequence[Frame], read_as: ReadAs = STREAMING) -> tuple[Frame, ...]:
    """The UI message stream read as the seed's typed frames (the module docstring says how)."""
    left_open = _left_open(frames)
    out: list[Frame] = []
    parts: dict[str, _Part] = {}
    started: set[str] = set()  # tool calls whose input started
    tool_group: int | None = None
    result_group: int | None = None

    def settle(source: Frame, ident: str, wire: str) -> None:
        part = parts.pop(ident, None)
        if part is not None:
            out.append(seed_frame(source, "message", {"author": None, "text": part.text}, wire))

    for chunk in ui_chunks(frames):
        frame, kind = chunk.frame, chunk.type
        if chunk.done:
            break  # the stream's end: what follows is AISDK-DONE's to report
        if kind is None:
            continue
        if kind not in _TOOL_CHUNKS:
            tool_group = None
        if kind not in _OUTPUT_CHUNKS:
            result_group = None
        ident = chunk.get("id")
        if kind == "text-start" and isinstance(ident, str):
            parts.setdefault(ident, _Part())  # started again: the text goes on
        elif kind == "text-delta" and isinstance(ident, str):
            delta = chunk.get("delta")
            if isinstance(delta, str) and delta:
                parts.setdefault(ident, _Part()).text += delta
                if read_as.streaming:  # a NONE-mode answer is the lone message at its end
                    out.append(seed_frame(frame, "delta", {"author": None, "text": delta}, kind))
        elif kind == "text-end" and isinstance(ident, str):
            settle(frame, ident, kind)
        if isinstance(ident, str) and left_open.get(ident) == frame.index:
            settle(frame, ident, f"{kind} (the last of a part never ended)")
        elif kind in ("tool-input-start", "tool-input-available"):
            call, name = chunk.get("toolCallId"), chunk.get("toolName")
            if not isinstance(call, str) or not isinstance(name, str):
                continue
            if kind == "tool-input-available" and call in started:
                continue  # the input of a call already shown
            started.add(call)
            if tool_group is None:
                tool_group = len(out)
                out.append(seed_frame(frame, "tool_call", {"names": [name]}, kind))
            else:
                names = [*json.loads(out[tool_group].data)["names"], name]
                out[tool_group] = _with(out[tool_group], {"names": names})
        elif kind in _OUTPUT_CHUNKS:
            if result_group is None:
                result_group = len(out)
                out.append(seed_frame(frame, "tool_result", {"count": 1}, kind))
            else:
                count = json.loads(out[result_group].data)["count"] + 1
                out[result_group] = _with(out[result_group], {"count": count})
        elif kind == "error":
            out.append(seed_frame(frame, "error", {}, kind))
        elif kind == "finish":
            out.append(seed_frame(frame, "done", {}, kind))
    return tuple(out)


def ui_screens(frames: Sequence[Frame]) -> tuple[Screen, ...]:
    """What ``useChat`` shows after each chunk (``processUIMessageStream``): the assistant
    message's text parts by id, each appended as its deltas come (a draft until its
    ``text-end``), the run's end as the status."""
    screens: list[Screen] = []
    texts = Texts()
    status: str | None = None
    for chunk in ui_chunks(frames):
        frame, kind, ident = chunk.frame, chunk.type, chunk.get("id")
        if kind in ("text-start", "text-delta") and isinstance(ident, str):
            texts.open(ident, None, frame.index)
            delta = chunk.get("delta")
            if kind == "text-delta" and isinstance(delta, str) and delta:
                texts.append(ident, delta, frame.index)
        elif kind == "text-end" and isinstance(ident, str):
            texts.settle(ident)
        elif kind in ("finish", "error"):
            status = kind
        elif kind == "tool-input-start":
            status = f"Calling {chunk.get('toolName')}"
        named = frame.model_copy(update={"event": kind}) if kind else frame
        screens.append(texts.screen(frame.index, frame.t, label(named), status))
    return tuple(screens)


_OUTPUT_BY_DESIGN = (
    "the AI SDK's tool-output-available carries the tool's output by design; the seed forbids "
    "forwarding it ('Leaking tool payloads'), so the rule is judged anyway: send a summary as "
    "its output"
)

_OWN: dict[str, Rule] = {
    "GW-FRAME-TYPES": judged(
        "every event is [DONE] or a known UI message chunk with its required fields",
        on_wire(aisdk_chunk_types_verdicts),
    ),
    "GW-STREAM-TERMINAL": judged(
        "finish (or error) ends the chunks, nothing but [DONE] after finish",
        on_view(stream_terminal_verdicts),
    ),
    "GW-FRAME-SEQUENCE": judged(
        "tool output after its tool input; a text part ends after its deltas",
        on_view(frame_sequence_verdicts),
    ),
    "GW-NO-DOUBLE-RENDER": judged(
        "useChat's message (text parts by id, deltas appended) shows each answer once on every "
        "screen",
        lambda reading: screens_render_once(
            reading.obs,
            ui_screens(reading.obs.frames),
            "replaying useChat's message (its text parts by id, deltas appended) every answer "
            "must show once on every screen",
        ),
    ),
    "GW-STREAMS-PROGRESSIVELY": judged(
        "the first text-delta arrives before the model's last chunk",
        on_view(streams_progressively_verdicts),
    ),
    "GW-ANSWER-AS-MESSAGE": judged(
        "each clean model text ends as one text part (start ... end) holding the aggregate",
        on_view(answer_as_message_verdicts),
    ),
    "GW-FINAL-FLAG": not_on_this_wire(
        "(no final flag)",
        "the UI message stream carries no final flag: useChat tells an answer from the text "
        "before a tool call by the tool chunks that follow it",
    ),
    "GW-TOOL-CALL-FROM-AGGREGATE": judged(
        "one block of tool-input chunks per aggregated function-call event, none for a partial",
        on_view(tool_call_from_aggregate_verdicts),
    ),
    "GW-NO-TOOL-LEAK": judged(
        "no chunk carries a function response's data (tool-output-available included)",
        by_design(on_wire(tool_leak_verdicts), _OUTPUT_BY_DESIGN),
    ),
    "GW-ERROR-EVENT": judged(
        "an event with an error code becomes an error chunk", on_view(error_event_verdicts)
    ),
    "GW-ERROR-FRAME": judged(
        "a failed run ends with an error chunk, not a bare finish", on_view(error_frame_verdicts)
    ),
    "GW-RUN-BOUND-ERROR": judged(
        "a run stopped by its bound ends with an error chunk", on_view(run_bound_error_verdicts)
    ),
}


def _rules() -> dict[str, Rule]:
    return wire_rules(
        _OWN,
        {
            "AISDK-STREAM-HEADER": judged(
                "x-vercel-ai-ui-message-stream: v1", on_wire(aisdk_stream_header_verdicts)
            ),
            "AISDK-PART-STARTED": judged(
                "no delta or end for a part never started", on_wire(aisdk_part_started_verdicts)
            ),
            "AISDK-PART-ENDED": judged(
                "every started part ended before finish", on_wire(aisdk_part_ended_verdicts)
            ),
            "AISDK-DONE": judged("data: [DONE] last", on_wire(aisdk_done_verdicts)),
        },
    )


AI_SDK_UI = Profile(
    name="ai-sdk-ui",
    title="the Vercel AI SDK UI message stream v1 (start, text-start/-delta/-end, tool-input-*, "
    "tool-output-*, finish/error, data: [DONE]), answering useChat's request",
    rules=_rules(),
    expectations=on_view(gateway_expectation_verdicts),
    seed_frames=ui_seed_frames,
    request=ui_request,
    typed_by="type",
)
