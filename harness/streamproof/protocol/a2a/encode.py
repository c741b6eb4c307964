"""Encoders: the internal model written as 0.3 or 1.0 JSON, key order included.

Objects (:func:`encode_message`, :func:`encode_task`, :func:`encode_stream_event`,
:func:`encode_send_result`), JSON-RPC envelopes (:func:`encode_result`, :func:`encode_error`)
and a client's request (:func:`encode_request`). Each returns plain JSON values, for
:func:`~streamproof.protocol.a2a.jsontext.dumps` to write.
"""

from __future__ import annotations

from typing import Any

from streamproof.protocol.a2a.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    ListTasksParams,
    Message,
    Part,
    RpcError,
    RpcRequest,
    SendParams,
    StatusUpdate,
    Task,
    TaskQueryParams,
    TaskStatus,
    TextPart,
    limit_history,
    timestamp,
)
from streamproof.protocol.a2a.vocabulary import (
    _ERROR_DOMAIN,
    _ERROR_INFO_TYPE,
    _ERRORS,
    _ROLE_1_0,
    _STATE_1_0,
    WireVersion,
)


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
    elif isinstance(params, ListTasksParams):
        out = _encode_list_params(params)
    else:
        out = {"id": params.id}
    return {"id": request.id, "jsonrpc": "2.0", "method": request.method, "params": out}


def _encode_list_params(params: ListTasksParams) -> dict[str, Any]:
    """1.0 ``ListTasks`` params, only the members that are set, in proto field order."""
    out: dict[str, Any] = {}
    if params.context_id is not None:
        out["contextId"] = params.context_id
    if params.status is not None:
        out["status"] = _STATE_1_0[params.status]
    if params.page_size is not None:
        out["pageSize"] = params.page_size
    if params.page_token is not None:
        out["pageToken"] = params.page_token
    if params.history_length is not None:
        out["historyLength"] = params.history_length
    if params.status_timestamp_after is not None:
        out["statusTimestampAfter"] = timestamp(params.status_timestamp_after)
    if params.include_artifacts:
        out["includeArtifacts"] = True
    return out
