"""What one run of an A2A client command produced: its result line, or why there is none.

The A2A client contract (docs/reference/a2a-client-contract.md): the client prints one JSON object
as its LAST
stdout line::

    {"status": "completed", "taskId": "t-81", "contextId": "c-12",
     "artifacts": [{"id": "summary", "name": "Summary", "text": "Section 1 ..."}],
     "message": null, "incomplete": false}

``status`` is one of :data:`RESULT_STATUSES`. ``artifacts`` may also give ``data``, the parsed
value of an artifact the client treats as structured output. Members the contract does not
name are ignored, so a client may add its own (an error text, timings).

Everything here is plain data: the target runner (:mod:`streamproof.suites.a2a_client.target`) fills
it in, observations carry it, checks read it.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

__all__ = [
    "RESULT_STATUSES",
    "ClientFailure",
    "ClientResult",
    "ClientRun",
    "FailureKind",
    "ResultArtifact",
    "ResultStatus",
    "looks_like_result",
    "parse_result_line",
]

ResultStatus = Literal[
    "completed",
    "failed",
    "canceled",
    "rejected",
    "unknown",
    "input-required",
    "auth-required",
    "message",
    "timeout",
    "error",
]
RESULT_STATUSES: Final[tuple[str, ...]] = ResultStatus.__args__  # type: ignore[attr-defined]


class _Wire(BaseModel):
    """The result line's JSON: camelCase members, unknown members ignored."""

    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, populate_by_name=True
    )


class ResultArtifact(_Wire):
    id: str = Field(min_length=1)
    name: str | None = None
    text: str = ""
    data: Any = None
    """The parsed value of a structured artifact (``None``: not parsed, or not structured)."""


class ClientResult(_Wire):
    """The client's own account of the call."""

    status: ResultStatus
    task_id: str | None = None
    context_id: str | None = None
    artifacts: tuple[ResultArtifact, ...] = ()
    message: str | None = None
    """The text of a direct reply, or of the status message (a question, an error)."""
    incomplete: bool = False
    """The client knows its artifacts may lack chunks (lost in a reconnect gap, cut short)."""

    def artifact(self, artifact_id: str) -> ResultArtifact | None:
        return next((a for a in self.artifacts if a.id == artifact_id), None)


def looks_like_result(line: str) -> bool:
    """Whether a stdout line is a result object (a JSON object with a ``status``): a client
    that completes twice prints two of them."""
    text = line.strip()
    if not text.startswith("{"):
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "status" in value


def parse_result_line(line: str) -> ClientResult:
    """The result in ``line``; raises ``ValueError`` saying what is wrong with it."""
    text = line.strip()
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"the last stdout line is not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(
            f"the last stdout line is JSON but not an object (a {type(value).__name__}): "
            f"{text[:200]!r}"
        )
    try:
        return ClientResult.model_validate(value)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "(object)"
        raise ValueError(
            f"the result line does not fit the contract: {where}: {err['msg']} "
            f"(statuses: {', '.join(RESULT_STATUSES)}): {text[:200]!r}"
        ) from None


FailureKind = Literal["start", "crash", "hang", "no-result", "bad-result"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClientFailure(_Record):
    """The client broke the contract: no usable result line."""

    kind: FailureKind
    """``start``: the command could not be started; ``crash``: it exited non-zero (or by a
    signal) without a result; ``hang``: it was still running at its bound and was killed;
    ``no-result``: it exited 0 without printing one; ``bad-result``: its last line is not a
    valid result."""
    message: str
    """A human explanation with the tail of stdout and stderr."""


class ClientRun(_Record):
    """One turn: the client command run once. Times are seconds since the scenario's epoch."""

    turn: int
    """0 for the first call, 1 for the follow-up."""
    prompt: str
    task_id_given: str | None = None
    """``STREAMPROOF_TASK_ID`` (a follow-up turn)."""
    context_id_given: str | None = None
    deadline_s: float
    """``STREAMPROOF_DEADLINE_S``, already scaled."""
    idle_s: float
    bound_s: float
    """How long the harness let the process run before killing it."""
    t_start: float
    t_result: float | None = None
    """When the result line was read."""
    t_exit: float | None = None
    """When the process exited, or was killed."""
    exit_code: int | None = None
    result: ClientResult | None = None
    failure: ClientFailure | None = None
    result_lines: int = 0
    """How many stdout lines were result objects (more than one: the call completed twice)."""
    stdout_tail: str = ""
    stderr_tail: str = ""

    @property
    def t_end(self) -> float:
        """When the call ended for the harness: the result, else the exit (or kill)."""
        if self.t_result is not None:
            return self.t_result
        if self.t_exit is not None:
            return self.t_exit
        return self.t_start + self.bound_s
