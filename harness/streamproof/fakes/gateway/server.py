"""The fake gateway's HTTP side: a chat endpoint that plays the loaded frames as one run, a
history endpoint, CORS for a page served from another origin, and the request record.

After writing each frame the fake awaits ``pace(index, block)``: the browser-client runner
returns once the page has rendered that frame (or given up on it), so the screen can be read
between frames. One chat request is one run; a second one in the same scenario is recorded and
answered ``409`` (docs/reference/browser-client-contract.md#the-fake-gateways-endpoints).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from streamproof.fakes.gateway.frames import GatewayFrame
from streamproof.fakes.serving import serve

__all__ = ["FakeGateway", "GatewayRequest", "Pace", "endpoint_pattern"]

Pace = Callable[[int, str], Awaitable[None]]
Role = Literal["chat", "history", "preflight", "other"]

_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "*",
}


def endpoint_pattern(template: str) -> tuple[str, re.Pattern[str]]:
    """``"POST /chat/{sessionId}"`` as a method and a path pattern (``{name}``: one segment)."""
    method, _, path = template.partition(" ")
    parts = re.split(r"(\{[A-Za-z_]+\})", path.split("?", 1)[0])
    regex = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return method.upper(), re.compile(f"^{regex}$")


@dataclass
class GatewayRequest:
    t: float
    method: str
    path: str
    role: Role
    status: int = 0
    last_event_id: str | None = None
    body: str = ""


@dataclass
class _Script:
    frames: Sequence[GatewayFrame] = ()
    blocks: Sequence[str] = ()
    """What the page is sent for each frame: its SSE text on the target's wire."""
    history: list[dict[str, Any]] = field(default_factory=list)
    pace: Pace | None = None


class FakeGateway:
    """Start once, :meth:`load` per scenario, read :attr:`requests` and :attr:`sent`."""

    def __init__(
        self, chat: str = "POST /chat/{sessionId}", history: str = "GET /history/{sessionId}"
    ) -> None:
        self._chat = endpoint_pattern(chat)
        self._history = endpoint_pattern(history)
        self._script = _Script()
        self._runner: web.AppRunner | None = None
        self._t0 = time.monotonic()
        self.url: str | None = None
        self.requests: list[GatewayRequest] = []
        self.sent: dict[int, float] = {}
        """Frame index (1-based) -> when it was written, for the run's frames."""
        self._runs = 0
        self.played = False
        """The run's stream is over: every frame written, or the page (or link) gone."""
        self.completed = False
        """Every frame was written and the stream ended cleanly."""

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner, self.url = await serve(self._handle, host, port)
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def load(
        self,
        frames: Sequence[GatewayFrame],
        history: list[dict[str, Any]],
        pace: Pace | None,
        blocks: Sequence[str] | None = None,
    ) -> None:
        """Play ``frames`` (as ``blocks``, each frame's text on the wire; default the seed's
        typed frames), answer ``history``, and await ``pace`` after each frame."""
        if blocks is None:
            blocks = [frame.block(i) for i, frame in enumerate(frames, start=1)]
        self._script = _Script(tuple(frames), tuple(blocks), list(history), pace)
        self.requests = []
        self.sent = {}
        self._runs = 0
        self.played = False
        self.completed = False

    @property
    def last_block(self) -> str:
        """The last frame's text on the wire (``""`` with nothing loaded)."""
        return self._script.blocks[-1] if self._script.blocks else ""

    def set_epoch(self, t0: float) -> None:
        self._t0 = t0

    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _role(self, request: web.Request) -> Role:
        method, path = request.method.upper(), request.path
        if method == "OPTIONS":
            return "preflight"
        if method == self._chat[0] and self._chat[1].match(path):
            return "chat"
        if method == self._history[0] and self._history[1].match(path):
            return "history"
        return "other"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        role = self._role(request)
        record = GatewayRequest(
            t=self._now(),
            method=request.method.upper(),
            path=request.path_qs,
            role=role,
            last_event_id=request.headers.get("Last-Event-ID"),
        )
        self.requests.append(record)
        if role == "preflight":
            asked = request.headers.get("Access-Control-Request-Headers", "*")
            headers = {
                **_CORS,
                "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
                "Access-Control-Allow-Headers": asked or "*",
            }
            record.status = 204
            return web.Response(status=204, headers=headers)
        if role == "history":
            record.status = 200
            return web.json_response(self._script.history, headers=_CORS)
        if role == "other":
            record.status = 404
            return web.json_response({"error": "no such endpoint"}, status=404, headers=_CORS)
        record.body = (await request.text())[:2000]
        self._runs += 1
        if self._runs > 1:
            record.status = 409
            return web.json_response(
                {"error": "a second chat request in one scenario: one message, one run"},
                status=409,
                headers=_CORS,
            )
        record.status = 200
        return await self._play(request)

    async def _play(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                **_CORS,
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
            }
        )
        await response.prepare(request)
        script = self._script
        try:
            for index, (frame, block) in enumerate(
                zip(script.frames, script.blocks, strict=True), start=1
            ):
                if frame.gap_s > 0:
                    await asyncio.sleep(frame.gap_s)
                await response.write(block.encode("utf-8"))
                self.sent[index] = self._now()
                if script.pace is not None:
                    await script.pace(index, block)
            await response.write_eof()
            self.completed = True
        except (ConnectionResetError, ConnectionError):
            pass  # the page (or the link) went away: the rest is never sent
        finally:
            self.played = True
        return response
