"""Decoders: 0.3 or 1.0 JSON read back into the internal model, strictly.

Objects (:func:`decode_message`, :func:`decode_task`), stream and send results
(:func:`decode_stream_event`, :func:`decode_send_result`) and response envelopes
(:func:`decode_response`). What the schema requires is checked; members not used are ignored.
Requests are decoded in :mod:`~streamproof.protocol.a2a.requests`.
"""

from __future__ import annotations

from typing import Any, Final

from streamproof.protocol.a2a.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Part,
    RpcError,
    StatusUpdate,
    Task,
    TaskStatus,
    TextPart,
)
from streamproof.protocol.a2a.reader import WireFormatError, _Reader, _type_name
from streamproof.protocol.a2a.vocabulary import (
    _ROLE_FROM_1_0,
    _STATE_FROM_1_0,
    _STATE_NUMBERS_1_0,
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    Role,
    TaskState,
    WireVersion,
)


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
