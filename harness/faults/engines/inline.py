"""The default fault engine: an in-process aiohttp reverse proxy that knows about SSE events.

Why this engine (faults.md §0): an asyncio L7 proxy on the harness's own loop reproduced every
target fault with the exact client-visible signatures (§2.6), needs no new dependency, cuts on
event boundaries rather than byte counts, and waits with real ``await`` (mitmproxy's stream
callable is synchronous, cannot drip, and ends an HTTP/1.1 body when it returns ``b""``, §2.4).

Shape: an aiohttp server in front (127.0.0.1 only) and one aiohttp ``ClientSession`` to the
upstream. Each request's body is read first (so ``rpc`` can be matched), forwarded unchanged
with the request headers minus hop-by-hop ones; the upstream status and headers are copied
(minus hop-by-hop ones, ``Content-Length`` and ``Transfer-Encoding``: downstream is always
chunked HTTP/1.1) and the body is streamed, never buffered, with its bytes unchanged unless a
fault alters them. The decisions about the body live in the sans-IO
:class:`~harness.faults.shaper.Shaper`; this module performs its operations and owns the
sockets, the timers and the records.

How each ending is produced, and what a client sees (measured by the tests, faults.md §2.6):

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
import fnmatch
import socket
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import aiohttp
import yarl
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from harness.durations import TimeScale
from harness.faults.plan import Fault, PlanState, RequestInfo, StatusArgs, rpc_method
from harness.faults.records import EndBy, EndHow, FaultRef, LinkEvent, LinkEventKind
from harness.faults.shaper import Finish, Fired, Forwarded, Op, Shaper, Sleep, Write

__all__ = ["InlineProxy"]

_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED: Final = _HOP_BY_HOP | {"host", "content-length"}
_NOT_COPIED: Final = _HOP_BY_HOP | {"content-length"}
_SKIP_AUTO: Final = frozenset({"Accept", "Accept-Encoding", "User-Agent", "Content-Type"})
"""Headers aiohttp would add on its own: a request is forwarded with the client's only."""
_MAX_BODY: Final = 64 * 1024 * 1024
_RST_FLUSH: Final = 1.0
"""Seconds to let written bytes leave the transport before a reset discards them."""
_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


class _Done(Exception):
    """A fault ended the response."""


class _ClientGone(Exception):
    """A write downstream failed: the client has left."""


class _UpstreamFailed(Exception):
    """Reading the upstream body failed."""


@dataclass(eq=False)
class _Exchange:
    """One request on the link, while it is handled."""

    connection: int
    request: int
    transport: asyncio.Transport | None
    method: str
    path: str
    rpc: str | None = None
    ended: bool = False
    lost: BaseException | None = None
    """Why the client's connection was lost (``None``: a FIN), once it was."""
    client_left: bool = False
    shaper: Shaper | None = None
    out: web.StreamResponse | None = None
    upstream: aiohttp.ClientResponse | None = None
    upstream_done: bool = False


class _TrackedProtocol(asyncio.Protocol):
    """aiohttp's request handler, with connect/disconnect reported to the proxy."""

    def __init__(self, inner: asyncio.Protocol, proxy: InlineProxy) -> None:
        self._inner = inner
        self._proxy = proxy
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
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


class InlineProxy:
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
            listener = await loop.create_server(factory, host, port)
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
        count = 0
        for e in self._events:
            if e.kind != "request":
                continue
            if method is not None and (e.method or "").upper() != method.upper():
                continue
            if path is not None and not fnmatch.fnmatchcase(e.path or "", path):
                continue
            if rpc is not None and e.rpc != rpc:
                continue
            count += 1
        return count

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

    # --- records -------------------------------------------------------------------------------

    def _now(self) -> float:
        return time.monotonic() - self._epoch

    def _record(
        self,
        ex: _Exchange,
        kind: LinkEventKind,
        detail: str = "",
        *,
        status: int | None = None,
        event_index: int | None = None,
        fault: FaultRef | None = None,
        how: EndHow | None = None,
        by: EndBy | None = None,
    ) -> None:
        self._events.append(
            LinkEvent(
                t=self._now(),
                link=self.link,
                connection=ex.connection,
                request=ex.request,
                kind=kind,
                detail=detail,
                method=ex.method,
                path=ex.path,
                rpc=ex.rpc,
                status=status,
                event_index=event_index,
                fault=fault,
                how=how,
                by=by,
            )
        )

    def _record_fault(self, ex: _Exchange, index: int, fault: Fault, note: str = "") -> None:
        detail = fault.describe() + (f" ({note})" if note else "")
        self._record(ex, "fault", detail, fault=FaultRef(index=index, action=fault.action))

    def _end(
        self,
        ex: _Exchange,
        how: EndHow,
        by: EndBy,
        detail: str,
        *,
        status: int | None = None,
        fault: FaultRef | None = None,
    ) -> None:
        if ex.ended:
            return
        ex.ended = True
        shaper = ex.shaper
        if shaper is not None:
            counts = f"{shaper.events} events forwarded"
            if shaper.swallowed_events or shaper.swallowed_bytes:
                counts += f", {shaper.swallowed_events} events swallowed"
            if shaper.unfired:
                counts += f", faults not fired: {', '.join(map(str, shaper.unfired))}"
            detail = f"{detail}; {counts}" if detail else counts
        self._record(ex, "end", detail, status=status, fault=fault, how=how, by=by)

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        conn = self._next_connection
        self._next_connection += 1
        self._conns[transport] = conn
        peer = transport.get_extra_info("peername")
        detail = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else ""
        self._events.append(
            LinkEvent(t=self._now(), link=self.link, connection=conn, kind="connect", detail=detail)
        )

    def _disconnected(self, transport: asyncio.BaseTransport, exc: Exception | None) -> None:
        self._conns.pop(transport, None)
        for ex in self._active:
            if ex.transport is transport and not ex.client_left:
                ex.client_left = True
                ex.lost = exc

    def _client_left(self, ex: _Exchange, exc: BaseException | None = None) -> None:
        lost = ex.lost if ex.client_left else exc
        how: EndHow = "rst" if isinstance(lost, ConnectionResetError) else "fin"
        self._end(ex, how, "client", "the client closed the connection")

    # --- the exchange --------------------------------------------------------------------------

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
            ex.rpc = rpc_method(body) if body else None
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

    async def _exchange(
        self, request: web.Request, ex: _Exchange, body: bytes
    ) -> web.StreamResponse:
        selected = self._state.select(RequestInfo(ex.method, ex.path, ex.rpc))

        # Before upstream is contacted.
        for index, fault in selected:
            if fault.trigger.kind != "on_request":
                continue
            self._record_fault(ex, index, fault)
            do, ref = fault.do, FaultRef(index=index, action=fault.action)
            if do.delay is not None:
                await asyncio.sleep(self.time_scale(do.delay))
            elif do.stall is not None:
                if do.stall.for_ is None:
                    await asyncio.get_running_loop().create_future()  # until the client leaves
                else:
                    await asyncio.sleep(self.time_scale(do.stall.for_))
            elif do.status is not None:
                return self._answer(ex, do.status, ref)
            elif do.refuse or do.fin:
                how: EndHow = "refused" if do.refuse else "fin"
                self._end(ex, how, "proxy", "closed before any response", fault=ref)
                self._close_transport(ex)
                return web.Response()
            elif do.rst:
                await self._reset(ex)
                self._end(ex, "rst", "proxy", "reset before any response", fault=ref)
                return web.Response()

        # Upstream.
        assert self._session is not None
        try:
            upstream = await self._session.request(
                ex.method,
                yarl.URL(self.upstream + request.raw_path, encoded=True),
                headers=_filtered(request.headers, _NOT_FORWARDED),
                data=body if body else None,
                allow_redirects=False,
                skip_auto_headers=_SKIP_AUTO,
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._end(ex, "upstream_error", "upstream", f"upstream request failed: {exc!r}")
            self._close_transport(ex)
            return web.Response()
        ex.upstream = upstream
        self._record(ex, "response_headers", status=upstream.status)

        for index, fault in selected:
            if fault.do.delay is not None and fault.trigger.kind == "on_response_headers":
                self._record_fault(ex, index, fault)
                await asyncio.sleep(self.time_scale(fault.do.delay))

        out = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        out.headers.extend(_filtered(upstream.headers, _NOT_COPIED))
        try:
            await out.prepare(request)
        except ConnectionError as exc:
            self._client_left(ex, exc)
            return out
        ex.out = out
        self._record(ex, "first_byte", status=upstream.status)

        encoding = upstream.headers.get("Content-Encoding", "identity").strip().lower()
        sse = upstream.content_type == "text/event-stream" and encoding in ("", "identity")
        loop = asyncio.get_running_loop()
        ex.shaper = shaper = Shaper(selected, sse=sse, scale=self.time_scale, clock=loop.time)
        try:
            await self._run(ex, shaper.start())
            while True:
                if not ex.upstream_done:
                    chunk = await self._read(ex, upstream)
                    if chunk is None:
                        await self._run(ex, shaper.on_timer())
                    elif chunk:
                        await self._run(ex, shaper.feed(chunk))
                    else:
                        ex.upstream_done = True
                        await self._run(ex, shaper.eof())
                    continue
                if not shaper.stalled:
                    break
                deadline = shaper.next_deadline()  # a stall outlives the upstream body
                if deadline is None:
                    await loop.create_future()  # until the client leaves or the proxy closes
                else:
                    await asyncio.sleep(max(0.0, deadline - loop.time()))
                await self._run(ex, shaper.on_timer())
            try:
                await out.write_eof()
            except ConnectionError as exc:
                raise _ClientGone(exc) from exc
            self._end(ex, "clean", "upstream", "")
        except _Done:
            pass
        except _ClientGone as exc:
            self._client_left(ex, exc.__cause__)
        except _UpstreamFailed as exc:
            self._end(ex, "upstream_error", "upstream", f"upstream body failed: {exc.__cause__!r}")
            self._close_transport(ex)
        return out

    def _answer(self, ex: _Exchange, status: StatusArgs, ref: FaultRef) -> web.Response:
        response = web.Response(
            status=status.code, body=status.page(), headers={"Content-Type": status.content_type}
        )
        self._record(ex, "first_byte", status=status.code)
        self._end(ex, "clean", "proxy", f"status {status.code}", status=status.code, fault=ref)
        return response

    # --- performing the shaper's operations ----------------------------------------------------

    async def _run(self, ex: _Exchange, ops: Iterable[Op]) -> None:
        for op in ops:
            if isinstance(op, Write):
                await self._send(ex, op.data)
            elif isinstance(op, Forwarded):
                self._record(ex, op.kind, op.detail, event_index=op.event_index)
            elif isinstance(op, Sleep):
                await self._pause(ex, op.seconds)
            elif isinstance(op, Fired):
                self._record_fault(ex, op.index, op.fault, op.note)
            else:
                await self._finish(ex, op)
                raise _Done

    async def _read(self, ex: _Exchange, upstream: aiohttp.ClientResponse) -> bytes | None:
        """The next upstream chunk (``b""`` at the end), or ``None`` when a timer is due."""
        assert ex.shaper is not None
        deadline = ex.shaper.next_deadline()
        try:
            if deadline is None:
                return await upstream.content.readany()
            timeout = asyncio.timeout_at(deadline)
            try:
                async with timeout:
                    return await upstream.content.readany()
            except TimeoutError:
                if timeout.expired():
                    return None
                raise
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _UpstreamFailed(exc) from exc

    async def _send(self, ex: _Exchange, data: bytes) -> None:
        assert ex.shaper is not None and ex.out is not None
        deadline = ex.shaper.next_deadline()
        try:
            if deadline is None:
                await ex.out.write(data)
            else:
                timeout = asyncio.timeout_at(deadline)
                try:
                    async with timeout:
                        await ex.out.write(data)
                except TimeoutError:
                    if not timeout.expired():
                        raise
                    # The bytes are in the transport's buffer; a timer is due.
        except ConnectionError as exc:
            raise _ClientGone(exc) from exc
        ex.shaper.forwarded()
        if deadline is not None and asyncio.get_running_loop().time() >= deadline:
            await self._run(ex, ex.shaper.on_timer())

    async def _pause(self, ex: _Exchange, seconds: float) -> None:
        """Sleep ``seconds``, running the shaper's timers that fall due meanwhile."""
        assert ex.shaper is not None
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while ex.shaper.finished is None:
            now = loop.time()
            if now >= end:
                return
            deadline = ex.shaper.next_deadline()
            if deadline is None or deadline >= end:
                await asyncio.sleep(end - now)
                return
            await asyncio.sleep(max(0.0, deadline - now))
            await self._run(ex, ex.shaper.on_timer())

    async def _finish(self, ex: _Exchange, op: Finish) -> None:
        fault = self._state.faults[op.index]
        ref = FaultRef(index=op.index, action=fault.action)
        detail = fault.describe()
        if op.how == "clean":
            assert ex.out is not None
            try:
                await ex.out.write_eof()
            except ConnectionError as exc:
                raise _ClientGone(exc) from exc
            self._end(ex, "clean", "proxy", detail, fault=ref)
        elif op.how == "fin":
            self._end(ex, "fin", "proxy", detail, fault=ref)
            self._close_transport(ex)
        else:
            await self._reset(ex)
            self._end(ex, "rst", "proxy", detail, fault=ref)

    def _close_transport(self, ex: _Exchange) -> None:
        """FIN: close after the buffered bytes, without the chunked terminator."""
        if ex.transport is not None and not ex.transport.is_closing():
            ex.transport.close()

    async def _reset(self, ex: _Exchange) -> None:
        """RST: let what was written reach the kernel, then SO_LINGER 0 and abort."""
        transport = ex.transport
        if transport is None or transport.is_closing():
            return
        for _ in range(int(_RST_FLUSH / 0.005)):
            if not transport.get_write_buffer_size():
                break
            await asyncio.sleep(0.005)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()


def _filtered(headers: CIMultiDictProxy[str], drop: frozenset[str]) -> CIMultiDict[str]:
    """``headers`` without ``drop`` and without the headers their ``Connection`` names."""
    named = {
        token.strip().lower()
        for value in headers.getall("Connection", [])
        for token in value.split(",")
    }
    out: CIMultiDict[str] = CIMultiDict()
    for key, value in headers.items():
        lowered = key.lower()
        if lowered not in drop and lowered not in named:
            out.add(key, value)
    return out
