"""The fake gateway: one run per chat request, paced frames, the history, CORS, the record."""

from __future__ import annotations

import aiohttp

from streamproof.fakes.gateway import FakeGateway, GatewayFrame, history_events
from streamproof.fakes.gateway.server import endpoint_pattern

FRAMES = [
    GatewayFrame("delta", {"author": "support", "text": "Hi "}, retry=500),
    GatewayFrame("message", {"author": "support", "text": "Hi there.", "final": True}),
    GatewayFrame("done", {}),
]


def test_endpoint_templates_match_one_segment_per_name() -> None:
    method, pattern = endpoint_pattern("POST /chat/{sessionId}")
    assert method == "POST"
    assert pattern.match("/chat/abc") and not pattern.match("/chat/a/b")


def test_a_frame_is_one_sse_event_numbered_by_the_gateway() -> None:
    assert FRAMES[0].block(1) == (
        'retry: 500\nid: 1\nevent: delta\ndata: {"author":"support","text":"Hi "}\n\n'
    )


def test_history_items_become_stored_adk_events() -> None:
    events = history_events(
        [
            {"author": "user", "text": "Where?"},
            {"author": "support", "tool_call": ["lookupOrder"]},
            {"author": "support", "tool_result": "lookupOrder"},
        ]
    )
    assert events[0]["content"] == {"role": "user", "parts": [{"text": "Where?"}]}
    assert events[1]["content"]["parts"] == [{"functionCall": {"name": "lookupOrder", "args": {}}}]
    assert "functionResponse" in events[2]["content"]["parts"][0]


async def test_a_run_is_paced_recorded_and_played_once() -> None:
    fake = FakeGateway()
    paced: list[int] = []

    async def pace(index: int, block: str) -> None:
        assert block == FRAMES[index - 1].block(index)
        paced.append(index)

    fake.load(FRAMES, history_events([{"author": "user", "text": "Where?"}]), pace)
    url = await fake.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.options(
                f"{url}/chat/s1", headers={"Access-Control-Request-Headers": "last-event-id"}
            ) as preflight:
                assert preflight.status == 204
                assert preflight.headers["Access-Control-Allow-Headers"] == "last-event-id"
            async with session.post(f"{url}/chat/s1", data="Where?") as response:
                assert response.headers["Access-Control-Allow-Origin"] == "*"
                body = await response.text()
            async with session.post(
                f"{url}/chat/s1", data="Where?", headers={"Last-Event-ID": "3"}
            ) as again:
                assert again.status == 409
            async with session.get(f"{url}/history/s1") as history:
                assert (await history.json())[0]["author"] == "user"
            async with session.get(f"{url}/nowhere") as other:
                assert other.status == 404
    finally:
        await fake.close()
    assert body == "".join(f.block(i) for i, f in enumerate(FRAMES, start=1))
    assert paced == [1, 2, 3] and fake.played and fake.completed
    assert [(r.role, r.status) for r in fake.requests] == [
        ("preflight", 204),
        ("chat", 200),
        ("chat", 409),
        ("history", 200),
        ("other", 404),
    ]
    assert fake.requests[2].last_event_id == "3" and fake.requests[1].body == "Where?"
    assert sorted(fake.sent) == [1, 2, 3]
