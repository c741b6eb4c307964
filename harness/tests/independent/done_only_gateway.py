"""A broken gateway: every chat turn answers only ``done``, and the history is always empty.

It never runs a model, so nothing the user asked is ever answered or stored; the suite must
fail it. ``python -m harness.tests.independent.done_only_gateway``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from aiohttp import web


async def chat(request: web.Request) -> web.StreamResponse:
    await request.read()
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    await resp.write(b"id:1\nevent:done\ndata:{}\n\n")
    await resp.write_eof()
    return resp


async def history(_request: web.Request) -> web.Response:
    return web.json_response({"events": []})


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
    print(f"done-only-gateway listening on http://127.0.0.1:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
