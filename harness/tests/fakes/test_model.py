"""The fake Gemini server: exact bytes on the wire, and acceptance by the real SDKs.

The byte tests read the raw HTTP response off a socket and undo the chunked transfer coding
by hand, so they also see that each SSE event went out in one write. The SDK tests use the real
google-genai client and a real ADK agent: if they parse the fake, so will a gateway's ADK.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from streamproof.fakes.model import FakeModel
from streamproof.protocol import gemini
from streamproof.protocol.fixture import FIXTURE_CONTEXT_KEY
from streamproof.protocol.gemini import ModelTurn
from streamproof.suites.gateway.observation import ModelCall

MODEL = "gemini-2.5-flash"
STREAM_PATH = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
PLAIN_PATH = f"/v1beta/models/{MODEL}:generateContent"
HI_BODY = {"contents": [{"parts": [{"text": "hi"}], "role": "user"}]}


def script(*turns: dict[str, Any]) -> list[ModelTurn]:
    return [ModelTurn.model_validate(t) for t in turns]


@pytest.fixture
async def fake() -> AsyncIterator[FakeModel]:
    model = FakeModel()
    await model.start()
    yield model
    await model.close()


@pytest.fixture
async def client(fake: FakeModel) -> AsyncIterator[genai.Client]:
    sdk = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=fake.base_url))
    yield sdk
    await sdk.aio.aclose()


async def raw_post(
    base_url: str, path: str, body: Any = HI_BODY
) -> tuple[int, dict[str, str], list[bytes]]:
    """POST over a bare socket; the status, the headers and the body's HTTP chunks."""
    url = urlsplit(base_url)
    assert url.hostname is not None and url.port is not None
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    payload = json.dumps(body).encode()
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
        + payload
    )
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    if headers.get("transfer-encoding") != "chunked":
        return int(status_line.split()[1]), headers, [rest]
    chunks: list[bytes] = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n", "the body must end with the last-chunk marker"
            break
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]
    return int(status_line.split()[1]), headers, chunks


def response_id(frame: bytes) -> str:
    match = re.search(rb'"responseId": "([A-Za-z0-9_-]{22})"', frame)
    assert match is not None, frame
    return match.group(1).decode()


PROMPTLY = 3.0
"""What "at once" means against a 30 s scripted delay: a tenth of it, room for the scheduling
stalls of a loaded machine running the tests in parallel, far from the 30 s a miss would take."""


async def wait_for(predicate: Any, limit: float = 10.0) -> float:
    """Seconds until ``predicate()`` holds; fails after ``limit`` seconds."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < limit, "condition not reached in time"
        await asyncio.sleep(0.005)
    return time.monotonic() - start


# --- bytes on the wire -------------------------------------------------------------------------


async def test_streamed_turn_bytes_are_exact(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["Hello", ", world", "!"]}))
    status, headers, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert len(chunks) == 3, "one write (one HTTP chunk) per event"
    rid = response_id(chunks[0])
    assert all(response_id(c) == rid for c in chunks)
    assert chunks == [
        b'data: {"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},'
        b'"index": 0}],"usageMetadata": {"promptTokenCount": 1,"candidatesTokenCount": 2,'
        b'"totalTokenCount": 3},"modelVersion": "gemini-2.5-flash","responseId": "'
        + rid.encode()
        + b'"}\r\n\r\n',
        b'data: {"candidates": [{"content": {"parts": [{"text": ", world"}],"role": "model"},'
        b'"index": 0}],"usageMetadata": {"promptTokenCount": 1,"candidatesTokenCount": 4,'
        b'"totalTokenCount": 5},"modelVersion": "gemini-2.5-flash","responseId": "'
        + rid.encode()
        + b'"}\r\n\r\n',
        b'data: {"candidates": [{"content": {"parts": [{"text": "!"}],"role": "model"},'
        b'"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 1,'
        b'"candidatesTokenCount": 5,"totalTokenCount": 6},"modelVersion": "gemini-2.5-flash",'
        b'"responseId": "' + rid.encode() + b'"}\r\n\r\n',
    ]


async def test_every_chunk_is_one_line_with_content_and_only_the_last_finishes(
    fake: FakeModel,
) -> None:
    tricky = "é\u2028line\u2029sep\x85nel\nnewline\r"
    fake.load(
        script(
            {
                "chunks": [
                    tricky,
                    {"function_call": {"name": "lookup", "args": {"q": ["x", {"y": 1}]}}},
                    "done",
                ],
                "finish_reason": "SAFETY",
            }
        )
    )
    _, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert len(chunks) == 3
    payloads = []
    for chunk in chunks:
        assert chunk.startswith(b"data: {")
        assert chunk.endswith(b"}\r\n\r\n")
        line = chunk[len(b"data: ") : -len(b"\r\n\r\n")]
        assert b"\n" not in line and b"\r" not in line
        assert not any(sep in line.decode() for sep in ("\u2028", "\u2029", "\x85"))
        payloads.append(json.loads(line))
    assert "é".encode() in chunks[0], "non-ASCII text goes out as UTF-8, like the real API"
    for payload in payloads:
        (candidate,) = payload["candidates"]
        assert candidate["content"]["role"] == "model"
        assert candidate["index"] == 0
    assert payloads[0]["candidates"][0]["content"]["parts"] == [{"text": tricky}]
    assert payloads[1]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "lookup", "args": {"q": ["x", {"y": 1}]}}}
    ]
    assert [p["candidates"][0].get("finishReason") for p in payloads] == [None, None, "SAFETY"]


async def test_mid_stream_error_is_the_last_line(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["partial", {"error": {"code": 503}}]}))
    status, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert status == 200
    assert len(chunks) == 2
    assert b'"finishReason"' not in chunks[0]
    assert chunks[1] == (
        b'data: {"error": {"code": 503,"message": "The model is overloaded.",'
        b'"status": "UNAVAILABLE"}}\r\n\r\n'
    )
    (call,) = fake.calls
    assert call.chunks_sent == 2 and call.completed and not call.closed_early
    assert call.text_sent == "partial"
    assert call.finish_reason_sent is None
    assert call.error_sent == {
        "code": 503,
        "message": "The model is overloaded.",
        "status": "UNAVAILABLE",
    }


async def test_no_finish_reason_anywhere_when_the_turn_has_none(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["a", "b"], "finish_reason": None}))
    _, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert len(chunks) == 2
    assert all(b"finishReason" not in c for c in chunks)
    assert all(b'"content": {"parts": ' in c for c in chunks)


async def test_line_end_is_a_constructor_option() -> None:
    fake = FakeModel(line_end="\n")
    await fake.start()
    try:
        fake.load(script({"chunks": ["one", "two"]}, {"chunks": ["three"]}))
        _, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
        assert len(chunks) == 2 and all(c.endswith(b'"}\n\n') for c in chunks)
        assert all(b"\r" not in c for c in chunks)
        sdk = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=fake.base_url))
        texts = [
            r.text
            async for r in await sdk.aio.models.generate_content_stream(model=MODEL, contents="x")
        ]
        await sdk.aio.aclose()
        assert texts == ["three"]
    finally:
        await fake.close()
    with pytest.raises(ValueError):
        FakeModel(line_end="\n\n")


async def test_http_error_turn_answers_before_any_stream(fake: FakeModel) -> None:
    error = {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded."}
    fake.load(script({"http_error": error}, {"http_error": error}))
    for path in (STREAM_PATH, PLAIN_PATH):
        status, headers, (body,) = await raw_post(fake.base_url, path)
        assert status == 429
        assert headers["content-type"].split(";")[0] == "application/json"
        assert "transfer-encoding" not in headers
        assert json.loads(body) == {
            "error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}
        }
    records = fake.calls
    assert [c.status for c in records] == [429, 429]
    assert [c.streaming for c in records] == [True, False]
    assert all(c.error_sent == error and c.chunks_sent == 0 for c in records)


async def test_other_paths_get_a_google_404_and_are_not_recorded(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["x"]}))
    for path in ("/v1beta/models/m:countTokens", "/", "/v1beta/models/m"):
        status, _, (body,) = await raw_post(fake.base_url, path)
        assert status == 404
        error = json.loads(body)["error"]
        assert error["code"] == 404 and error["status"] == "NOT_FOUND"
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.base_url + PLAIN_PATH) as resp:
            assert resp.status == 404
            assert (await resp.json())["error"]["status"] == "NOT_FOUND"
    assert fake.calls == []


async def test_streaming_without_alt_sse_is_refused_and_consumes_no_turn(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["kept"]}))
    status, _, (body,) = await raw_post(fake.base_url, PLAIN_PATH.replace(":gen", ":streamGen"))
    assert status == 400
    assert json.loads(body)["error"]["status"] == "INVALID_ARGUMENT"
    status, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert status == 200 and b"kept" in chunks[0]
    assert [c.turn for c in fake.calls] == [None, 0]


# --- the real google-genai client --------------------------------------------------------------


async def test_genai_parses_a_streamed_text_turn(fake: FakeModel, client: genai.Client) -> None:
    fake.load(script({"chunks": ["Hello", ", world", "!"]}))
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
    responses = [r async for r in stream]
    assert [r.text for r in responses] == ["Hello", ", world", "!"]
    reasons = [r.candidates[0].finish_reason if r.candidates else None for r in responses]
    assert reasons == [None, None, types.FinishReason.STOP]
    assert responses[-1].usage_metadata is not None
    assert responses[-1].model_version == MODEL
    (call,) = fake.calls
    assert call.streaming and call.completed and call.status == 200 and call.turn == 0
    assert call.model == MODEL
    assert call.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert call.text_sent == "Hello, world!" and call.chunks_sent == 3
    assert call.finish_reason_sent == "STOP" and call.error_sent is None
    assert call.body["contents"] == [{"parts": [{"text": "hi"}], "role": "user"}]


async def test_genai_parses_function_calls_and_max_tokens(
    fake: FakeModel, client: genai.Client
) -> None:
    fake.load(
        script(
            {
                "chunks": [
                    "Let me check.",
                    {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
                ]
            },
            {"chunks": ["cut o"], "finish_reason": "MAX_TOKENS"},
        )
    )
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
    responses = [r async for r in stream]
    calls = [fc for r in responses for fc in r.function_calls or []]
    assert [(fc.name, fc.args, fc.id) for fc in calls] == [("get_weather", {"city": "Paris"}, None)]
    assert fake.calls[0].function_calls_sent == (
        {"name": "get_weather", "args": {"city": "Paris"}},
    )
    assert fake.calls[0].text_sent == "Let me check."

    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
    (last,) = [r async for r in stream]
    assert last.text == "cut o"
    assert last.candidates is not None
    assert last.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    assert fake.calls[1].finish_reason_sent == "MAX_TOKENS"


async def test_genai_raises_on_the_mid_stream_error_after_the_partials(
    fake: FakeModel, client: genai.Client
) -> None:
    fake.load(script({"chunks": ["partial text", {"error": {"code": 503}}]}))
    seen: list[str | None] = []
    with pytest.raises(errors.ServerError) as caught:
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
        async for response in stream:
            seen.append(response.text)
    assert seen == ["partial text"]
    assert caught.value.code == 503 and caught.value.status == "UNAVAILABLE"


async def test_genai_raises_on_http_errors(fake: FakeModel, client: genai.Client) -> None:
    fake.load(
        script(
            {"http_error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "slow down"}},
            {"http_error": {"code": 500, "status": "INTERNAL", "message": "boom"}},
        )
    )
    with pytest.raises(errors.ClientError) as client_error:
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
        async for _ in stream:
            pytest.fail("an http_error turn streams nothing")
    assert client_error.value.code == 429 and client_error.value.message == "slow down"
    with pytest.raises(errors.ServerError) as server_error:
        await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert server_error.value.code == 500 and server_error.value.status == "INTERNAL"


async def test_generate_content_merges_the_turn(fake: FakeModel, client: genai.Client) -> None:
    fake.load(
        script(
            {
                "chunks": ["Let ", "me ", {"function_call": {"name": "f", "args": {"a": 1}}}, "ok"],
                "finish_reason": "STOP",
            },
            {"chunks": ["lost", {"error": {"code": 503}}]},
        )
    )
    response = await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert response.candidates is not None
    content = response.candidates[0].content
    assert content is not None and content.parts is not None
    assert [(p.text, p.function_call and p.function_call.name) for p in content.parts] == [
        ("Let me ", None),
        (None, "f"),
        ("ok", None),
    ]
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    first = fake.calls[0]
    assert not first.streaming and first.completed and first.status == 200
    assert first.text_sent == "Let me ok" and first.chunks_sent == 1
    assert first.function_calls_sent == ({"name": "f", "args": {"a": 1}},)

    with pytest.raises(errors.ServerError) as caught:
        await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert caught.value.code == 503
    second = fake.calls[1]
    assert second.status == 503 and second.text_sent == "" and second.chunks_sent == 0
    assert second.error_sent is not None and second.error_sent["status"] == "UNAVAILABLE"


async def test_generate_content_body_is_pretty_json(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["a", "b"]}))
    status, headers, (body,) = await raw_post(fake.base_url, PLAIN_PATH)
    assert status == 200
    assert headers["content-type"] == "application/json; charset=UTF-8"
    payload = json.loads(body)
    assert list(payload) == ["candidates", "usageMetadata", "modelVersion", "responseId"]
    assert payload["candidates"] == [
        {
            "content": {"parts": [{"text": "ab"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ]
    assert body.startswith(b'{\n  "candidates": [\n')


# --- the script --------------------------------------------------------------------------------


async def _texts_of(client: genai.Client, n: int) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        try:
            out.append((await client.aio.models.generate_content(model=MODEL, contents="x")).text)
        except errors.APIError as exc:
            out.append(f"{exc.code} {exc.message}")
    return out


async def test_times_then_past_the_script(fake: FakeModel, client: genai.Client) -> None:
    fake.load(script({"chunks": ["A"], "times": 2}, {"chunks": ["B"]}))
    assert await _texts_of(client, 4) == [
        "A",
        "A",
        "B",
        "500 streamproof: no scripted model turn left for call 4",
    ]
    records = fake.calls
    assert [c.turn for c in records] == [0, 0, 1, None]
    assert [c.status for c in records] == [200, 200, 200, 500]
    assert [c.index for c in records] == [0, 1, 2, 3]
    assert records[3].error_sent == {
        "code": 500,
        "status": "INTERNAL",
        "message": "streamproof: no scripted model turn left for call 4",
    }


async def test_forever_is_stopped_by_the_runaway_cap(fake: FakeModel, client: genai.Client) -> None:
    fake.load(
        script({"chunks": ["first"]}, {"chunks": ["again"], "times": "forever"}), runaway_cap=5
    )
    stop = "streamproof stopped a runaway loop after 5 model calls"
    assert await _texts_of(client, 7) == ["first", "again", "again", "again", "again", stop, stop]
    records = fake.calls
    assert [c.turn for c in records] == [0, 1, 1, 1, 1, None, None]
    assert records[5].status == 200 and records[5].finish_reason_sent == "STOP"


async def test_load_resets_records_and_cursor(fake: FakeModel, client: genai.Client) -> None:
    fake.load(script({"chunks": ["one"]}))
    assert await _texts_of(client, 1) == ["one"]
    fake.load(script({"chunks": ["two"]}))
    assert fake.calls == []
    assert await _texts_of(client, 1) == ["two"]
    assert [c.turn for c in fake.calls] == [0]


async def test_epoch_and_agent_name(fake: FakeModel, client: genai.Client) -> None:
    fake.load(script({"chunks": ["x"], "times": 2}))
    fake.set_epoch(time.monotonic() - 100.0)
    config = types.GenerateContentConfig(
        system_instruction='Be brief.\n\nYou are an agent. Your internal name is "probe_agent".'
    )
    await client.aio.models.generate_content(model=MODEL, contents="hi", config=config)
    await client.aio.models.generate_content(model=MODEL, contents="hi")
    first, second = fake.calls
    assert 100.0 <= first.t < 110.0
    assert first.agent == "probe_agent"
    assert second.agent is None


def test_agent_name_parsing() -> None:
    def body(text: Any) -> dict[str, Any]:
        return {"systemInstruction": text}

    assert gemini.agent_name({}) is None
    assert gemini.agent_name(body({"parts": [{"text": "no name here"}]})) is None
    named = {"parts": [{"text": "a"}, {"text": 'Your internal name is "billing_agent".'}]}
    assert gemini.agent_name(body(named)) == "billing_agent"
    assert gemini.agent_name(body('Your internal name is "plain".')) == "plain"


# --- timing ------------------------------------------------------------------------------------


async def test_delays_are_scaled(fake: FakeModel, client: genai.Client) -> None:
    turn = {"chunks": ["a", {"text": "b", "delay": "2s"}], "chunk_delay": "1s"}
    fake.load(script(turn, turn), time_scale=0.1)
    start = time.monotonic()
    arrivals = []
    async for _ in await client.aio.models.generate_content_stream(model=MODEL, contents="x"):
        arrivals.append(time.monotonic() - start)
    assert arrivals[0] >= 0.09
    # the gap as the fake sent it: a client slowed by a loaded machine may read both at once
    sent = fake.calls[0].text_chunk_times
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.19
    # 0.3 s scaled, 3 s unscaled: the bound between leaves room for a loaded machine
    assert arrivals[1] < 2.5, "the 3 s of scripted delay must be scaled by 0.1"

    start = time.monotonic()
    await client.aio.models.generate_content(model=MODEL, contents="x")
    elapsed = time.monotonic() - start
    assert 0.29 <= elapsed < 2.5, "non-streaming waits the sum of the chunk delays"


async def test_caller_closing_mid_delay_is_recorded_promptly(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["first", {"text": "never", "delay": "30s"}]}))
    async with aiohttp.ClientSession() as session:
        resp = await session.post(fake.base_url + STREAM_PATH, json=HI_BODY)
        first = await resp.content.readuntil(b"\r\n\r\n")
        assert b"first" in first
        await wait_for(lambda: fake.calls and fake.calls[0].chunks_sent == 1)
        in_progress = fake.calls[0]
        assert not in_progress.completed and not in_progress.closed_early
        assert in_progress.text_sent == "first"
        assert fake.busy
        assert not await fake.wait_idle(0.05)
        resp.close()
        noticed = await wait_for(lambda: fake.calls[0].closed_early)
    assert noticed < PROMPTLY
    assert await fake.wait_idle(1.0)
    (call,) = fake.calls
    assert call.closed_early and not call.completed
    assert call.chunks_sent == 1 and call.text_sent == "first"
    assert call.finish_reason_sent is None


async def test_caller_closing_before_the_first_chunk(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["late"], "chunk_delay": "30s", "times": 2}))
    async with aiohttp.ClientSession() as session:
        # Streaming: the headers come at once, the first chunk would come after 30 s.
        resp = await session.post(fake.base_url + STREAM_PATH, json=HI_BODY)
        assert resp.status == 200
        resp.close()
        assert await wait_for(lambda: fake.calls[0].closed_early) < PROMPTLY
        # Non-streaming: nothing at all is written before the 30 s are up.
        task = asyncio.create_task(session.post(fake.base_url + PLAIN_PATH, json=HI_BODY))
        await wait_for(lambda: len(fake.calls) == 2)
        task.cancel()
        assert await wait_for(lambda: fake.calls[1].closed_early) < PROMPTLY
    assert await fake.wait_idle(1.0)
    assert [(c.chunks_sent, c.completed, c.text_sent) for c in fake.calls] == [(0, False, "")] * 2


async def test_close_ends_streams_in_progress() -> None:
    fake = FakeModel()
    await fake.start()
    fake.load(script({"chunks": ["late"], "chunk_delay": "30s"}))
    async with aiohttp.ClientSession() as session:
        resp = await session.post(fake.base_url + STREAM_PATH, json=HI_BODY)
        assert resp.status == 200 and fake.busy
        start = time.monotonic()
        await fake.close()
        assert time.monotonic() - start < PROMPTLY
        with pytest.raises(aiohttp.ClientPayloadError):
            await resp.read()
    (call,) = fake.calls
    assert not call.completed and not call.closed_early


def test_fake_model_is_not_collected() -> None:
    assert FakeModel.__test__ is False


# --- a real ADK agent --------------------------------------------------------------------------


async def test_real_adk_agent_runs_against_the_fake(
    fake: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.agents import LlmAgent, RunConfig
    from google.adk.agents.run_config import StreamingMode
    from google.adk.models import Gemini
    from google.adk.runners import InMemoryRunner

    monkeypatch.setenv("GOOGLE_API_KEY", "x")
    ran: list[str] = []

    def get_weather(city: str) -> dict[str, str]:
        """Returns the weather for a city."""
        ran.append(city)
        return {"city": city, "weather": "sunny"}

    fake.load(
        script(
            {"chunks": [{"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}]},
            {"chunks": ["It is ", "sunny", " in Paris."], "chunk_delay": "10ms"},
        )
    )
    agent = LlmAgent(
        name="support",
        model=Gemini(model=MODEL, base_url=fake.base_url),
        instruction="Be brief.",
        tools=[get_weather],
    )
    runner = InMemoryRunner(agent=agent, app_name="streamproof")
    session = await runner.session_service.create_session(app_name="streamproof", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = [
        event
        async for event in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=message,
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        )
    ]
    await runner.close()

    assert ran == ["Paris"], "the tool runs once, from the final event"
    partial_texts = [
        p.text
        for e in events
        if e.partial and e.content and e.content.parts
        for p in e.content.parts
        if p.text
    ]
    assert partial_texts == ["It is ", "sunny", " in Paris."]
    final = [e for e in events if e.is_final_response()][-1]
    assert final.content is not None and final.content.parts is not None
    assert "".join(p.text or "" for p in final.content.parts) == "It is sunny in Paris."
    assert final.error_code is None

    records: list[ModelCall] = fake.calls
    assert [c.agent for c in records] == ["support", "support"]
    assert [c.turn for c in records] == [0, 1]
    assert all(c.streaming and c.completed and not c.closed_early for c in records)
    last_content = records[1].body["contents"][-1]
    assert last_content["parts"][0]["functionResponse"]["response"] == {
        "city": "Paris",
        "weather": "sunny",
    }


# --- retries: an error turn repeats for the same request sent again -----------------------------

_OVERLOADED = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}
OTHER_BODY = {"contents": [{"parts": [{"text": "something else"}], "role": "user"}]}


async def test_an_error_turn_repeats_for_retries_of_the_same_request(fake: FakeModel) -> None:
    fake.load(script({"http_error": _OVERLOADED}, {"chunks": ["next step"]}))
    statuses = [(await raw_post(fake.base_url, STREAM_PATH))[0] for _ in range(4)]
    # Every retry of the failed request meets the same failure, none runs past the script.
    assert statuses == [503, 503, 503, 503]
    status, _, body = await raw_post(fake.base_url, STREAM_PATH, OTHER_BODY)
    assert status == 200 and b"next step" in b"".join(body)
    records = fake.calls
    assert [c.turn for c in records] == [0, 0, 0, 0, 1]
    assert [c.retry_of for c in records] == [None, 0, 1, 2, None]


async def test_a_mid_stream_error_turn_repeats_for_retries(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["half ", {"error": _OVERLOADED}]}))
    for _ in range(3):
        status, _, body = await raw_post(fake.base_url, STREAM_PATH)
        assert status == 200 and b'"error"' in b"".join(body)
    assert [c.turn for c in fake.calls] == [0, 0, 0]
    assert all(c.error_sent == _OVERLOADED for c in fake.calls)


async def test_retries_next_lets_a_retry_recover(fake: FakeModel, client: genai.Client) -> None:
    fake.load(script({"http_error": _OVERLOADED, "retries": "next"}, {"chunks": ["recovered"]}))
    assert await _texts_of(client, 2) == ["503 The model is overloaded.", "recovered"]
    assert [(c.turn, c.retry_of) for c in fake.calls] == [(0, None), (1, 0)]


async def test_a_new_request_after_an_error_turn_is_not_a_retry(fake: FakeModel) -> None:
    fake.load(script({"http_error": _OVERLOADED}))
    await raw_post(fake.base_url, STREAM_PATH)
    status, _, _ = await raw_post(fake.base_url, STREAM_PATH, OTHER_BODY)
    await raw_post(fake.base_url, PLAIN_PATH, OTHER_BODY)  # the same body on another path
    assert status == 500  # a new step: past the script
    assert [(c.turn, c.retry_of) for c in fake.calls] == [(0, None), (None, None), (None, None)]


def test_retries_is_only_for_error_turns() -> None:
    with pytest.raises(ValueError, match="retries applies to an error turn"):
        ModelTurn.model_validate({"chunks": ["fine"], "retries": "repeat"})
    with pytest.raises(ValueError):
        ModelTurn.model_validate({"http_error": _OVERLOADED, "retries": "always"})
    assert ModelTurn.model_validate({"http_error": _OVERLOADED}).repeats_for_retries
    assert not ModelTurn.model_validate(
        {"http_error": _OVERLOADED, "retries": "next"}
    ).repeats_for_retries
    assert not ModelTurn.model_validate({"chunks": ["fine"]}).repeats_for_retries


async def test_the_times_of_text_chunks_are_recorded(fake: FakeModel) -> None:
    fake.load(
        script(
            {
                "chunks": [
                    {"function_call": {"name": "lookupOrder", "args": {}}},
                    "one ",
                    {"text": "two", "delay": "0.3s"},
                ]
            }
        )
    )
    await raw_post(fake.base_url, STREAM_PATH)
    (call,) = fake.calls
    first, second = call.text_chunk_times  # the function-call chunk carries no text
    assert call.t <= first and second - first >= 0.25


# --- extending the script ----------------------------------------------------------------------


async def test_extend_adds_turns_keeping_the_calls_and_the_cursor(fake: FakeModel) -> None:
    fake.load(script({"chunks": ["first"]}))
    assert (await raw_post(fake.base_url, STREAM_PATH))[0] == 200
    assert (await raw_post(fake.base_url, PLAIN_PATH))[0] == 500  # past the script
    fake.extend(script({"chunks": ["second"]}))
    status, _, chunks = await raw_post(fake.base_url, STREAM_PATH)
    assert status == 200 and b"second" in b"".join(chunks)
    assert [c.turn for c in fake.calls] == [0, None, 1]


# --- canned streams (fixtures/gemini) ----------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "gemini"


def fixture_turn(name: str, **extra: Any) -> ModelTurn:
    def source(path: str) -> tuple[str, bytes]:
        return path, (FIXTURES / Path(path).name).read_bytes()

    return ModelTurn.model_validate(
        {"fixture": f"fixtures/gemini/{name}", **extra}, context={FIXTURE_CONTEXT_KEY: source}
    )


async def test_a_fixture_turn_is_written_byte_for_byte(fake: FakeModel) -> None:
    # The file's own CRLFs, even from a fake told to end lines with LF.
    lf = FakeModel(line_end="\n")
    await lf.start()
    try:
        raw = (FIXTURES / "text_with_function_call.sse").read_bytes()
        lf.load([fixture_turn("text_with_function_call.sse")], time_scale=0.01)
        status, headers, chunks = await raw_post(lf.base_url, STREAM_PATH)
        assert status == 200 and headers["content-type"] == "text/event-stream"
        expected = b"".join(
            line for line in raw.splitlines(keepends=True) if not line.startswith(b": at ")
        )
        assert b"".join(chunks) == expected
        assert len(chunks) == 2, "one write per event"
        (call,) = lf.calls
        assert call.completed and call.chunks_sent == 2
        assert call.text_sent == "Let me check that order. "
        assert call.function_calls_sent == ({"name": "lookupOrder", "args": {"orderId": "77"}},)
        assert call.finish_reason_sent == "STOP"
    finally:
        await lf.close()


async def test_a_fixture_keeps_its_recorded_timing_scaled(
    fake: FakeModel, client: genai.Client
) -> None:
    # long_answer.sse: 69 chunks, the first at 0.3 s, then 15 ms apart (1.32 s in all).
    fake.load([fixture_turn("long_answer.sse")], time_scale=0.5)
    start = time.monotonic()
    arrivals: list[float] = []
    text = ""
    async for chunk in await client.aio.models.generate_content_stream(model=MODEL, contents="x"):
        arrivals.append(time.monotonic() - start)
        text += chunk.text or ""
    assert len(arrivals) == 69
    assert arrivals[0] >= 0.14, "0.3 s recorded, scaled by 0.5"
    assert 0.6 <= arrivals[-1] < 3.0, "1.32 s recorded, scaled by 0.5"
    assert text == fake.calls[0].text_sent and text.startswith("Streaming a long answer")


async def test_a_fixture_with_a_given_chunk_delay(fake: FakeModel, client: genai.Client) -> None:
    # At time scale 5 the recorded timing would take 6.6 s; with chunk_delay 0s (and the first
    # chunk's 0.3 s, 1.5 s scaled, if kept) the bound below is far from it on a loaded machine.
    fake.load([fixture_turn("long_answer.sse", chunk_delay="0s")], time_scale=5.0)
    start = time.monotonic()
    count = 0
    async for _ in await client.aio.models.generate_content_stream(model=MODEL, contents="x"):
        count += 1
    assert count == 69
    assert time.monotonic() - start < 3.3, "chunk_delay 0s replaces the recorded 1.32 s (x5)"


async def test_genai_reads_a_fixture_error_and_plain_calls_get_the_merge(
    fake: FakeModel, client: genai.Client
) -> None:
    fake.load(
        [fixture_turn("mid_stream_error.sse"), fixture_turn("worked_example_answer.sse")],
        time_scale=0.1,
    )
    texts: list[str] = []
    with pytest.raises(errors.APIError) as caught:
        async for chunk in await client.aio.models.generate_content_stream(
            model=MODEL, contents="x"
        ):
            texts.append(chunk.text or "")
    assert caught.value.code == 503
    assert texts == ["The answer you are looking for is "]
    assert fake.calls[0].error_sent == {
        "code": 503,
        "message": "The model is overloaded.",
        "status": "UNAVAILABLE",
    }
    answer = await client.aio.models.generate_content(model=MODEL, contents="y")
    assert answer.text == "Order 1042 shipped on 30 September and is due Monday."


# --- keyed mode: several conversations at once (--concurrency) ---------------------------------


def _asking(text: str) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": text}]}]}


async def test_keyed_calls_are_answered_and_recorded_by_the_key_their_body_holds(
    fake: FakeModel,
) -> None:
    fake.load_keyed(
        {
            "sp-s1-k": script({"chunks": ["one"]}),
            "sp-s2-k": script({"chunks": ["two"]}, {"chunks": ["two again"]}),
        }
    )
    path = PLAIN_PATH
    status2, _, body2 = await raw_post(fake.base_url, path, _asking("hi [sp-s2-k]"))
    status1, _, body1 = await raw_post(fake.base_url, path, _asking("hi [sp-s1-k]"))
    status2b, _, body2b = await raw_post(fake.base_url, path, _asking("again [sp-s2-k]"))
    assert (status1, status2, status2b) == (200, 200, 200)
    assert b'"one"' in b"".join(body1)
    assert b'"two"' in b"".join(body2) and b'"two again"' in b"".join(body2b)
    assert [(c.index, c.turn, c.text_sent) for c in fake.calls_for("sp-s1-k")] == [(0, 0, "one")]
    assert [(c.index, c.turn, c.text_sent) for c in fake.calls_for("sp-s2-k")] == [
        (0, 0, "two"),
        (1, 1, "two again"),
    ]
    assert fake.calls == [] and fake.call_count == 3


async def test_a_keyed_call_holding_no_key_or_two_is_answered_as_off_script(
    fake: FakeModel,
) -> None:
    fake.load_keyed(
        {"sp-s1-k": script({"chunks": ["one"]}), "sp-s2-k": script({"chunks": ["two"]})}
    )
    path = PLAIN_PATH
    mixed, _, _ = await raw_post(fake.base_url, path, _asking("[sp-s1-k] and [sp-s2-k]"))
    nobody, _, _ = await raw_post(fake.base_url, path, _asking("no key at all"))
    assert (mixed, nobody) == (500, 500)
    assert [(c.index, c.turn) for c in fake.calls] == [(0, None), (1, None)]
    assert fake.calls_for("sp-s1-k") == [] and fake.calls_for("sp-s2-k") == []
    fake.load(script({"chunks": ["plain"]}))  # a plain load leaves keyed mode
    status, _, _ = await raw_post(fake.base_url, path, _asking("[sp-s1-k]"))
    assert status == 200 and [c.text_sent for c in fake.calls] == ["plain"]


def test_keys_must_not_contain_one_another() -> None:
    with pytest.raises(ValueError, match="is part of key"):
        FakeModel().load_keyed({"sp-s1": script(), "sp-s12": script()})
    with pytest.raises(ValueError, match="at least one non-empty key"):
        FakeModel().load_keyed({})
