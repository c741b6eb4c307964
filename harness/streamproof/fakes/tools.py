"""A fake tool service: the backend a gateway's agent tools call, with scripted answers.

Gateways under test wire their ADK tools to ``POST {base_url}/{tool}``. The fake answers each
tool's scripted JSON payload with every ``{{marker}}`` replaced by a per-run secret: the secret
reaches the agent (and the model, via the function response) but must never reach a frame the
gateway streams to a browser. Every call is recorded, so checks can count how often each tool
really ran (ADK shows a function call twice, partial and final, yet must execute it once).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from streamproof.fakes.records import MARKER_PLACEHOLDER, ToolCall
from streamproof.fakes.serving import serve

__all__ = ["MARKER_PLACEHOLDER", "FakeTools", "ToolCall", "substitute_marker"]


def substitute_marker(value: Any, marker: str) -> Any:
    """``value`` with ``{{marker}}`` replaced by ``marker`` in every string, keys included,
    at any depth of dicts, lists and tuples."""
    if isinstance(value, str):
        return value.replace(MARKER_PLACEHOLDER, marker)
    if isinstance(value, Mapping):
        return {
            substitute_marker(k, marker): substitute_marker(v, marker) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [substitute_marker(v, marker) for v in value]
    return value


class FakeTools:
    """The fake tool service. Not a test class (``__test__ = False``)."""

    __test__ = False

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._base_url: str | None = None
        self._payloads: dict[str, Any] = {}
        self._calls: list[ToolCall] = []
        self._epoch = time.monotonic()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on ``host:port`` (port 0: any free port); returns the base URL."""
        if self._runner is not None:
            raise RuntimeError("the fake tool service is already running")
        self._runner, base_url = await serve(
            self._handle, host, port, route="/{tool}", method="POST"
        )
        self._base_url = base_url
        return base_url

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        self._base_url = None

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the fake tool service is not running; await start() first")
        return self._base_url

    # --- script and records --------------------------------------------------------------------

    def load(self, payloads: Mapping[str, Any], marker: str) -> None:
        """Script each tool's answer (``{{marker}}`` becomes ``marker``) and forget the
        records; the epoch becomes now."""
        self._payloads = {
            name: substitute_marker(payload, marker) for name, payload in payloads.items()
        }
        self._calls = []
        self._epoch = time.monotonic()

    def set_epoch(self, t0: float) -> None:
        """Record call times relative to ``t0`` (a ``time.monotonic()`` value)."""
        self._epoch = t0

    @property
    def calls(self) -> list[ToolCall]:
        return list(self._calls)

    def count(self, tool: str) -> int:
        """How many times ``tool`` was called since the last :meth:`load`."""
        return sum(1 for c in self._calls if c.tool == tool)

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        t = time.monotonic() - self._epoch
        tool = request.match_info["tool"]
        raw = await request.text()
        try:
            arguments: Any = json.loads(raw)
        except ValueError:
            arguments = raw
        if tool in self._payloads:
            status = 200
            body: Any = self._payloads[tool]
        else:
            status = 404
            body = {"error": f"streamproof: no payload scripted for tool {tool}"}
        self._calls.append(ToolCall(t=t, tool=tool, arguments=arguments, status=status))
        return web.json_response(body, status=status)
