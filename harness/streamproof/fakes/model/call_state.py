"""The mutable record of one call to the fake model, kept while it is answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamproof.fakes.records import ModelCall

__all__ = ["CallState"]


@dataclass
class CallState:
    """The mutable record of one model call; :meth:`snapshot` freezes it into a ModelCall."""

    index: int
    t: float
    path: str
    model: str
    streaming: bool
    agent: str | None
    body: dict[str, Any]
    turn: int | None = None
    status: int = 0
    chunks_sent: int = 0
    completed: bool = False
    closed_early: bool = False
    text: list[str] = field(default_factory=list)
    function_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    error: dict[str, Any] | None = None
    t_end: float | None = None
    retry_of: int | None = None
    text_chunk_times: list[float] = field(default_factory=list)

    def snapshot(self) -> ModelCall:
        return ModelCall(
            index=self.index,
            t=self.t,
            path=self.path,
            model=self.model,
            streaming=self.streaming,
            agent=self.agent,
            turn=self.turn,
            status=self.status,
            chunks_sent=self.chunks_sent,
            completed=self.completed,
            closed_early=self.closed_early,
            text_sent="".join(self.text),
            function_calls_sent=tuple(dict(c) for c in self.function_calls),
            finish_reason_sent=self.finish_reason,
            error_sent=dict(self.error) if self.error is not None else None,
            t_end=self.t_end,
            body=self.body,
            retry_of=self.retry_of,
            text_chunk_times=tuple(self.text_chunk_times),
        )
