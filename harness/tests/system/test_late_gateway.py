"""The late gateway (``harness/tests/independent/late_gateway.py``) really behaves like ADK
Java in the three ways the gateway suite must judge fairly: it retries a 5xx model answer with
the very same request, it stores no error event after a model error, and it hands each model
chunk over one chunk late. Without these, its passing the suite would prove nothing."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from harness.tests.independent.late_gateway import ATTEMPTS, ModelClient, make_app
from streamproof.fakes.model import FakeModel
from streamproof.protocol.gemini import ModelTurn
from streamproof.protocol.sse import Decoder

OVERLOADED = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}


@dataclass(frozen=True)
class Seen:
    t: float
    kind: str
    data: dict[str, Any]


@dataclass
class Running:
    fake: FakeModel
    url: str
    http: aiohttp.ClientSession

    async def chat(self, session: str, text: str) -> list[Seen]:
        decoder = Decoder()
        seen: list[Seen] = []
        t0 = time.monotonic()
        async with self.http.post(f"{self.url}/chat/{session}", data=text) as resp:
            assert resp.status == 200
            async for chunk in resp.content.iter_any():
                now = time.monotonic() - t0
                seen += [Seen(now, e.type, json.loads(e.data)) for e in decoder.feed(chunk)]
        return seen

    async def history(self, session: str) -> list[dict[str, Any]]:
        async with self.http.get(f"{self.url}/history/{session}") as resp:
            events: list[dict[str, Any]] = (await resp.json())["events"]
        return events


@pytest.fixture
async def late() -> AsyncIterator[Running]:
    fake = FakeModel()
    await fake.start()
    async with aiohttp.ClientSession() as http:
        app = make_app(ModelClient(http, fake.base_url, "key"), http, run_timeout=30.0)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            yield Running(fake, f"http://127.0.0.1:{port}", http)
        finally:
            await runner.cleanup()
            await fake.close()


def turns(*raw: dict[str, Any]) -> list[ModelTurn]:
    return [ModelTurn.model_validate(t) for t in raw]


async def test_each_chunk_is_handed_over_one_chunk_late(late: Running) -> None:
    late.fake.load(
        turns(
            {"chunks": ["One ", "two ", {"text": "three.", "delay": "1s"}], "chunk_delay": "0.2s"}
        )
    )
    seen = await late.chat("s1", "Count.")
    deltas = [s for s in seen if s.kind == "delta"]
    assert [d.data["text"] for d in deltas] == ["One ", "two ", "three."]
    assert [s.kind for s in seen] == ["delta", "delta", "delta", "message", "done"]
    # "One " was sent at 0.2 s and handed over with "two " (0.4 s); "two " surfaced only when
    # "three." ended the 1 s stall (1.4 s), together with it.
    assert deltas[0].t >= 0.35
    assert deltas[1].t - deltas[0].t >= 0.8
    assert deltas[2].t - deltas[1].t < 0.6  # together: not the 1 s stall apart


async def test_a_5xx_is_retried_with_the_same_request_and_no_error_event_is_stored(
    late: Running,
) -> None:
    late.fake.load(turns({"http_error": OVERLOADED}))
    seen = await late.chat("s2", "Hello?")
    assert [s.kind for s in seen] == ["error"]
    calls = late.fake.calls
    assert len(calls) == ATTEMPTS
    assert [c.status for c in calls] == [503] * ATTEMPTS
    assert [c.retry_of for c in calls] == [None, *range(ATTEMPTS - 1)]
    assert [e["author"] for e in await late.history("s2")] == ["user"]


async def test_a_mid_stream_error_loses_the_held_chunk_and_stores_nothing(late: Running) -> None:
    late.fake.load(turns({"chunks": ["The answer is ", {"error": OVERLOADED, "delay": "20ms"}]}))
    seen = await late.chat("s3", "Tell me.")
    # The chunk before the error was still held (one chunk late) when the stream failed.
    assert [s.kind for s in seen] == ["error"]
    assert len(late.fake.calls) == 1
    history = await late.history("s3")
    assert [e["author"] for e in history] == ["user"]
    assert not any("errorCode" in e for e in history)


async def test_max_tokens_is_an_aggregate_with_an_error_code_and_is_stored(late: Running) -> None:
    late.fake.load(turns({"chunks": ["On ", "and on"], "finish_reason": "MAX_TOKENS"}))
    seen = await late.chat("s4", "Explain.")
    assert [s.kind for s in seen] == ["delta", "delta", "error", "done"]
    assert seen[2].data == {"code": "MAX_TOKENS"}
    stored = (await late.history("s4"))[-1]
    assert stored["errorCode"] == "MAX_TOKENS" and "partial" not in stored
