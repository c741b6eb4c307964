"""The toxiproxy engine: each link is a real toxiproxy proxy, with streamproof's recorder behind it.

::

    client ──▶ toxiproxy proxy (127.0.0.1:P) ──▶ recorder (127.0.0.1:R) ──▶ upstream
               the fault happens here             decides when, counts, records

Toxiproxy (Shopify's TCP proxy, v2.12.0, one server per harness session,
:mod:`~streamproof.faults.engines.toxiproxy.server`) is what the client talks to, so every fault
reaches the client from a real TCP proxy: a FIN or RST from toxiproxy's socket, latency and
slicing in its pipeline, a refused connection from its disabled listener. Its HTTP API is
driven with aiohttp; toxiproxy-python was measured unfit (blocking ``requests``, one server per
process, no way to update a toxic; docs/explanation/wire-facts/engines.md §1).

Why a recorder behind it. Toxiproxy sees bytes, not requests or events, and a toxic acts on
every connection of a proxy. Behind it sits a recorder
(:mod:`~streamproof.faults.engines.toxiproxy.recorder`): an
:class:`~streamproof.faults.engines.inline.InlineProxy` that runs the *same* plan with the same
sans-IO :class:`~streamproof.faults.shaper.Shaper`, so each fault fires at the same point as on the
inline engine (``on_response_headers``, after event N, after N body bytes, ``after``, ``idle``),
but whose hooks hand the action to toxiproxy instead of doing it. The recorder wrote every byte
toxiproxy forwards on that connection, so it knows the cut's *wire* offset on this very
connection (response headers, chunk framing and event bytes, previous keep-alive responses
included: its transport counts every byte written). It also supplies the records, which keep
the inline meaning (docs/explanation/wire-facts/engines.md §1: a body offset, or one taken from
another
connection, lands elsewhere).

How each plan item is carried out (``catalog.TOXIPROXY`` declares the same):

* ``fin`` / ``rst``: a ``limit_data`` toxic is on the proxy from its creation with an unreachable
  limit, so it counts every connection from its first byte. At the cut, the limit is patched to
  this connection's offset and one more byte is written: toxiproxy drops it and closes the
  client's socket right away, after exactly the bytes before the cut (no need to wait for
  upstream's next chunk). The limit is then put back. ``rst``: toxiproxy only makes a close a
  reset (zero linger) on connections that start while a ``reset_peer`` toxic exists, so a plan
  with ``rst`` has one armed with toxicity 0 (it never fires itself) from ``load``; keep-alive
  connections opened before with the wrong setting are closed at ``load`` while idle, so the
  client opens a new one. Before any response (``on_request``) the cut is at the connection's
  current offset: no response byte.
* ``stall``: the recorder stops forwarding at the stall point, on that connection only, exactly
  as the inline engine does (``for: D``: it resumes at the next event boundary; what came
  meanwhile is dropped); the socket through toxiproxy stays open with nothing on it. Measured:
  toxiproxy's own hold, a ``latency`` toxic of 10^9 ms (its ``timeout`` toxic discards), holds
  every connection of the proxy, so a client could not recover on a new connection while the
  stalled one is open; and removing it once the stalled client has gone blocks toxiproxy's API
  about 5 s per chunk it held (its flush to the closed socket times out chunk by chunk).
* ``delay``: ``latency`` toxics from ``load``: upstream-bound for ``on_request`` (the request
  reaches upstream late), downstream for ``on_response_headers`` (every downstream chunk is D
  late, so the whole response shifts by D).
* ``drip``: a ``slicer`` that waits D after each chunk it forwards; ``split``: a ``slicer`` whose
  slices are a ``pieces``-th of the first body chunk, ``gap`` apart. From the fault's point on.
* ``refuse``: the proxy is disabled at ``load``: the listener is closed, connecting gets
  ECONNREFUSED, open connections are closed.
* ``status``, ``corrupt``, ``end_clean`` (a clean early end of a chunked body needs the
  terminator), and matching on method/path/rpc/occurrence are rejected (catalog).

Per proxy, not per connection. Toxics act on every connection of the link, so drip, split and
delay toxics pace every response on it. Cuts are exact per connection
(:mod:`~streamproof.faults.engines.toxiproxy.cuts` says how).

Records (``events``) mean what they mean inline (:mod:`streamproof.faults.records`): they come from
the recorder, and since a cut lets through exactly the bytes written before it, an event is
recorded only if the client got it. The ``end`` of a cut says ``by: proxy`` and how the
connection really ended (``fin`` on a connection toxiproxy had not armed for a reset; the
``fault`` record gives the cut's byte offset on the connection). A refused link has no
connection to record: a ``fault`` record (connection -1) says it was refused. Times are when
the recorder wrote; latency toxics deliver later.

``load`` is synchronous (the :class:`~streamproof.faults.engines.link.FaultLink` contract) but what
it sets must be in place before the next client connects (the armed reset, a disabled proxy,
an upstream-bound latency), so it calls the API blocking, a few calls of about 1 ms on loopback;
everything during a scenario is asynchronous.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final, Literal, Protocol

import yarl

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.catalog import engine_support
from streamproof.faults.engines.inline_exchange import _Exchange
from streamproof.faults.engines.toxiproxy.cuts import Cuts
from streamproof.faults.engines.toxiproxy.recorder import Recorder, Wire
from streamproof.faults.engines.toxiproxy.server import ToxiproxyAPI, ToxiproxyError
from streamproof.faults.engines.toxiproxy.toxics import (
    ARM,
    CUT,
    DRIP,
    NO_LIMIT,
    SPLIT,
    WHOLE,
    Toxic,
    static_toxics,
)
from streamproof.faults.plan import Fault
from streamproof.faults.records import EndHow, FaultRef, LinkEvent
from streamproof.faults.shaper import Fired

__all__ = ["ToxiproxyLink"]

_log = logging.getLogger(__name__)

_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost"})


_Call = tuple[str, str, dict[str, Any] | None, Callable[[], None]]
"""An API call (method, path, body) and what it changes in the link's mirror of the proxy."""


class LinkHost(Protocol):
    """What a link needs of its engine (:class:`~.engine.ToxiproxyEngine`): the API, a fresh
    proxy name, and its log lines while it is registered."""

    @property
    def api(self) -> ToxiproxyAPI: ...

    def proxy_name(self, link: str) -> str: ...

    def register(self, link: ToxiproxyLink) -> None: ...

    def unregister(self, link: ToxiproxyLink) -> None: ...


class ToxiproxyLink:
    """One link through toxiproxy (see the module docstring); a
    :class:`~streamproof.faults.engines.link.FaultLink`.

    Example usage (``engine`` a started :class:`ToxiproxyEngine`)::

        link = engine.link("a2a", "http://127.0.0.1:9000", time_scale=0.1)
        url = await link.start()
        link.load(parse_plan([{"when": {"after_event": 3}, "do": "rst"}]))
        link.set_epoch(time.monotonic())
        ...  # the client talks to ``url``
        await link.wait_quiet(5)
        records = link.events
        await link.close()
    """

    def __init__(
        self, engine: LinkHost, link: str, upstream: str, *, time_scale: TimeScale
    ) -> None:
        self.link = link
        self.proxy = engine.proxy_name(link)
        """The proxy's name on the toxiproxy server."""
        self._engine = engine
        self._recorder = Recorder(link, upstream, time_scale=time_scale, owner=self)
        self._scale = time_scale
        self._base_url: str | None = None
        self._listen: tuple[str, int] | None = None
        self._enabled = True
        self._toxics: dict[str, Toxic] = {}
        """What the proxy has besides the cut toxic, as last set."""
        self._want_enabled = True
        self._want_static: dict[str, Toxic] = {}
        self._refused: tuple[int, float] | None = None
        self._cuts = Cuts(link, self.proxy, self._recorder, lambda: engine.api)
        self._ops = asyncio.Lock()
        self._open = asyncio.Event()
        self._open.set()
        self._split: tuple[int, float] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._epoch: float | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Start the recorder and create the toxiproxy proxy on ``127.0.0.1:port`` (0: a free
        one); the base URL clients use."""
        if host not in _LOOPBACK:
            raise ValueError(f"the toxiproxy engine listens on 127.0.0.1 only, not {host!r}")
        if self._base_url is not None:
            raise RuntimeError(f"link {self.link!r}: already running")
        api = self._engine.api
        recorder = yarl.URL(await self._recorder.start())
        created = False
        try:
            answer = await api.call(
                "POST",
                "/proxies",
                {
                    "name": self.proxy,
                    "listen": f"127.0.0.1:{port}",
                    "upstream": f"127.0.0.1:{recorder.port}",
                    "enabled": True,
                },
            )
            created = True
            cut = Toxic("limit_data", "downstream", {"bytes": NO_LIMIT})
            await api.call("POST", f"/proxies/{self.proxy}/toxics", cut.body(CUT))
            for method, path, body, applied in self._calls():
                await api.call(method, path, body)
                applied()
        except BaseException:
            if created:
                with contextlib.suppress(ToxiproxyError):
                    await api.call("DELETE", f"/proxies/{self.proxy}")
            await self._recorder.close()
            raise
        listen_host, _, listen_port = str(answer["listen"]).rpartition(":")
        self._listen = (listen_host, int(listen_port))
        self._cuts.listen = self._listen
        self._engine.register(self)
        self._base_url = f"http://127.0.0.1:{self._listen[1]}"
        return self._base_url

    async def close(self) -> None:
        """Stop the recorder (what is in progress ends ``by: proxy``) and delete the proxy."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        base, self._base_url = self._base_url, None
        await self._recorder.close()
        if base is not None:
            self._engine.unregister(self)
            with contextlib.suppress(ToxiproxyError, RuntimeError):  # RuntimeError: engine closed
                await self._engine.api.call("DELETE", f"/proxies/{self.proxy}")
        self._open.set()

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError(f"link {self.link!r}: the proxy is not running; call start()")
        return self._base_url

    @property
    def armed(self) -> bool:
        """Whether a connection starting now will end with an RST when toxiproxy closes it."""
        return ARM in self._toxics

    # --- per scenario --------------------------------------------------------------------------

    def load(self, faults: Sequence[Fault]) -> None:
        """A new plan (clears the records); toxiproxy is set for it before this returns."""
        problems = engine_support("toxiproxy").rejections(faults, f"links.{self.link}")
        if problems:
            raise ValueError("; ".join(problems))
        self._recorder.load(faults)
        self._split = None
        self._want_enabled = not any(f.action == "refuse" for f in faults)
        self._want_static = static_toxics(faults, self._scale)
        refuse = next((i for i, f in enumerate(faults) if f.action == "refuse"), None)
        self._refused = None if refuse is None else (refuse, time.monotonic())
        if self._base_url is None:
            return  # start() sets the proxy up
        api = self._engine.api
        for method, path, body, applied in self._calls():
            api.call_blocking(method, path, body)
            applied()
        self._close_mismatched_idle(faults)

    def _calls(self) -> list[_Call]:
        """What to change on the proxy for the wanted plan: remove what a scenario left
        (drip, split, a limit not put back), set the plan's static toxics, enable or
        disable the proxy."""
        calls: list[_Call] = []
        base = f"/proxies/{self.proxy}"

        def forget(name: str) -> Callable[[], None]:
            def applied() -> None:
                self._toxics.pop(name, None)

            return applied

        def remember(name: str, toxic: Toxic) -> Callable[[], None]:
            return lambda: self._toxics.__setitem__(name, toxic)

        if self._cuts.limit != NO_LIMIT:
            calls.append(
                (
                    "PATCH",
                    f"{base}/toxics/{CUT}",
                    {"attributes": {"bytes": NO_LIMIT}},
                    lambda: setattr(self._cuts, "limit", NO_LIMIT),
                )
            )
        for name, present in self._toxics.items():
            if self._want_static.get(name) != present:
                calls.append(("DELETE", f"{base}/toxics/{name}", None, forget(name)))
        for name, toxic in self._want_static.items():
            if self._toxics.get(name) != toxic:
                calls.append(("POST", f"{base}/toxics", toxic.body(name), remember(name, toxic)))
        if self._want_enabled != self._enabled:
            enabled = self._want_enabled
            calls.append(
                ("POST", base, {"enabled": enabled}, lambda: setattr(self, "_enabled", enabled))
            )
        return calls

    def _close_mismatched_idle(self, faults: Sequence[Fault]) -> None:
        """Close idle keep-alive connections whose reset setting (fixed by toxiproxy when they
        started) is wrong for this plan's fin or rst, so the client's next request opens a new
        one."""
        actions = {f.action for f in faults}
        if "rst" in actions:
            wrong = [w for w in self._recorder.wires.values() if not w.armed]
        elif "fin" in actions:
            wrong = [w for w in self._recorder.wires.values() if w.armed]
        else:
            return
        for wire in wrong:
            if not self._recorder.busy(wire):
                wire.close()

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._recorder.faults

    def set_epoch(self, t0: float) -> None:
        self._recorder.set_epoch(t0)
        self._epoch = t0

    @property
    def events(self) -> list[LinkEvent]:
        """Everything recorded since ``load``, in order (see the module docstring)."""
        events = self._recorder.events
        if self._refused is not None:
            index, at = self._refused
            epoch = at if self._epoch is None else self._epoch
            refused = LinkEvent(
                t=round(max(0.0, at - epoch), 6),
                link=self.link,
                connection=-1,
                kind="fault",
                detail=f"{self.faults[index].describe()} (toxiproxy: the proxy is disabled, "
                "every connection is refused)",
                fault=FaultRef(index=index, action="refuse"),
            )
            events.insert(0, refused)
        return events

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int:
        return self._recorder.requests_seen(method, path, rpc)

    @property
    def open_connections(self) -> int:
        return self._recorder.open_connections

    @property
    def in_flight(self) -> int:
        return self._recorder.in_flight

    async def wait_quiet(self, timeout: float) -> bool:
        return await self._recorder.wait_quiet(timeout)

    def on_log(self, entry: dict[str, Any]) -> None:
        """One of toxiproxy's log lines about this link's proxy."""
        self._cuts.on_log(entry)

    # --- what toxiproxy does during a scenario -------------------------------------------------

    async def _exclusive(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run ``work`` with every write on the link paused; it completes even if the
        exchange that asked for it is cancelled (toxiproxy closing the connection as asked
        makes aiohttp cancel that exchange's handler), so the link is never left paused or with
        a cut limit in place."""

        async def run() -> Any:
            async with self._ops:
                self._open.clear()
                try:
                    return await work
                finally:
                    self._open.set()

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return await asyncio.shield(task)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.warning("link %s: toxiproxy operation failed: %s", self.link, task.exception())

    async def cut(
        self, ex: _Exchange, how: Literal["fin", "rst"], detail: str, fault: FaultRef
    ) -> None:
        """Have toxiproxy close this exchange's connection after what was written so far."""
        wire = ex.transport
        if not isinstance(wire, Wire) or wire.closed.is_set():
            self._recorder.record_end(ex, how, detail, fault)
            return
        ended: EndHow = "rst" if wire.armed else "fin"
        if ended != how:
            detail += (
                "; a FIN: toxiproxy had no reset armed when this connection started"
                if how == "rst"
                else "; an RST: this connection started while toxiproxy had a reset armed"
            )
        await self._exclusive(self._cuts.cut_now(ex, wire, ended, detail, fault))

    async def fired(self, ex: _Exchange, op: Fired) -> None:
        """A fault fired mid-response: record it, and carry out a delegated action."""
        fault, note = op.fault, op.note
        wire = ex.transport
        if fault.action in ("fin", "rst") and isinstance(wire, Wire):
            note = _join(note, f"toxiproxy cuts at byte {wire.written} of the connection")
        elif fault.action == "drip":
            assert fault.do.drip is not None
            micros = round(self._scale(fault.do.drip) * 1e6)
            slicer = Toxic("slicer", "downstream", {"average_size": WHOLE, "delay": micros})
            await self._exclusive(self._ensure(DRIP, slicer))
            note = _join(note, "toxiproxy waits after each chunk it forwards (slicer toxic)")
        elif fault.action == "split":
            assert fault.do.split is not None
            self._split = (fault.do.split.pieces, self._scale(fault.do.split.gap))
            note = _join(note, "toxiproxy slices the chunks from the next one (slicer toxic)")
        self._recorder.record_fault(ex, op.index, fault, note)

    async def _ensure(self, name: str, toxic: Toxic) -> None:
        """The proxy has toxic ``name`` as ``toxic`` (added, or replaced)."""
        base = f"/proxies/{self.proxy}/toxics"
        present = self._toxics.get(name)
        if present == toxic:
            return
        if present is not None:
            await self._engine.api.call("DELETE", f"{base}/{name}")
            self._toxics.pop(name, None)
        await self._engine.api.call("POST", base, toxic.body(name))
        self._toxics[name] = toxic

    async def before_write(self, data: bytes | None) -> None:
        if not self._open.is_set():
            await self._open.wait()
        if self._split is not None and data:
            pieces, gap = self._split
            self._split = None
            size = len(f"{len(data):x}\r\n") + len(data) + 2  # as one HTTP chunk on the wire
            slicer = Toxic(
                "slicer",
                "downstream",
                {
                    "average_size": max(1, math.ceil(size / pieces)),
                    "size_variation": 0,
                    "delay": round(gap * 1e6),
                },
            )
            await self._exclusive(self._ensure(SPLIT, slicer))


def _join(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more
