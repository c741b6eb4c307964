"""Canned Gemini streams (``fixture:``, ``fixtures/gemini/``): each event checked at load to
be what the SDKs read (see :mod:`streamproof.protocol.gemini`), kept to be written byte for
byte."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from streamproof.protocol.fixture import FixtureEvent, event_delays
from streamproof.protocol.gemini.wire import FinishReason


class _WireModel(BaseModel):
    """A recorded chunk's JSON: the fields the fake and ADK rely on are checked, the rest
    (usage, safety ratings, model version) is the recording's own business."""

    model_config = ConfigDict(frozen=True, extra="allow")


class _WireFunctionCall(_WireModel):
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class _WirePart(_WireModel):
    text: str | None = None
    functionCall: _WireFunctionCall | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> _WirePart:
        if (self.text is None) == (self.functionCall is None):
            raise ValueError("a part needs exactly one of 'text' and 'functionCall'")
        return self


class _WireContent(_WireModel):
    parts: tuple[_WirePart, ...] = Field(min_length=1)
    role: Literal["model"]


class _WireCandidate(_WireModel):
    content: _WireContent
    finishReason: FinishReason | None = None


class _WireChunk(_WireModel):
    candidates: tuple[_WireCandidate] = Field(min_length=1, max_length=1)


class _WireError(_WireModel):
    code: int = Field(ge=400, le=599)
    message: str
    status: str = Field(min_length=1)


class _WireErrorBody(_WireModel):
    error: _WireError


@dataclass(frozen=True, slots=True)
class ReplayEvent:
    """One event of a canned stream: the bytes to write and what they tell the caller."""

    delay: float
    """Unscaled seconds to wait before writing it."""
    raw: bytes
    chunks: tuple[dict[str, Any], ...]
    """The event as :class:`ModelTurn` chunks (``text``, ``function_call`` or ``error``)."""
    text: str = ""
    function_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: FinishReason | None = None
    error: dict[str, Any] | None = None

    def with_delay(self, delay: float) -> ReplayEvent:
        return ReplayEvent(
            delay,
            self.raw,
            self.chunks,
            self.text,
            self.function_calls,
            self.finish_reason,
            self.error,
        )


def _wire_problem(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    more = len(exc.errors()) - 1
    tail = f" (and {more} more)" if more else ""
    return f"{where}: {message}{tail}" if where else f"{message}{tail}"


def _replay_event(event: FixtureEvent, delay: float, file: str) -> ReplayEvent:
    if event.comments and not event.fields:
        raise event.problem(file, "a comment-only event; the Gemini API sends none")
    names = [name for name, _ in event.fields]
    if names != ["data"]:
        raise event.problem(
            file,
            f"a Gemini stream event is one 'data: ' line (this one has {', '.join(names)})",
        )
    line = event.raw.split(b"\n", 1)[0].split(b"\r", 1)[0]
    if not line.startswith(b"data: "):
        raise event.problem(file, "'data:' must be followed by one space, as the SDKs read it")
    try:
        payload = json.loads(event.data_lines[0])
    except ValueError as exc:
        raise event.problem(file, f"the data is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise event.problem(file, "the data is not a JSON object")
    if "error" in payload:
        try:
            error = _WireErrorBody.model_validate(payload).error
        except ValidationError as exc:
            raise event.problem(file, f"not a Google error body: {_wire_problem(exc)}") from None
        body = {"code": error.code, "status": error.status, "message": error.message}
        return ReplayEvent(delay, event.raw, ({"error": body},), error=payload["error"])
    try:
        chunk = _WireChunk.model_validate(payload)
    except ValidationError as exc:
        raise event.problem(
            file, f"not a GenerateContentResponse chunk: {_wire_problem(exc)}"
        ) from None
    chunks: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    text = ""
    candidate_ = chunk.candidates[0]
    for part in candidate_.content.parts:
        if part.functionCall is not None:
            call = {"name": part.functionCall.name, "args": dict(part.functionCall.args)}
            calls.append(call)
            chunks.append({"function_call": call})
        else:
            text += part.text or ""
            chunks.append({"text": part.text or ""})
    return ReplayEvent(
        delay,
        event.raw,
        tuple(chunks),
        text,
        tuple(calls),
        candidate_.finishReason,
    )


def fixture_replay(events: list[FixtureEvent], file: str) -> tuple[ReplayEvent, ...]:
    """The replay of a canned Gemini stream; :class:`FixtureProblem` names the event that a
    real SDK would not read as this fake's answers are read (see the module's notes)."""
    replay = tuple(
        _replay_event(event, delay, file)
        for event, delay in zip(events, event_delays(events), strict=True)
    )
    for event, out in zip(events[:-1], replay[:-1], strict=True):
        if out.error is not None:
            raise event.problem(file, "an error event ends the stream; it must be the last")
        if out.finish_reason is not None:
            raise event.problem(file, "finishReason rides only on the last chunk")
    return replay
