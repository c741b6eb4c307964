"""The A2A 1.0 HTTP+JSON (REST) codec: routes, requests into the shared RpcRequest, errors as
HTTP statuses (a2a-sdk 1.3's, measured by harness/tests/fakes/a2a/test_differential.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamproof.protocol import a2a
from streamproof.protocol.a2a import RestMiss, RestRoute, match_route, rest_method

V1 = "1.0"
MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    ("verb", "path", "method", "task_id"),
    [
        ("POST", "/message:send", "SendMessage", None),
        ("POST", "/message:stream", "SendStreamingMessage", None),
        ("GET", "/tasks/t-1", "GetTask", "t-1"),
        ("POST", "/tasks/t-1:cancel", "CancelTask", "t-1"),
        ("GET", "/tasks/t-1:subscribe", "SubscribeToTask", "t-1"),
        ("POST", "/tasks/t-1:subscribe", "SubscribeToTask", "t-1"),
        ("GET", "/tasks", "ListTasks", None),
        ("POST", "/tasks/t-1/pushNotificationConfigs", "CreateTaskPushNotificationConfig", "t-1"),
        ("GET", "/tasks/t-1/pushNotificationConfigs", "ListTaskPushNotificationConfigs", "t-1"),
        ("GET", "/tasks/t-1/pushNotificationConfigs/c", "GetTaskPushNotificationConfig", "t-1"),
        (
            "DELETE",
            "/tasks/t-1/pushNotificationConfigs/c",
            "DeleteTaskPushNotificationConfig",
            "t-1",
        ),
        ("GET", "/extendedAgentCard", "GetExtendedAgentCard", None),
        # a GET of "/tasks/x:cancel" is GetTask of the task "x:cancel", as Starlette routes it
        ("GET", "/tasks/t-1:cancel", "GetTask", "t-1:cancel"),
    ],
)
def test_every_route_names_its_method(
    verb: str, path: str, method: str, task_id: str | None
) -> None:
    assert match_route(verb, path) == RestRoute(method=method, task_id=task_id)
    assert match_route(verb.lower(), path) == RestRoute(method=method, task_id=task_id)
    # the same routes under one leading segment (a2a-sdk's tenant; the --concurrency prefix)
    assert match_route(verb, "/call-1" + path) == RestRoute(method, task_id, tenant="call-1")
    assert rest_method(verb, path) == method


@pytest.mark.parametrize(
    ("verb", "path", "status"),
    [
        ("GET", "/message:send", 405),  # a route's path under another verb
        ("POST", "/tasks", 405),
        ("DELETE", "/message:stream", 405),
        ("GET", "/nothing", 404),
        ("GET", "/", 404),
        ("GET", "/a/b/c", 404),  # the mount matches, no route inside it: 404
        ("POST", "/tasks/t-1", 404),  # the mount (tenant "tasks") wins over the 405
        ("GET", "/call-1/message:send", 405),  # a 405 inside the mount
        ("GET", "/call-1/nothing", 404),
    ],
)
def test_a_path_no_route_serves_is_404_or_405(verb: str, path: str, status: int) -> None:
    miss = match_route(verb, path)
    assert miss == RestMiss(status)  # type: ignore[arg-type]
    assert miss.text == ("Not Found" if status == 404 else "Method Not Allowed")
    assert rest_method(verb, path) is None


def decode(verb: str, path: str, **kwargs: Any) -> a2a.RpcRequest | a2a.RpcError:
    route = match_route(verb, path)
    assert isinstance(route, RestRoute)
    kwargs.setdefault("a2a_version", V1)
    kwargs.setdefault("body", b"")
    return a2a.decode_rest_request(route, **kwargs)


def test_a_send_decodes_to_the_request_json_rpc_makes() -> None:
    config = {"returnImmediately": True, "historyLength": 2}
    rest = decode("POST", "/message:send", body=body({"message": MESSAGE, "configuration": config}))
    rpc = a2a.decode_request_object(
        {
            "jsonrpc": "2.0",
            "id": None,
            "method": "SendMessage",
            "params": {"message": MESSAGE, "configuration": config},
        }
    )
    assert rest == rpc
    assert isinstance(rest, a2a.RpcRequest)
    assert (rest.op, rest.version, rest.id, rest.streaming) == ("send", "1.0", None, False)
    stream = decode("POST", "/message:stream", body=body({"message": MESSAGE}))
    assert isinstance(stream, a2a.RpcRequest) and stream.streaming
    assert stream.method == "SendStreamingMessage"


def test_get_cancel_and_subscribe_take_the_id_from_the_path() -> None:
    got = decode("GET", "/tasks/t-1", query=[("historyLength", "3"), ("other", "x")])
    assert isinstance(got, a2a.RpcRequest)
    assert got.params == a2a.TaskQueryParams(id="t-1", history_length=3)
    for verb, path, op in (
        ("POST", "/tasks/t-1:cancel", "cancel"),
        ("GET", "/tasks/t-1:subscribe", "subscribe"),
        ("POST", "/tasks/t-1:subscribe", "subscribe"),
    ):
        # a body is not read (a2a-sdk ignores it), not even a broken one
        decoded = decode(verb, path, body=b"{broken")
        assert isinstance(decoded, a2a.RpcRequest)
        assert (decoded.op, decoded.params) == (op, a2a.TaskIdParams(id="t-1"))


def test_list_reads_its_query_as_a2a_sdk_does() -> None:
    decoded = decode(
        "GET",
        "/tasks",
        query=[
            ("pageSize", "5"),
            ("pageSize", "7"),  # the last value wins
            ("status", "TASK_STATE_WORKING"),
            ("includeArtifacts", "TRUE"),
            ("contextId", "c-1"),
            ("page_size", "99"),  # only camelCase names count
        ],
    )
    assert isinstance(decoded, a2a.RpcRequest)
    assert decoded.params == a2a.ListTasksParams(
        context_id="c-1",
        status=a2a.TaskState.WORKING,
        page_size=7,
        include_artifacts=True,
    )
    flag = decode("GET", "/tasks", query=[("includeArtifacts", "yes")])
    assert isinstance(flag, a2a.RpcRequest)
    assert isinstance(flag.params, a2a.ListTasksParams) and not flag.params.include_artifacts


@pytest.mark.parametrize(
    ("verb", "path", "kwargs", "code"),
    [
        # the header first, whatever the body
        ("POST", "/message:send", {"a2a_version": None, "body": b"{broken"}, -32009),
        ("GET", "/tasks/t-1", {"a2a_version": "0.3"}, -32009),
        ("GET", "/tasks", {"a2a_version": "2.0"}, -32009),
        ("POST", "/tasks/t-1/pushNotificationConfigs", {"a2a_version": None}, -32009),
        # a body or query that does not parse: a parse error (reason INVALID_REQUEST)
        ("POST", "/message:send", {"body": b"{broken"}, -32700),
        ("POST", "/message:stream", {"body": b""}, -32700),
        ("POST", "/message:send", {"body": b"[1]"}, -32700),
        ("GET", "/tasks/t-1", {"query": [("historyLength", "abc")]}, -32700),
        ("GET", "/tasks", {"query": [("pageSize", "1.5")]}, -32700),
        # well-formed, refused by the schema: invalid params
        ("POST", "/message:send", {"body": b"{}"}, -32602),
        ("POST", "/message:send", {"body": body({"message": {**MESSAGE, "parts": []}})}, None),
        ("POST", "/message:send", {"body": body({"message": {**MESSAGE, "role": "u"}})}, -32602),
        ("GET", "/tasks/t-1", {"query": [("historyLength", "-1")]}, -32602),
        ("GET", "/tasks", {"query": [("pageSize", "0")]}, -32602),
        ("GET", "/tasks", {"query": [("status", "DONE")]}, -32602),
        # what the fake does not offer: the error of a server without the feature
        ("POST", "/tasks/t-1/pushNotificationConfigs", {}, -32003),
        ("GET", "/tasks/t-1/pushNotificationConfigs/c", {}, -32003),
        ("GET", "/extendedAgentCard", {}, -32004),
    ],
)
def test_each_refusal_has_its_code(
    verb: str, path: str, kwargs: dict[str, Any], code: int | None
) -> None:
    decoded = decode(verb, path, **kwargs)
    if code is None:
        # empty parts decode (the fake's method family refuses them with -32602, as a2a-sdk)
        assert isinstance(decoded, a2a.RpcRequest)
        return
    assert isinstance(decoded, a2a.RpcError), decoded
    assert decoded.code == code
    assert decoded.method == rest_method(verb, path)


@pytest.mark.parametrize(
    ("code", "http", "grpc", "reason"),
    [
        (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
        (-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
        (-32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"),
        (-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
        (-32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"),
        (-32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"),
        (-32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        (-32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"),
        (-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
        (-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        (-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        (-32700, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        (-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND"),
        (-32603, 500, "INTERNAL", "INTERNAL_ERROR"),
        (-1, 500, "INTERNAL", "UNKNOWN_ERROR"),
    ],
)
def test_every_error_maps_to_its_http_status(code: int, http: int, grpc: str, reason: str) -> None:
    status, payload = a2a.encode_rest_error(a2a.rpc_error(code, "why", data={"k": "v"}))
    assert status == http
    assert payload == {
        "error": {
            "code": http,
            "status": grpc,
            "message": "why",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "a2a-protocol.org",
                    "metadata": {"k": "v"},
                }
            ],
        }
    }


def test_the_sdk_client_reads_the_errors_back() -> None:
    """a2a-sdk's REST transport maps an error body to its exception by the ErrorInfo reason."""
    pytest.importorskip("a2a")
    from a2a.client.transports.rest import _parse_rest_error
    from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, VersionNotSupportedError

    for code, expected in (
        (-32001, TaskNotFoundError),
        (-32002, TaskNotCancelableError),
        (-32009, VersionNotSupportedError),
    ):
        _, payload = a2a.encode_rest_error(a2a.rpc_error(code))
        assert isinstance(_parse_rest_error(payload, "fallback"), expected)
