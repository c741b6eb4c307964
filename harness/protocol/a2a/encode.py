"""A2A 0.3 and 1.0 over JSON-RPC, as pure functions: one task model, two wire codecs, no I/O.

The fake A2A server (:mod:`harness.fakes.a2a`) must look like a real A2A server to real
clients, and the checks that come later must read what it sent; both go through this module.
Nothing here touches a socket. Every spelling was checked against the research notes
(``/work/shared/research/a2a.md``, cited as §n) and against the installed a2a-sdk 1.3 source
(``a2a/compat/v0_3/types.py`` for 0.3, ``a2a/types/a2a_pb2`` for 1.0); the tests compare the
two byte for byte through the SDK's own models and parsers.

One internal model, two codecs
------------------------------
The internal model (:class:`Task`, :class:`Message`, :class:`StatusUpdate`,
:class:`ArtifactUpdate`, parts) follows 0.3 names and states, because the seed recipe and the
fake's scripts speak 0.3. Each object is written for one :data:`WireVersion`:

* **0.3** (§1.3-§1.4): methods ``message/send``, ``message/stream``, ``tasks/get``,
  ``tasks/cancel``, ``tasks/resubscribe``. Every polymorphic object carries ``kind``
  (``task``, ``message``, ``status-update``, ``artifact-update``; parts ``text``, ``data``,
  ``file``). States are lower-case with hyphens (``input-required``). A status update carries
  ``final``; an artifact update ``append`` and ``lastChunk``, both written out even when false,
  as the a2a-sdk servers do (§1.5 observed stream). Keys come out in alphabetical order, which
  is what the SDK's generated pydantic models dump.
* **1.0** (§2): PascalCase methods (``SendMessage``, ``SendStreamingMessage``, ``GetTask``,
  ``CancelTask``, ``SubscribeToTask``); no ``kind``: the member name is the discriminator
  (``{"task": …}``, ``{"statusUpdate": …}``), for stream results and for the ``SendMessage``
  result alike, while ``GetTask``/``CancelTask`` return a bare Task. Enums are ProtoJSON
  (``TASK_STATE_WORKING``, ``ROLE_USER``; 0.3's ``unknown`` is ``TASK_STATE_UNSPECIFIED``).
  ``final`` is gone; fields equal to their proto default are left out (``append: false``,
  empty lists), exactly as ``MessageToDict`` writes them; keys follow proto field order.
  Errors carry ``data`` as an array holding a ``google.rpc.ErrorInfo`` (§2 table, "errors").

A 1.0 request must say ``A2A-Version: 1.x``; a missing header means 0.3 (§2.1, spec §3.6), so
a 1.0 method without it gets -32009, as a2a-sdk 1.3 answers (:func:`check_version`).

Decoding is strict about what the schema requires (``kind`` on 0.3 parts and messages,
``messageId``, ``role``, one content member per 1.0 part) and ignores members it does not use
(``metadata``, ``extensions``, ``tenant``), as the SDK servers do. ProtoJSON lets a 1.0 peer
spell a field in snake_case and an enum as its number, so the 1.0 decoder accepts both.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AGENT_CARD_PATH",
    "INTERRUPTED_STATES",
    "JSON_CONTENT_TYPE",
    "METHODS",
    "SSE_CONTENT_TYPE",
    "TERMINAL_STATES",
    "VERSION_HEADER",
    "Artifact",
    "ArtifactUpdate",
    "DataPart",
    "FilePart",
    "Message",
    "Op",
    "Part",
    "RpcError",
    "RpcRequest",
    "SendParams",
    "ServedWire",
    "StatusUpdate",
    "StreamEvent",
    "Task",
    "TaskIdParams",
    "TaskQueryParams",
    "TaskState",
    "TaskStatus",
    "TextPart",
    "WireFormatError",
    "WireVersion",
    "agent_card",
    "apply_event",
    "check_version",
    "decode_message",
    "decode_request",
    "decode_request_object",
    "decode_response",
    "decode_send_result",
    "decode_stream_event",
    "decode_task",
    "dumps",
    "encode_error",
    "encode_message",
    "encode_request",
    "encode_result",
    "encode_send_result",
    "encode_stream_event",
    "encode_task",
    "ends_turn",
    "limit_history",
    "loads",
    "method_name",
    "new_id",
    "op_of",
    "rpc_error",
    "state_name",
    "text_of",
    "timestamp",
    "version_of",
]

WireVersion = Literal["0.3", "1.0"]
"""The two JSON-RPC wire grammars."""
ServedWire = Literal["0.3", "1.0", "both"]
"""What a server speaks: one grammar, or both on one endpoint as a2a-sdk 1.3 with
``enable_v0_3_compat`` does (§2.1)."""

VERSION_HEADER: Final = "A2A-Version"
AGENT_CARD_PATH: Final = "/.well-known/agent-card.json"
"""0.3 and 1.0 alike; the 0.2 path ``agent.json`` is never fetched by current clients (§1.1)."""
SSE_CONTENT_TYPE: Final = "text/event-stream; charset=utf-8"
"""What a2a-sdk servers (sse-starlette) send (§1.5)."""
JSON_CONTENT_TYPE: Final = "application/json"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- states, methods, errors -------------------------------------------------------------------


class TaskState(StrEnum):
    """0.3 spellings (§1.4). 1.0 spellings come from :data:`_STATE_1_0`."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    REJECTED = "rejected"
    UNKNOWN = "unknown"


TERMINAL_STATES: Final = frozenset(
    {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.UNKNOWN,
    }
)
"""States a task never leaves. The 0.3 spec lists four; ``unknown`` is added because the seed
(and Java's ``TaskState.isFinal()``) treats it as terminal."""
INTERRUPTED_STATES: Final = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
"""States that end a turn without ending the task: the agent waits for the client."""

_STATE_1_0: Final[dict[TaskState, str]] = {
    TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
    TaskState.WORKING: "TASK_STATE_WORKING",
    TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
    TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
    TaskState.COMPLETED: "TASK_STATE_COMPLETED",
    TaskState.FAILED: "TASK_STATE_FAILED",
    TaskState.CANCELED: "TASK_STATE_CANCELED",
    TaskState.REJECTED: "TASK_STATE_REJECTED",
    TaskState.UNKNOWN: "TASK_STATE_UNSPECIFIED",
}
_STATE_FROM_1_0: Final = {v: k for k, v in _STATE_1_0.items()}
_STATE_NUMBERS_1_0: Final = {  # a2a.proto enum numbers (ProtoJSON accepts them)
    0: TaskState.UNKNOWN,
    1: TaskState.SUBMITTED,
    2: TaskState.WORKING,
    3: TaskState.COMPLETED,
    4: TaskState.FAILED,
    5: TaskState.CANCELED,
    6: TaskState.INPUT_REQUIRED,
    7: TaskState.REJECTED,
    8: TaskState.AUTH_REQUIRED,
}

Role = Literal["user", "agent"]
_ROLE_1_0: Final[dict[str, str]] = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_ROLE_FROM_1_0: Final[dict[Any, Role]] = {
    "ROLE_USER": "user",
    "ROLE_AGENT": "agent",
    1: "user",
    2: "agent",
}

Op = Literal["send", "stream", "get", "cancel", "subscribe"]
"""What a request asks for, whatever its wire spelling."""

METHODS: Final[dict[WireVersion, dict[Op, str]]] = {
    "0.3": {
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
    },
    "1.0": {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
    },
}
_OPS: Final[dict[str, tuple[WireVersion, Op]]] = {
    method: (version, op) for version, table in METHODS.items() for op, method in table.items()
}
STREAMING_OPS: Final[frozenset[Op]] = frozenset({"stream", "subscribe"})

# error codes (§1.7; 1.0 adds -32008 and -32009, §2 table)
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
TASK_NOT_FOUND: Final = -32001
TASK_NOT_CANCELABLE: Final = -32002
PUSH_NOTIFICATION_NOT_SUPPORTED: Final = -32003
UNSUPPORTED_OPERATION: Final = -32004
CONTENT_TYPE_NOT_SUPPORTED: Final = -32005
INVALID_AGENT_RESPONSE: Final = -32006
EXTENDED_CARD_NOT_CONFIGURED: Final = -32007
EXTENSION_SUPPORT_REQUIRED: Final = -32008
VERSION_NOT_SUPPORTED: Final = -32009

_ERRORS: Final[dict[int, tuple[str, str]]] = {
    # code: (default message as the a2a-sdk servers write it, 1.0 ErrorInfo reason)
    PARSE_ERROR: ("Invalid JSON payload", "UNKNOWN_ERROR"),  # the SDK has no reason for it
    INVALID_REQUEST: ("Invalid Request", "INVALID_REQUEST"),
    METHOD_NOT_FOUND: ("Method not found", "METHOD_NOT_FOUND"),
    INVALID_PARAMS: ("Invalid params", "INVALID_PARAMS"),
    INTERNAL_ERROR: ("Internal error", "INTERNAL_ERROR"),
    TASK_NOT_FOUND: ("Task not found", "TASK_NOT_FOUND"),
    TASK_NOT_CANCELABLE: ("Task cannot be canceled", "TASK_NOT_CANCELABLE"),
    PUSH_NOTIFICATION_NOT_SUPPORTED: (
        "Push Notification is not supported",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    UNSUPPORTED_OPERATION: ("This operation is not supported", "UNSUPPORTED_OPERATION"),
    CONTENT_TYPE_NOT_SUPPORTED: ("Incompatible content types", "CONTENT_TYPE_NOT_SUPPORTED"),
    INVALID_AGENT_RESPONSE: ("Invalid agent response", "INVALID_AGENT_RESPONSE"),
    EXTENDED_CARD_NOT_CONFIGURED: (
        "Authenticated Extended Card is not configured",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    EXTENSION_SUPPORT_REQUIRED: ("Extension support required", "EXTENSION_SUPPORT_REQUIRED"),
    VERSION_NOT_SUPPORTED: ("Version not supported", "VERSION_NOT_SUPPORTED"),
}
_ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
_ERROR_DOMAIN: Final = "a2a-protocol.org"

# Real A2A methods the fake does not implement, and the error a server without the feature
# gives (push notifications: -32003; extended card: -32007; ListTasks: -32004).
_UNIMPLEMENTED: Final[dict[str, tuple[WireVersion, int]]] = {
    "tasks/pushNotificationConfig/set": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/get": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/list": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/delete": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "agent/getAuthenticatedExtendedCard": ("0.3", EXTENDED_CARD_NOT_CONFIGURED),
    "ListTasks": ("1.0", UNSUPPORTED_OPERATION),
    "CreateTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "GetTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "ListTaskPushNotificationConfigs": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "DeleteTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "GetExtendedAgentCard": ("1.0", EXTENDED_CARD_NOT_CONFIGURED),
}


def version_of(method: str) -> WireVersion | None:
    """The wire grammar a method name belongs to (``None``: not an A2A method). The two
    grammars are disjoint, so one endpoint can tell them apart (§2.1)."""
    known = _OPS.get(method)
    if known is not None:
        return known[0]
    unimplemented = _UNIMPLEMENTED.get(method)
    return unimplemented[0] if unimplemented is not None else None


def op_of(method: str) -> Op | None:
    """What a method asks for, if it is one of the five the fake implements."""
    known = _OPS.get(method)
    return known[1] if known is not None else None


def method_name(op: Op, version: WireVersion) -> str:
    return METHODS[version][op]


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


class SendParams(_Model):
    """``message/send`` / ``message/stream`` (0.3) and ``SendMessage`` /
    ``SendStreamingMessage`` (1.0) params."""

    message: Message
    blocking: bool | None = None
    """0.3 ``configuration.blocking``; 1.0 ``not returnImmediately``. ``None``: not stated,
    which a2a-sdk servers treat as blocking."""
    history_length: int | None = None
    accepted_output_modes: tuple[str, ...] = ()


class TaskQueryParams(_Model):
    id: str
    history_length: int | None = None


class TaskIdParams(_Model):
    id: str


Params = SendParams | TaskQueryParams | TaskIdParams


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


def state_name(state: TaskState, version: WireVersion) -> str:
    """A state as a version spells it (``input-required`` / ``TASK_STATE_INPUT_REQUIRED``)."""
    return state.value if version == "0.3" else _STATE_1_0[state]


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


# --- JSON --------------------------------------------------------------------------------------

_LINE_BREAKS: Final = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps(payload: Any) -> str:
    """Compact one-line JSON. Java 0.3 and JS clients read one ``data:`` line as one whole
    document (§1.5), so no raw line break may appear, not even U+2028/U+2029/U+0085."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(body: bytes | str) -> Any:
    """Strict JSON (RFC 8259): no ``NaN``/``Infinity``; bytes must be UTF-8. Raises ValueError."""
    if isinstance(body, bytes):
        body = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return json.loads(body, parse_constant=_no_constants)


# --- encoders ----------------------------------------------------------------------------------


def _encode_part(part: Part, version: WireVersion) -> dict[str, Any]:
    if version == "0.3":
        if isinstance(part, TextPart):
            return {"kind": "text", "text": part.text}
        if isinstance(part, DataPart):
            if isinstance(part.data, dict):
                return {"data": part.data, "kind": "data"}
            # a2a-sdk's to_compat_part: a non-object value travels wrapped and flagged
            return {
                "data": {"value": part.data},
                "kind": "data",
                "metadata": {"data_part_compat": True},
            }
        file: dict[str, Any] = {}
        if part.bytes is not None:
            file["bytes"] = part.bytes
        if part.media_type is not None:
            file["mimeType"] = part.media_type
        if part.name is not None:
            file["name"] = part.name
        if part.uri is not None:
            file["uri"] = part.uri
        return {"file": file, "kind": "file"}
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, DataPart):
        return {"data": part.data}
    out: dict[str, Any] = {}
    if part.bytes is not None:
        out["raw"] = part.bytes
    if part.uri is not None:
        out["url"] = part.uri
    if part.name:
        out["filename"] = part.name
    if part.media_type:
        out["mediaType"] = part.media_type
    return out


def encode_message(message: Message, version: WireVersion) -> dict[str, Any]:
    parts = [_encode_part(p, version) for p in message.parts]
    if version == "0.3":
        out: dict[str, Any] = {}
        if message.context_id is not None:
            out["contextId"] = message.context_id
        out["kind"] = "message"
        out["messageId"] = message.message_id
        out["parts"] = parts
        out["role"] = message.role
        if message.task_id is not None:
            out["taskId"] = message.task_id
        return out
    out = {"messageId": message.message_id}
    if message.context_id:
        out["contextId"] = message.context_id
    if message.task_id:
        out["taskId"] = message.task_id
    out["role"] = _ROLE_1_0[message.role]
    if parts:
        out["parts"] = parts
    return out


def _encode_artifact(artifact: Artifact, version: WireVersion) -> dict[str, Any]:
    parts = [_encode_part(p, version) for p in artifact.parts]
    if version == "0.3":
        out: dict[str, Any] = {"artifactId": artifact.artifact_id}
        if artifact.description is not None:
            out["description"] = artifact.description
        if artifact.name is not None:
            out["name"] = artifact.name
        out["parts"] = parts
        return out
    out = {"artifactId": artifact.artifact_id}
    if artifact.name:
        out["name"] = artifact.name
    if artifact.description:
        out["description"] = artifact.description
    if parts:
        out["parts"] = parts
    return out


def _encode_status(status: TaskStatus, version: WireVersion) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if version == "0.3":
        if status.message is not None:
            out["message"] = encode_message(status.message, version)
        out["state"] = status.state.value
    else:
        out["state"] = _STATE_1_0[status.state]
        if status.message is not None:
            out["message"] = encode_message(status.message, version)
    if status.timestamp is not None:
        out["timestamp"] = status.timestamp
    return out


def encode_task(
    task: Task, version: WireVersion, *, history_length: int | None = None
) -> dict[str, Any]:
    """A Task object (the ``tasks/get``/``GetTask`` result, or the inside of a wrapper)."""
    task = limit_history(task, history_length, version)
    artifacts = [_encode_artifact(a, version) for a in task.artifacts]
    history = [encode_message(m, version) for m in task.history]
    if version == "0.3":
        out: dict[str, Any] = {}
        if artifacts:
            out["artifacts"] = artifacts
        out["contextId"] = task.context_id
        if history:
            out["history"] = history
        out["id"] = task.id
        out["kind"] = "task"
        out["status"] = _encode_status(task.status, version)
        return out
    out = {
        "id": task.id,
        "contextId": task.context_id,
        "status": _encode_status(task.status, version),
    }
    if artifacts:
        out["artifacts"] = artifacts
    if history:
        out["history"] = history
    return out


def _encode_status_update(event: StatusUpdate, version: WireVersion) -> dict[str, Any]:
    if version == "0.3":
        return {
            "contextId": event.context_id,
            "final": event.final,
            "kind": "status-update",
            "status": _encode_status(event.status, version),
            "taskId": event.task_id,
        }
    return {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": _encode_status(event.status, version),
    }


def _encode_artifact_update(event: ArtifactUpdate, version: WireVersion) -> dict[str, Any]:
    if version == "0.3":
        return {
            "append": event.append,
            "artifact": _encode_artifact(event.artifact, version),
            "contextId": event.context_id,
            "kind": "artifact-update",
            "lastChunk": event.last_chunk,
            "taskId": event.task_id,
        }
    out: dict[str, Any] = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": _encode_artifact(event.artifact, version),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    return out


def encode_stream_event(
    event: Task | Message | StatusUpdate | ArtifactUpdate,
    version: WireVersion,
    *,
    history_length: int | None = None,
) -> dict[str, Any]:
    """The ``result`` of one stream response: bare with ``kind`` (0.3) or wrapped in a
    ``StreamResponse`` member (1.0)."""
    if isinstance(event, Task):
        body = encode_task(event, version, history_length=history_length)
        wrapper = "task"
    elif isinstance(event, Message):
        body, wrapper = encode_message(event, version), "message"
    elif isinstance(event, StatusUpdate):
        body, wrapper = _encode_status_update(event, version), "statusUpdate"
    else:
        body, wrapper = _encode_artifact_update(event, version), "artifactUpdate"
    return body if version == "0.3" else {wrapper: body}


def encode_send_result(
    result: Task | Message, version: WireVersion, *, history_length: int | None = None
) -> dict[str, Any]:
    """The ``message/send`` result (bare Task or Message) / ``SendMessage`` result
    (``{"task": …}`` or ``{"message": …}``)."""
    return encode_stream_event(result, version, history_length=history_length)


def encode_result(
    request_id: str | int | None, result: Any, version: WireVersion
) -> dict[str, Any]:
    """A JSON-RPC success envelope, keys in the order each SDK server writes them."""
    if version == "0.3":
        return {"id": request_id, "jsonrpc": "2.0", "result": result}
    return {"result": result, "id": request_id, "jsonrpc": "2.0"}


def encode_error(error: RpcError, version: WireVersion | None = None) -> dict[str, Any]:
    """A JSON-RPC error envelope. In 1.0, ``data`` is an array of typed details led by a
    ``google.rpc.ErrorInfo`` (§2 "errors"); 0.3 ``data`` is free-form and usually absent.
    ``version`` defaults to the grammar of the request's method (``None`` when unknown)."""
    version = version if version is not None else error.version
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if version == "1.0":
        if isinstance(error.data, list):
            body["data"] = error.data
        else:
            reason = _ERRORS.get(error.code, ("", "UNKNOWN_ERROR"))[1]
            metadata = error.data if isinstance(error.data, dict) else {}
            body["data"] = [
                {
                    "@type": _ERROR_INFO_TYPE,
                    "reason": reason,
                    "domain": _ERROR_DOMAIN,
                    "metadata": metadata,
                }
            ]
        return {"error": body, "id": error.id, "jsonrpc": "2.0"}
    if error.data is not None:
        body["data"] = error.data
    return {"error": body, "id": error.id, "jsonrpc": "2.0"}


def encode_request(request: RpcRequest) -> dict[str, Any]:
    """A request as a client writes it (for tests and the reference client)."""
    version = request.version
    params = request.params
    out: dict[str, Any]
    if isinstance(params, SendParams):
        config: dict[str, Any] = {}
        if params.accepted_output_modes:
            config["acceptedOutputModes"] = list(params.accepted_output_modes)
        if version == "0.3":
            if params.blocking is not None:
                config["blocking"] = params.blocking
            if params.history_length is not None:
                config["historyLength"] = params.history_length
            out = {}
            if config:
                out["configuration"] = config
            out["message"] = encode_message(params.message, version)
        else:
            if params.history_length is not None:
                config["historyLength"] = params.history_length
            if params.blocking is not None:
                config["returnImmediately"] = not params.blocking
            out = {"message": encode_message(params.message, version)}
            if config:
                out["configuration"] = config
    elif isinstance(params, TaskQueryParams):
        out = {"id": params.id}
        if params.history_length is not None:
            out["historyLength"] = params.history_length
    else:
        out = {"id": params.id}
    return {"id": request.id, "jsonrpc": "2.0", "method": request.method, "params": out}


# --- agent cards -------------------------------------------------------------------------------


def agent_card(
    url: str,
    wire: ServedWire,
    *,
    name: str = "streamproof-fake-agent",
    description: str = "A scripted A2A agent (streamproof fake server)",
    streaming: bool = True,
) -> dict[str, Any]:
    """The card served at :data:`AGENT_CARD_PATH`; ``url`` is the JSON-RPC endpoint.

    How a2a-sdk 1.3 picks its transport from the card (§1.1, ``client_factory.py``):

    * **0.3**: ``url`` + ``preferredTransport`` + ``protocolVersion: "0.3.0"`` and no
      ``supportedInterfaces``. The client maps it to one interface at version 0.3.0 and picks
      ``CompatJsonRpcTransport`` (``0.3 <= v < 1.0``). Java 0.3.3 needs every field below
      (it throws on a card without ``capabilities``, ``skills``, ``url``…).
    * **1.0**: ``supportedInterfaces: [{url, protocolBinding: JSONRPC, protocolVersion: "1.0"}]``
      only; the client picks ``JsonRpcTransport``.
    * **both**: the merge a2a-sdk 1.3 serves with 0.3 compat on (1.0 interface first, then the
      0.3 one, plus the 0.3 top-level fields); the 1.3 client prefers 1.0 (§2.1).
    """
    capabilities = {"streaming": streaming, "pushNotifications": False}
    skill = {
        "id": "scripted",
        "name": "scripted",
        "description": "Plays a scripted task timeline",
        "tags": ["streamproof"],
    }
    if wire == "0.3":
        return {
            "protocolVersion": "0.3.0",
            "name": name,
            "description": description,
            "url": url,
            "preferredTransport": "JSONRPC",
            "version": "1.0.0",
            "capabilities": capabilities,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [skill],
        }
    interfaces = [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "supportedInterfaces": interfaces,
        "version": "1.0.0",
        "capabilities": capabilities,
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [skill],
    }
    if wire == "both":
        interfaces.append({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"})
        card.update(
            {
                "additionalInterfaces": [{"url": url, "transport": "JSONRPC"}],
                "preferredTransport": "JSONRPC",
                "protocolVersion": "0.3",
                "url": url,
            }
        )
    return card


# --- decoders ----------------------------------------------------------------------------------


class WireFormatError(ValueError):
    """A JSON value that is not the A2A object it should be; ``path`` says where."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def _snake(camel: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in camel)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class _Reader:
    """Typed access to one JSON object, reporting problems with their path."""

    __slots__ = ("obj", "path", "version")

    def __init__(self, value: Any, path: str, version: WireVersion) -> None:
        if not isinstance(value, dict):
            raise WireFormatError(path, f"expected an object, got {_type_name(value)}")
        self.obj: dict[str, Any] = value
        self.path = path
        self.version = version

    def has(self, key: str) -> bool:
        return self._key(key) is not None

    def _key(self, key: str) -> str | None:
        if key in self.obj:
            return key
        if self.version == "1.0":  # ProtoJSON accepts the proto field name too
            snake = _snake(key)
            if snake in self.obj:
                return snake
        return None

    def raw(self, key: str) -> Any:
        found = self._key(key)
        return self.obj[found] if found is not None else None

    def at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def string(self, key: str, *, required: bool = False, non_empty: bool = False) -> str | None:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return None
        if not isinstance(value, str):
            raise WireFormatError(self.at(key), f"must be a string, got {_type_name(value)}")
        if non_empty and not value:
            raise WireFormatError(self.at(key), "must not be empty")
        return value

    def required(self, key: str, *, non_empty: bool = False) -> str:
        value = self.string(key, required=True, non_empty=non_empty)
        assert value is not None
        return value

    def boolean(self, key: str, *, required: bool = False) -> bool | None:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return None
        if not isinstance(value, bool):
            raise WireFormatError(self.at(key), f"must be a boolean, got {_type_name(value)}")
        return value

    def integer(self, key: str) -> int | None:
        value = self.raw(key)
        if value is None:
            return None
        if self.version == "1.0" and isinstance(value, str):  # ProtoJSON allows "5"
            try:
                value = int(value)
            except ValueError:
                raise WireFormatError(self.at(key), "must be an integer") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise WireFormatError(self.at(key), f"must be an integer, got {_type_name(value)}")
        return value

    def array(self, key: str, *, required: bool = False) -> list[Any]:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return []
        if not isinstance(value, list):
            raise WireFormatError(self.at(key), f"must be an array, got {_type_name(value)}")
        return value

    def kind(self, expected: str) -> None:
        value = self.raw("kind")
        if value != expected:
            got = "missing" if value is None else repr(value)
            raise WireFormatError(self.at("kind"), f"must be {expected!r}, got {got}")


def _decode_part(value: Any, path: str, version: WireVersion) -> Part:
    r = _Reader(value, path, version)
    if version == "0.3":
        kind = r.raw("kind")
        if kind == "text":
            return TextPart(text=r.required("text"))
        if kind == "data":
            data = r.raw("data")
            if not isinstance(data, dict):
                raise WireFormatError(r.at("data"), f"must be an object, got {_type_name(data)}")
            meta = r.raw("metadata")
            if isinstance(meta, dict) and meta.get("data_part_compat") and "value" in data:
                return DataPart(data=data["value"])
            return DataPart(data=data)
        if kind == "file":
            f = _Reader(r.raw("file"), r.at("file"), version)
            uri, raw = f.string("uri"), f.string("bytes")
            if (uri is None) == (raw is None):
                raise WireFormatError(f.path, "needs exactly one of 'uri' and 'bytes'")
            return FilePart(
                uri=uri, bytes=raw, name=f.string("name"), media_type=f.string("mimeType")
            )
        got = "missing" if kind is None else repr(kind)
        raise WireFormatError(r.at("kind"), f"must be 'text', 'data' or 'file', got {got}")
    present = [k for k in ("text", "raw", "url", "data") if r.has(k)]
    if len(present) != 1:
        raise WireFormatError(path, "needs exactly one of 'text', 'raw', 'url', 'data'")
    member = present[0]
    if member == "text":
        return TextPart(text=r.required("text"))
    if member == "data":
        return DataPart(data=r.raw("data"))
    name, media = r.string("filename"), r.string("mediaType")
    if member == "raw":
        return FilePart(bytes=r.string("raw", required=True), name=name, media_type=media)
    return FilePart(uri=r.string("url", required=True), name=name, media_type=media)


def _decode_parts(r: _Reader, key: str, *, required: bool) -> tuple[Part, ...]:
    return tuple(
        _decode_part(p, f"{r.at(key)}[{i}]", r.version)
        for i, p in enumerate(r.array(key, required=required))
    )


def decode_message(value: Any, version: WireVersion, path: str = "message") -> Message:
    r = _Reader(value, path, version)
    if version == "0.3":
        r.kind("message")
        role_raw = r.raw("role")
        if role_raw not in ("user", "agent"):
            raise WireFormatError(r.at("role"), f"must be 'user' or 'agent', got {role_raw!r}")
        role: Role = role_raw
        parts = _decode_parts(r, "parts", required=True)
    else:
        role_raw = r.raw("role")
        if isinstance(role_raw, bool) or role_raw not in _ROLE_FROM_1_0:
            raise WireFormatError(
                r.at("role"), f"must be 'ROLE_USER' or 'ROLE_AGENT', got {role_raw!r}"
            )
        role = _ROLE_FROM_1_0[role_raw]
        parts = _decode_parts(r, "parts", required=False)
    return Message(
        message_id=r.required("messageId", non_empty=True),
        role=role,
        parts=parts,
        task_id=r.string("taskId") or None,
        context_id=r.string("contextId") or None,
    )


def _decode_artifact(value: Any, path: str, version: WireVersion) -> Artifact:
    r = _Reader(value, path, version)
    return Artifact(
        artifact_id=r.required("artifactId", non_empty=True),
        parts=_decode_parts(r, "parts", required=version == "0.3"),
        name=r.string("name") if version == "0.3" else (r.string("name") or None),
        description=r.string("description")
        if version == "0.3"
        else (r.string("description") or None),
    )


def _decode_state(value: Any, path: str, version: WireVersion) -> TaskState:
    if version == "0.3":
        try:
            return TaskState(value)
        except ValueError:
            raise WireFormatError(path, f"is not a 0.3 task state: {value!r}") from None
    if isinstance(value, str) and value in _STATE_FROM_1_0:
        return _STATE_FROM_1_0[value]
    if isinstance(value, int) and not isinstance(value, bool) and value in _STATE_NUMBERS_1_0:
        return _STATE_NUMBERS_1_0[value]
    raise WireFormatError(path, f"is not a 1.0 task state: {value!r}")


def _decode_status(value: Any, path: str, version: WireVersion) -> TaskStatus:
    r = _Reader(value, path, version)
    if not r.has("state"):
        if version == "0.3":
            raise WireFormatError(r.at("state"), "is required")
        state = TaskState.UNKNOWN  # ProtoJSON omits the default (UNSPECIFIED)
    else:
        state = _decode_state(r.raw("state"), r.at("state"), version)
    message = r.raw("message")
    return TaskStatus(
        state=state,
        message=None if message is None else decode_message(message, version, r.at("message")),
        timestamp=r.string("timestamp"),
    )


def decode_task(value: Any, version: WireVersion, path: str = "task") -> Task:
    r = _Reader(value, path, version)
    if version == "0.3":
        r.kind("task")
    if version == "0.3" and not r.has("status"):
        raise WireFormatError(r.at("status"), "is required")
    return Task(
        id=r.required("id", non_empty=True),
        context_id=r.string("contextId", required=version == "0.3") or "",
        status=_decode_status(r.raw("status") or {}, r.at("status"), version),
        artifacts=tuple(
            _decode_artifact(a, f"{r.at('artifacts')}[{i}]", version)
            for i, a in enumerate(r.array("artifacts"))
        ),
        history=tuple(
            decode_message(m, version, f"{r.at('history')}[{i}]")
            for i, m in enumerate(r.array("history"))
        ),
    )


def _derived_final(state: TaskState) -> bool:
    return state in TERMINAL_STATES | INTERRUPTED_STATES


def _decode_status_update(value: Any, path: str, version: WireVersion) -> StatusUpdate:
    r = _Reader(value, path, version)
    if version == "0.3":
        r.kind("status-update")
    if not r.has("status"):
        raise WireFormatError(r.at("status"), "is required")
    status = _decode_status(r.raw("status"), r.at("status"), version)
    if version == "0.3":
        final = r.boolean("final", required=True) is True
    else:
        final = _derived_final(status.state)
    return StatusUpdate(
        task_id=r.required("taskId", non_empty=True),
        context_id=r.string("contextId", required=version == "0.3") or "",
        status=status,
        final=final,
    )


def _decode_artifact_update(value: Any, path: str, version: WireVersion) -> ArtifactUpdate:
    r = _Reader(value, path, version)
    if version == "0.3":
        r.kind("artifact-update")
    return ArtifactUpdate(
        task_id=r.required("taskId", non_empty=True),
        context_id=r.string("contextId", required=version == "0.3") or "",
        artifact=_decode_artifact(r.raw("artifact"), r.at("artifact"), version),
        append=bool(r.boolean("append")),
        last_chunk=bool(r.boolean("lastChunk")),
    )


_WRAPPERS_1_0: Final = ("task", "message", "statusUpdate", "artifactUpdate")


def decode_stream_event(
    value: Any, version: WireVersion, path: str = "result"
) -> Task | Message | StatusUpdate | ArtifactUpdate:
    """One stream ``result``: a 0.3 object told apart by ``kind``, or a 1.0 ``StreamResponse``
    with exactly one member."""
    if version == "0.3":
        r = _Reader(value, path, version)
        kind = r.raw("kind")
        if kind == "task":
            return decode_task(value, version, path)
        if kind == "message":
            return decode_message(value, version, path)
        if kind == "status-update":
            return _decode_status_update(value, path, version)
        if kind == "artifact-update":
            return _decode_artifact_update(value, path, version)
        got = "missing" if kind is None else repr(kind)
        raise WireFormatError(
            r.at("kind"),
            f"must be 'task', 'message', 'status-update' or 'artifact-update', got {got}",
        )
    r = _Reader(value, path, version)
    present = [k for k in _WRAPPERS_1_0 if r.has(k)]
    if len(present) != 1:
        raise WireFormatError(
            path, "needs exactly one of 'task', 'message', 'statusUpdate', 'artifactUpdate'"
        )
    member = present[0]
    inner, inner_path = r.raw(member), r.at(member)
    if member == "task":
        return decode_task(inner, version, inner_path)
    if member == "message":
        return decode_message(inner, version, inner_path)
    if member == "statusUpdate":
        return _decode_status_update(inner, inner_path, version)
    return _decode_artifact_update(inner, inner_path, version)


def decode_send_result(value: Any, version: WireVersion, path: str = "result") -> Task | Message:
    event = decode_stream_event(value, version, path)
    if not isinstance(event, Task | Message):
        raise WireFormatError(path, "a send result must be a Task or a Message")
    return event


def decode_response(value: Any, path: str = "response") -> Any:
    """The ``result`` of a JSON-RPC response envelope, or an :class:`RpcError` for an error
    response. Raises :class:`WireFormatError` for anything that is neither."""
    if not isinstance(value, dict):
        raise WireFormatError(path, f"expected an object, got {_type_name(value)}")
    if value.get("jsonrpc") != "2.0":
        raise WireFormatError(f"{path}.jsonrpc", "must be '2.0'")
    request_id = value.get("id")
    if "error" in value:
        err = value["error"]
        if not isinstance(err, dict):
            raise WireFormatError(f"{path}.error", "must be an object")
        code, message = err.get("code"), err.get("message")
        if isinstance(code, bool) or not isinstance(code, int):
            raise WireFormatError(f"{path}.error.code", "must be an integer")
        if not isinstance(message, str):
            raise WireFormatError(f"{path}.error.message", "must be a string")
        return RpcError(
            code=code,
            message=message,
            data=err.get("data"),
            id=request_id if isinstance(request_id, str | int) else None,
        )
    if "result" not in value:
        raise WireFormatError(path, "has neither 'result' nor 'error'")
    return value["result"]


# --- requests ----------------------------------------------------------------------------------


def _decode_send_params(r: _Reader) -> SendParams:
    message = decode_message(r.raw("message"), r.version, r.at("message"))
    config_raw = r.raw("configuration")
    blocking: bool | None = None
    history_length: int | None = None
    modes: tuple[str, ...] = ()
    if config_raw is not None:
        c = _Reader(config_raw, r.at("configuration"), r.version)
        history_length = c.integer("historyLength")
        raw_modes = c.array("acceptedOutputModes")
        if not all(isinstance(m, str) for m in raw_modes):
            raise WireFormatError(c.at("acceptedOutputModes"), "must be an array of strings")
        modes = tuple(raw_modes)
        if r.version == "0.3":
            blocking = c.boolean("blocking")
        else:
            immediate = c.boolean("returnImmediately")
            blocking = None if immediate is None else not immediate
            if history_length is not None and history_length < 0:
                raise WireFormatError(c.at("historyLength"), "must not be negative")
    return SendParams(
        message=message,
        blocking=blocking,
        history_length=history_length,
        accepted_output_modes=modes,
    )


def decode_request_object(value: Any, served: ServedWire = "both") -> RpcRequest | RpcError:
    """Decode one parsed JSON-RPC request, or say which error answers it.

    The order of the checks follows JSON-RPC 2.0 and a2a-sdk's dispatcher: not an object (a
    batch included) -> -32600; ``id`` not a string, integer or null -> -32600 (reported with
    a null id); ``jsonrpc`` not ``"2.0"`` -> -32600; no string ``method`` -> -32600; a method
    outside the grammars ``served`` -> -32601 (a 0.3 server has no ``SendMessage``); a real
    A2A method the fake does not implement -> the error a server without that feature gives;
    params missing, not an object, or not the method's params -> -32602.
    """
    if isinstance(value, list):
        return rpc_error(INVALID_REQUEST, "Batch requests are not supported")
    if not isinstance(value, dict):
        return rpc_error(INVALID_REQUEST, "A JSON-RPC request must be an object")
    raw_id = value.get("id")
    if isinstance(raw_id, bool) or not (raw_id is None or isinstance(raw_id, str | int)):
        return rpc_error(INVALID_REQUEST, "Invalid request: id must be a string, integer, or null")
    request_id: str | int | None = raw_id
    if value.get("jsonrpc") != "2.0":
        return rpc_error(
            INVALID_REQUEST, "Invalid request: 'jsonrpc' must be exactly '2.0'", id=request_id
        )
    method = value.get("method")
    if not isinstance(method, str) or not method:
        return rpc_error(
            INVALID_REQUEST, "Invalid request: 'method' must be a non-empty string", id=request_id
        )
    grammar = version_of(method)
    if grammar is not None and served != "both" and grammar != served:
        return rpc_error(
            METHOD_NOT_FOUND,
            f"Method not found: {method} (this server speaks A2A {served})",
            id=request_id,
        )
    known = _OPS.get(method)
    if known is None:
        unimplemented = _UNIMPLEMENTED.get(method)
        if unimplemented is not None:
            return rpc_error(unimplemented[1], id=request_id, method=method)
        return rpc_error(METHOD_NOT_FOUND, f"Method not found: {method}", id=request_id)
    version, op = known
    try:
        if "params" not in value:
            raise WireFormatError("params", "is required")
        r = _Reader(value["params"], "params", version)
        params: Params
        if op in ("send", "stream"):
            params = _decode_send_params(r)
        elif op == "get":
            history_length = r.integer("historyLength")
            if version == "1.0" and history_length is not None and history_length < 0:
                raise WireFormatError(r.at("historyLength"), "must not be negative")
            params = TaskQueryParams(
                id=r.required("id", non_empty=True),
                history_length=history_length,
            )
        else:
            params = TaskIdParams(id=r.required("id", non_empty=True))
    except WireFormatError as exc:
        return rpc_error(INVALID_PARAMS, f"Invalid params: {exc}", id=request_id, method=method)
    return RpcRequest(id=request_id, version=version, op=op, params=params)


def decode_request(body: bytes | str, served: ServedWire = "both") -> RpcRequest | RpcError:
    """Decode a request body: malformed JSON -> -32700, then :func:`decode_request_object`."""
    try:
        value = loads(body)
    except ValueError as exc:
        return rpc_error(PARSE_ERROR, f"Invalid JSON payload: {exc}")
    return decode_request_object(value, served)


_VERSION_SYNTAX: Final = re.compile(r"^(\d+)(?:\.\d+){0,2}$")


def _major(header: str) -> int | None:
    """The major version of ``Major.Minor[.Patch]``, or ``None`` when it is not one."""
    match = _VERSION_SYNTAX.match(header)
    return int(match.group(1)) if match else None


def check_version(request: RpcRequest, header: str | None, served: ServedWire) -> RpcError | None:
    """Whether a server speaking ``served`` takes this request, given its ``A2A-Version``.

    * A grammar the server does not speak -> -32601: a 0.3 server has no ``SendMessage``, a
      1.0-only a2a-sdk server has no ``message/send`` (§2.1).
    * A 1.0 method whose header is missing or empty counts as 0.3 and gets -32009; any 1.x
      header passes (a2a-sdk ``validate_version`` compares the major version; spec §3.6).
    * A 0.3 method is taken whatever the header says by a 0.3 server (0.3 predates the
      header). The dual-grammar a2a-sdk 1.3 server refuses it when the header says 1.x, with
      -32603 because 0.3 has no VersionNotSupported code (§2.1).
    """
    if served != "both" and request.version != served:
        return rpc_error(
            METHOD_NOT_FOUND,
            f"Method not found: {request.method} (this server speaks A2A {served})",
            id=request.id,
            method=request.method,
        )
    value = (header or "").strip()
    if request.version == "1.0":
        actual = value or "0.3"
        if _major(actual) != 1:
            return rpc_error(
                VERSION_NOT_SUPPORTED,
                f"A2A version '{actual}' is not supported by this handler. Expected version '1.0'.",
                id=request.id,
                method=request.method,
            )
        return None
    if served == "both" and value and _major(value) != 0:
        return rpc_error(
            INTERNAL_ERROR,
            f"A2A version '{value}' is not supported by this handler. Expected version '0.3'.",
            id=request.id,
            method=request.method,
        )
    return None
