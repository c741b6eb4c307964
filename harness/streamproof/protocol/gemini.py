"""The Gemini API wire format, as pure functions from a scripted :class:`ModelTurn` to bytes.

The fake model (``streamproof.fakes.model``) must be indistinguishable from the real Gemini
Developer API to the SDKs that ADK uses, so everything it writes is built here and nothing here
does I/O. What the real SDKs require, measured with google-genai 2.34 / google-adk 2.13 (see
``docs/explanation/wire-facts/adk-gemini.md`` sections 0, 4 and 6):

* A stream is ``data: <json>`` plus a blank line per chunk. The SDKs accept only ``data: `` *with*
  one space (``line.startswith('data: ')``), and the JS SDK's regex needs each JSON object on one
  line, so :func:`dumps_line` never emits a raw line break, not even U+2028/U+2029/U+0085, which
  ``str.splitlines`` based readers (httpx) would split on.
* Every chunk carries ``candidates[0].content`` with ``role: model`` and ``index: 0``, the last
  one included: ADK Java turns a final chunk without ``content`` into an error event.
* ``finishReason`` rides only on the last chunk. Function calls carry no ``id`` (the Developer
  API omits it; ADK mints ``adk-...`` ids itself).
* A mid-stream failure is a ``data: {"error": {...}}`` line after which the body ends; the SDKs
  raise ``APIError`` when a chunk's JSON starts with ``{"error":``.
* There is no ``[DONE]`` sentinel: the body simply ends.

The JSON layout copies recorded Gemini traffic: key order ``candidates, usageMetadata,
modelVersion, responseId``; separators ``","`` between items and ``": "`` after keys (the real
servers' one-line protobuf printer); non-ASCII text written as UTF-8, not ``\\u`` escapes.
Non-streaming answers and HTTP error bodies are pretty-printed with two-space indents, as the
real API does.

A turn can also come from a canned stream (``fixture:``, ``fixtures/gemini/``): then the fake
writes the file's events as they are, and :func:`fixture_replay` checks at load that each one
is what the SDKs above read (one ``data: `` line, one candidate with ``content``, text or
function-call parts, ``finishReason`` only last, an error body only last).
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from streamproof.core.durations import Duration
from streamproof.protocol.fixture import (
    FIXTURE_CONTEXT_KEY,
    FixtureEvent,
    event_delays,
    parse_fixture,
    read_with,
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- a model turn: what the fake model answers to one call ----------------------------------------


class GoogleError(_Model):
    """A Google API error body: ``{"error": {"code", "message", "status"}}``."""

    code: int = Field(503, ge=400, le=599)
    status: str = "UNAVAILABLE"
    message: str = "The model is overloaded."


class FunctionCall(_Model):
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class TextChunk(_Model):
    text: str
    delay: Duration | None = None
    """Wait before this chunk (overrides the turn's ``chunk_delay``)."""


class CallChunk(_Model):
    function_call: FunctionCall
    delay: Duration | None = None


class ErrorChunk(_Model):
    """A ``data: {"error": ...}`` line in the middle of the stream."""

    error: GoogleError
    delay: Duration | None = None


def _chunk_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


Chunk = Annotated[
    TextChunk | CallChunk | ErrorChunk,
    BeforeValidator(
        _chunk_shorthand,
        json_schema_input_type=Annotated[str, Field(description="a text chunk: {text: ...}")]
        | TextChunk
        | CallChunk
        | ErrorChunk,
    ),
]
"""A chunk of a model turn; a bare string is a text chunk."""

FinishReason = Literal["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"]


class ModelTurn(_Model):
    """What the fake model answers to one call. Turns are consumed one per model call."""

    chunks: tuple[Chunk, ...] = ()
    finish_reason: FinishReason | None = "STOP"
    """Put on the last chunk; ``null`` makes the stream end without one."""
    chunk_delay: Duration = 0.0
    """Wait before every chunk, unless the chunk sets its own ``delay``."""
    http_error: GoogleError | None = None
    """Answer with this error status and body instead of a stream."""
    times: int | Literal["forever"] = 1
    """How many consecutive model calls this turn answers (``forever``: a runaway loop). A
    retry (see ``retries``) is not one of them."""
    retries: Literal["repeat", "next"] | None = None
    """What a retry of a call this turn answered gets. A retry is a call whose request body
    equals the body of the call just before it (:func:`streamproof.fakes.records.is_retry`): a
    new step of an agent always sends a longer history, so an identical body is the model
    client sending the same request again. ``repeat``: the retry gets this turn again and uses
    up nothing of the script (the model is still overloaded); ``next``: the retry is answered
    by the next turn like any call (a retry that recovers). Only an error turn (``http_error``
    or a mid-stream error chunk) can be retried, and for one the default is ``repeat``: the
    seed leaves retrying to the model client (ADK Java's retries 5xx five times, ADK Python
    does not), so the scripted failure must stay the same failure however often the client
    asks, and no retry may run into "no scripted model turn left"."""
    agent: str | None = Field(None, min_length=1)
    """The agent that must make this call (e.g. the sub-agent ``billing`` after a transfer).
    When another agent makes it, the scenario's ``model`` expectation fails: the topology it
    needs did not run. ``None``: any agent."""
    fixture: str | None = Field(None, min_length=1)
    """A canned ``streamGenerateContent?alt=sse`` body (e.g. ``fixtures/gemini/answer.sse``),
    replayed byte for byte instead of ``chunks``, ``finish_reason`` and ``http_error``: found
    relative to the scenario file's folder, then its ancestors. The recorded timing comments
    set the waits (scaled) unless ``chunk_delay`` is given, which then waits before every
    event. Validated at load: SSE framing, and JSON this model accepts. A non-streaming call
    gets the same chunks merged into one answer."""

    _replay: tuple[ReplayEvent, ...] | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _from_fixture(
        cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> ModelTurn:
        if not isinstance(data, dict) or not isinstance(data.get("fixture"), str):
            turn: ModelTurn = handler(data)
            return turn
        written = [k for k in ("chunks", "finish_reason", "http_error") if k in data]
        if written:
            raise ValueError(
                f"a turn with a fixture takes its chunks and finish reason from the file; "
                f"remove {', '.join(written)}"
            )
        context = info.context if isinstance(info.context, dict) else {}
        shown, raw = read_with(context.get(FIXTURE_CONTEXT_KEY), data["fixture"])
        replay = fixture_replay(parse_fixture(raw, shown), shown)
        delay_given = "chunk_delay" in data
        chunks: list[dict[str, Any]] = []
        for event in replay:
            for i, chunk in enumerate(event.chunks):
                delay = None if delay_given else (event.delay if i == 0 else 0.0)
                chunks.append({**chunk, "delay": delay})
        turn = handler({**data, "chunks": chunks, "finish_reason": replay[-1].finish_reason})
        if delay_given:
            replay = tuple(event.with_delay(turn.chunk_delay) for event in replay)
        turn._replay = replay
        return turn

    @property
    def replay(self) -> tuple[ReplayEvent, ...] | None:
        """The fixture's events to write byte for byte, when the turn comes from one."""
        return self._replay

    @field_validator("times")
    @classmethod
    def _positive(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 1:
            raise ValueError("times must be at least 1 (or 'forever')")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ModelTurn:
        if self.http_error is not None and self.chunks:
            raise ValueError("a turn with http_error sends no chunks; remove one of the two")
        if self.http_error is None and not self.chunks:
            raise ValueError("a turn needs chunks or an http_error")
        if self.retries is not None and not self.is_error:
            raise ValueError(
                "retries applies to an error turn (http_error, or a stream that ends with an "
                "error chunk); a turn that answers is never retried"
            )
        for i, chunk in enumerate(self.chunks[:-1]):
            if isinstance(chunk, ErrorChunk):
                raise ValueError(f"chunks[{i}]: an error chunk ends the stream; it must be last")
        return self

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.chunks if isinstance(c, TextChunk))

    @property
    def is_error(self) -> bool:
        """The turn fails its call: an HTTP error, or a stream that ends with an error chunk."""
        return self.http_error is not None or self.mid_stream_error is not None

    @property
    def repeats_for_retries(self) -> bool:
        """A retry of a call this turn answered gets this turn again (see ``retries``)."""
        return self.is_error and self.retries != "next"

    @property
    def function_calls(self) -> tuple[FunctionCall, ...]:
        return tuple(c.function_call for c in self.chunks if isinstance(c, CallChunk))

    @property
    def mid_stream_error(self) -> GoogleError | None:
        last = self.chunks[-1] if self.chunks else None
        return last.error if isinstance(last, ErrorChunk) else None


Method = Literal["streamGenerateContent", "generateContent"]

JSON_CONTENT_TYPE = "application/json; charset=UTF-8"
SSE_CONTENT_TYPE = "text/event-stream"

_ROUTE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_AGENT_NAME = re.compile(r'Your internal name is "([^"]+)"')
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}

RUNAWAY_TEXT = "streamproof stopped a runaway loop after {n} model calls"


# --- serialisation -----------------------------------------------------------------------------


def dumps_line(payload: Any) -> str:
    """``payload`` as one line of JSON laid out like the real Gemini servers write it."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ": "))
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


def dumps_pretty(payload: Any) -> bytes:
    """A whole-body JSON answer (``generateContent``, HTTP errors): two-space indents."""
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def sse_frame(payload: Any, line_end: str = "\r\n") -> bytes:
    """One server-sent event: ``data: <json>`` and a blank line."""
    return f"data: {dumps_line(payload)}{line_end}{line_end}".encode()


# --- building blocks ---------------------------------------------------------------------------


def error_body(error: GoogleError) -> dict[str, Any]:
    """``{"error": {"code", "message", "status"}}`` in the real API's key order."""
    return {"error": {"code": error.code, "message": error.message, "status": error.status}}


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def function_call_dict(chunk: CallChunk) -> dict[str, Any]:
    """The call as the Developer API sends it: ``name`` then ``args``, no ``id``."""
    return {"name": chunk.function_call.name, "args": dict(chunk.function_call.args)}


def function_call_part(chunk: CallChunk) -> dict[str, Any]:
    return {"functionCall": function_call_dict(chunk)}


def candidate(parts: list[dict[str, Any]], finish_reason: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish_reason is not None:
        out["finishReason"] = finish_reason
    out["index"] = 0
    return out


def usage(prompt_tokens: int, candidate_tokens: int) -> dict[str, int]:
    out = {"promptTokenCount": prompt_tokens}
    if candidate_tokens:
        out["candidatesTokenCount"] = candidate_tokens
    out["totalTokenCount"] = prompt_tokens + candidate_tokens
    return out


def response(
    parts: list[dict[str, Any]],
    *,
    finish_reason: str | None,
    prompt_tokens: int,
    candidate_tokens: int,
    model_version: str,
    response_id: str,
) -> dict[str, Any]:
    """One ``GenerateContentResponse``."""
    return {
        "candidates": [candidate(parts, finish_reason)],
        "usageMetadata": usage(prompt_tokens, candidate_tokens),
        "modelVersion": model_version,
        "responseId": response_id,
    }


def new_response_id() -> str:
    """22 URL-safe characters, the shape of the real API's ``responseId``."""
    return secrets.token_urlsafe(16)[:22]


def count_tokens(text: str) -> int:
    """A rough token count (four characters a token), only so usage figures look plausible."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _texts(value: Any) -> Iterator[str]:
    """The ``text`` strings of a Content-shaped value (or the value itself, if a string)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            elif isinstance(item, Mapping | list):
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """Estimated ``promptTokenCount`` for a request, from the text of its contents and system
    instruction."""
    text = "".join(_texts(body.get("contents"))) + "".join(_texts(body.get("systemInstruction")))
    return max(1, count_tokens(text))


def agent_name(body: Mapping[str, Any]) -> str | None:
    """The ADK agent's name: ADK writes ``Your internal name is "NAME"`` into the system
    instruction."""
    instruction = body.get("systemInstruction", body.get("system_instruction"))
    for text in _texts(instruction):
        match = _AGENT_NAME.search(text)
        if match is not None:
            return match.group(1)
    return None


@dataclass(frozen=True, slots=True)
class Route:
    """A parsed ``/{apiVersion}/models/{model}:{method}`` path."""

    api_version: str
    model: str
    method: Method


def parse_route(path: str) -> Route | None:
    """The route for a model path, or ``None`` when the fake does not serve it."""
    match = _ROUTE.match(path)
    if match is None:
        return None
    method = match.group("method")
    if method == "streamGenerateContent":
        return Route(match.group("version"), match.group("model"), "streamGenerateContent")
    if method == "generateContent":
        return Route(match.group("version"), match.group("model"), "generateContent")
    return None


def runaway_turn(calls: int) -> ModelTurn:
    """The plain answer that ends a loop the gateway would not end itself."""
    return ModelTurn(chunks=(TextChunk(text=RUNAWAY_TEXT.format(n=calls)),), finish_reason="STOP")


def unscripted_error(call_number: int) -> GoogleError:
    return GoogleError(
        code=500,
        status="INTERNAL",
        message=f"streamproof: no scripted model turn left for call {call_number}",
    )


def chunk_delay(turn: ModelTurn, chunk: TextChunk | CallChunk | ErrorChunk) -> float:
    """Unscaled seconds to wait before ``chunk``: its own ``delay``, else the turn's."""
    return chunk.delay if chunk.delay is not None else turn.chunk_delay


def total_delay(turn: ModelTurn) -> float:
    """Unscaled seconds a non-streaming answer waits: the sum of the chunk delays. A turn
    without chunks (an ``http_error``) waits its ``chunk_delay`` once."""
    if not turn.chunks:
        return turn.chunk_delay
    return sum(chunk_delay(turn, c) for c in turn.chunks)


# --- whole answers -----------------------------------------------------------------------------


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


# --- canned streams (fixtures/gemini) ----------------------------------------------------------


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
