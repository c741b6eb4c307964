"""A gateway that forwards ADK's raw event JSON, declared (wrongly) as typed frames.

Written from the docs alone (docs/how-to/adk-dev-server.md, docs/explanation/wire-facts/), as a
user's first attempt often is: the chat
endpoint streams what ADK's ``/run_sse`` streams, one data-only SSE event per ADK event (a
partial text, then the aggregate), with no ``event:`` line and no ``id:``; the history is the
session's events. Its target file keeps the default ``typed-frames`` profile, so the suite must
say, first and in one line, that it sees raw ADK events and suggest ``profile: adk-events``.
It runs no model: the answer is fixed. ``python -m harness.tests.independent.raw_events_gateway``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from typing import Any

from aiohttp import web

ANSWER = ("Hello", ", world!")
SESSIONS: dict[str, list[dict[str, Any]]] = {}


def _event(author: str, text: str, *, partial: bool | None, invocation: str) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "invocationId": invocation,
        "author": author,
        "content": {"role": "user" if author == "user" else "model", "parts": [{"text": text}]},
        "actions": {"stateDelta": {}, "artifactDelta": {}},
    }
    if partial is not None:
        event["partial"] = partial
    return event


async def chat(request: web.Request) -> web.StreamResponse:
    text = (await request.read()).decode("utf-8", "replace")
    invocation = f"e-{uuid.uuid4()}"
    stored = SESSIONS.setdefault(request.match_info["sessionId"], [])
    stored.append(_event("user", text, partial=None, invocation=invocation))
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for chunk in ANSWER:
        partial = _event("support", chunk, partial=True, invocation=invocation)
        await resp.write(f"data: {json.dumps(partial)}\n\n".encode())
    aggregate = _event("support", "".join(ANSWER), partial=False, invocation=invocation)
    stored.append(aggregate)
    await resp.write(f"data: {json.dumps(aggregate)}\n\n".encode())
    await resp.write_eof()
    return resp


async def history(request: web.Request) -> web.Response:
    return web.json_response({"events": SESSIONS.get(request.match_info["sessionId"], [])})


async def healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def serve() -> None:
    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/chat/{sessionId}", chat)
    app.router.add_get("/history/{sessionId}", history)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", int(os.environ.get("PORT", "0"))).start()
    port = runner.addresses[0][1]
    print(f"raw-events-gateway listening on http://127.0.0.1:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
