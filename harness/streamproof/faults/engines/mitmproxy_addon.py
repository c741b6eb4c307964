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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.mitmproxy_wire import client_streams, end_connection
from streamproof.faults.engines.recording import ExchangeRecords
from streamproof.faults.plan import Fault, PlanState, RequestInfo, rpc_method
from streamproof.faults.records import EndBy, EndHow, FaultRef, LinkEvent
from streamproof.faults.shaper import Finish, Fired, Forwarded, Op, Shaper, Sleep, Write

with warnings.catch_warnings():
    # mitmproxy 12.3.1 imports ldap3, which uses pyasn1 names deprecated since: not ours to
    # fix, and it must not fail a run that turns warnings into errors (pytest's -W error).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import http
    from mitmproxy.connection import Client, ConnectionState
    from mitmproxy.master import Master
    from mitmproxy.tls import TlsData

__all__ = ["PlanAddon"]

_POLL: Final = 0.02
"""Seconds between looks at the client's socket while a hook holds a flow: mitmproxy gives an
addon no event when the client leaves during a hook (the connection waits for the hook)."""
_BODYLESS: Final = frozenset({204, 304})
_TERMINATOR: Final = b"0\r\n\r\n"

Hold = Literal["timeout", "woken", "client", "closed", "ended"]


@dataclass(eq=False)
class _Exchange:
    """One request on the link, from the ``request`` hook to its ``end`` record."""

    connection: int
    request: int
    method: str
    path: str
    rpc: str | None
    client: Client
    selected: list[tuple[int, Fault]] = field(default_factory=list)
    shaper: Shaper | None = None
    status: int | None = None
    started: bool = False
    """The response headers have gone downstream."""
    chunked: bool = False
    """The downstream body is chunked (an empty piece is its terminator)."""
    ended: bool = False
    buffered: bool = False
    """The SSE body is held by mitmproxy until upstream ends it (a buffering proxy)."""
    timer: asyncio.TimerHandle | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class PlanAddon(ExchangeRecords):
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
        self._epoch = time.monotonic()
        self._next_connection = 0
        self._next_request = 0
        self._connections: dict[str, int] = {}
        self.clients: dict[str, Client] = {}
        """The link's client connections that are open now, by mitmproxy's client id."""
        self._streams: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        """Their sockets, looked up once as they connect: mitmproxy lets go of a socket before
        the hooks that follow its end have run."""
        self.active: dict[str, _Exchange] = {}
        """Requests not yet ended, by flow id."""
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._all_gone = asyncio.Event()
        """Set when the last client connection of the link has gone."""

    # --- the link's side -----------------------------------------------------------------------

    def use_plan(self, faults: Sequence[Fault]) -> None:
        self._state = PlanState(faults)
        self.records = []
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
        peer = client.peername
        detail = f"{peer[0]}:{peer[1]}" if peer else ""
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
        ex = _Exchange(
            connection=self._connections.get(client.id, -1),
            request=self._next_request,
            method=req.method,
            path=unquote(urlsplit(req.path).path),
            rpc=rpc_method(body) if body else None,
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

    # --- the body ------------------------------------------------------------------------------

    def _body(self, ex: _Exchange, data: bytes) -> list[bytes]:
        """mitmproxy's stream callable: one de-chunked upstream chunk in (``b""`` at the end
        of the body), the pieces to write out."""
        shaper = ex.shaper
        if ex.ended or shaper is None:
            return []
        out: list[bytes] = []
        if not ex.started:
            self._start(ex, out)
        if not ex.ended:
            self._perform(ex, shaper.feed(data) if data else shaper.eof(), out)
        if not ex.ended:
            if out:
                shaper.forwarded()
            self._arm(ex)
        return out

    def _begin(self, ex: _Exchange) -> None:
        """The headers have gone out (a silent upstream gives the callable nothing to run on)."""
        if not ex.started and not ex.ended:
            self._start(ex, None)
            self._arm(ex)

    def _start(self, ex: _Exchange, out: list[bytes] | None) -> None:
        assert ex.shaper is not None
        ex.started = True
        self._record(ex, "first_byte", status=ex.status)
        self._perform(ex, ex.shaper.start(), out)

    def _arm(self, ex: _Exchange) -> None:
        """(Re)schedule the timer at the shaper's next deadline."""
        if ex.timer is not None:
            ex.timer.cancel()
            ex.timer = None
        if ex.ended or ex.shaper is None:
            return
        deadline = ex.shaper.next_deadline()
        if deadline is not None:
            ex.timer = asyncio.get_running_loop().call_at(deadline, self._on_timer, ex)

    def _on_timer(self, ex: _Exchange) -> None:
        ex.timer = None
        if ex.ended or ex.shaper is None:
            return
        self._perform(ex, ex.shaper.on_timer(), None)
        self._arm(ex)
        ex.wake.set()

    def _perform(self, ex: _Exchange, ops: Iterable[Op], out: list[bytes] | None) -> None:
        """Carry out the shaper's operations: into ``out`` inside the stream callable,
        straight to the client's socket outside it (a timer, the start of the body)."""
        for op in ops:
            if isinstance(op, Write):
                if out is not None:
                    out.append(op.data)
                else:
                    self._write(ex, _framed(op.data) if ex.chunked else op.data)
            elif isinstance(op, Forwarded):
                self._record(ex, op.kind, op.detail, event_index=op.event_index, damage=op.damage)
            elif isinstance(op, Fired):
                self._record_fault(ex, op.index, op.fault, op.note)
            elif isinstance(op, Sleep):
                continue  # split's gap: the callable cannot wait (catalog: approximate)
            else:
                self._finish(ex, op, out)
                return

    def _finish(self, ex: _Exchange, op: Finish, out: list[bytes] | None) -> None:
        fault = dict(ex.selected)[op.index]
        ref = FaultRef(index=op.index, action=fault.action)
        how: Literal["fin", "rst"] = "rst" if op.how == "rst" else "fin"
        self._end(ex, op.how, "proxy", fault.describe(), fault=ref)
        if op.how == "clean" and ex.chunked:
            if out is not None:
                out.append(b"")  # mitmproxy frames an empty piece as the chunked terminator
            else:
                self._write(ex, _TERMINATOR)
        if out is None:
            self._spawn_cut(ex, how)
        else:
            # The pieces in ``out`` are written after the callable returns; cut after them.
            asyncio.get_running_loop().call_soon(self._spawn_cut, ex, how)

    def _write(self, ex: _Exchange, raw: bytes) -> None:
        """Write to the client's socket outside the stream callable (bytes as they go on the
        wire: a chunk's framing included)."""
        streams = self._streams.get(ex.client.id)
        if ex.client.tls:
            # The socket carries TLS that mitmproxy terminates: raw bytes would corrupt it.
            # A forward link rejects the plans that would write here
            # (catalog.intercepted_tls_problems); should one get through, end the exchange.
            self._end(ex, "fin", "proxy", "cannot write outside the body on intercepted TLS")
            self._spawn_cut(ex, "fin")
            return
        if streams is not None and not streams[1].transport.is_closing():
            streams[1].write(raw)

    def _spawn_cut(self, ex: _Exchange, how: Literal["fin", "rst"]) -> None:
        task = asyncio.get_running_loop().create_task(self._cut(ex, how))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _cut(self, ex: _Exchange, how: Literal["fin", "rst"]) -> None:
        streams = self._streams.get(ex.client.id)
        if streams is not None:
            await end_connection(streams[1], how)

    # --- waiting in a hook ---------------------------------------------------------------------

    async def _hold(self, ex: _Exchange, seconds: float | None, *, wakeable: bool = False) -> Hold:
        """Wait in a hook ``seconds`` (``None``: without end) and say why it stopped: the time
        was up (``timeout``), the client left, the link closed, the request ended, or (only when
        ``wakeable``) a timer of the request ran (``woken``)."""
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while True:
            if ex.ended:
                return "ended"
            if self._closing:
                return "closed"
            if self._client_gone(ex):
                return "client"
            if wakeable and ex.wake.is_set():
                ex.wake.clear()  # only here: a wake-up that races the poll's timeout is kept
                return "woken"
            now = loop.time()
            if deadline is not None and now >= deadline:
                return "timeout"
            step = _POLL if deadline is None else min(_POLL, deadline - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ex.wake.wait(), step)
            if not wakeable:
                ex.wake.clear()

    def _gone(self, ex: _Exchange, outcome: Hold) -> None:
        if outcome == "client":
            self._client_left(ex)
        elif outcome == "closed":
            self._end(ex, "fin", "proxy", "the proxy was closed")

    def _client_gone(self, ex: _Exchange) -> bool:
        """The client has closed or reset its connection (mitmproxy updates the connection's
        state as its reader sees it, even while a hook holds the flow)."""
        return not (ex.client.state & ConnectionState.CAN_READ)

    def _client_left(self, ex: _Exchange) -> None:
        streams = self._streams.get(ex.client.id)
        reset = streams is not None and isinstance(streams[0].exception(), ConnectionResetError)
        self._end(ex, "rst" if reset else "fin", "client", "the client closed the connection")

    # --- records -------------------------------------------------------------------------------

    def _mine(self, client: Client) -> bool:
        return self.spec is not None and client.proxy_mode.full_spec == self.spec

    def _keep(self, event: LinkEvent) -> None:
        self.records.append(event)

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
        if ex.timer is not None:
            ex.timer.cancel()
            ex.timer = None
        ex.wake.set()
        for key, value in list(self.active.items()):
            if value is ex:
                del self.active[key]
        shaper = ex.shaper
        if shaper is not None:
            counts = f"{shaper.events} events forwarded"
            if shaper.swallowed_events or shaper.swallowed_bytes:
                counts += f", {shaper.swallowed_events} events swallowed"
            if shaper.unfired:
                counts += f", faults not fired: {', '.join(map(str, shaper.unfired))}"
            detail = f"{detail}; {counts}" if detail else counts
        self._record(ex, "end", detail, status=status, fault=fault, how=how, by=by)


def _framed(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)
