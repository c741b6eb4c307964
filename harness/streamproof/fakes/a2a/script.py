"""The fake A2A server's script: a task timeline in scenario time, and how the server behaves.

A scenario describes what the remote agent does as a timeline, the way the seed's worked
example tells it ("forty seconds in…"): each step happens at a scenario time counted from the
moment the task is created, whether or not anyone is listening. Times are :data:`Duration`s
and are multiplied by ``--time-scale`` when the fake runs.

Timeline reference (``task:``, and every ``follow_up:``)::

    task:
      - {at: 0s,  status: submitted}              # optional; the task is created submitted
      - {at: 2s,  status: working, message: gathering sources}
      - {at: 12s, artifact: {id: summary, name: Summary, text: "Section 1 ..."}}
      - {at: 25s, artifact: {id: summary, append: true, text: "Section 2 ..."}}
      - {at: 30s, heartbeat: true}                # an SSE comment on every open stream
      - {at: 40s, artifact: {id: summary, text: "Section 1+2, redone"}}   # replace (append: false)
      - {at: 70s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
      - {at: 78s, status: completed}              # or failed, canceled, rejected, unknown

    # an interrupted turn: the stream ends at input-required (or auth-required); the
    # client's next message with the same taskId/contextId runs the follow-up, whose
    # times count from that message
      - {at: 5s, status: input-required, message: "Which region?",
         follow_up: [{at: 1s, status: working}, {at: 3s, status: completed}]}

    reply: "Hello"                 # or {at: 1s, text: Hello}: a direct Message, no task

    server:                        # defaults: a2a-sdk 1.3 serving 0.3 clients
      wire: "0.3"                  # "0.3" | "1.0" | "both" (the card and the method grammar)
      streaming: true              # capabilities.streaming on the card
      resubscribe_snapshot: true   # resubscribe starts with a Task snapshot (1.x) or not (0.3.x)
      snapshot_artifacts: true     # tasks/get carries the task's artifacts, or only its status
      terminal_resubscribe_error: -32004   # -32004 (1.x), -32602 (a2a-sdk 0.3), -32001 (Java)
      terminal_message_error: -32004       # a message to a finished task: -32004 or -32602
      stream_errors: null          # errors of streaming calls: sse (a one-frame stream) |
                                   # json; null: per wire as a2a-sdk 1.3 (0.3 sse, 1.0 json)
      error_event: false           # put "event: error" on an SSE error frame
      line_end: crlf               # crlf (sse-starlette) | lf (Java, JS)
      event_ids: false             # "id: 0", "id: 1"... on each event (a2a-java)
      cancel: honour               # honour | refuse (tasks/cancel answers -32002)
      interrupted_final: true      # 0.3 "final" on an input-required/auth-required update
      ping_every: null             # e.g. 15s: ": ping" comments on open streams (sse-starlette)

Validated at load, so a bad script fails at collection: times never go backwards; ``submitted``
only as the very first step at ``0s``; nothing after a terminal or interrupted state;
``follow_up`` only on an interrupted state; an ``append`` only to an artifact id the task
already has (earlier turns count) and not after its ``last`` chunk; exactly one of ``task``
and ``reply``. Error messages name the step (``task[4].follow_up[1]``).

Which real servers each variant copies is in ``docs/explanation/wire-facts/a2a.md`` §1.5 (framing),
§1.6 (interrupted ``final``), §1.7 (error placement), §1.8 (resubscribe), §1.10 (cancel).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    WithJsonSchema,
    model_validator,
)

from streamproof.core.durations import Duration
from streamproof.fakes.a2a.push.script import PushScript
from streamproof.protocol.a2a import INTERRUPTED_STATES, TERMINAL_STATES, ServedWire, TaskState

__all__ = [
    "A2AScript",
    "ArtifactChunk",
    "ArtifactStep",
    "HeartbeatStep",
    "Reply",
    "ReplySpelling",
    "ServerBehaviour",
    "StatusStep",
    "Step",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArtifactChunk(_Model):
    """One artifact update: a text (or data) part for artifact ``id``."""

    id: str = Field(min_length=1)
    name: str | None = None
    text: str | None = None
    data: dict[str, Any] | None = None
    """A data part instead of text."""
    append: bool = False
    """Extend the artifact with this id (true) or replace/create it (false)."""
    last: bool = False
    """``lastChunk``: this is the artifact's final piece."""

    @model_validator(mode="after")
    def _one_content(self) -> ArtifactChunk:
        if (self.text is None) == (self.data is None):
            raise ValueError("an artifact chunk needs exactly one of 'text' and 'data'")
        return self


class StatusStep(_Model):
    at: Duration
    status: TaskState
    message: str | None = None
    """Progress text, sent as the status's agent message."""
    follow_up: tuple[Step, ...] | None = None
    """Only on input-required/auth-required: the next turn, run when the client answers."""


class ArtifactStep(_Model):
    at: Duration
    artifact: ArtifactChunk


class HeartbeatStep(_Model):
    at: Duration
    heartbeat: Literal[True]
    comment: str | None = None
    """The comment text; default ``ping - <utc time>`` as sse-starlette writes it."""


_STEP_KEYS = ("status", "artifact", "heartbeat")
_STEP_MODELS: dict[str, type[BaseModel]] = {
    "status": StatusStep,
    "artifact": ArtifactStep,
    "heartbeat": HeartbeatStep,
}


def _step_kind(value: Any) -> str | None:
    """The tag of the step's model: its class name, which never reads as a YAML key in an
    error's location (a tag ``status`` would put a phantom ``status`` in ``task[0].status``)."""
    if isinstance(value, BaseModel):
        return type(value).__name__ if type(value) in _STEP_MODELS.values() else None
    if isinstance(value, dict):
        present = [k for k in _STEP_KEYS if k in value]
        return _STEP_MODELS[present[0]].__name__ if len(present) == 1 else None
    return None


def _check_step_shape(value: Any) -> Any:
    if isinstance(value, dict):
        present = [k for k in _STEP_KEYS if k in value]
        if len(present) != 1:
            raise ValueError(
                "a step needs exactly one of 'status', 'artifact', 'heartbeat'"
                + (f" (it has {', '.join(present)})" if present else "")
            )
        if "at" not in value:
            raise ValueError("a step needs 'at', its scenario time (e.g. 'at: 12s')")
    return value


Step = Annotated[
    Annotated[StatusStep, Tag("StatusStep")]
    | Annotated[ArtifactStep, Tag("ArtifactStep")]
    | Annotated[HeartbeatStep, Tag("HeartbeatStep")],
    Discriminator(_step_kind),
    BeforeValidator(_check_step_shape),
]

StatusStep.model_rebuild()


class Reply(_Model):
    """A direct Message answer instead of a task (§1.5: one ``message`` result, then close)."""

    at: Duration = 0.0
    text: str


def _reply_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


ReplySpelling = Annotated[str, Field(description="the reply's text, at 0s: {text: ...}")] | Reply
"""What a scenario may write for ``reply``, as its JSON Schema says."""


def _wire_spelling(value: Any) -> Any:
    # YAML reads an unquoted 0.3 or 1.0 as a float.
    if isinstance(value, float) and not isinstance(value, bool):
        return {0.3: "0.3", 1.0: "1.0"}.get(value, value)
    if isinstance(value, int) and not isinstance(value, bool) and value == 1:
        return "1.0"
    return value


def _cancel_spelling(value: Any) -> Any:
    return "honour" if value == "honor" else value


class ServerBehaviour(_Model):
    """How the fake behaves where real servers differ (defaults: a2a-sdk 1.3 serving 0.3)."""

    wire: Annotated[
        ServedWire,
        BeforeValidator(
            _wire_spelling,
            json_schema_input_type=ServedWire
            | Annotated[
                float,
                WithJsonSchema(
                    {"enum": [0.3, 1], "description": "an unquoted 0.3 or 1.0 (read as a number)"}
                ),
            ],
        ),
    ] = "0.3"
    name: str = "streamproof-fake-agent"
    streaming: bool = True
    resubscribe_snapshot: bool = True
    snapshot_artifacts: bool = True
    """Whether ``tasks/get`` returns the task's artifacts (true) or its status and history
    without them (false), as a server may when it trims the snapshot or keeps no artifacts in
    its task store; the seed's recover() allows for it ("else if buffers non-empty ->
    incomplete"). Only ``tasks/get``: a resubscribe's opening Task is
    ``resubscribe_snapshot``'s business."""
    terminal_resubscribe_error: Literal[-32004, -32602, -32001] = -32004
    terminal_message_error: Literal[-32004, -32602] = -32004
    stream_errors: Literal["sse", "json"] | None = None
    """Where an error found while handling a streaming call goes: ``sse``, a one-frame
    ``text/event-stream`` (a2a-sdk's 0.3 path, a2a-java 1.x); ``json``, an
    ``application/json`` body (a2a-sdk 1.3's 1.0 path, a2a-js); ``None``, as a2a-sdk 1.3
    does on the wire the call came in on (:meth:`stream_errors_on`)."""
    error_event: bool = False
    line_end: Literal["crlf", "lf"] = "crlf"
    event_ids: bool = False
    cancel: Annotated[
        Literal["honour", "refuse"],
        BeforeValidator(
            _cancel_spelling, json_schema_input_type=Literal["honour", "honor", "refuse"]
        ),
    ] = "honour"
    interrupted_final: bool = True
    ping_every: Duration | None = None

    @model_validator(mode="after")
    def _positive_ping(self) -> ServerBehaviour:
        if self.ping_every is not None and self.ping_every <= 0:
            raise ValueError("ping_every must be a positive duration")
        return self

    def stream_errors_on(self, version: Literal["0.3", "1.0"]) -> Literal["sse", "json"]:
        """Where a streaming call's errors go on ``version``'s wire (research ``a2a.md``
        §1.7: a2a-sdk 1.3 answers 0.3 calls with a one-frame SSE stream and 1.0 calls, which
        it reads up to the first event before it switches to SSE, with JSON)."""
        if self.stream_errors is not None:
            return self.stream_errors
        return "sse" if version == "0.3" else "json"

    @property
    def line_end_chars(self) -> str:
        return "\r\n" if self.line_end == "crlf" else "\n"


class A2AScript(_Model):
    """Everything the fake A2A server does in one scenario."""

    task: tuple[Step, ...] | None = None
    reply: Annotated[
        Reply | None, BeforeValidator(_reply_shorthand, json_schema_input_type=ReplySpelling | None)
    ] = None
    server: ServerBehaviour = Field(default_factory=ServerBehaviour)
    push: PushScript | None = None
    """Push notifications: the card advertises them, a webhook a send registers gets the
    task's updates (:mod:`streamproof.fakes.a2a.push`)."""

    @model_validator(mode="after")
    def _consistent(self) -> A2AScript:
        if (self.task is None) == (self.reply is None):
            raise ValueError("the script needs exactly one of 'task' (a timeline) and 'reply'")
        if self.task is not None:
            _check_timeline(self.task, "task", first_turn=True, artifacts={})
        if self.push is not None:
            if self.server.wire != "1.0":
                raise ValueError(
                    f'push needs server.wire: "1.0" (not {self.server.wire!r}): deliveries '
                    "are 1.0 StreamResponse objects, and 0.3's payload was a bare Task "
                    "(docs/reference/a2a-client-contract.md#push-notifications)"
                )
            if self.task is None:
                raise ValueError("push needs a task timeline: a direct reply makes no task")
            self.push.check_deliveries(delivery_count(self.task))
        return self

    @property
    def initial_message(self) -> str | None:
        """The message of a leading ``{at: 0s, status: submitted}`` step, if any."""
        if self.task and isinstance(self.task[0], StatusStep):
            first = self.task[0]
            if first.status is TaskState.SUBMITTED:
                return first.message
        return None


def _check_timeline(
    steps: tuple[Step, ...], path: str, *, first_turn: bool, artifacts: dict[str, bool]
) -> None:
    """Raise ValueError naming the first bad step. ``artifacts`` maps each artifact id the task
    already has to whether its last chunk was sent; it is copied, never changed."""
    known = dict(artifacts)
    previous = 0.0
    for i, step in enumerate(steps):
        where = f"{path}[{i}]"
        if step.at < previous:
            raise ValueError(
                f"{where}: at {step.at:g}s comes before the previous step's {previous:g}s; "
                "times must never go backwards"
            )
        previous = step.at
        if isinstance(step, StatusStep):
            state = step.status
            if state is TaskState.SUBMITTED and not (first_turn and i == 0 and step.at == 0):
                raise ValueError(
                    f"{where}: 'submitted' can only be the first step, at 0s, of the task "
                    "(a task is created submitted; it never goes back)"
                )
            if step.follow_up is not None and state not in INTERRUPTED_STATES:
                raise ValueError(
                    f"{where}: follow_up belongs on an input-required or auth-required step, "
                    f"not on {state.value!r}"
                )
            if state in TERMINAL_STATES or state in INTERRUPTED_STATES:
                if i != len(steps) - 1:
                    kind = "terminal" if state in TERMINAL_STATES else "interrupted"
                    raise ValueError(
                        f"{path}[{i + 1}]: nothing can follow the {kind} state "
                        f"{state.value!r} at {where}"
                        + (" (put the next turn in its follow_up)" if kind == "interrupted" else "")
                    )
                if step.follow_up is not None:
                    _check_timeline(
                        step.follow_up,
                        f"{where}.follow_up",
                        first_turn=False,
                        artifacts=known,
                    )
        elif isinstance(step, ArtifactStep):
            chunk = step.artifact
            if chunk.append:
                if chunk.id not in known:
                    raise ValueError(
                        f"{where}: append to artifact {chunk.id!r}, which the task does not "
                        "have yet (its first chunk needs append: false)"
                    )
                if known[chunk.id]:
                    raise ValueError(
                        f"{where}: append to artifact {chunk.id!r} after its last chunk"
                    )
            known[chunk.id] = chunk.last


def delivery_count(steps: tuple[Step, ...]) -> int:
    """How many push deliveries a task with this timeline makes, its follow-up turns included:
    its Task snapshot, one per status or artifact step, and a follow-up's opening ``working``."""
    count = 1
    turn: tuple[Step, ...] | None = steps
    first = True
    while turn is not None:
        rest = turn
        if first and rest and isinstance(rest[0], StatusStep):
            if rest[0].status is TaskState.SUBMITTED:
                rest = rest[1:]
        elif not first:
            count += 1  # the follow-up's working update
        count += sum(1 for s in rest if not isinstance(s, HeartbeatStep))
        last = turn[-1] if turn else None
        turn = last.follow_up if isinstance(last, StatusStep) else None
        first = False
    return count
