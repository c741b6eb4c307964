"""A contract-minimal gateway: the seed's Java ``ChatStreamController`` on google-adk Python.

``python -m harness.tests.independent.gateway`` binds 127.0.0.1:$PORT (0: ephemeral) and
prints ``independent-gateway listening on http://127.0.0.1:NNNN``. Endpoints: ``GET /healthz``,
``POST /chat/{sessionId}`` (typed SSE frames) and ``GET /history/{sessionId}`` (the stored ADK
events). No NONE mode, no auth, no sub-agents.

Two variants of it are small gateways of their own (``main``'s options, each with a module and a
target file): ``run_bound``, the seed's ``new SseEmitter(120_000L)`` with
``emitter.onTimeout(sub::dispose)``: at ``STREAMPROOF_RUN_TIMEOUT`` seconds the run is disposed
and the stream closed, with no frame at all, as the seed's controller does; and
``trailing_delta``, broken on purpose: a final answer's text goes out once more as a ``delta``
after its ``message`` (the browser shows it twice until ``done``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any, Final

import aiohttp
from aiohttp import web
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

APP_NAME: Final = "independent-gateway"
USER_ID: Final = "user"
WATCH_INTERVAL_S: Final = 0.1
"""How often the chat handler looks at the browser's connection while no bytes flow."""

RUNNER_KEY: Final = web.AppKey("runner", Runner)
SESSIONS_KEY: Final = web.AppKey("sessions", InMemorySessionService)
BROKEN_HISTORY_KEY: Final = web.AppKey("broken_history", bool)
RUN_BOUND_KEY: Final = web.AppKey("run_bound", float)
"""Seconds after which a run is disposed (0: no bound)."""
TRAILING_DELTA_KEY: Final = web.AppKey("trailing_delta", bool)


async def lookupOrder(orderId: str) -> dict[str, Any]:
    """Look up an order by its id and return what the order service knows about it."""
    url = os.environ["STREAMPROOF_TOOL_URL"].rstrip("/") + "/lookupOrder"
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json={"orderId": orderId}) as answer,
    ):
        answer.raise_for_status()
        body: Any = await answer.json(content_type=None)
    return body if isinstance(body, dict) else {"result": body}


def build_runner() -> tuple[Runner, InMemorySessionService]:
    agent = LlmAgent(
        name="support",
        model="gemini-2.0-flash",
        instruction="You are a support agent. Use lookupOrder to answer questions about orders.",
        tools=[lookupOrder],
    )
    sessions = InMemorySessionService()
    runner = Runner(
        app_name=APP_NAME, agent=agent, session_service=sessions, auto_create_session=True
    )
    return runner, sessions


class BrowserGone(Exception):
    """A write failed: the browser went away."""


OWN_NAMES: Final[dict[str, str]] = {
    "delta": "token",
    "message": "answer",
    "tool_call": "tool",
    "tool_result": "tool_done",
    "error": "failure",
    "done": "finished",
}
"""A team's own names for the seed's six frames (``INDEPENDENT_OWN_NAMES=1``), with fields of
its own too (:func:`_own_fields`); mapped-gateway.yaml declares them to streamproof."""


def _own_fields(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The seed's payload in the team's own shape: who and what said under ``from`` and
    ``body``, the tool names as ``calls``, the count as ``n``."""
    if kind in ("delta", "message"):
        out: dict[str, Any] = {"from": {"agent": payload["author"]}, "body": payload["text"]}
        if "final" in payload:
            out["isFinal"] = payload["final"]
        return out
    if kind == "tool_call":
        return {"calls": payload["names"]}
    if kind == "tool_result":
        return {"n": payload["count"], **({"raw": payload["raw"]} if "raw" in payload else {})}
    return payload


def _frame_bytes(n: int, kind: str, payload: dict[str, Any]) -> bytes:
    if os.environ.get("INDEPENDENT_OWN_NAMES") == "1":
        kind, payload = OWN_NAMES[kind], _own_fields(kind, payload)
    data = json.dumps(payload, separators=(",", ":"))
    return f"id:{n}\nevent:{kind}\ndata:{data}\n\n".encode()


async def _frame(resp: web.StreamResponse, n: int, kind: str, payload: dict[str, Any]) -> None:
    try:
        await resp.write(_frame_bytes(n, kind, payload))
    except (ConnectionError, RuntimeError) as exc:
        raise BrowserGone from exc


def _text(ev: Event) -> str:
    if ev.content is None or not ev.content.parts:
        return ""
    return "".join(part.text or "" for part in ev.content.parts)


async def _send(resp: web.StreamResponse, n: int, ev: Event, *, trailing_delta: bool) -> int:
    """One ADK event to its frames, exactly as the seed's ``send`` (``trailing_delta``: and a
    final answer once more as a delta, with an id of its own, the broken variant); how many
    more ids of the counter it took."""
    text = _text(ev)
    calls = ev.get_function_calls()
    if ev.error_code is not None:
        await _frame(resp, n, "error", {"code": str(ev.error_code)})
    elif ev.partial:
        if text:
            await _frame(resp, n, "delta", {"author": ev.author, "text": text})
    elif calls:
        if text:
            await _frame(resp, n, "message", {"author": ev.author, "text": text, "final": False})
        await _frame(resp, n, "tool_call", {"names": [fc.name or "?" for fc in calls]})
    elif ev.get_function_responses():
        summary: dict[str, Any] = {"count": len(ev.get_function_responses())}
        if os.environ.get("INDEPENDENT_FORWARD_TOOL_RESULTS") == "1":  # the broken twin
            summary["raw"] = [r.response for r in ev.get_function_responses()]
        await _frame(resp, n, "tool_result", summary)
    elif text:
        await _frame(
            resp,
            n,
            "message",
            {"author": ev.author, "id": ev.id, "text": text, "final": ev.is_final_response()},
        )
        if trailing_delta:
            await _frame(resp, n + 1, "delta", {"author": ev.author, "text": text})
            return 1
    return 0


async def _stream_run(
    runner: Runner,
    session_id: str,
    text: str,
    resp: web.StreamResponse,
    *,
    trailing_delta: bool = False,
) -> None:
    config = RunConfig(streaming_mode=StreamingMode.SSE, max_llm_calls=20)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    seq = 0
    events = runner.run_async(
        user_id=USER_ID, session_id=session_id, new_message=message, run_config=config
    )
    try:
        async for ev in events:
            seq += 1
            seq += await _send(resp, seq, ev, trailing_delta=trailing_delta)
    except BrowserGone:
        return
    except Exception:
        seq += 1
        with contextlib.suppress(BrowserGone):
            await _frame(resp, seq, "error", {"retryable": True})
        return
    finally:
        await events.aclose()
    seq += 1
    with contextlib.suppress(BrowserGone):
        await _frame(resp, seq, "done", {})


def _browser_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def chat(request: web.Request) -> web.StreamResponse:
    session_id = request.match_info["sessionId"]
    text = await request.text()
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    app = request.app
    run = asyncio.create_task(
        _stream_run(app[RUNNER_KEY], session_id, text, resp, trailing_delta=app[TRAILING_DELTA_KEY])
    )
    loop = asyncio.get_running_loop()
    bound = app[RUN_BOUND_KEY]
    deadline = loop.time() + bound if bound > 0 else None
    try:
        # Dispose the run when the browser goes away, even while no bytes flow, and at the
        # run bound (emitter.onTimeout(sub::dispose): the run ends, and nothing is sent).
        while not run.done():
            await asyncio.wait({run}, timeout=WATCH_INTERVAL_S)
            if not run.done() and (
                _browser_gone(request) or (deadline is not None and loop.time() >= deadline)
            ):
                run.cancel()
                break
    finally:
        if not run.done():
            run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    with contextlib.suppress(ConnectionError, RuntimeError):
        await resp.write_eof()
    return resp


async def history(request: web.Request) -> web.Response:
    if request.app[BROKEN_HISTORY_KEY]:
        return web.json_response({"error": "history is broken on purpose"}, status=500)
    session = await request.app[SESSIONS_KEY].get_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=request.match_info["sessionId"]
    )
    events = [] if session is None else session.events
    dumped = [ev.model_dump(mode="json", by_alias=True, exclude_none=True) for ev in events]
    return web.json_response({"events": dumped})


async def healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


def make_app(
    *, broken_history: bool = False, run_bound: float = 0.0, trailing_delta: bool = False
) -> web.Application:
    runner, sessions = build_runner()
    app = web.Application()
    app[RUNNER_KEY] = runner
    app[SESSIONS_KEY] = sessions
    app[BROKEN_HISTORY_KEY] = broken_history
    app[RUN_BOUND_KEY] = run_bound
    app[TRAILING_DELTA_KEY] = trailing_delta
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/chat/{sessionId}", chat)
    app.router.add_get("/history/{sessionId}", history)
    return app


async def serve(app: web.Application, name: str = "independent-gateway") -> None:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", int(os.environ.get("PORT", "0")))
    await site.start()
    port = runner.addresses[0][1]
    print(f"{name} listening on http://127.0.0.1:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(
    *,
    broken_history: bool = False,
    run_bound: bool = False,
    trailing_delta: bool = False,
    name: str = "independent-gateway",
) -> None:
    """Serve until interrupted; ``run_bound``: honour ``STREAMPROOF_RUN_TIMEOUT`` (the seed's
    120 s when unset) as the seed's controller does."""
    broken = broken_history or os.environ.get("INDEPENDENT_BROKEN_HISTORY") == "1"
    bound = float(os.environ.get("STREAMPROOF_RUN_TIMEOUT") or 120.0) if run_bound else 0.0
    app = make_app(broken_history=broken, run_bound=bound, trailing_delta=trailing_delta)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(app, name))


if __name__ == "__main__":
    main()
