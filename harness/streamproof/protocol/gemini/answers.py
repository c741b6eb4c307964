"""Whole answers of the fake model to a :class:`ModelTurn`: the events of a streamed answer
(``:streamGenerateContent?alt=sse``), the one answer of ``:generateContent``, and HTTP error
answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamproof.protocol.gemini.turn import (
    CallChunk,
    ErrorChunk,
    GoogleError,
    ModelTurn,
    TextChunk,
    chunk_delay,
)
from streamproof.protocol.gemini.wire import (
    count_tokens,
    dumps_line,
    dumps_pretty,
    response,
    sse_frame,
    text_part,
)


def error_body(error: GoogleError) -> dict[str, Any]:
    """``{"error": {"code", "message", "status"}}`` in the real API's key order."""
    return {"error": {"code": error.code, "message": error.message, "status": error.status}}


def function_call_dict(chunk: CallChunk) -> dict[str, Any]:
    """The call as the Developer API sends it: ``name`` then ``args``, no ``id``."""
    return {"name": chunk.function_call.name, "args": dict(chunk.function_call.args)}


def function_call_part(chunk: CallChunk) -> dict[str, Any]:
    return {"functionCall": function_call_dict(chunk)}


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One ``data:`` event of a streamed answer and what it tells the caller."""

    delay: float
    """Unscaled seconds to wait before writing it."""
    payload: dict[str, Any]
    text: str = ""
    function_call: dict[str, Any] | None = None
    finish_reason: str | None = None
    error: dict[str, Any] | None = None

    def frame(self, line_end: str = "\r\n") -> bytes:
        return sse_frame(self.payload, line_end)


def stream_events(
    turn: ModelTurn, *, model_version: str, response_id: str, prompt_tokens: int
) -> list[StreamEvent]:
    """The events of a streamed answer to ``turn``, one per chunk, in order."""
    events: list[StreamEvent] = []
    produced = 0
    last = len(turn.chunks) - 1
    for i, chunk in enumerate(turn.chunks):
        delay = chunk_delay(turn, chunk)
        if isinstance(chunk, ErrorChunk):
            body = error_body(chunk.error)
            events.append(StreamEvent(delay, body, error=body["error"]))
            continue
        finish = turn.finish_reason if i == last else None
        if isinstance(chunk, TextChunk):
            part = text_part(chunk.text)
            produced += count_tokens(chunk.text)
            extra: dict[str, Any] = {"text": chunk.text}
        else:
            part = function_call_part(chunk)
            produced += count_tokens(dumps_line(part))
            extra = {"function_call": function_call_dict(chunk)}
        payload = response(
            [part],
            finish_reason=finish,
            prompt_tokens=prompt_tokens,
            candidate_tokens=produced,
            model_version=model_version,
            response_id=response_id,
        )
        events.append(StreamEvent(delay, payload, finish_reason=finish, **extra))
    return events


def merged_parts(turn: ModelTurn) -> list[dict[str, Any]]:
    """The turn's parts as one answer: consecutive text chunks joined, calls kept apart."""
    parts: list[dict[str, Any]] = []
    pending: list[str] = []
    for chunk in turn.chunks:
        if isinstance(chunk, TextChunk):
            pending.append(chunk.text)
            continue
        if pending:
            parts.append(text_part("".join(pending)))
            pending = []
        if isinstance(chunk, CallChunk):
            parts.append(function_call_part(chunk))
    if pending:
        parts.append(text_part("".join(pending)))
    return parts


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole (non-streaming) answer: an HTTP status and a JSON body."""

    status: int
    body: dict[str, Any]
    text: str = ""
    function_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None
    error: dict[str, Any] | None = None

    def encoded(self) -> bytes:
        return dumps_pretty(self.body)


def error_answer(error: GoogleError) -> Answer:
    body = error_body(error)
    return Answer(error.code, body, error=body["error"])


def generate_content_answer(
    turn: ModelTurn, *, model_version: str, response_id: str, prompt_tokens: int
) -> Answer:
    """The answer to ``turn`` on ``:generateContent``: an HTTP error, the mid-stream error as
    an HTTP error, or one response with every part merged."""
    if turn.http_error is not None:
        return error_answer(turn.http_error)
    if turn.mid_stream_error is not None:
        return error_answer(turn.mid_stream_error)
    parts = merged_parts(turn)
    calls = tuple(function_call_dict(c) for c in turn.chunks if isinstance(c, CallChunk))
    produced = sum(
        count_tokens(p["text"]) if "text" in p else count_tokens(dumps_line(p)) for p in parts
    )
    body = response(
        parts,
        finish_reason=turn.finish_reason,
        prompt_tokens=prompt_tokens,
        candidate_tokens=produced,
        model_version=model_version,
        response_id=response_id,
    )
    return Answer(200, body, text=turn.text, function_calls=calls, finish_reason=turn.finish_reason)


def not_found(path: str) -> Answer:
    return error_answer(
        GoogleError(code=404, status="NOT_FOUND", message=f"streamproof: no route for {path}")
    )


def invalid_argument(message: str) -> Answer:
    return error_answer(GoogleError(code=400, status="INVALID_ARGUMENT", message=message))
