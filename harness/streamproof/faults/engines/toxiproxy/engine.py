"""The toxiproxy engine: one toxiproxy server per session, a proxy on it per link
(:mod:`~streamproof.faults.engines.toxiproxy.link`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.toxiproxy.link import ToxiproxyLink
from streamproof.faults.engines.toxiproxy.server import (
    ToxiproxyAPI,
    ToxiproxyServer,
    find_binary,
)

__all__ = ["ToxiproxyEngine"]


class ToxiproxyEngine:
    """The toxiproxy engine: one toxiproxy server for the session; each link is a proxy on it.

    Raises :class:`~streamproof.faults.engines.link.EngineUnavailable` when made without a
    toxiproxy-server to run (the message says how to get one)."""

    name = "toxiproxy"

    def __init__(self, binary: str | None = None) -> None:
        self._server = ToxiproxyServer(
            Path(binary) if binary is not None else find_binary(), on_log=self._on_log
        )
        self._session: aiohttp.ClientSession | None = None
        self._api: ToxiproxyAPI | None = None
        self._links: dict[str, ToxiproxyLink] = {}
        self._made = 0

    @property
    def pid(self) -> int | None:
        """The toxiproxy server's pid while it runs."""
        return self._server.pid

    @property
    def api(self) -> ToxiproxyAPI:
        if self._api is None:
            raise RuntimeError("the toxiproxy engine is not started; call start()")
        return self._api

    async def start(self) -> None:
        """Start the toxiproxy server (once)."""
        if self._api is not None:
            return
        session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        try:
            url = await self._server.start(session)
        except BaseException:
            await session.close()
            raise
        self._session, self._api = session, ToxiproxyAPI(url, session)

    def link(
        self, link: str, upstream: str, *, time_scale: float | TimeScale = 1.0
    ) -> ToxiproxyLink:
        scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        return ToxiproxyLink(self, link, upstream, time_scale=scale)

    def proxy_name(self, link: str) -> str:
        self._made += 1
        return f"{link}-{self._made}"

    def register(self, link: ToxiproxyLink) -> None:
        self._links[link.proxy] = link

    def unregister(self, link: ToxiproxyLink) -> None:
        self._links.pop(link.proxy, None)

    def _on_log(self, entry: dict[str, Any]) -> None:
        name = entry.get("name")
        link = self._links.get(name) if isinstance(name, str) else None
        if link is not None:
            link.on_log(entry)

    async def close(self) -> None:
        """Close the links still open and kill the server; nothing is left running."""
        for link in list(self._links.values()):
            await link.close()
        self._api = None
        try:
            await self._server.close()
        finally:
            session, self._session = self._session, None
            if session is not None:
                await session.close()
