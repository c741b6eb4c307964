"""Checks on a Vercel AI SDK UI message stream itself (protocol v1): its chunks' shapes and the
stream's own rules.

The stream (``ai``'s ``ui-message-stream``) is data-only SSE: one JSON chunk per event, typed by
``type`` (``start``, ``text-start`` / ``text-delta`` / ``text-end`` by ``id``, ``tool-input-start``
/ ``-available``, ``tool-output-available``, ``finish``, ``error`` ...), then ``data: [DONE]``; the
response announces it with ``x-vercel-ai-ui-message-stream: v1``. ``useChat`` reads it with
``processUIMessageStream``, which throws on a ``text-delta`` or ``text-end`` whose part was
never started. Those rules are requirements of their own (``AISDK-``, judged on every
``ai-sdk-ui`` target); how the seed's rules read on this wire is
:mod:`streamproof.suites.gateway.profiles.ai_sdk_ui`'s business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import compress, short
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.stream import left_early, no_frames, no_stream
from streamproof.suites.gateway.observation import Frame, GatewayObservation

__all__ = [
    "CHUNK_FIELDS",
    "DONE_MARKER",
    "UiChunk",
    "aisdk_chunk_types_verdicts",
    "aisdk_done_verdicts",
    "aisdk_part_ended_verdicts",
    "aisdk_part_started_verdicts",
    "aisdk_stream_header_verdicts",
    "ui_chunks",
    "ui_sequence",
]

DONE_MARKER = "[DONE]"
HEADER = "x-vercel-ai-ui-message-stream"

CHUNK_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "start": (),
    "finish": (),
    "abort": (),
    "message-metadata": (),
    "start-step": (),
    "finish-step": (),
    "reset-step": (),
    "error": ("errorText",),
    "text-start": ("id",),
    "text-delta": ("id", "delta"),
    "text-end": ("id",),
    "reasoning-start": ("id",),
    "reasoning-delta": ("id", "delta"),
    "reasoning-end": ("id",),
    "tool-input-start": ("toolCallId", "toolName"),
    "tool-input-delta": ("toolCallId", "inputTextDelta"),
    "tool-input-available": ("toolCallId", "toolName"),
    "tool-input-error": ("toolCallId", "toolName", "errorText"),
    "tool-approval-request": ("approvalId", "toolCallId"),
    "tool-approval-response": ("approvalId",),
    "tool-output-available": ("toolCallId",),
    "tool-output-error": ("toolCallId", "errorText"),
    "tool-output-denied": ("toolCallId",),
    "custom": ("kind",),
    "source-url": ("sourceId", "url"),
    "source-document": ("sourceId", "mediaType", "title"),
    "file": ("url", "mediaType"),
    "reasoning-file": ("url", "mediaType"),
    "steering-message": ("id",),
}
"""Every chunk type of the UI message stream and the fields it requires as strings (``ai``
7.0's ``uiMessageChunkSchema``); ``data-*`` chunks are open."""

FINISH_REASONS: Final[frozenset[str]] = frozenset(
    {"stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"}
)

_STARTS: Final[Mapping[str, str]] = {"text-start": "text", "reasoning-start": "reasoning"}
_DELTAS: Final[Mapping[str, str]] = {"text-delta": "text", "reasoning-delta": "reasoning"}
_ENDS: Final[Mapping[str, str]] = {"text-end": "text", "reasoning-end": "reasoning"}


@dataclass(frozen=True)
class UiChunk:
    """One frame read as a UI message chunk: its JSON, or the ``[DONE]`` marker."""

    frame: Frame
    payload: Mapping[str, Any] | None
    done: bool = False

    @property
    def type(self) -> str | None:
        if self.done:
            return DONE_MARKER
        t = self.payload.get("type") if self.payload is not None else None
        return t if isinstance(t, str) else None

    def get(self, key: str) -> Any:
        return self.payload.get(key) if self.payload is not None else None

    def label(self) -> str:
        return f"chunk #{self.frame.index} ({self.type or 'untyped'})"


def ui_chunks(frames: Sequence[Frame]) -> list[UiChunk]:
    out: list[UiChunk] = []
    for frame in frames:
        if frame.data.strip() == DONE_MARKER:
            out.append(UiChunk(frame, None, done=True))
            continue
        payload = frame.payload()
        out.append(UiChunk(frame, payload if isinstance(payload, dict) else None))
    return out


def ui_sequence(chunks: Sequence[UiChunk]) -> str:
    return compress([c.type or "?" for c in chunks]) or "(no chunks)"


# --- GW-FRAME-TYPES, as it reads on the UI message stream -------------------------------------


def _shape_problem(chunk: UiChunk) -> str | None:
    if chunk.done:
        return None
    if chunk.payload is None:
        return f"chunk #{chunk.frame.index} is not a JSON object: {short(chunk.frame.data)}"
    kind = chunk.type
    if kind is None:
        return f"chunk #{chunk.frame.index} has no string 'type': {short(chunk.frame.data)}"
    if kind.startswith("data-"):
        return None
    if kind not in CHUNK_FIELDS:
        return f"{chunk.label()} is not a UI message chunk type"
    wrong = [
        f"{f!r} is not a string" for f in CHUNK_FIELDS[kind] if not isinstance(chunk.get(f), str)
    ]
    reason = chunk.get("finishReason")
    if kind == "finish" and reason is not None and reason not in FINISH_REASONS:
        wrong.append(f"finishReason {reason!r} is not one of {', '.join(sorted(FINISH_REASONS))}")
    if kind == "tool-approval-response" and not isinstance(chunk.get("approved"), bool):
        wrong.append("'approved' is not true/false")
    if wrong:
        return f"{chunk.label()} {short(chunk.frame.data, 80)}: {', '.join(wrong)}"
    return None


def aisdk_chunk_types_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-FRAME-TYPES on the UI message stream: every chunk is typed, here by a known chunk
    ``type`` with the fields that type requires (or the ``[DONE]`` marker)."""
    rid = "GW-FRAME-TYPES"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    chunks = ui_chunks(obs.frames)
    problems = [p for c in chunks if (p := _shape_problem(c)) is not None]
    return [
        from_violations(
            rid,
            problems,
            rule="every event is [DONE] or a JSON chunk whose 'type' is a UI message chunk type "
            "(text-start, text-delta, ..., data-*), with the fields that type requires",
            ok=f"{len(chunks)} chunk(s), each a known UI message chunk with its fields",
            observed=ui_sequence(chunks),
        )
    ]


# --- the stream's own rules --------------------------------------------------------------------


def aisdk_stream_header_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AISDK-STREAM-HEADER"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    value = obs.response.headers.get(HEADER)
    problems = [] if value == "v1" else [f"the response's {HEADER} header is {value!r}, not 'v1'"]
    return [
        from_violations(
            rid,
            problems,
            rule=f"the response announces the UI message stream: {HEADER}: v1",
            ok=f"{HEADER}: v1",
        )
    ]


@dataclass(frozen=True)
class _Parts:
    unstarted: list[str]
    open_at_finish: list[str]
    finishes: int


def _parts(chunks: Sequence[UiChunk]) -> _Parts:
    open_parts: dict[tuple[str, str], UiChunk] = {}
    tool_inputs: set[str] = set()
    unstarted: list[str] = []
    at_finish: list[str] = []
    finishes = 0
    for chunk in chunks:
        kind = chunk.type
        if kind is None:
            continue
        if kind in _STARTS:
            ident = chunk.get("id")
            if isinstance(ident, str):
                open_parts[(_STARTS[kind], ident)] = chunk
        elif kind in _DELTAS or kind in _ENDS:
            part = _DELTAS.get(kind) or _ENDS[kind]
            ident = chunk.get("id")
            if not isinstance(ident, str):
                continue
            if (part, ident) not in open_parts:
                unstarted.append(
                    f"{chunk.label()} names {part} part {ident!r}, which was not started"
                )
            elif kind in _ENDS:
                del open_parts[(part, ident)]
        elif kind == "tool-input-start" and isinstance(chunk.get("toolCallId"), str):
            tool_inputs.add(chunk.get("toolCallId"))
        elif kind == "tool-input-delta" and isinstance(chunk.get("toolCallId"), str):
            if chunk.get("toolCallId") not in tool_inputs:
                unstarted.append(
                    f"{chunk.label()} streams input of tool call {chunk.get('toolCallId')!r}, "
                    "which had no tool-input-start"
                )
        elif kind == "finish":
            finishes += 1
            left = [f"{part} part {ident!r}" for (part, ident) in open_parts]
            if left:
                at_finish.append(f"{chunk.label()} comes while {', '.join(left)} is not ended")
            open_parts.clear()
    return _Parts(unstarted, at_finish, finishes)


def aisdk_part_started_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AISDK-PART-STARTED"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    chunks = ui_chunks(obs.frames)
    if not any(
        c.type in _DELTAS or c.type in _ENDS or c.type == "tool-input-delta" for c in chunks
    ):
        return [not_applicable(rid, "not judged: no text, reasoning or tool input was streamed")]
    return [
        from_violations(
            rid,
            _parts(chunks).unstarted,
            rule="a text-delta or text-end (reasoning alike, and tool-input-delta) names a part "
            "that was started",
            ok="every delta and end names a started part",
            observed=ui_sequence(chunks),
        )
    ]


def aisdk_part_ended_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AISDK-PART-ENDED"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    parts = _parts(ui_chunks(obs.frames))
    if not parts.finishes:
        return [not_applicable(rid, "not judged: the stream carried no finish chunk")]
    return [
        from_violations(
            rid,
            parts.open_at_finish,
            rule="every started text (or reasoning) part is ended before finish",
            ok="every part was ended before finish",
        )
    ]


def aisdk_done_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "AISDK-DONE"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if obs.response.end == "client-closed":
        return [left_early(obs, rid)]
    chunks = ui_chunks(obs.frames)
    done = next((c for c in chunks if c.done), None)
    if done is None and not any(c.type in ("finish", "error") for c in chunks):
        return [
            not_applicable(
                rid,
                "not judged: the stream never ended its message (no finish or error chunk: "
                "GW-STREAM-TERMINAL judges that)",
            )
        ]
    problems: list[str] = []
    if done is None:
        problems.append("the message ended (finish or error) but no data: [DONE] followed")
    if done is not None:
        after = [c for c in chunks if c.frame.index > done.frame.index]
        if after:
            problems.append(f"{after[0].label()} follows data: [DONE]")
    return [
        from_violations(
            rid,
            problems,
            rule="once the message ends (finish or error), data: [DONE] ends the stream, and "
            "nothing follows it",
            ok="the stream ends with data: [DONE]",
            observed=ui_sequence(chunks),
        )
    ]
