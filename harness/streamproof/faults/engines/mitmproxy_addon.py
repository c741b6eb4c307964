"""The mitmproxy addon that carries out one link's fault plan, and records what the client saw.

mitmproxy's own model: a proxy core, and addons that see each flow through hooks. Each link of
the mitmproxy engine (:mod:`~streamproof.faults.engines.mitmproxy`) is one reverse-proxy mode (its
own listener) of the process's one master, and one :class:`PlanAddon`, which acts only on the
flows of its mode. The decisions about the body are the inline engine's: the same sans-IO
:class:`~streamproof.faults.shaper.Shaper` counts events and bytes, keeps the trigger deadlines and
rewrites the bytes; this addon performs its operations with mitmproxy's means.

How each plan item is carried out (the declarations are in
:mod:`~streamproof.faults.engines.catalog`):

* matching (method, path, rpc, occurrence) in the ``request`` hook, once mitmproxy has read the
  whole request body, as the inline engine does;
* ``on_request`` faults in the ``request`` hook, before upstream is contacted (the master
  connects lazily): ``status`` sets ``flow.response``; ``delay`` and ``stall`` wait in the hook
  (mitmproxy holds that flow only); ``fin`` kills the flow, which closes the connection with no
  response; ``rst`` resets the socket first;
* the body: ``flow.response.stream`` is set in ``responseheaders`` to a callable that feeds each
  de-chunked upstream chunk to the shaper and returns the pieces to write (a list: ``split``'s
  pieces become separate chunks, written back to back, for the callable cannot wait);
  ``stall`` swallows (the callable returns nothing) and, once upstream has ended, the
  ``response`` hook waits; ``corrupt`` rewrites;
* the endings: ``end_clean`` from the callable appends an empty piece, which mitmproxy frames as
  the chunked terminator; ``fin`` and ``rst`` end the client's socket
  (:mod:`~streamproof.faults.engines.mitmproxy_wire`) once the pieces before the cut are written;
* timers (``after``, ``idle``, the end of ``stall: {for}``) run on ``loop.call_at`` at the
  shaper's deadlines, so they fire while upstream sends nothing; a timed ``end_clean`` writes
  the terminator itself.

Downstream is chunked HTTP/1.1 whatever upstream used, as through the inline engine (an early
clean end needs the terminator). After an ``end_clean`` mitmproxy still considers the response
in progress: it would keep the connection busy until upstream ends and then write a terminator
of its own into what the client takes for the next response (measured). So a response that may
end early carries ``Connection: close`` and its connection closes after the terminator.

Records mean what they mean for the inline engine (:mod:`streamproof.faults.records`): ``connect``
from ``client_connected``; ``request`` from ``request``; ``response_headers`` and (once the
headers have gone out) ``first_byte``; ``event``/``comment`` as the callable forwards them;
``fault``; ``end`` from the fault, the ``response`` hook (``clean``/``upstream``) or the
``error`` hook (the client left, or upstream failed: the client then gets a FIN, and no response
at all if none had begun, where mitmproxy alone would answer 502).

The body, the waits and the records of one request are in
:mod:`~streamproof.faults.engines.mitmproxy_exchange`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import warnings
from collections.abc import Sequence
from typing import Final
from urllib.parse import unquote, urlsplit

from streamproof.core.addresses import address
from streamproof.core.durations import TimeScale
from streamproof.faults.engines.mitmproxy_exchange import Exchange, ExchangeHandling
from streamproof.faults.engines.mitmproxy_wire import client_streams
from streamproof.faults.plan import Fault, PlanState, RequestInfo, request_rpc
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.faults.shaper import Shaper

with warnings.catch_warnings():
    # mitmproxy 12.3.1 imports ldap3, which uses pyasn1 names deprecated since: not ours to
    # fix, and it must not fail a run that turns warnings into errors (pytest's -W error).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import http
    from mitmproxy.connection import Client
    from mitmproxy.master import Master
    from mitmproxy.proxy.server_hooks import ServerConnectionHookData
    from mitmproxy.tls import TlsData

__all__ = ["PlanAddon"]


_BODYLESS: Final = frozenset({204, 304})


class PlanAddon(ExchangeHandling):
    """A mitmproxy addon executing one link's plan on the flows of one proxy mode.

    Method names other than mitmproxy's hooks avoid mitmproxy's hook names (``load``,
    ``configure``, ``running``, ``done``...): mitmproxy would call them.
    """

    def __init__(
        self,
        link: str,
        master: Master,
        *,
        base_path: str = "",
        time_scale: TimeScale,
        buffer_sse: bool = False,
    ) -> None:
        self.link = link
        self.buffer_sse = buffer_sse
        """SSE responses are buffered whole (mitmproxy's default for a body that is not
        streamed) and recorded once upstream has ended them; the plan is empty."""
        self.name = f"streamproof-{link}-{id(self):x}"
        """The addon's name in mitmproxy's addon manager (unique per link)."""
        self.spec: str | None = None
        """The proxy mode whose flows this addon acts on; ``None``: none yet."""
        self.time_scale = time_scale
        self._master = master
        self._base_path = base_path
        self._state = PlanState(())
        self.records: list[LinkEvent] = []
        self.upstream: list[str] = []
        """The local address (``host:port``) of each connection the proxy opened upstream
        since the plan was loaded: how a fake upstream tells the proxy's connections from
        those of a client that went past it."""
        self._epoch = time.monotonic()
        self._next_connection = 0
        self._next_request = 0
        self._connections: dict[str, int] = {}
        self.clients: dict[str, Client] = {}
        """The link's client connections that are open now, by mitmproxy's client id."""
        self._streams: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        """Their sockets, looked up once as they connect: mitmproxy lets go of a socket before
        the hooks that follow its end have run."""
        self.active: dict[str, Exchange] = {}
        """Requests not yet ended, by flow id."""
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._all_gone = asyncio.Event()
        """Set when the last client connection of the link has gone."""

    # --- the link's side -----------------------------------------------------------------------

    def use_plan(self, faults: Sequence[Fault]) -> None:
        self._state = PlanState(faults)
        self.records = []
        self.upstream = []
        self._next_request = 0

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._state.faults

    def set_epoch(self, t0: float) -> None:
        self._epoch = t0

    async def close_all(self, timeout: float = 2.0) -> None:
        """End every request in progress (``fin`` by the proxy) and close every client
        connection of the link; wait (``timeout`` at most) until mitmproxy has let them go."""
        self._closing = True
        for ex in list(self.active.values()):
            self._end(ex, "fin", "proxy", "the proxy was closed")
        for client_id in list(self.clients):
            streams = self._streams.get(client_id)
            if streams is not None:
                streams[1].transport.close()
        if self.clients:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_gone.wait(), timeout)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- mitmproxy hooks -----------------------------------------------------------------------

    def client_connected(self, client: Client) -> None:
        if not self._mine(client):
            return
        conn = self._next_connection
        self._next_connection += 1
        self._all_gone.clear()
        self._connections[client.id] = conn
        self.clients[client.id] = client
        streams = client_streams(self._master, client)
        if streams is not None:
            self._streams[client.id] = streams
        detail = address(client.peername)
        self.records.append(
            LinkEvent(t=self._now(), link=self.link, connection=conn, kind="connect", detail=detail)
        )

    def tls_failed_client(self, data: TlsData) -> None:
        """The client's TLS handshake with the proxy failed: it does not trust the CA the
        proxy intercepts with (or it spoke no TLS at all)."""
        client = data.context.client
        if not self._mine(client):
            return
        self.records.append(
            LinkEvent(
                t=self._now(),
                link=self.link,
                connection=self._connections.get(client.id, -1),
                kind="tls_error",
                detail=str(data.conn.error or "the TLS handshake failed"),
            )
        )

    def server_connected(self, data: ServerConnectionHookData) -> None:
        """mitmproxy awaits this hook before it starts TLS upstream: an upstream handshake
        that fails is always one of an address already here."""
        if self._mine(data.client) and data.server.sockname:
            self.upstream.append(address(data.server.sockname))

    def client_disconnected(self, client: Client) -> None:
        if self._mine(client):
            self.clients.pop(client.id, None)
            self._streams.pop(client.id, None)
            self._connections.pop(client.id, None)
            if not self.clients:
                self._all_gone.set()

    async def request(self, flow: http.HTTPFlow) -> None:
        client = flow.client_conn
        if not self._mine(client):
            return
        req = flow.request
        body = req.raw_content or b""
        path = unquote(urlsplit(req.path).path)
        ex = Exchange(
            connection=self._connections.get(client.id, -1),
            request=self._next_request,
            method=req.method,
            path=path,
            rpc=request_rpc(req.method, path, body),
            client=client,
        )
        self._next_request += 1
        self.active[flow.id] = ex
        self._record(ex, "request")
        if self._closing:
            self._end(ex, "fin", "proxy", "the proxy was closed")
            flow.kill()
            return
        ex.selected = self._state.select(RequestInfo(ex.method, ex.path, ex.rpc))
        for index, fault in ex.selected:
            if fault.trigger.kind != "on_request":
                continue
            self._record_fault(ex, index, fault)
            do, ref = fault.do, FaultRef(index=index, action=fault.action)
            if do.delay is not None or do.stall is not None:
                if do.delay is not None:
                    seconds: float | None = self.time_scale(do.delay)
                else:
                    assert do.stall is not None
                    seconds = None if do.stall.for_ is None else self.time_scale(do.stall.for_)
                outcome = await self._hold(ex, seconds)
                if outcome != "timeout":
                    self._gone(ex, outcome)
                    flow.kill()
                    return
            elif do.status is not None:
                flow.response = http.Response.make(
                    do.status.code, do.status.page(), {"Content-Type": do.status.content_type}
                )
                self._record(ex, "first_byte", status=do.status.code)
                code = do.status.code
                self._end(ex, "clean", "proxy", f"status {code}", status=code, fault=ref)
                return
            elif do.fin:
                self._end(ex, "fin", "proxy", "closed before any response", fault=ref)
                flow.kill()  # mitmproxy closes the connection without a response byte
                return
            elif do.rst:
                await self._cut(ex, "rst")
                self._end(ex, "rst", "proxy", "reset before any response", fault=ref)
                flow.kill()
                return
        if self._base_path:
            req.path = self._base_path + req.path

    async def responseheaders(self, flow: http.HTTPFlow) -> None:
        ex = self.active.get(flow.id)
        response = flow.response
        if ex is None or ex.ended or response is None:
            return
        ex.status = response.status_code
        self._record(ex, "response_headers", status=response.status_code)
        for index, fault in ex.selected:
            if fault.do.delay is not None and fault.trigger.kind == "on_response_headers":
                self._record_fault(ex, index, fault)
                outcome = await self._hold(ex, self.time_scale(fault.do.delay))
                if outcome != "timeout":
                    self._gone(ex, outcome)
                    response.stream = True  # what follows is dropped with the connection
                    return
        headers = response.headers
        encoding = headers.get("content-encoding", "identity").strip().lower()
        media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        sse = media_type == "text/event-stream" and encoding in ("", "identity")
        loop = asyncio.get_running_loop()
        if self.buffer_sse and sse:
            # No ``response.stream``: mitmproxy reads the whole body before it sends anything.
            ex.buffered = True
            ex.shaper = Shaper(ex.selected, sse=True, scale=self.time_scale, clock=loop.time)
            return
        if (
            flow.request.http_version == "HTTP/1.1"
            and flow.request.method.upper() != "HEAD"
            and response.status_code >= 200
            and response.status_code not in _BODYLESS
        ):
            if "content-length" in headers:
                del headers["content-length"]
            headers["transfer-encoding"] = "chunked"
            ex.chunked = True
            if any(f.do.end_clean for _, f in ex.selected):
                headers["connection"] = "close"
        ex.shaper = Shaper(ex.selected, sse=sse, scale=self.time_scale, clock=loop.time)
        response.stream = functools.partial(self._body, ex)
        # mitmproxy writes the headers as this hook returns, in the same step of the loop: a
        # callback scheduled now runs just after they went out.
        loop.call_soon(self._begin, ex)

    async def response(self, flow: http.HTTPFlow) -> None:
        """Upstream's body has ended (a streamed response) or an answer was set here."""
        ex = self.active.get(flow.id)
        if ex is None or ex.ended:
            return
        shaper = ex.shaper
        if ex.buffered and shaper is not None and flow.response is not None:
            # The whole body goes out as this hook returns: record its events now.
            out: list[bytes] = []
            self._start(ex, out)
            body = flow.response.raw_content or b""
            if not ex.ended and body:
                self._perform(ex, shaper.feed(body), out)
            if not ex.ended:
                self._perform(ex, shaper.eof(), out)
            if not ex.ended:
                self._end(ex, "clean", "upstream", "buffered whole")
            return
        while shaper is not None and shaper.stalled and not ex.ended:
            # A stall outlives the upstream body; its timers wake this loop.
            outcome = await self._hold(ex, None, wakeable=True)
            if outcome in ("client", "closed"):
                self._gone(ex, outcome)
                return
        if not ex.ended:
            self._end(ex, "clean", "upstream", "")

    def error(self, flow: http.HTTPFlow) -> None:
        ex = self.active.get(flow.id)
        if ex is None or ex.ended:
            return
        if self._client_gone(ex):
            self._client_left(ex)
            return
        # The error hook blocks the flow: mitmproxy writes its error answer (a 502 when nothing
        # was sent yet) or closes the connection only after it, so the client gets what the
        # inline engine gives it: a FIN, and before any response no response at all.
        message = flow.error.msg if flow.error is not None else "unknown error"
        self._end(ex, "upstream_error", "upstream", f"upstream failed: {message}")
        streams = self._streams.get(ex.client.id)
        if streams is not None:
            streams[1].transport.close()

    # --- records -------------------------------------------------------------------------------

    def _mine(self, client: Client) -> bool:
        return self.spec is not None and client.proxy_mode.full_spec == self.spec

    def _keep(self, event: LinkEvent) -> None:
        self.records.append(event)
