"""The fake A2A server by raw HTTP: what no SDK client would send (malformed JSON-RPC, wrong
versions, other paths), the agent card, the bytes on the wire (framing variants, pings, errors
of streaming calls); then the ledger's records and the server's lifecycle (``load``, ``close``).
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from a2a.client import A2AClientError
from a2a.types import GetTaskRequest
from a2a.types import TaskState as PbState
from a2a.utils.errors import TaskNotFoundError

from harness.tests.fakes.a2a.helpers import (
    QUIET,
    REPORT,
    collect,
    last_state,
    load_script,
    sdk_client,
    user_message,
)
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.protocol import a2a, sse

# --- raw HTTP: malformed JSON-RPC, versions, framing --------------------------------------------


async def post(
    fake: FakeA2AServer, body: bytes | dict[str, Any], **headers: str
) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as session:
        async with session.post(
            fake.base_url + "/", data=data, headers={"Content-Type": "application/json", **headers}
        ) as response:
            return response.status, dict(response.headers), await response.read()


def rpc(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


MSG = {
    "kind": "message",
    "messageId": "m1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"this is not json", -32700),
        (b"", -32700),
        (b"[1, 2]", -32600),
        (b'"a string"', -32600),
        (b'{"jsonrpc": "2.0", "id": 5}', -32600),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tasks/launch", "params": {}}', -32601),
        (json.dumps(rpc("tasks/get", {"historyLength": 2})).encode(), -32602),
        (json.dumps(rpc("message/stream", {"message": {"parts": []}})).encode(), -32602),
        (json.dumps(rpc("message/send", [MSG])).encode(), -32602),
        (json.dumps(rpc("SendStreamingMessage", {"message": MSG})).encode(), -32601),
        (json.dumps(rpc("tasks/pushNotificationConfig/get", {"id": "t"})).encode(), -32003),
    ],
)
async def test_malformed_json_rpc_gets_the_right_error(
    fake: FakeA2AServer, body: bytes, code: int
) -> None:
    fake.load(load_script(REPORT), time_scale=0.01)
    status, headers, raw = await post(fake, body)
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert b"Traceback" not in raw
    reply = json.loads(raw)
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code
    assert "result" not in reply
    record = fake.ledger.requests[-1]
    assert (record.error_code, record.ended, record.response) == (code, "completed", "json")
    if code == -32700:
        assert record.body_excerpt == body.decode()
    assert fake.ledger.tasks == ()


async def test_a_1_0_server_wants_the_version_header(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="1.0"), time_scale=0.01)
    body = rpc("GetTask", {"id": "t"}, "q")
    _, _, raw = await post(fake, body)
    reply = json.loads(raw)
    assert reply["error"]["code"] == -32009 and reply["id"] == "q"
    assert reply["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    _, _, raw = await post(fake, body, **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32001  # past the version check: no such task
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}), **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32601  # a 1.0-only server has no tasks/get


async def test_both_grammars_on_one_endpoint(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="both"), time_scale=0.0005)
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.card_url) as response:
            card = await response.json()
    assert [i["protocolVersion"] for i in card["supportedInterfaces"]] == ["1.0", "0.3"]
    assert card["url"] == fake.base_url + "/"
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}))
    assert json.loads(raw)["error"] == {"code": -32001, "message": "Task not found"}
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}), **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32603  # as a2a-sdk 1.3 answers (§2.1)
    async with sdk_client(fake.base_url) as client:  # the 1.3 client prefers 1.0
        events = await collect(client.send_message(user_message()))
    assert last_state(events) == PbState.TASK_STATE_COMPLETED
    assert fake.ledger.rpc_methods[-1] == "SendStreamingMessage"


async def test_streaming_off_on_the_card(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, streaming=False), time_scale=0.0005)
    _, _, raw = await post(fake, rpc("message/stream", {"message": MSG}))
    assert json.loads(raw)["error"]["code"] == -32004
    async with sdk_client(fake.base_url) as client:  # falls back to message/send
        (event,) = await collect(client.send_message(user_message()))
    assert event.task.status.state == PbState.TASK_STATE_COMPLETED
    assert fake.ledger.rpc_methods[-1] == "message/send"


async def test_other_paths_and_methods(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT), time_scale=0.01)
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.base_url + "/") as response:
            assert response.status == 405
        async with session.get(fake.base_url + "/.well-known/agent.json") as response:
            assert response.status == 404  # 0.2's path is not served (§1.1)
        async with session.get(fake.card_url, headers={"Host": "proxy.test:9999"}) as response:
            card = await response.json()
    assert card["url"] == "http://proxy.test:9999/"  # the card follows the address used
    assert card["protocolVersion"] == "0.3.0" and "supportedInterfaces" not in card
    fake.load(load_script(REPORT), time_scale=0.01, public_url="http://elsewhere:1/rpc")
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.card_url) as response:
            assert (await response.json())["url"] == "http://elsewhere:1/rpc"


async def read_stream(
    fake: FakeA2AServer, body: dict[str, Any], **headers: str
) -> tuple[dict[str, str], bytes]:
    status, response_headers, raw = await post(fake, body, Accept="text/event-stream", **headers)
    assert status == 200
    return response_headers, raw


@pytest.mark.parametrize(("line_end", "chars"), [("crlf", b"\r\n"), ("lf", b"\n")])
@pytest.mark.parametrize("event_ids", [False, True])
async def test_framing_variants(
    fake: FakeA2AServer, line_end: str, chars: bytes, event_ids: bool
) -> None:
    fake.load(load_script(REPORT, line_end=line_end, event_ids=event_ids), time_scale=0.0005)
    headers, raw = await read_stream(fake, rpc("message/stream", {"message": MSG}, "req-1"))
    assert headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert headers["Cache-Control"] == "no-store"
    assert headers["X-Accel-Buffering"] == "no"
    lines = raw.split(chars)
    if line_end == "lf":
        assert b"\r" not in raw
    else:
        assert raw.count(b"\n") == raw.count(b"\r\n")
    assert any(line.startswith(b": ping - ") for line in lines)  # the heartbeat step
    events = sse.decode(raw)
    assert len(events) == 6
    assert all(e.type == "message" for e in events)
    assert [e.id_line for e in events] == [event_ids] * 6
    if event_ids:
        assert [e.id for e in events] == [str(i) for i in range(6)]
    payloads = [json.loads(e.data) for e in events]
    assert all(p["id"] == "req-1" and p["jsonrpc"] == "2.0" for p in payloads)
    assert [p["result"]["kind"] for p in payloads] == [
        "task",
        "status-update",
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    data_lines = [line for line in lines if line.startswith(b"data:")]
    assert len(data_lines) == 6  # each JSON document on one data: line (§1.5)
    first = payloads[0]["result"]
    assert first["status"] == {"state": "submitted"}
    assert first["history"][0]["taskId"] == first["id"]
    assert payloads[-1]["result"]["final"] is True


async def test_ping_every_and_1_0_frames(fake: FakeA2AServer) -> None:
    fake.load(
        load_script(
            "task: [{at: 0s, status: working}, {at: 10s, status: failed}]",
            wire="1.0",
            ping_every="2s",
        ),
        time_scale=0.005,
    )
    _, raw = await read_stream(
        fake,
        rpc(
            "SendStreamingMessage",
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
        ),
        **{"A2A-Version": "1.0"},
    )
    decoder = sse.Decoder()
    events = decoder.feed(raw) + decoder.close()
    assert decoder.comments >= 3
    payloads = [json.loads(e.data)["result"] for e in events]
    assert [next(iter(p)) for p in payloads] == ["task", "statusUpdate", "statusUpdate"]
    assert payloads[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    assert "final" not in payloads[-1]["statusUpdate"]
    frames = fake.ledger.requests[-1].frames
    assert [f.kind for f in frames].count("ping") == decoder.comments


@pytest.mark.parametrize("delivery", ["sse", "json"])
async def test_stream_errors_as_sse_or_json(fake: FakeA2AServer, delivery: str) -> None:
    fake.load(load_script(REPORT, stream_errors=delivery), time_scale=0.01)
    headers, raw = await read_stream(fake, rpc("tasks/resubscribe", {"id": "gone"}, "r9"))
    if delivery == "json":
        assert headers["Content-Type"] == "application/json"
        reply = json.loads(raw)
    else:
        assert headers["Content-Type"].startswith("text/event-stream")
        (event,) = sse.decode(raw)
        reply = json.loads(event.data)
    assert reply == {
        "error": {"code": -32001, "message": "Task not found"},
        "id": "r9",
        "jsonrpc": "2.0",
    }


@pytest.mark.parametrize(
    ("wire", "method", "header", "expected"),
    [
        ("0.3", "tasks/resubscribe", None, "text/event-stream"),
        ("1.0", "SubscribeToTask", "1.0", "application/json"),
        ("both", "tasks/resubscribe", None, "text/event-stream"),
        ("both", "SubscribeToTask", "1.0", "application/json"),
    ],
)
async def test_stream_errors_follow_a2a_sdk_per_wire_by_default(
    fake: FakeA2AServer, wire: str, method: str, header: str | None, expected: str
) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.01)
    headers = {"A2A-Version": header} if header else {}
    response_headers, raw = await read_stream(fake, rpc(method, {"id": "gone"}), **headers)
    assert response_headers["Content-Type"].startswith(expected)
    payload = json.loads(sse.decode(raw)[0].data if expected != "application/json" else raw)
    assert payload["error"]["code"] == -32001


@pytest.mark.parametrize("wire", ["0.3", "1.0"])
async def test_a_message_without_parts_is_refused(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.01)
    v1 = {"A2A-Version": "1.0"} if wire == "1.0" else {}
    message = dict(MSG) if wire == "0.3" else {"messageId": "m1", "role": "ROLE_USER"}
    send, stream = (
        ("message/send", "message/stream")
        if wire == "0.3"
        else (
            "SendMessage",
            "SendStreamingMessage",
        )
    )
    for parts in ([], None):
        body = {**message, "parts": parts} if parts is not None else without_parts(message)
        _, _, raw = await post(fake, rpc(send, {"message": body}), **v1)
        assert json.loads(raw)["error"]["code"] == -32602
        headers, raw = await read_stream(fake, rpc(stream, {"message": body}), **v1)
        if headers["Content-Type"].startswith("text/event-stream"):
            raw = sse.decode(raw)[0].data.encode()
        assert json.loads(raw)["error"]["code"] == -32602
    assert fake.ledger.tasks == ()


def without_parts(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "parts"}


async def test_list_tasks_pages_and_filters(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="1.0"), time_scale=0.0005)
    v1 = {"A2A-Version": "1.0"}
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    created = []
    for n in range(5):
        body = rpc("SendMessage", {"message": {**message, "messageId": f"m{n}"}}, n)
        _, _, raw = await post(fake, body, **v1)
        created.append(json.loads(raw)["result"]["task"]["id"])
    seen: list[str] = []
    token = None
    while True:
        params: dict[str, Any] = {"pageSize": 2, **({"pageToken": token} if token else {})}
        _, _, raw = await post(fake, rpc("ListTasks", params), **v1)
        page = json.loads(raw)["result"]
        assert page["totalSize"] == 5 and page["pageSize"] == 2
        assert all("artifacts" not in t for t in page["tasks"])  # includeArtifacts is off
        seen += [t["id"] for t in page["tasks"]]
        token = page["nextPageToken"]
        if not token:
            break
    assert seen == created[::-1]  # most recently updated first, each task once
    _, _, raw = await post(
        fake, rpc("ListTasks", {"includeArtifacts": True, "historyLength": 0}), **v1
    )
    tasks = json.loads(raw)["result"]["tasks"]
    assert all(t["artifacts"] and "history" not in t for t in tasks)
    context = tasks[0]["contextId"]
    _, _, raw = await post(fake, rpc("ListTasks", {"contextId": context}), **v1)
    assert [t["contextId"] for t in json.loads(raw)["result"]["tasks"]] == [context]
    _, _, raw = await post(fake, rpc("ListTasks", {"status": "TASK_STATE_WORKING"}), **v1)
    assert json.loads(raw)["result"]["tasks"] == []
    future = "2999-01-01T00:00:00Z"
    _, _, raw = await post(fake, rpc("ListTasks", {"statusTimestampAfter": future}), **v1)
    assert json.loads(raw)["result"]["totalSize"] == 0
    _, _, raw = await post(fake, rpc("ListTasks", {"pageToken": "not-ours"}), **v1)
    assert json.loads(raw)["error"]["code"] == -32602


# --- ledger, lifecycle -------------------------------------------------------------------------


async def test_the_ledger_tracks_connections_and_params(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT), time_scale=0.001)
    async with aiohttp.ClientSession() as session:  # one keep-alive connection
        for request_id in (1, 2):
            body = rpc("tasks/get", {"id": "t", "historyLength": 0}, request_id)
            async with session.post(fake.base_url + "/", json=body) as response:
                await response.read()
    await post(fake, rpc("tasks/get", {"id": "t"}, 3))  # a new connection
    requests = fake.ledger.requests
    assert [r.connection for r in requests] == [1, 1, 2]
    assert [r.rpc_id for r in requests] == [1, 2, 3]
    assert requests[0].params == {"id": "t", "historyLength": 0}
    assert requests[0].wire == "0.3" and requests[0].a2a_version is None
    assert all(r.t_end is not None and r.t_end >= r.t for r in requests)
    assert requests[0].t <= requests[1].t <= requests[2].t


async def test_load_resets_everything_and_cuts_open_streams(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET), time_scale=1.0)  # a minute-long task
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message())
        first = await anext(stream)  # type: ignore[call-overload]
        assert not await fake.wait_quiet(0.05)  # the stream is open
        old = fake.ledger
        fake.load(load_script(REPORT), time_scale=0.01)
        assert fake.ledger.requests == () and fake.task(first.task.id) is None
        with pytest.raises(A2AClientError, match="incomplete chunked read"):
            await collect(stream)  # cut: the client sees a broken body, not a clean end
        assert old.requests[1].ended == "open"  # a snapshot taken before the cut
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=first.task.id))
    assert await fake.wait_quiet(2.0)


async def test_close_cuts_open_streams(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET), time_scale=1.0)
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message())
        await anext(stream)  # type: ignore[call-overload]
        await fake.close()
        with pytest.raises(A2AClientError):
            await collect(stream)
    assert fake.ledger.requests[1].ended == "server_closed"


async def test_a_streamed_task_runs_twice_when_the_client_resends(fake: FakeA2AServer) -> None:
    """The duplicate-task case the checks look for: a resend creates a second task."""
    fake.load(load_script(REPORT), time_scale=0.0005)
    async with sdk_client(fake.base_url) as client:
        await collect(client.send_message(user_message("same")))
        await collect(client.send_message(user_message("same")))
    tasks = fake.ledger.tasks
    assert len(tasks) == 2 and tasks[0].task_id != tasks[1].task_id
    assert tasks[0].message_id != tasks[1].message_id


async def test_an_internal_failure_is_a_json_rpc_error_not_a_traceback(
    fake: FakeA2AServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: Any) -> Any:
        raise RuntimeError("secret detail")

    fake.load(load_script(REPORT), time_scale=0.01)
    monkeypatch.setattr(a2a, "decode_served_request", explode)
    status, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}, 4))
    assert status == 200
    assert json.loads(raw) == {
        "error": {"code": -32603, "message": "Internal error (RuntimeError)"},
        "id": 4,
        "jsonrpc": "2.0",
    }
    assert b"secret" not in raw and b"Traceback" not in raw
    assert fake.ledger.requests[-1].error_code == -32603
