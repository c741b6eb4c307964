"""The push relay: a delivery for no known route is answered 404, marked as the relay's."""

from __future__ import annotations

import httpx

from streamproof.fakes.a2a.push.relay import RELAY_HEADER, PushRelay, Route


async def test_unknown_routes_are_refused_and_known_ones_forwarded() -> None:
    relay = PushRelay()
    base = await relay.start()
    seen: list[tuple[int | None, str]] = []
    try:
        relay.resolve = lambda seq: (
            Route("http://127.0.0.1:9/unreachable", 1.0, lambda s, d: seen.append((s, d)))
            if seq == 7
            else None
        )
        async with httpx.AsyncClient() as http:
            unknown = await http.post(base + "/d/3", content=b"{}")
            gone = await http.post(base + "/d/7", content=b"{}")
    finally:
        await relay.close()
    assert unknown.status_code == 404 and unknown.headers[RELAY_HEADER] == "unknown"
    assert gone.status_code == 502 and gone.headers[RELAY_HEADER] == "unreachable"
    assert seen and seen[0][0] is None and "could not be reached" in seen[0][1]
