"""The push relay: where the ``push`` link points, and what forwards each delivery to its webhook.

A link is a proxy in front of one upstream fixed when it starts, but a webhook's URL is known
only when the client sends it (and each call of a ``--concurrency`` run has its own). So the
sender POSTs every delivery to ``<push link>/d/<seq>``, the link (with its faults) forwards it
here, and the relay forwards it, headers and body unchanged, to the URL delivery ``seq`` is for,
then hands the webhook's answer back through the link. Any engine carries the link unchanged,
and the relay, being the harness's, records what the webhook itself answered, which a fault on
the link may hide from the sender.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import aiohttp
from aiohttp import web

from streamproof.fakes.serving import serve
from streamproof.protocol.a2a.push import TOKEN_HEADER

__all__ = ["RELAY_HEADER", "PushRelay", "Route"]

RELAY_HEADER: Final = "X-Streamproof-Relay"
"""Set on the relay's own answers (``unreachable``, ``timeout``, ``unknown``), so the sender can
tell them from a webhook's."""
_FORWARDED: Final = ("Content-Type", TOKEN_HEADER, "Authorization")
_MAX_ANSWER: Final = 64 * 1024


@dataclass(frozen=True)
class Route:
    """Where delivery ``seq`` goes, and who wants the webhook's answer."""

    url: str
    timeout: float
    answered: Callable[[int | None, str], None]
    """Called once with the webhook's status (None: it never answered) and a detail."""


class PushRelay:
    """A loopback HTTP server that forwards ``POST /d/<seq>`` to the route ``resolve`` gives."""

    def __init__(self) -> None:
        self.resolve: Callable[[int], Route | None] = lambda _seq: None
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.base_url: str | None = None

    async def start(self, host: str = "127.0.0.1") -> str:
        runner, url = await serve(self._handle, host, 0)
        self._runner, self.base_url = runner, url
        self._session = aiohttp.ClientSession(
            cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False
        )
        return url

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        session, self._session = self._session, None
        if runner is not None:
            await runner.cleanup()
        if session is not None:
            await session.close()
        self.base_url = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        parts = request.path.strip("/").split("/")
        route = None
        if len(parts) == 2 and parts[0] == "d" and parts[1].isdigit():
            route = self.resolve(int(parts[1]))
        if route is None or request.method != "POST" or self._session is None:
            return web.Response(status=404, headers={RELAY_HEADER: "unknown"})
        body = await request.read()
        headers = {k: request.headers[k] for k in _FORWARDED if k in request.headers}
        try:
            async with self._session.post(
                route.url,
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=route.timeout),
                allow_redirects=False,
            ) as answer:
                text = await answer.content.read(_MAX_ANSWER)
                route.answered(answer.status, "")
                kept = {k: answer.headers[k] for k in ("Content-Type",) if k in answer.headers}
                return web.Response(status=answer.status, body=text, headers=kept)
        except asyncio.CancelledError:
            route.answered(None, "the delivery was abandoned on the way")
            raise
        except TimeoutError:
            route.answered(None, f"the webhook did not answer within {route.timeout:g}s")
            return web.Response(status=504, headers={RELAY_HEADER: "timeout"})
        except (aiohttp.ClientError, OSError) as exc:
            route.answered(None, f"the webhook could not be reached: {type(exc).__name__}")
            return web.Response(status=502, headers={RELAY_HEADER: "unreachable"})
