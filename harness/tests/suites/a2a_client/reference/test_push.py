"""The reference client's webhook alone: the token is checked before the body is read, and
only a verified delivery reaches the call (the whole push call runs in the slow
``test_client.py`` against every push scenario and mutant)."""

from __future__ import annotations

import json

import httpx
from a2a.types import StreamResponse

from streamproof.suites.a2a_client.reference.push import TOKEN_HEADER, PushCall, Receiver
from streamproof.suites.a2a_client.reference.settings import Settings

BODY = json.dumps(
    {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
).encode()


async def _post(
    bug: str | None, headers: dict[str, str], body: bytes = BODY
) -> tuple[int, list[str]]:
    receiver = Receiver(bug)
    got: list[str] = []

    def deliver(raw: bytes, event: StreamResponse) -> int:
        got.append(event.status_update.task_id)
        return 200

    url = await receiver.start()
    receiver.deliver = deliver
    try:
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                url,
                content=body,
                headers={
                    "Content-Type": "application/json",
                    **{k: v.replace("TOKEN", receiver.token) for k, v in headers.items()},
                },
            )
        return answer.status_code, got
    finally:
        await receiver.close()


async def test_the_right_token_is_applied() -> None:
    assert await _post(None, {TOKEN_HEADER: "TOKEN"}) == (200, ["t"])


async def test_no_token_or_a_wrong_one_is_refused_unread() -> None:
    assert await _post(None, {}) == (401, [])
    assert await _post(None, {TOKEN_HEADER: "TOKENx"}) == (401, [])


async def test_a_body_that_is_no_stream_response_is_a_bad_request() -> None:
    assert await _post(None, {TOKEN_HEADER: "TOKEN"}, b"[1]") == (400, [])


async def test_the_mutant_takes_anything() -> None:
    assert await _post("accept-unauthenticated", {}) == (200, ["t"])


def _event(body: bytes) -> StreamResponse:
    from google.protobuf import json_format

    return json_format.Parse(body, StreamResponse())


def _call(bug: str | None = None) -> PushCall:
    settings = Settings(url="http://x", prompt="p", deadline=5.0, idle=1.0, bug=bug, push=True)
    return PushCall(None, settings, "http://127.0.0.1:1/a2a/webhook")  # type: ignore[arg-type]


CHUNK = json.dumps(
    {
        "artifactUpdate": {
            "taskId": "t",
            "contextId": "c",
            "append": True,
            "artifact": {"artifactId": "s", "parts": [{"text": "x"}]},
        }
    }
).encode()
DONE = json.dumps(
    {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
).encode()


async def test_a_delivery_is_applied_once() -> None:
    call = _call()
    assert [call.on_delivery(CHUNK, _event(CHUNK)) for _ in range(3)] == [200, 200, 200]
    assert call.buffers == {"s": "x"}
    doubled = _call("double-apply-duplicate")
    for _ in range(2):
        doubled.on_delivery(CHUNK, _event(CHUNK))
    assert doubled.buffers == {"s": "xx"}


async def test_nothing_after_the_end_counts() -> None:
    call = _call()
    call.on_delivery(DONE, _event(DONE))
    assert call.done.done() and call.done.result() == "completed"
    assert call.on_delivery(CHUNK, _event(CHUNK)) == 200
    assert call.buffers == {} and not call.reopened
    reopening = _call("reopen-on-stale")
    reopening.on_delivery(DONE, _event(DONE))
    reopening.on_delivery(BODY, _event(BODY))
    assert reopening.reopened and not reopening.done.done()


async def test_a_delivery_for_another_task_is_refused() -> None:
    call = _call()
    call.task_id = "other"
    assert call.on_delivery(CHUNK, _event(CHUNK)) == 404 and call.buffers == {}
