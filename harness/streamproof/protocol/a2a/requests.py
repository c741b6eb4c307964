"""Requests as a server takes them: decoded into an :class:`RpcRequest` or the error that answers
them, then checked against the ``A2A-Version`` header and the grammars the server speaks."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from streamproof.protocol.a2a.decode import _decode_state, decode_message
from streamproof.protocol.a2a.jsontext import loads
from streamproof.protocol.a2a.model import (
    ListTasksParams,
    Params,
    PushConfig,
    RpcError,
    RpcRequest,
    SendParams,
    TaskIdParams,
    TaskQueryParams,
    rpc_error,
)
from streamproof.protocol.a2a.reader import WireFormatError, _Reader
from streamproof.protocol.a2a.vocabulary import (
    _OPS,
    _UNIMPLEMENTED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    VERSION_NOT_SUPPORTED,
    ServedWire,
    TaskState,
    WireVersion,
    version_of,
)


def _decode_send_params(r: _Reader) -> SendParams:
    message = decode_message(r.raw("message"), r.version, r.at("message"))
    config_raw = r.raw("configuration")
    blocking: bool | None = None
    history_length: int | None = None
    modes: tuple[str, ...] = ()
    push: PushConfig | None = None
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
        key = "pushNotificationConfig" if r.version == "0.3" else "taskPushNotificationConfig"
        if c.raw(key) is not None:
            push = _decode_push_config(_Reader(c.raw(key), c.at(key), r.version))
    return SendParams(
        message=message,
        blocking=blocking,
        history_length=history_length,
        accepted_output_modes=modes,
        push=push,
    )


def _decode_push_config(r: _Reader) -> PushConfig:
    """A webhook registration (spec 1.0 §4.3.1; 0.3 has ``schemes``, a list, for ``scheme``)."""
    scheme: str | None = None
    credentials: str | None = None
    auth = r.raw("authentication")
    if auth is not None:
        a = _Reader(auth, r.at("authentication"), r.version)
        if r.version == "0.3":
            schemes = a.array("schemes")
            if not all(isinstance(s, str) for s in schemes):
                raise WireFormatError(a.at("schemes"), "must be an array of strings")
            scheme = schemes[0] if schemes else None
        else:
            scheme = a.string("scheme")
        credentials = a.string("credentials")
    return PushConfig(
        url=r.required("url", non_empty=True),
        id=r.string("id") or None,
        token=r.string("token") or None,
        scheme=scheme or None,
        credentials=credentials or None,
    )


_NO_HEADER_CHECK: Final = object()


MAX_PAGE_SIZE: Final = 100
"""ListTasks ``pageSize`` is 1 to 100 (spec 1.0 §3.1.4; a2a-sdk ``validate_page_size``)."""


def _decode_list_params(r: _Reader) -> ListTasksParams:
    page_size = r.integer("pageSize")
    if page_size is not None and not 1 <= page_size <= MAX_PAGE_SIZE:
        raise WireFormatError(r.at("pageSize"), f"must be between 1 and {MAX_PAGE_SIZE}")
    history_length = r.integer("historyLength")
    if history_length is not None and history_length < 0:
        raise WireFormatError(r.at("historyLength"), "must not be negative")
    status_raw = r.raw("status")
    status: TaskState | None = None
    if status_raw is not None and status_raw != "TASK_STATE_UNSPECIFIED" and status_raw != 0:
        status = _decode_state(status_raw, r.at("status"), "1.0")
    after_raw = r.string("statusTimestampAfter")
    after: datetime | None = None
    if after_raw:
        try:
            after = datetime.fromisoformat(after_raw.replace("Z", "+00:00"))
        except ValueError:
            raise WireFormatError(
                r.at("statusTimestampAfter"), f"must be an RFC 3339 timestamp, got {after_raw!r}"
            ) from None
        if after.tzinfo is None:
            after = after.replace(tzinfo=UTC)
    return ListTasksParams(
        context_id=r.string("contextId") or None,
        status=status,
        page_size=page_size,
        page_token=r.string("pageToken") or None,
        history_length=history_length,
        status_timestamp_after=after,
        include_artifacts=bool(r.boolean("includeArtifacts")),
    )


def _decode_task_query(r: _Reader) -> TaskQueryParams:
    history_length = r.integer("historyLength")
    if r.version == "1.0" and history_length is not None and history_length < 0:
        raise WireFormatError(r.at("historyLength"), "must not be negative")
    return TaskQueryParams(id=r.required("id", non_empty=True), history_length=history_length)


def decode_request_object(value: Any, served: ServedWire = "both") -> RpcRequest | RpcError:
    """Decode one parsed JSON-RPC request, or say which error answers it.

    The order of the checks follows JSON-RPC 2.0 and a2a-sdk's dispatcher: not an object (a
    batch included) -> -32600; ``id`` not a string, integer or null -> -32600 (reported with
    a null id); ``jsonrpc`` not ``"2.0"`` -> -32600; no string ``method`` -> -32600; a method
    outside the grammars ``served`` -> -32601 (a 0.3 server has no ``SendMessage``); a real
    A2A method the fake does not implement -> the error a server without that feature gives;
    params missing, not an object, or not the method's params -> -32602. A server also checks
    the ``A2A-Version`` header, before the params: :func:`decode_served_request`.
    """
    return _decode(value, served, _NO_HEADER_CHECK)


def decode_served_request(
    value: Any, served: ServedWire, a2a_version: str | None
) -> RpcRequest | RpcError:
    """:func:`decode_request_object` as a server runs it, with the ``A2A-Version`` header
    (``a2a_version``, ``None`` when absent) checked (:func:`check_version`) in a2a-sdk 1.3's
    place: once the method is known and its ``params`` is an object, before any field of it
    is read. So a 1.0 call without the header gets -32009 even when its fields are wrong or
    the method is one the server does not implement, but a call whose ``params`` is missing or
    not an object gets -32602 first (a2a-sdk parses params into its types before the check)."""
    return _decode(value, served, a2a_version)


def _decode(value: Any, served: ServedWire, header: object) -> RpcRequest | RpcError:
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
            if header is not _NO_HEADER_CHECK:
                assert header is None or isinstance(header, str)
                refused = _check_header(unimplemented[0], method, request_id, header, served)
                if refused is not None:
                    return refused
            return rpc_error(unimplemented[1], id=request_id, method=method)
        return rpc_error(METHOD_NOT_FOUND, f"Method not found: {method}", id=request_id)
    version, op = known
    try:
        if "params" not in value:
            raise WireFormatError("params", "is required")
        r = _Reader(value["params"], "params", version)
    except WireFormatError as exc:
        return rpc_error(INVALID_PARAMS, f"Invalid params: {exc}", id=request_id, method=method)
    if header is not _NO_HEADER_CHECK:
        assert header is None or isinstance(header, str)
        refused = _check_header(version, method, request_id, header, served)
        if refused is not None:
            return refused
    try:
        params: Params
        if op in ("send", "stream"):
            params = _decode_send_params(r)
        elif op == "get":
            params = _decode_task_query(r)
        elif op == "list":
            params = _decode_list_params(r)
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
    return _check_header(request.version, request.method, request.id, header, served)


def _check_header(
    grammar: WireVersion,
    method: str,
    request_id: str | int | None,
    header: str | None,
    served: ServedWire,
) -> RpcError | None:
    """:func:`check_version`'s header rules for a method of ``grammar``."""
    value = (header or "").strip()
    if grammar == "1.0":
        actual = value or "0.3"
        if _major(actual) != 1:
            return rpc_error(
                VERSION_NOT_SUPPORTED,
                f"A2A version '{actual}' is not supported by this handler. Expected version '1.0'.",
                id=request_id,
                method=method,
            )
        return None
    if served == "both" and value and _major(value) != 0:
        return rpc_error(
            INTERNAL_ERROR,
            f"A2A version '{value}' is not supported by this handler. Expected version '0.3'.",
            id=request_id,
            method=method,
        )
    return None
