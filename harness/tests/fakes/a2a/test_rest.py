"""The fake A2A server on the HTTP+JSON (REST) binding: a real a2a-sdk REST client end to end,
then raw HTTP for the card, the errors, the keyed prefix and the ledger's records."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a.types import CancelTaskRequest, GetTaskRequest, SubscribeToTaskRequest
from a2a.types import TaskState as PbState
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from harness.tests.fakes.a2a.helpers import (
    QUIET,
    REPORT,
    collect,
    last_state,
    load_script,
    reassemble,
    sdk_client,
    until,
    user_message,
)
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.protocol import a2a, sse

V1 = {"A2A-Version": "1.0"}
MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def rest_client(fake: FakeA2AServer) -> Any:
    return sdk_client(
        fake.card_url.rsplit("/.well-known", 1)[0], supported_protocol_bindings=["HTTP+JSON"]
    )


async def test_the_sdk_rest_client_streams_a_task_to_its_end(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="1.0"), time_scale=0.01, binding="rest")
    async with rest_client(fake) as client:
        events = await collect(client.send_message(user_message()))
    assert last_state(events) == PbState.TASK_STATE_COMPLETED
    assert reassemble(events) == {"summary": "Section 1 ...Section 2 ...Section 3 ..."}
    requests = fake.ledger.requests
    assert [(r.http_method, r.path, r.binding) for r in requests] == [
        ("GET", a2a.AGENT_CARD_PATH, None),
        ("POST", "/message:stream", "rest"),
    ]
    stream = requests[1]
    # the same method vocabulary as JSON-RPC: a check reads this as message/stream
    assert (stream.rpc_method, stream.wire, stream.response, stream.ended) == (
        "SendStreamingMessage",
        "1.0",
        "sse",
        "completed",
    )
    assert stream.params["message"]["parts"] == [{"text": "hi"}]  # the body as sent
    assert [f.kind for f in stream.frames][:2] == ["task", "status-update"]
    assert len(fake.ledger.tasks) == 1 and fake.ledger.messages[0].outcome == "created"


async def test_get_subscribe_and_cancel_through_the_sdk(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET, wire="1.0"), time_scale=0.05, binding="rest")
    async with rest_client(fake) as client:
        stream = client.send_message(user_message())
        first = await anext(stream)
        task_id = first.task.id
        await stream.aclose()
        await until(lambda: bool(fake.task(task_id) and fake.task(task_id).artifacts))  # type: ignore[union-attr]
        task = await client.get_task(GetTaskRequest(id=task_id))
        assert task.status.state == PbState.TASK_STATE_WORKING
        resubscribed = client.subscribe(SubscribeToTaskRequest(id=task_id))
        snapshot = await anext(resubscribed)
        assert snapshot.task.id == task_id  # a2a-sdk 1.x opens a resubscribe with the task
        await resubscribed.aclose()
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        assert canceled.status.state == PbState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
    ledger = fake.ledger
    assert [r.rpc_method for r in ledger.requests if r.binding == "rest"] == [
        "SendStreamingMessage",
        "GetTask",
        "SubscribeToTask",
        "CancelTask",
        "CancelTask",
        "GetTask",
    ]
    assert [c.error_code for c in ledger.cancels] == [None, a2a.TASK_NOT_CANCELABLE]
    assert [g.error_code for g in ledger.gets] == [None, a2a.TASK_NOT_FOUND]
    assert len(ledger.resubscribes) == 1


async def raw(
    fake: FakeA2AServer, verb: str, path: str, *, json_body: Any = None, **headers: str
) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.request(verb, fake.base_url + path, json=json_body, headers=headers)


async def test_the_card_advertises_the_runs_binding(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="1.0"), binding="rest", public_url="http://proxy:1/")
    card = (await raw(fake, "GET", a2a.AGENT_CARD_PATH)).json()
    assert card["supportedInterfaces"] == [
        {"url": "http://proxy:1", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    ]
    fake.load(load_script(REPORT, wire="both"), binding="jsonrpc", public_url="http://proxy:1/")
    card = (await raw(fake, "GET", a2a.AGENT_CARD_PATH)).json()
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC"}
    with pytest.raises(ValueError, match=r"1\.0 wire only"):
        fake.load(load_script(REPORT, wire="0.3"), binding="rest")


async def test_both_bindings_are_served_whatever_the_card_says(fake: FakeA2AServer) -> None:
    fake.load(load_script("reply: Hello\n", wire="1.0"), binding="jsonrpc")
    rest = await raw(fake, "POST", "/message:send", json_body={"message": MESSAGE}, **V1)
    assert (rest.status_code, rest.headers["content-type"]) == (200, a2a.REST_CONTENT_TYPE)
    assert rest.json()["message"]["parts"] == [{"text": "Hello"}]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": MESSAGE}}
    rpc = await raw(fake, "POST", "/", json_body=body, **V1)
    assert rpc.json()["result"]["message"]["parts"] == [{"text": "Hello"}]
    assert [r.binding for r in fake.ledger.requests] == ["rest", "jsonrpc"]


async def test_errors_are_http_statuses_with_a_status_body(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET, wire="1.0"), time_scale=0.01, binding="rest")
    cases = [
        ("POST", "/message:send", {"message": MESSAGE}, {}, 400, "VERSION_NOT_SUPPORTED"),
        ("GET", "/tasks/nope", None, V1, 404, "TASK_NOT_FOUND"),
        ("POST", "/tasks/nope:cancel", None, V1, 404, "TASK_NOT_FOUND"),
        ("GET", "/tasks/nope:subscribe", None, V1, 404, "TASK_NOT_FOUND"),
        # a stream's refusal is JSON with its status, never an SSE frame (a2a-sdk 1.3)
        (
            "POST",
            "/message:stream",
            {"message": {**MESSAGE, "taskId": "nope"}},
            V1,
            404,
            "TASK_NOT_FOUND",
        ),
        (
            "POST",
            "/message:stream",
            {"message": {**MESSAGE, "parts": []}},
            V1,
            400,
            "INVALID_PARAMS",
        ),
        ("GET", "/tasks?pageSize=abc", None, V1, 400, "INVALID_REQUEST"),
        ("GET", "/tasks?pageToken=zzz", None, V1, 400, "INVALID_PARAMS"),
        (
            "POST",
            "/tasks/t/pushNotificationConfigs",
            {},
            V1,
            400,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        ),
    ]
    for verb, path, body, headers, status, reason in cases:
        response = await raw(fake, verb, path, json_body=body, **headers)
        assert response.status_code == status, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert (error["code"], error["details"][0]["reason"]) == (status, reason), path
    refused = [r for r in fake.ledger.requests if r.error_code is not None]
    assert len(refused) == len(cases)
    assert all(r.binding == "rest" and r.status >= 400 for r in refused)
    for verb, path, status, text in (
        ("GET", "/message:send", 405, "Method Not Allowed"),
        ("GET", "/nothing/here", 404, "Not Found"),
    ):
        response = await raw(fake, verb, path, **V1)
        assert (response.status_code, response.text) == (status, text)
        assert response.headers["content-type"].startswith("text/plain")


async def test_streaming_off_refuses_rest_streams(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET, wire="1.0", streaming=False), binding="rest")
    response = await raw(fake, "POST", "/message:stream", json_body={"message": MESSAGE}, **V1)
    assert response.status_code == 400
    assert response.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


async def test_a_0_3_script_serves_no_rest_routes(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET, wire="0.3"))
    response = await raw(fake, "POST", "/message:send", json_body={"message": MESSAGE}, **V1)
    assert response.status_code == 404
    assert "not served" in response.json()["error"]


async def test_the_keyed_prefix_names_each_call_on_rest(fake: FakeA2AServer) -> None:
    """--concurrency: each call reaches the agent under /<marker>, its card advertises that
    base URL, and every REST request it sends carries the marker in its path."""
    keyed = {m: load_script(f"reply: hello {m}\n", wire="1.0") for m in ("sp-a", "sp-b")}
    fake.load(load_script("reply: x\n", wire="1.0"), binding="rest", keyed=keyed)
    card = (await raw(fake, "GET", "/sp-a" + a2a.AGENT_CARD_PATH)).json()
    url = card["supportedInterfaces"][0]["url"]
    assert url.endswith("/sp-a")
    message = {**MESSAGE, "parts": [{"text": "call sp-a"}]}
    response = await raw(fake, "POST", "/sp-a/message:stream", json_body={"message": message}, **V1)
    frames = [json.loads(e.data) for e in sse.decode(response.content)]
    assert frames == [
        {"message": frames[0]["message"]},
    ]
    assert frames[0]["message"]["parts"] == [{"text": "hello sp-a"}]
    record = fake.ledger.requests[-1]
    assert (record.path, record.rpc_method, record.binding) == (
        "/sp-a/message:stream",
        "SendStreamingMessage",
        "rest",
    )


async def test_an_internal_failure_on_rest_is_a_500_status_not_a_traceback(
    fake: FakeA2AServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError("secret detail")

    fake.load(load_script(QUIET, wire="1.0"), binding="rest")
    monkeypatch.setattr(a2a, "decode_rest_request", explode)
    response = await raw(fake, "GET", "/tasks/t", **V1)
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "code": 500,
            "status": "INTERNAL",
            "message": "Internal error (RuntimeError)",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "INTERNAL_ERROR",
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        }
    }
    assert "secret" not in response.text and "Traceback" not in response.text
    record = fake.ledger.requests[-1]
    assert (record.binding, record.error_code, record.status) == ("rest", -32603, 500)
