"""The default fault engine: an in-process aiohttp reverse proxy that knows about SSE events.

Why this engine (docs/explanation/wire-facts/proxies.md §0): an asyncio L7 proxy on the harness's
own loop reproduced every
target fault with the exact client-visible signatures (§2.6), needs no new dependency, cuts on
event boundaries rather than byte counts, and waits with real ``await`` (mitmproxy's stream
callable is synchronous, cannot drip, and ends an HTTP/1.1 body when it returns ``b""``, §2.4).

Shape: an aiohttp server in front (127.0.0.1 only) and one aiohttp ``ClientSession`` to the
upstream. Each request's body is read first (so ``rpc`` can be matched), forwarded unchanged
with the request headers minus hop-by-hop ones; the upstream status and headers are copied
(minus hop-by-hop ones, ``Content-Length`` and ``Transfer-Encoding``: downstream is always
chunked HTTP/1.1) and the body is streamed, never buffered, with its bytes unchanged unless a
fault alters them. The decisions about the body live in the sans-IO
:class:`~streamproof.faults.shaper.Shaper`; the engine performs its operations and owns the
sockets, the timers and the records. This module holds the proxy itself (its lifecycle, the
plan, the connections and the reading of each request);
:mod:`~streamproof.faults.engines.inline_exchange` holds what is done with a request once read
(the upstream request, the faults fired, the endings and the records).

How each ending is produced, and what a client sees (measured by the tests,
docs/explanation/wire-facts/proxies.md §2.6):

* ``end_clean``: ``write_eof()``, the chunked terminator: no error, just fewer events.
* ``fin``: ``transport.close()`` without the terminator: aiohttp ``ClientPayloadError``
  (``TransferEncodingError``), httpx ``RemoteProtocolError`` (incomplete chunked read).
* ``rst``: written bytes are flushed to the kernel, then ``SO_LINGER 0`` and ``abort()``:
  aiohttp ``ClientPayloadError`` caused by ``ConnectionResetError``, httpx ``ReadError``.
  Before any response it is a bare reset: aiohttp ``ClientOSError``/``ServerDisconnectedError``.
* ``refuse``: the kernel has already accepted the TCP connection before any code can look at
  the request, so "refused" is the nearest an L7 proxy can get: the request is read, then the
  socket is closed with no response byte. aiohttp raises ``ServerDisconnectedError``, httpx
  ``RemoteProtocolError("Server disconnected without sending a response.")``. (A true
  ``ECONNREFUSED`` needs the listener gone: close the proxy, or toxiproxy's ``enabled:false``.)
* ``stall``: nothing more is written, the socket stays open: the client's read timeout is the
  only way out (aiohttp ``SocketTimeoutError`` with ``sock_read``, httpx ``ReadTimeout``).

Client and upstream failures: the server runs with ``handler_cancellation``, so a client that
hangs up cancels its exchange at once, even mid-stall; the upstream request is closed and an
``end`` is recorded ``by: client`` (``how: rst`` when the connection was reset). An upstream
that fails (refused, reset, truncated body) is recorded ``upstream_error`` and the client gets
a FIN without the terminator (before the headers: no response at all). Expected disconnects
never reach a log.

Timers: ``after`` and ``idle`` fire even while upstream sends nothing: every wait (reading
upstream, a drip or split gap, a blocked write) is bounded by the shaper's next deadline.
Durations are multiplied by the time scale.

Connections are counted at accept time by a thin wrapper around aiohttp's protocol, which is
also how a reset by the client is told apart from a FIN.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Final

import aiohttp
import yarl
from aiohttp import web

from streamproof.core.addresses import address
from streamproof.core.durations import TimeScale
from streamproof.fakes.serving import LISTEN_BACKLOG
from streamproof.faults.engines.inline_exchange import ExchangeHandling, _Exchange
from streamproof.faults.plan import Fault, PlanState, request_rpc
from streamproof.faults.records import LinkEvent, count_requests

__all__ = ["InlineEngine", "InlineProxy"]

_MAX_BODY: Final = 64 * 1024 * 1024
_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


class _TrackedProtocol(asyncio.Protocol):
    """aiohttp's request handler, with connect/disconnect reported to the proxy."""

    def __init__(self, inner: asyncio.Protocol, proxy: InlineProxy) -> None:
        self._inner = inner
        self._proxy = proxy
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = self._proxy._wrap_transport(transport)
        self._transport = transport
        self._proxy._connected(transport)
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._proxy._disconnected(self._transport, exc)
        self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class InlineProxy(ExchangeHandling):
    """A fault-injecting reverse proxy for one link, on the running event loop.

    ``upstream`` is a base URL; the request's path and query are appended to it unchanged
    (``http://127.0.0.1:9000/v1`` + ``/chat/s1?x=1``).

    Example usage::

        proxy = InlineProxy("a2a", "http://127.0.0.1:9000", time_scale=0.1)
        url = await proxy.start()
        proxy.load(parse_plan([{"when": {"after_event": 3}, "do": "rst"}]))
        proxy.set_epoch(time.monotonic())
        ...  # the client talks to ``url``
        await proxy.wait_quiet(5)
        records = proxy.events
        await proxy.close()
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(self, link: str, upstream: str, *, time_scale: float | TimeScale = 1.0) -> None:
        parts = yarl.URL(upstream)
        if parts.scheme not in ("http", "https") or not parts.host:
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r}")
        self.link = link
        self.upstream = upstream.rstrip("/")
        self.time_scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        self._state = PlanState(())
        self._events: list[LinkEvent] = []
        self._epoch = time.monotonic()
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._session: aiohttp.ClientSession | None = None
        self._base_url: str | None = None
        self._closing = False
        self._conns: dict[asyncio.BaseTransport, int] = {}
        self._next_connection = 0
        self._next_request = 0
        self._active: set[_Exchange] = set()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (loopback only; port 0: any free port); the base URL."""
        if host not in _LOOPBACK:
            raise ValueError(f"the fault proxy binds loopback only, not {host!r}")
        if self._runner is not None:
            raise RuntimeError(f"link {self.link!r}: the proxy is already running")
        app = web.Application(client_max_size=_MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5
        )
        await runner.setup()
        server = runner.server
        assert server is not None
        loop = asyncio.get_running_loop()

        def factory() -> asyncio.Protocol:
            handler = server()
            if isinstance(handler, asyncio.BufferedProtocol):  # pragma: no cover - aiohttp change
                return handler
            return _TrackedProtocol(handler, self)

        try:
            listener = await loop.create_server(factory, host, port, backlog=LISTEN_BACKLOG)
        except BaseException:
            await runner.cleanup()
            raise
        self._runner, self._listener = runner, listener
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, connect=30.0),
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            connector=aiohttp.TCPConnector(limit=0),
        )
        self._closing = False
        bound = listener.sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        self._base_url = f"http://{shown}:{bound[1]}"
        return self._base_url

    async def close(self) -> None:
        """Stop listening and end everything in progress (recorded ``by: proxy``)."""
        runner, self._runner = self._runner, None
        listener, self._listener = self._listener, None
        session, self._session = self._session, None
        if runner is None:
            return
        self._closing = True
        if listener is not None:
            listener.close()
        for transport in list(self._conns):
            transport.close()
        await runner.cleanup()
        if listener is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listener.wait_closed(), 2.0)
        if session is not None:
            await session.close()
        self._base_url = None

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError(f"link {self.link!r}: the proxy is not running; call start()")
        return self._base_url

    # --- per scenario --------------------------------------------------------------------------

    def load(self, faults: Sequence[Fault]) -> None:
        """A new plan: clears the records, the occurrence counters and the request numbering.

        Meant for between scenarios (after :meth:`wait_quiet`): a request in progress keeps
        the faults chosen when it arrived, and its later records land in the new list.
        """
        self._state = PlanState(faults)
        self._events = []
        self._next_request = 0

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._state.faults

    def set_epoch(self, t0: float) -> None:
        """Record times relative to ``t0``, a ``time.monotonic()`` value."""
        self._epoch = t0

    @property
    def events(self) -> list[LinkEvent]:
        """Everything recorded since ``load``, in order."""
        return list(self._events)

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int:
        """How many requests reached the link, optionally only those matching (``path``: a
        glob)."""
        return count_requests(self._events, method, path, rpc)

    @property
    def open_connections(self) -> int:
        """Downstream TCP connections currently open (idle keep-alive ones included)."""
        return len(self._conns)

    @property
    def in_flight(self) -> int:
        """Requests being handled right now."""
        return len(self._active)

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no request is in progress; ``False`` if ``timeout`` seconds pass first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._active:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    # --- connections ---------------------------------------------------------------------------

    def _wrap_transport(self, transport: asyncio.BaseTransport) -> asyncio.BaseTransport:
        """The transport the proxy and aiohttp use for a new connection: this one, inline; the
        toxiproxy engine wraps it to count the bytes written."""
        return transport

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        conn = self._next_connection
        self._next_connection += 1
        self._conns[transport] = conn
        detail = address(transport.get_extra_info("peername"))
        self._events.append(
            LinkEvent(t=self._now(), link=self.link, connection=conn, kind="connect", detail=detail)
        )

    def _disconnected(self, transport: asyncio.BaseTransport, exc: Exception | None) -> None:
        self._conns.pop(transport, None)
        for ex in self._active:
            if ex.transport is transport and not ex.client_left:
                ex.client_left = True
                ex.lost = exc

    # --- each request --------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        transport = request.transport
        ex = _Exchange(
            connection=self._conns.get(transport, -1) if transport is not None else -1,
            request=self._next_request,
            transport=transport,
            method=request.method,
            path=request.path,
        )
        self._next_request += 1
        self._active.add(ex)
        try:
            try:
                body = await request.read()
            except (ConnectionError, aiohttp.ClientPayloadError):
                self._record(ex, "request")
                self._client_left(ex)
                return web.Response()
            ex.rpc = request_rpc(request.method, request.path, body)
            self._record(ex, "request")
            return await self._exchange(request, ex, body)
        except asyncio.CancelledError:
            if not ex.ended:
                if self._closing:
                    self._end(ex, "fin", "proxy", "the proxy was closed")
                else:
                    self._client_left(ex)
            raise
        finally:
            self._active.discard(ex)
            upstream = ex.upstream
            if upstream is not None:
                if ex.upstream_done:
                    upstream.release()
                else:
                    upstream.close()


class InlineEngine:
    """The inline engine: nothing to run beside the harness; each link is an
    :class:`InlineProxy`."""

    name = "inline"

    async def start(self) -> None:
        return None

    def link(self, link: str, upstream: str, *, time_scale: float | TimeScale = 1.0) -> InlineProxy:
        return InlineProxy(link, upstream, time_scale=time_scale)

    async def close(self) -> None:
        return None
