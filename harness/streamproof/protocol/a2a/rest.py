"""A2A 1.0's HTTP+JSON (REST) binding as pure functions: routes, requests, errors.

The REST binding carries the same operations as JSON-RPC (docs/explanation/wire-facts/a2a.md
§4): the operation is named by the HTTP method and path, not by a ``method`` member; the body
(or the query, for ``GET``) is the request message in ProtoJSON; a success is the bare result
(the ``SendMessage`` response, a ``StreamResponse`` per SSE event, a Task, a ``ListTasks``
response) with no JSON-RPC envelope, as ``application/a2a+json``; an error is an HTTP status
with a ``google.rpc.Status``-shaped body (``{"error": {code, status, message, details}}``,
``details`` led by an ``ErrorInfo`` whose ``reason`` names the A2A error).

Everything here copies what a2a-sdk 1.3 serves (``create_rest_routes``), measured by the
differential test (``harness/tests/fakes/a2a/test_differential.py``):

* **Routes** (:func:`match_route`) in a2a-sdk's order, each also under one leading path segment
  (a2a-sdk's ``/{tenant}`` mount; the fake's ``--concurrency`` prefix ``/<marker>`` is one).
  A path no route matches is 404, a path matched under another HTTP method 405, both
  ``text/plain`` as Starlette answers them.
* **Requests** (:func:`decode_rest_request`) become the :class:`RpcRequest` the JSON-RPC
  decoder makes (version ``1.0``, id ``None``), so the fake's method families and its ledger
  never learn which binding carried a call. The ``A2A-Version`` header is checked first; a
  body that is not a JSON object, or a query value that does not parse, is ``INVALID_REQUEST``;
  a well-formed request the schema refuses is ``INVALID_PARAMS``.
* **Errors** (:func:`encode_rest_error`): the A2A error code mapped to the HTTP status and
  gRPC status name a2a-sdk uses (:data:`REST_STATUS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from streamproof.protocol.a2a.jsontext import loads
from streamproof.protocol.a2a.model import RpcError, RpcRequest, TaskIdParams, rpc_error
from streamproof.protocol.a2a.reader import WireFormatError, _Reader
from streamproof.protocol.a2a.requests import (
    _check_header,
    _decode_list_params,
    _decode_send_params,
    _decode_task_query,
)
from streamproof.protocol.a2a.vocabulary import (
    _ERROR_DOMAIN,
    _ERROR_INFO_TYPE,
    _ERRORS,
    _OPS,
    _UNIMPLEMENTED,
    CONTENT_TYPE_NOT_SUPPORTED,
    EXTENDED_CARD_NOT_CONFIGURED,
    EXTENSION_SUPPORT_REQUIRED,
    INTERNAL_ERROR,
    INVALID_AGENT_RESPONSE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PUSH_NOTIFICATION_NOT_SUPPORTED,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
    VERSION_NOT_SUPPORTED,
    Op,
)

__all__ = [
    "REST_CONTENT_TYPE",
    "REST_ERROR_CONTENT_TYPE",
    "REST_STATUS",
    "RestMiss",
    "RestRoute",
    "decode_rest_request",
    "encode_rest_error",
    "match_route",
    "rest_method",
]

REST_CONTENT_TYPE: Final = "application/a2a+json"
"""What a2a-sdk 1.3 labels a REST success body (``A2A_JSON_MEDIA_TYPE``)."""
REST_ERROR_CONTENT_TYPE: Final = "application/json"
"""What it labels a REST error body."""

REST_STATUS: Final[dict[int, tuple[int, str]]] = {
    # A2A error code -> (HTTP status, gRPC status name), a2a-sdk 1.3's A2A_ERROR_MAPPING
    TASK_NOT_FOUND: (404, "NOT_FOUND"),
    TASK_NOT_CANCELABLE: (400, "FAILED_PRECONDITION"),
    PUSH_NOTIFICATION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    UNSUPPORTED_OPERATION: (400, "FAILED_PRECONDITION"),
    CONTENT_TYPE_NOT_SUPPORTED: (400, "INVALID_ARGUMENT"),
    INVALID_AGENT_RESPONSE: (500, "INTERNAL"),
    EXTENDED_CARD_NOT_CONFIGURED: (400, "FAILED_PRECONDITION"),
    EXTENSION_SUPPORT_REQUIRED: (400, "FAILED_PRECONDITION"),
    VERSION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    INVALID_PARAMS: (400, "INVALID_ARGUMENT"),
    INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    PARSE_ERROR: (400, "INVALID_ARGUMENT"),  # a protobuf ParseError: reason INVALID_REQUEST
    METHOD_NOT_FOUND: (404, "NOT_FOUND"),
    INTERNAL_ERROR: (500, "INTERNAL"),
}
_DEFAULT_STATUS: Final = (500, "INTERNAL")


@dataclass(frozen=True)
class RestRoute:
    """A request that reached an operation: its 1.0 method name (``SendStreamingMessage``,
    ``GetTask``... also for the operations the fake answers with an error), the task id in
    its path, and the leading segment it came under (a2a-sdk's tenant), if any."""

    method: str
    task_id: str | None = None
    tenant: str | None = None

    @property
    def op(self) -> Op | None:
        known = _OPS.get(self.method)
        return known[1] if known is not None else None


@dataclass(frozen=True)
class RestMiss:
    """A path no route serves (404) or serves under another HTTP method (405)."""

    status: Literal[404, 405]

    @property
    def text(self) -> str:
        return "Not Found" if self.status == 404 else "Method Not Allowed"


_SEGMENT: Final = r"(?P<id>[^/]+)"
_ROUTES: Final[tuple[tuple[re.Pattern[str], str, str], ...]] = tuple(
    (re.compile(pattern.replace("{id}", _SEGMENT).replace("{push}", r"[^/]+")), verb, method)
    for pattern, verb, method in (
        # a2a-sdk 1.3's order (create_rest_routes); the first full match wins, a path match
        # under another verb is remembered for a 405
        ("/message:send", "POST", "SendMessage"),
        ("/message:stream", "POST", "SendStreamingMessage"),
        ("/tasks/{id}:cancel", "POST", "CancelTask"),
        ("/tasks/{id}:subscribe", "GET", "SubscribeToTask"),
        ("/tasks/{id}:subscribe", "POST", "SubscribeToTask"),
        ("/tasks/{id}", "GET", "GetTask"),
        ("/tasks/{id}/pushNotificationConfigs/{push}", "GET", "GetTaskPushNotificationConfig"),
        (
            "/tasks/{id}/pushNotificationConfigs/{push}",
            "DELETE",
            "DeleteTaskPushNotificationConfig",
        ),
        ("/tasks/{id}/pushNotificationConfigs", "POST", "CreateTaskPushNotificationConfig"),
        ("/tasks/{id}/pushNotificationConfigs", "GET", "ListTaskPushNotificationConfigs"),
        ("/tasks", "GET", "ListTasks"),
        ("/extendedAgentCard", "GET", "GetExtendedAgentCard"),
    )
)
_TENANT: Final = re.compile(r"/(?P<tenant>[^/]+)(?P<rest>/.*)")


def _match(verb: str, path: str, tenant: str | None) -> RestRoute | RestMiss | None:
    """The routes alone: a route, a 405, or ``None`` when no route's path matches."""
    partial = False
    for pattern, route_verb, method in _ROUTES:
        found = pattern.fullmatch(path)
        if found is None:
            continue
        if route_verb == verb:
            task_id = found.groupdict().get("id")
            return RestRoute(method=method, task_id=task_id, tenant=tenant)
        partial = True
    return RestMiss(405) if partial else None


def match_route(http_method: str, path: str) -> RestRoute | RestMiss:
    """Where a2a-sdk 1.3 sends ``http_method path`` (the path without its query): the
    routes, then the same routes under one leading segment (it wins over a 405 of the
    routes alone, as Starlette's mount does)."""
    verb = http_method.upper()
    direct = _match(verb, path, None)
    if isinstance(direct, RestRoute):
        return direct
    mounted = _TENANT.fullmatch(path)
    if mounted is not None:
        inner = _match(verb, mounted.group("rest"), mounted.group("tenant"))
        return inner if inner is not None else RestMiss(404)
    return direct if direct is not None else RestMiss(404)


def rest_method(http_method: str, path: str) -> str | None:
    """The A2A 1.0 method a REST request asks for (``POST /message:stream`` ->
    ``SendStreamingMessage``), or ``None``: what the fake records as the request's method and
    what a fault's ``when: {rpc: ...}`` matches on a REST request."""
    route = match_route(http_method, path)
    return route.method if isinstance(route, RestRoute) else None


_INT_FIELDS: Final = frozenset({"historyLength", "pageSize"})
_BOOL_FIELDS: Final = frozenset({"includeArtifacts"})
_QUERY_FIELDS: Final[dict[str, frozenset[str]]] = {
    "GetTask": frozenset({"historyLength"}),
    "ListTasks": frozenset(
        {
            "contextId",
            "status",
            "pageSize",
            "pageToken",
            "historyLength",
            "statusTimestampAfter",
            "includeArtifacts",
        }
    ),
}


def _query_object(method: str, query: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The query as the request message's fields, as a2a-sdk's ``parse_params`` reads it:
    camelCase names only, others ignored, the last value of a repeated name wins, booleans
    are ``true`` (any case) or false. A number that does not parse raises ValueError."""
    fields = _QUERY_FIELDS.get(method, frozenset())
    out: dict[str, Any] = {}
    for name, value in query:
        if name not in fields:
            continue
        if name in _BOOL_FIELDS:
            out[name] = value.lower() == "true"
        elif name in _INT_FIELDS:
            try:
                out[name] = int(value)
            except ValueError:
                raise ValueError(
                    f"Failed to parse {name} field: invalid literal for int(): {value!r}"
                ) from None
        else:
            out[name] = value
    return out


def decode_rest_request(
    route: RestRoute,
    *,
    body: bytes,
    query: Iterable[tuple[str, str]] = (),
    a2a_version: str | None = None,
) -> RpcRequest | RpcError:
    """A routed REST request as the same :class:`RpcRequest` a JSON-RPC call makes, or the
    error that answers it (:func:`encode_rest_error` writes it). The order is a2a-sdk's: the
    ``A2A-Version`` header (1.x), then the body or query; an operation the fake does not
    implement gets the error a server without the feature gives (push: -32003, the extended
    card: -32004), after the header."""
    method = route.method
    refused = _check_header("1.0", method, None, a2a_version, "1.0")
    if refused is not None:
        return refused
    unimplemented = _UNIMPLEMENTED.get(method)
    if unimplemented is not None:
        return rpc_error(unimplemented[1], method=method)
    known = _OPS.get(method)
    assert known is not None, method
    op = known[1]
    try:
        if op in ("send", "stream"):
            value = _body_object(body)
            params: Any = _decode_send_params(_Reader(value, "body", "1.0"))
        elif op == "get":
            assert route.task_id is not None
            value = {**_query_object(method, query), "id": route.task_id}
            params = _decode_task_query(_Reader(value, "query", "1.0"))
        elif op == "list":
            params = _decode_list_params(_Reader(_query_object(method, query), "query", "1.0"))
        else:  # cancel, subscribe: the id is the path's; a body is not read (a2a-sdk)
            assert route.task_id is not None
            params = TaskIdParams(id=route.task_id)
    except WireFormatError as exc:
        return rpc_error(INVALID_PARAMS, f"Invalid params: {exc}", method=method)
    except ValueError as exc:
        return rpc_error(PARSE_ERROR, str(exc), method=method)
    return RpcRequest(id=None, version="1.0", op=op, params=params)


def _body_object(body: bytes) -> Any:
    """The body as a JSON object; ValueError (a parse error) when it is not one."""
    try:
        value = loads(body)
    except ValueError as exc:
        raise ValueError(f"Failed to load JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("Failed to parse the body: a request message is a JSON object")
    return value


def encode_rest_error(error: RpcError) -> tuple[int, dict[str, Any]]:
    """The HTTP status and body of an error on the REST binding: ``{"error": {code (the HTTP
    status), status (the gRPC name), message, details: [ErrorInfo]}}``. A parse error's
    reason is ``INVALID_REQUEST``, as a2a-sdk gives a protobuf ``ParseError``."""
    http, grpc = REST_STATUS.get(error.code, _DEFAULT_STATUS)
    reason = (
        "INVALID_REQUEST"
        if error.code == PARSE_ERROR
        else _ERRORS.get(error.code, ("", "UNKNOWN_ERROR"))[1]
    )
    info = {
        "@type": _ERROR_INFO_TYPE,
        "reason": reason,
        "domain": _ERROR_DOMAIN,
        "metadata": error.data if isinstance(error.data, dict) else {},
    }
    body = {"code": http, "status": grpc, "message": error.message, "details": [info]}
    return http, {"error": body}
