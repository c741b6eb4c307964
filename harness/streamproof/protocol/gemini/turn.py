"""A model turn: what the fake model answers to one call, as the scenario scripts it (or a
canned stream, ``fixture:``, gives it)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from streamproof.core.durations import Duration
from streamproof.protocol.fixture import FIXTURE_CONTEXT_KEY, parse_fixture, read_with
from streamproof.protocol.gemini.replay import ReplayEvent, fixture_replay
from streamproof.protocol.gemini.wire import FinishReason

RUNAWAY_TEXT = "streamproof stopped a runaway loop after {n} model calls"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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
