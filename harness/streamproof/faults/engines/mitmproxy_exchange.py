"""One request through the mitmproxy engine's addon
(:class:`~streamproof.faults.engines.mitmproxy_addon.PlanAddon`): its state, how the shaper's
operations are carried out on its body with mitmproxy's means, the waits a hook holds it for,
and its ``end`` record (the addon's module says what each plan item becomes)."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

from streamproof.faults.engines.mitmproxy_wire import end_connection
from streamproof.faults.engines.recording import ExchangeRecords
from streamproof.faults.plan import Fault
from streamproof.faults.records import EndBy, EndHow, FaultRef, LinkEvent
from streamproof.faults.shaper import Finish, Fired, Forwarded, Op, Shaper, Sleep, Write

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # see mitmproxy_addon's imports
    from mitmproxy.connection import Client, ConnectionState

__all__ = ["Exchange", "ExchangeHandling", "Hold"]

_POLL: Final = 0.02
"""Seconds between looks at the client's socket while a hook holds a flow: mitmproxy gives an
addon no event when the client leaves during a hook (the connection waits for the hook)."""
_TERMINATOR: Final = b"0\r\n\r\n"

Hold = Literal["timeout", "woken", "client", "closed", "ended"]


@dataclass(eq=False)
class Exchange:
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


class ExchangeHandling(ExchangeRecords):
    """What :class:`~streamproof.faults.engines.mitmproxy_addon.PlanAddon` does with one request
    once its hooks have begun it: the base of the addon, whose constructor sets the attributes
    below."""

    link: str
    records: list[LinkEvent]
    active: dict[str, Exchange]
    """Requests not yet ended, by flow id."""
    _epoch: float
    _closing: bool
    _streams: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    _tasks: set[asyncio.Task[None]]

    # --- the body ------------------------------------------------------------------------------

    def _body(self, ex: Exchange, data: bytes) -> list[bytes]:
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

    def _begin(self, ex: Exchange) -> None:
        """The headers have gone out (a silent upstream gives the callable nothing to run on)."""
        if not ex.started and not ex.ended:
            self._start(ex, None)
            self._arm(ex)

    def _start(self, ex: Exchange, out: list[bytes] | None) -> None:
        assert ex.shaper is not None
        ex.started = True
        self._record(ex, "first_byte", status=ex.status)
        self._perform(ex, ex.shaper.start(), out)

    def _arm(self, ex: Exchange) -> None:
        """(Re)schedule the timer at the shaper's next deadline."""
        if ex.timer is not None:
            ex.timer.cancel()
            ex.timer = None
        if ex.ended or ex.shaper is None:
            return
        deadline = ex.shaper.next_deadline()
        if deadline is not None:
            ex.timer = asyncio.get_running_loop().call_at(deadline, self._on_timer, ex)

    def _on_timer(self, ex: Exchange) -> None:
        ex.timer = None
        if ex.ended or ex.shaper is None:
            return
        self._perform(ex, ex.shaper.on_timer(), None)
        self._arm(ex)
        ex.wake.set()

    def _perform(self, ex: Exchange, ops: Iterable[Op], out: list[bytes] | None) -> None:
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

    def _finish(self, ex: Exchange, op: Finish, out: list[bytes] | None) -> None:
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

    def _write(self, ex: Exchange, raw: bytes) -> None:
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

    def _spawn_cut(self, ex: Exchange, how: Literal["fin", "rst"]) -> None:
        task = asyncio.get_running_loop().create_task(self._cut(ex, how))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _cut(self, ex: Exchange, how: Literal["fin", "rst"]) -> None:
        streams = self._streams.get(ex.client.id)
        if streams is not None:
            await end_connection(streams[1], how)

    # --- waiting in a hook ---------------------------------------------------------------------

    async def _hold(self, ex: Exchange, seconds: float | None, *, wakeable: bool = False) -> Hold:
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

    def _gone(self, ex: Exchange, outcome: Hold) -> None:
        if outcome == "client":
            self._client_left(ex)
        elif outcome == "closed":
            self._end(ex, "fin", "proxy", "the proxy was closed")

    def _client_gone(self, ex: Exchange) -> bool:
        """The client has closed or reset its connection (mitmproxy updates the connection's
        state as its reader sees it, even while a hook holds the flow)."""
        return not (ex.client.state & ConnectionState.CAN_READ)

    def _client_left(self, ex: Exchange) -> None:
        streams = self._streams.get(ex.client.id)
        reset = streams is not None and isinstance(streams[0].exception(), ConnectionResetError)
        self._end(ex, "rst" if reset else "fin", "client", "the client closed the connection")

    def _end(
        self,
        ex: Exchange,
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
