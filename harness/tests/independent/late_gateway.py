"""A gateway that behaves like the seed's controller on ADK Java, written without ADK.

``python -m harness.tests.independent.late_gateway`` binds 127.0.0.1:$PORT (0: ephemeral) and
prints ``late-gateway listening on http://127.0.0.1:NNNN``. Endpoints: ``GET /healthz``,
``POST /chat/{sessionId}`` (the seed's typed frames) and ``GET /history/{sessionId}`` (the
stored events, in ADK's JSON shape). No NONE mode, no auth, no sub-agents.

It is the seed's ``ChatStreamController`` over a small agent loop of its own (the seed's
"Inside SSE mode": each chunk a partial event, one aggregate per model call, only aggregates
stored, tools run from the aggregate, a budget of LLM calls), and it differs from ADK Python
in the three ways ADK Java does (docs/explanation/wire-facts/java.md, section 1), none of them a
defect by the seed:

* **Retries.** A model call answered with a 5xx status, or that could not be sent, is sent
  again, the very same request, up to ``ATTEMPTS`` times with a growing backoff (java-genai's
  default ``HttpRetryOptions``, here with short gaps).
* **No error event.** A model error is an exception (``onError``): the browser gets the
  seed's ``error`` frame and the session keeps what it had, never an error event. Only an
  aggregate with a non-STOP finish reason (``MAX_TOKENS``) carries an error code, and it is
  stored, as ADK Java stores it.
* **One chunk late.** Each model chunk is handed over only when the next one arrives or the
  stream ends (java-genai's ``ResponseStream``): a chunk followed by a stall surfaces at the
  stall's end, and a chunk followed by a broken stream is never handed over.

The run is bounded by ``STREAMPROOF_RUN_TIMEOUT`` seconds (the seed's ``new SseEmitter(
120_000L)``): at the bound the run is disposed and the stream ends with an error frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
from aiohttp import web

AGENT: Final = "support"
MODEL: Final = "gemini-2.0-flash"
INSTRUCTION: Final = (
    "You are a support agent. Use lookupOrder to answer questions about orders.\n\n"
    f'You are an agent. Your internal name is "{AGENT}".'
)
MAX_LLM_CALLS: Final = 20
"""The seed's ``setMaxLlmCalls(20)``."""
ATTEMPTS: Final = 5
"""java-genai's default: five attempts on a 5xx answer or a request that could not be sent."""
BACKOFF_S: Final = (0.05, 0.1, 0.2, 0.4)
"""The gaps between attempts: short, to keep tests quick."""
JAVA_BACKOFF_S: Final = (1.5, 3.8, 5.9, 13.4)
"""java-genai's gaps as measured (docs/explanation/wire-facts/java.md), in real time: what ADK Java
on its
defaults does. ``LATE_GATEWAY_BACKOFF=java`` selects them; the retries then outlast a run
bound of 12 s (the seed's 120 s at time scale 0.1), so the bound ends the run."""
WATCH_INTERVAL_S: Final = 0.05
"""How often the chat handler looks at the browser's connection while nothing is written."""
DEFAULT_RUN_TIMEOUT_S: Final = 120.0

LOOKUP_ORDER: Final[dict[str, Any]] = {
    "name": "lookupOrder",
    "description": "Look up an order by its id and return what the order service knows.",
    "parameters": {
        "type": "OBJECT",
        "properties": {"orderId": {"type": "STRING"}},
        "required": ["orderId"],
    },
}


class ModelError(Exception):
    """The model call failed: an error status (after the retries), an ``{"error": ...}`` line
    in the stream, or a stream that broke."""


class BudgetExceeded(Exception):
    """The run asked for more LLM calls than its budget."""


class BrowserGone(Exception):
    """A write failed: the browser went away."""


# --- the model client: retries, and each chunk handed over one chunk late ----------------------


def _tls_context() -> ssl.SSLContext:
    """Trust ``SSL_CERT_FILE`` (a corporate proxy's CA) when it is set, else the defaults."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    return ssl.create_default_context(cafile=cafile)


class ModelClient:
    def __init__(
        self,
        http: aiohttp.ClientSession,
        base_url: str,
        api_key: str,
        backoff: tuple[float, ...] = BACKOFF_S,
    ) -> None:
        self._http = http
        self._backoff = backoff
        self._url = f"{base_url.rstrip('/')}/v1beta/models/{MODEL}:streamGenerateContent"
        self._key = api_key

    async def _open(self, body: bytes) -> aiohttp.ClientResponse:
        """Send the request, sending it again on a 5xx answer or a failed send."""
        for attempt in range(ATTEMPTS):
            last = attempt == ATTEMPTS - 1
            try:
                resp = await self._http.post(
                    self._url,
                    params={"alt": "sse"},
                    data=body,
                    headers={"Content-Type": "application/json", "x-goog-api-key": self._key},
                    ssl=_tls_context() if self._url.startswith("https:") else True,
                )
            except aiohttp.ClientConnectionError as exc:
                if last:
                    raise ModelError(f"the model could not be reached: {exc}") from exc
            else:
                if resp.status == 200:
                    return resp
                text = await resp.text()
                resp.release()
                if resp.status < 500 or last:
                    raise ModelError(f"the model answered {resp.status}: {text[:200]}")
            await asyncio.sleep(self._backoff[attempt])
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def chunks(self, contents: list[dict[str, Any]]) -> AsyncGenerator[dict[str, Any]]:
        """The streamed chunks of one model call, each one chunk late."""
        body = json.dumps(
            {
                "contents": contents,
                "systemInstruction": {"parts": [{"text": INSTRUCTION}]},
                "tools": [{"functionDeclarations": [LOOKUP_ORDER]}],
            }
        ).encode()
        resp = await self._open(body)
        held: dict[str, Any] | None = None
        try:
            async for raw in resp.content:
                line = raw.decode("utf-8").rstrip("\r\n")
                if not line.startswith("data:"):
                    continue
                chunk = json.loads(line[5:].strip())
                if not isinstance(chunk, dict):
                    raise ModelError(f"the model sent a chunk that is not an object: {line[:80]}")
                if "error" in chunk:
                    raise ModelError(f"the model failed mid-stream: {chunk['error']}")
                if held is not None:
                    yield held
                held = chunk
        except (aiohttp.ClientError, ValueError) as exc:
            raise ModelError(f"the model stream broke: {type(exc).__name__}: {exc}") from exc
        finally:
            resp.close()
        if held is not None:
            yield held


# --- the agent loop: partial events, one aggregate per call, only aggregates stored -------------


def _event(author: str, content: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"id": str(uuid.uuid4()), "author": author}
    if content is not None:
        event["content"] = content
    event.update(extra)
    return event


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    parts = (event.get("content") or {}).get("parts") or []
    return [p for p in parts if isinstance(p, dict)]


def _text(event: dict[str, Any]) -> str:
    return "".join(str(p.get("text", "")) for p in _parts(event))


def _calls(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [p["functionCall"] for p in _parts(event) if isinstance(p.get("functionCall"), dict)]


def _responses(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p["functionResponse"] for p in _parts(event) if isinstance(p.get("functionResponse"), dict)
    ]


def _final(event: dict[str, Any]) -> bool:
    """The seed's ``finalResponse()``: no function calls or responses, not partial."""
    return not (_calls(event) or _responses(event) or event.get("partial"))


@dataclass
class Session:
    events: list[dict[str, Any]] = field(default_factory=list)

    def contents(self) -> list[dict[str, Any]]:
        """What the model is sent: every stored event's content, function-call ids left out."""
        out: list[dict[str, Any]] = []
        for event in self.events:
            content = event.get("content")
            if not content:
                continue
            parts = []
            for part in content["parts"]:
                part = dict(part)
                for key in ("functionCall", "functionResponse"):
                    if key in part:
                        part[key] = {k: v for k, v in part[key].items() if k != "id"}
                parts.append(part)
            out.append({"role": content["role"], "parts": parts})
        return out


async def lookup_order(http: aiohttp.ClientSession, args: dict[str, Any]) -> dict[str, Any]:
    url = os.environ["STREAMPROOF_TOOL_URL"].rstrip("/") + "/lookupOrder"
    async with http.post(url, json={"orderId": str(args.get("orderId", ""))}) as answer:
        answer.raise_for_status()
        body: Any = await answer.json(content_type=None)
    return body if isinstance(body, dict) else {"result": body}


async def run_agent(
    model: ModelClient, tools_http: aiohttp.ClientSession, session: Session, text: str
) -> AsyncGenerator[dict[str, Any]]:
    """The run's events, as ADK's SSE mode yields them; non-partial ones are stored."""
    session.events.append(_event("user", {"role": "user", "parts": [{"text": text}]}))
    for _ in range(MAX_LLM_CALLS):
        aggregate_text = ""
        aggregate_calls: list[dict[str, Any]] = []
        finish: str | None = None
        async with contextlib.aclosing(model.chunks(session.contents())) as chunks:
            async for chunk in chunks:
                candidate = (chunk.get("candidates") or [{}])[0]
                finish = candidate.get("finishReason") or finish
                parts = [p for p in (candidate.get("content") or {}).get("parts") or [] if p]
                if not parts:
                    continue
                yield _event(AGENT, {"role": "model", "parts": parts}, partial=True)
                for part in parts:
                    aggregate_text += str(part.get("text", ""))
                    if isinstance(part.get("functionCall"), dict):
                        call = dict(part["functionCall"])
                        call["id"] = f"adk-{uuid.uuid4()}"
                        aggregate_calls.append(call)
        parts = [{"text": aggregate_text}] if aggregate_text else []
        parts += [{"functionCall": call} for call in aggregate_calls]
        extra = {"errorCode": finish} if finish not in (None, "STOP") else {}
        aggregate = _event(AGENT, {"role": "model", "parts": parts}, **extra)
        session.events.append(aggregate)
        yield aggregate
        if not aggregate_calls or extra:
            return
        responses = []
        for call in aggregate_calls:
            result = await lookup_order(tools_http, call.get("args") or {})
            responses.append(
                {"functionResponse": {"id": call["id"], "name": call["name"], "response": result}}
            )
        tool_event = _event(AGENT, {"role": "user", "parts": responses})
        session.events.append(tool_event)
        yield tool_event
    raise BudgetExceeded(f"the run made {MAX_LLM_CALLS} LLM calls, its budget")


# --- the controller: the seed's send, frame, onError, onCompletion, onTimeout -------------------


class Frames:
    """The seed's ``frame``: one SSE frame with the gateway's own counter (fresh per frame)."""

    def __init__(self, resp: web.StreamResponse) -> None:
        self._resp = resp
        self._seq = 0

    async def send(self, kind: str, payload: dict[str, Any]) -> None:
        self._seq += 1
        data = json.dumps(payload, separators=(",", ":"))
        try:
            await self._resp.write(f"id:{self._seq}\nevent:{kind}\ndata:{data}\n\n".encode())
        except (ConnectionError, RuntimeError) as exc:
            raise BrowserGone from exc


async def send_event(frames: Frames, event: dict[str, Any]) -> None:
    """The seed's ``send``: one event to its typed frames."""
    text = _text(event)
    calls = _calls(event)
    if event.get("errorCode"):
        await frames.send("error", {"code": str(event["errorCode"])})
    elif event.get("partial"):
        if text:
            await frames.send("delta", {"author": event["author"], "text": text})
    elif calls:
        if text:
            await frames.send("message", {"author": event["author"], "text": text, "final": False})
        await frames.send("tool_call", {"names": [str(c.get("name", "?")) for c in calls]})
    elif _responses(event):
        await frames.send("tool_result", {"count": len(_responses(event))})
    elif text:
        await frames.send(
            "message",
            {"author": event["author"], "id": event["id"], "text": text, "final": _final(event)},
        )


SESSIONS_KEY: Final = web.AppKey("sessions", dict[str, Session])
MODEL_KEY: Final = web.AppKey("model", ModelClient)
HTTP_KEY: Final = web.AppKey("http", aiohttp.ClientSession)
TIMEOUT_KEY: Final = web.AppKey("run_timeout", float)


async def _run(request: web.Request, frames: Frames, session: Session, text: str) -> None:
    app = request.app
    events = run_agent(app[MODEL_KEY], app[HTTP_KEY], session, text)
    try:
        async for event in events:
            await send_event(frames, event)
    except BrowserGone:
        return
    except Exception:  # onError: any failure of the run
        with contextlib.suppress(BrowserGone):
            await frames.send("error", {"retryable": True})
        return
    finally:
        await events.aclose()
    with contextlib.suppress(BrowserGone):
        await frames.send("done", {})


def _browser_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def chat(request: web.Request) -> web.StreamResponse:
    sessions = request.app[SESSIONS_KEY]
    session = sessions.setdefault(request.match_info["sessionId"], Session())
    text = await request.text()
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    frames = Frames(resp)
    run = asyncio.create_task(_run(request, frames, session, text))
    deadline = asyncio.get_running_loop().time() + request.app[TIMEOUT_KEY]
    timed_out = False
    try:
        # Dispose the run when the browser goes away (even while nothing is written) and at
        # the run bound (the seed's emitter.onTimeout(sub::dispose)).
        while not run.done():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                timed_out = True
                break
            await asyncio.wait({run}, timeout=min(WATCH_INTERVAL_S, left))
            if not run.done() and _browser_gone(request):
                break
    finally:
        if not run.done():
            run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    if timed_out:
        with contextlib.suppress(BrowserGone):
            await frames.send("error", {"code": "RUN_TIMEOUT", "retryable": True})
    with contextlib.suppress(ConnectionError, RuntimeError):
        await resp.write_eof()
    return resp


async def history(request: web.Request) -> web.Response:
    session = request.app[SESSIONS_KEY].get(request.match_info["sessionId"])
    return web.json_response({"events": [] if session is None else session.events})


async def healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


def make_app(
    model: ModelClient, tools_http: aiohttp.ClientSession, run_timeout: float
) -> web.Application:
    app = web.Application()
    app[SESSIONS_KEY] = {}
    app[HTTP_KEY] = tools_http
    app[MODEL_KEY] = model
    app[TIMEOUT_KEY] = run_timeout
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/chat/{sessionId}", chat)
    app.router.add_get("/history/{sessionId}", history)
    return app


async def main() -> None:
    # The model is reached through the proxy the environment names (a corporate proxy), the
    # tool service on loopback directly.
    async with (
        aiohttp.ClientSession(trust_env=True) as model_http,
        aiohttp.ClientSession() as tools_http,
    ):
        backoff = JAVA_BACKOFF_S if os.environ.get("LATE_GATEWAY_BACKOFF") == "java" else BACKOFF_S
        model = ModelClient(
            model_http,
            os.environ["GOOGLE_GEMINI_BASE_URL"],
            os.environ.get("GOOGLE_API_KEY", ""),
            backoff,
        )
        timeout = float(os.environ.get("STREAMPROOF_RUN_TIMEOUT") or DEFAULT_RUN_TIMEOUT_S)
        runner = web.AppRunner(make_app(model, tools_http, timeout))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", int(os.environ.get("PORT", "0")))
        await site.start()
        port = runner.addresses[0][1]
        print(f"late-gateway listening on http://127.0.0.1:{port}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
