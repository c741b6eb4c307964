"""The internal A2A model, written once for both wire versions, and what is done with it.

Pydantic types, frozen and strict: parts (:class:`TextPart`, :class:`DataPart`,
:class:`FilePart`), :class:`Message`, :class:`Artifact`, :class:`TaskStatus`, :class:`Task`, the
stream updates (:class:`StatusUpdate`, :class:`ArtifactUpdate`), request params and the decoded
request (:class:`RpcRequest`) or error (:class:`RpcError`, built with :func:`rpc_error`). They
follow 0.3 names and states; :mod:`~streamproof.protocol.a2a.encode` and
:mod:`~streamproof.protocol.a2a.decode` translate. Then the helpers that work on the model: fresh
ids and timestamps, the text of some parts, whether an event ends a turn, how a task absorbs an
update (:func:`apply_event`) and how ``historyLength`` cuts its history.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from streamproof.protocol.a2a.vocabulary import (
    _ERRORS,
    INTERRUPTED_STATES,
    METHODS,
    STREAMING_OPS,
    TERMINAL_STATES,
    Op,
    Role,
    TaskState,
    WireVersion,
    version_of,
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the internal model ------------------------------------------------------------------------


class TextPart(_Model):
    kind: Literal["text"] = "text"
    text: str


class DataPart(_Model):
    kind: Literal["data"] = "data"
    data: Any
    """A JSON value; 0.3 allows only objects (other values travel wrapped, as a2a-sdk does)."""


class FilePart(_Model):
    kind: Literal["file"] = "file"
    uri: str | None = None
    bytes: str | None = None
    """Base64, as on the wire (0.3 ``file.bytes``, 1.0 ``raw``)."""
    name: str | None = None
    media_type: str | None = None


Part = Annotated[TextPart | DataPart | FilePart, Field(discriminator="kind")]


class Message(_Model):
    kind: Literal["message"] = "message"
    message_id: str
    role: Role
    parts: tuple[Part, ...] = ()
    task_id: str | None = None
    context_id: str | None = None


class Artifact(_Model):
    artifact_id: str
    parts: tuple[Part, ...] = ()
    name: str | None = None
    description: str | None = None


class TaskStatus(_Model):
    state: TaskState
    message: Message | None = None
    timestamp: str | None = None


class Task(_Model):
    kind: Literal["task"] = "task"
    id: str
    context_id: str
    status: TaskStatus
    artifacts: tuple[Artifact, ...] = ()
    history: tuple[Message, ...] = ()


class StatusUpdate(_Model):
    kind: Literal["status-update"] = "status-update"
    task_id: str
    context_id: str
    status: TaskStatus
    final: bool = False
    """0.3 only; a 1.0 decode derives it (:func:`_derived_final`)."""


class ArtifactUpdate(_Model):
    kind: Literal["artifact-update"] = "artifact-update"
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False


StreamEvent = Annotated[Task | Message | StatusUpdate | ArtifactUpdate, Field(discriminator="kind")]


class PushConfig(_Model):
    """A webhook the client registers in its send's ``configuration`` (1.0
    ``taskPushNotificationConfig``; 0.3 ``pushNotificationConfig``): where the server POSTs the
    task's updates and how it authenticates to it
    (docs/reference/a2a-client-contract.md#push-notifications)."""

    url: str
    id: str | None = None
    token: str | None = None
    """Sent back as ``X-A2A-Notification-Token`` (a2a-sdk 1.3's sender)."""
    scheme: str | None = None
    """``authentication.scheme`` (0.3: the first of ``schemes``); with ``credentials``, sent as
    ``Authorization: <scheme> <credentials>``."""
    credentials: str | None = None


class SendParams(_Model):
    """``message/send`` / ``message/stream`` (0.3) and ``SendMessage`` /
    ``SendStreamingMessage`` (1.0) params."""

    message: Message
    blocking: bool | None = None
    """0.3 ``configuration.blocking``; 1.0 ``not returnImmediately``. ``None``: not stated,
    which a2a-sdk servers treat as blocking."""
    history_length: int | None = None
    accepted_output_modes: tuple[str, ...] = ()
    push: PushConfig | None = None
    """The webhook of the configuration, if the client registered one."""


class TaskQueryParams(_Model):
    id: str
    history_length: int | None = None


class TaskIdParams(_Model):
    id: str


class ListTasksParams(_Model):
    """1.0 ``ListTasks`` params (spec 1.0 §3.1.4): filters, paging, and what each task carries."""

    context_id: str | None = None
    status: TaskState | None = None
    page_size: int | None = None
    """1 to 100; ``None``: the server's default (a2a-sdk: 50)."""
    page_token: str | None = None
    history_length: int | None = None
    status_timestamp_after: datetime | None = None
    include_artifacts: bool = False


Params = SendParams | TaskQueryParams | TaskIdParams | ListTasksParams


class RpcRequest(_Model):
    """One decoded JSON-RPC request the fake implements."""

    id: str | int | None
    version: WireVersion
    op: Op
    params: Params

    @property
    def method(self) -> str:
        return METHODS[self.version][self.op]

    @property
    def streaming(self) -> bool:
        return self.op in STREAMING_OPS


class RpcError(_Model):
    """A JSON-RPC error, with the request's id and method when they are known."""

    code: int
    message: str
    data: Any = None
    id: str | int | None = None
    method: str | None = None

    @property
    def version(self) -> WireVersion | None:
        return version_of(self.method) if self.method is not None else None


def rpc_error(
    code: int,
    message: str | None = None,
    *,
    id: str | int | None = None,
    method: str | None = None,
    data: Any = None,
) -> RpcError:
    """An error with the SDK servers' default message for ``code`` unless one is given."""
    default = _ERRORS.get(code, ("Error", ""))[0]
    return RpcError(code=code, message=message or default, data=data, id=id, method=method)


# --- small helpers -----------------------------------------------------------------------------


def new_id() -> str:
    """A fresh id shaped like the SDKs' (a uuid4 string)."""
    return str(uuid.uuid4())


def timestamp(moment: datetime | None = None) -> str:
    """An ISO-8601 UTC timestamp spelled as ProtoJSON prints a ``Timestamp`` (no fraction, or
    3 or 6 digits, then ``Z``), so 0.3 and 1.0 write the same text (§1.5, §2 frames)."""
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    base = moment.strftime("%Y-%m-%dT%H:%M:%S")
    micro = moment.microsecond
    if micro == 0:
        return base + "Z"
    if micro % 1000 == 0:
        return f"{base}.{micro // 1000:03d}Z"
    return f"{base}.{micro:06d}Z"


def text_of(parts: Sequence[Part]) -> str:
    """The text parts joined, as the seed's ``text(parts)`` does."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))


def ends_turn(event: Task | Message | StatusUpdate | ArtifactUpdate) -> bool:
    """Whether a stream ends after this event: a direct Message, or a status update reaching a
    terminal or interrupted state (§1.6, 1.0 §3.1.2)."""
    if isinstance(event, Message):
        return True
    if isinstance(event, StatusUpdate):
        return event.status.state in TERMINAL_STATES | INTERRUPTED_STATES
    return False


def apply_event(task: Task, event: StatusUpdate | ArtifactUpdate) -> Task:
    """The task after one update, aggregated the way a2a-sdk's ``TaskManager`` does.

    A status update replaces the status; the status it replaces moves its message (if any)
    into the history. An artifact update with ``append`` extends the parts of the artifact
    with the same id; without ``append`` it replaces that artifact, or adds it (§1.5,
    "artifact reassembly as servers do it"). An append to an unknown id is ignored, as the SDK
    does.
    """
    if isinstance(event, StatusUpdate):
        history = task.history
        if task.status.message is not None:
            history = (*history, task.status.message)
        return task.model_copy(update={"status": event.status, "history": history})
    incoming = event.artifact
    artifacts = list(task.artifacts)
    index = next(
        (i for i, a in enumerate(artifacts) if a.artifact_id == incoming.artifact_id), None
    )
    if not event.append:
        if index is None:
            artifacts.append(incoming)
        else:
            artifacts[index] = incoming
    elif index is not None:
        current = artifacts[index]
        artifacts[index] = current.model_copy(update={"parts": current.parts + incoming.parts})
    return task.model_copy(update={"artifacts": tuple(artifacts)})


def limit_history(task: Task, history_length: int | None, version: WireVersion) -> Task:
    """The task with its history cut per ``historyLength``.

    0.3 never defined ``0``; the SDKs (and the Java client, which always sends ``0``) read
    ``0`` or a missing value as "all" (§1.9). 1.0 reads ``0`` as "none" and a missing value as
    the server default, here "all" (1.0 §3.2.4).
    """
    if history_length is None:
        return task
    if version == "0.3" and history_length <= 0:
        return task
    if history_length <= 0:
        return task.model_copy(update={"history": ()})
    return task.model_copy(update={"history": task.history[-history_length:]})
