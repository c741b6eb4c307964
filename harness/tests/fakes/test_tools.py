"""The fake tool service: scripted payloads with the marker filled in, and a record per call."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

from streamproof.fakes.records import MARKER_PLACEHOLDER
from streamproof.fakes.tools import FakeTools, substitute_marker
from streamproof.suites.gateway.observation import ToolCall

MARKER = "sp-secret-7f3a"


@pytest.fixture
async def tools() -> AsyncIterator[FakeTools]:
    service = FakeTools()
    await service.start()
    yield service
    await service.close()


def test_substitution_reaches_every_string() -> None:
    payload = {
        "plain": "{{marker}}",
        "inside": "id={{marker}}; again {{marker}}.",
        "nested": {"list": ["a", {"deep": ["{{marker}}"]}], "n": 3, "ok": True, "none": None},
        "{{marker}}": "key too",
        "tuple": ("{{marker}}",),
    }
    assert substitute_marker(payload, MARKER) == {
        "plain": MARKER,
        "inside": f"id={MARKER}; again {MARKER}.",
        "nested": {"list": ["a", {"deep": [MARKER]}], "n": 3, "ok": True, "none": None},
        MARKER: "key too",
        "tuple": [MARKER],
    }
    assert MARKER_PLACEHOLDER == "{{marker}}"


async def test_answers_the_payload_with_the_marker(tools: FakeTools) -> None:
    tools.load(
        {
            "get_order": {"order": {"id": 7, "note": "ref {{marker}}", "tags": ["{{marker}}"]}},
            "ping": "pong {{marker}}",
        },
        MARKER,
    )
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{tools.base_url}/get_order", json={"id": 7}) as resp:
            assert resp.status == 200
            assert resp.content_type == "application/json"
            assert await resp.json() == {
                "order": {"id": 7, "note": f"ref {MARKER}", "tags": [MARKER]}
            }
        async with session.post(f"{tools.base_url}/ping", data=b"not json") as resp:
            assert resp.status == 200
            assert await resp.json() == f"pong {MARKER}"
    assert tools.count("get_order") == 1
    assert tools.count("ping") == 1
    assert tools.count("other") == 0


async def test_unknown_tool_is_a_404(tools: FakeTools) -> None:
    tools.load({"known": {}}, MARKER)
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{tools.base_url}/refund", json={}) as resp:
            assert resp.status == 404
            assert await resp.json() == {
                "error": "streamproof: no payload scripted for tool refund"
            }
    (call,) = tools.calls
    assert call.tool == "refund" and call.status == 404


async def test_records_counts_and_reset(tools: FakeTools) -> None:
    tools.load({"a": {"v": 1}, "b": {"v": 2}}, MARKER)
    tools.set_epoch(time.monotonic() - 50.0)
    async with aiohttp.ClientSession() as session:
        for name, body in (("a", {"x": 1}), ("b", {"y": [2]}), ("a", {"x": 3})):
            async with session.post(f"{tools.base_url}/{name}", json=body) as resp:
                assert resp.status == 200
        async with session.post(f"{tools.base_url}/b", data=b"raw text") as resp:
            assert resp.status == 200
    calls = tools.calls
    assert [(c.tool, c.arguments, c.status) for c in calls] == [
        ("a", {"x": 1}, 200),
        ("b", {"y": [2]}, 200),
        ("a", {"x": 3}, 200),
        ("b", "raw text", 200),
    ]
    assert all(isinstance(c, ToolCall) and 50.0 <= c.t < 60.0 for c in calls)
    assert [c.t for c in calls] == sorted(c.t for c in calls)
    assert tools.count("a") == 2 and tools.count("b") == 2

    tools.load({"a": {}}, "another")
    assert tools.calls == [] and tools.count("a") == 0


async def test_lifecycle() -> None:
    service = FakeTools()
    assert FakeTools.__test__ is False
    with pytest.raises(RuntimeError):
        _ = service.base_url
    url = await service.start()
    try:
        assert url.startswith("http://127.0.0.1:") and service.base_url == url
        with pytest.raises(RuntimeError):
            await service.start()
    finally:
        await service.close()
    with pytest.raises(RuntimeError):
        _ = service.base_url
    await service.close()
