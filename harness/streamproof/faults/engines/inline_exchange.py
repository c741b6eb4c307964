"""One request's exchange on the inline engine: forwarding it, and firing its faults.

The per-request half of :class:`~streamproof.faults.engines.inline.InlineProxy` (which owns the
listener, the connections and the plan): the faults that fire before upstream is contacted,
the upstream request and the copied headers, the body loop that feeds the sans-IO
:class:`~streamproof.faults.shaper.Shaper` and performs its operations (write, sleep, record, end),
the FIN and RST endings, and the records of it all. How each ending looks to a client is
described in :mod:`streamproof.faults.engines.inline`.

Another engine can put this exchange behind its own proxy and carry out some actions there: the
few methods under "engine hooks" (how a delay waits, how a cut is made, what a fired fault
does, what happens before each write) are where the toxiproxy engine
(:mod:`streamproof.faults.engines.toxiproxy`) takes over; the inline engine performs them itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

import aiohttp
import yarl
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.recording import ExchangeRecords
from streamproof.faults.plan import PlanState, RequestInfo, StatusArgs
from streamproof.faults.records import EndBy, EndHow, FaultRef, LinkEvent
from streamproof.faults.shaper import Finish, Fired, Forwarded, Op, Shaper, Sleep, Write

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
_RST_FLUSH: Final = 1.0
"""Seconds to let written bytes leave the transport before a reset discards them."""


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


class ExchangeHandling(ExchangeRecords):
    """What :class:`~streamproof.faults.engines.inline.InlineProxy` does with one request, once it
    has been read: the base of the proxy, whose constructor sets the attributes below."""

    link: str
    upstream: str
    time_scale: TimeScale
    _state: PlanState
    _events: list[LinkEvent]
    _epoch: float
    _session: aiohttp.ClientSession | None
    _delegated: frozenset[str] = frozenset()
    """Actions another engine carries out on the wire (see :class:`Shaper`); none inline."""

    # --- records -------------------------------------------------------------------------------

    def _keep(self, event: LinkEvent) -> None:
        self._events.append(event)

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

    def _client_left(self, ex: _Exchange, exc: BaseException | None = None) -> None:
        lost = ex.lost if ex.client_left else exc
        how: EndHow = "rst" if isinstance(lost, ConnectionResetError) else "fin"
        self._end(ex, how, "client", "the client closed the connection")

    # --- the exchange --------------------------------------------------------------------------

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
                await self._delay(ex, self.time_scale(do.delay))
            elif do.stall is not None:
                if do.stall.for_ is None:
                    await asyncio.get_running_loop().create_future()  # until the client leaves
                else:
                    await asyncio.sleep(self.time_scale(do.stall.for_))
            elif do.status is not None:
                return self._answer(ex, do.status, ref)
            elif do.refuse:
                self._end(ex, "refused", "proxy", "closed before any response", fault=ref)
                self._close_transport(ex)
                return web.Response()
            elif do.fin:
                await self._cut(ex, "fin", "closed before any response", ref)
                return web.Response()
            elif do.rst:
                await self._cut(ex, "rst", "reset before any response", ref)
                return web.Response()

        # Upstream.
        assert self._session is not None
        try:
            upstream = await self._session.request(
                ex.method,
                yarl.URL(self.upstream + _origin_form(request.raw_path), encoded=True),
                headers=_filtered(request.headers, _NOT_FORWARDED),
                data=body if body else None,
                allow_redirects=False,
                skip_auto_headers=_SKIP_AUTO,
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._end(ex, "upstream_error", "upstream", f"upstream request failed: {_said(exc)}")
            self._close_transport(ex)
            return web.Response()
        ex.upstream = upstream
        self._record(ex, "response_headers", status=upstream.status)

        for index, fault in selected:
            if fault.do.delay is not None and fault.trigger.kind == "on_response_headers":
                self._record_fault(ex, index, fault)
                await self._delay(ex, self.time_scale(fault.do.delay))

        out = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        out.headers.extend(_filtered(upstream.headers, _NOT_COPIED))
        try:
            await self._before_write(ex, None)
            await out.prepare(request)
        except ConnectionError as exc:
            self._client_left(ex, exc)
            return out
        ex.out = out
        self._record(ex, "first_byte", status=upstream.status)

        encoding = upstream.headers.get("Content-Encoding", "identity").strip().lower()
        sse = upstream.content_type == "text/event-stream" and encoding in ("", "identity")
        loop = asyncio.get_running_loop()
        ex.shaper = shaper = Shaper(
            selected, sse=sse, scale=self.time_scale, clock=loop.time, delegated=self._delegated
        )
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
            self._end(
                ex, "upstream_error", "upstream", f"upstream body failed: {_said(exc.__cause__)}"
            )
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
                self._record(ex, op.kind, op.detail, event_index=op.event_index, damage=op.damage)
            elif isinstance(op, Sleep):
                await self._pause(ex, op.seconds)
            elif isinstance(op, Fired):
                await self._fired(ex, op)
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
            await self._before_write(ex, data)
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
        else:
            await self._cut(ex, op.how, detail, ref)

    # --- engine hooks (the inline engine's own way; see the module docstring) -----------------

    async def _delay(self, ex: _Exchange, seconds: float) -> None:
        """A ``delay`` fault holds the request or the response this long."""
        await asyncio.sleep(seconds)

    async def _cut(
        self, ex: _Exchange, how: Literal["fin", "rst"], detail: str, fault: FaultRef
    ) -> None:
        """End the client's connection now, after what was written, and record the end."""
        if how == "fin":
            self._end(ex, "fin", "proxy", detail, fault=fault)
            self._close_transport(ex)
        else:
            await self._reset(ex)
            self._end(ex, "rst", "proxy", detail, fault=fault)

    async def _fired(self, ex: _Exchange, op: Fired) -> None:
        """A fault fired mid-response (the shaper has applied it to the bytes, unless its
        action is delegated)."""
        self._record_fault(ex, op.index, op.fault, op.note)

    async def _before_write(self, ex: _Exchange, data: bytes | None) -> None:
        """Called before the headers (``data`` None) and each body write go downstream."""

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


def _said(exc: BaseException | None) -> str:
    """An exception as a person reads it (its type and message; a repr of aiohttp's errors
    spells out a whole connection key)."""
    if exc is None:
        return "unknown error"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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


def _origin_form(target: str) -> str:
    """The path and query of a request target. A client sent through the link as a forward
    proxy (``HTTP_PROXY``) writes the absolute URI (``POST http://host:port/ HTTP/1.1``); the
    link forwards its path to its own upstream, as it does an origin-form request's."""
    if target.startswith("/"):
        return target
    parts = yarl.URL(target, encoded=True)
    return parts.raw_path_qs if parts.is_absolute() else "/" + target
