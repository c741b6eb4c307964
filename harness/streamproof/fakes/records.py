"""What the fake model and the fake tool service record of each call: plain data, no I/O, read
by observations and checks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MARKER_PLACEHOLDER", "ModelCall", "TlsRefusal", "ToolCall", "is_retry"]

MARKER_PLACEHOLDER = "{{marker}}"
"""Replaced in tool payloads by a per-run secret; the secret must never reach a frame."""


class ModelCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    """One request the gateway's agent made to the fake model, and what the fake answered."""

    index: int
    t: float
    path: str
    model: str
    streaming: bool
    agent: str | None
    """The agent name read from the system instruction (ADK writes 'Your internal name is')."""
    turn: int | None
    """Index into the scenario's model script; ``None`` for a call past the script."""
    status: int
    chunks_sent: int
    completed: bool
    """The whole answer was written, finish reason included."""
    closed_early: bool
    """The caller closed the stream before the fake finished writing."""
    text_sent: str = ""
    function_calls_sent: tuple[dict[str, Any], ...] = ()
    finish_reason_sent: str | None = None
    error_sent: dict[str, Any] | None = None
    t_end: float | None = None
    """When the fake finished answering, or noticed that the caller had gone."""
    body: dict[str, Any] = Field(default_factory=dict)
    retry_of: int | None = None
    """The index of the call this one retried (:func:`is_retry`), else ``None``."""
    text_chunk_times: tuple[float, ...] = ()
    """When each chunk of a streamed answer that carries text was written (the clock of ``t``)."""


class TlsRefusal(BaseModel):
    """A TLS handshake a client gave up at a fake's HTTPS port: it does not trust the
    certificate (only the corporate proxy does), or it left mid-handshake."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    t: float
    """When the handshake ended (the clock of :attr:`ModelCall.t`)."""
    peer: str
    """The client's address, ``host:port``: which connection it was."""
    reason: str


def is_retry(call: ModelCall, previous: ModelCall | None) -> bool:
    """Whether ``call`` is the model client sending ``previous`` (the call just before it) again:
    the same agent, path and very same, non-empty request body. An agent's next step always
    sends a longer history (the answer and any tool result are added), so an identical body is
    a retry and never a new step."""
    return (
        previous is not None
        and bool(call.body)
        and call.path == previous.path
        and call.agent == previous.agent
        and call.body == previous.body
    )


class ToolCall(BaseModel):
    """One execution the fake tool service answered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    t: float
    tool: str
    arguments: Any
    status: int
