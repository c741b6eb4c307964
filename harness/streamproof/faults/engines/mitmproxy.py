"""The mitmproxy engine: the fault plan carried out by mitmproxy 12.3.1, in the harness's process.

Why a real mitmproxy (docs/explanation/wire-facts/engines.md §2): it is the HTTP proxy teams put
between their
clients and servers, and what it does to a stream (chunk framing, buffering, how it ends a
body) is what they meet in the field. It runs in-process, on the harness's event loop: a
``DumpMaster`` without its terminal log and its dumper, its configuration folder (where it
writes its CA) a temporary folder removed on close, never ``~/.mitmproxy``.

One master per process, one listener per link. mitmproxy keeps its master in a process-global
context (``mitmproxy.ctx.master``, set by every master constructed), and every listener hands
its connections to *that* master: two masters in one process would route each other's
connections through the wrong addons. So every :class:`MitmproxyEngine` of the process shares
one master (made by the first, shut down by the last), and each link is one reverse-proxy mode
of it (``reverse:UPSTREAM@127.0.0.1:PORT``, its own listener) with one
:class:`~streamproof.faults.engines.mitmproxy_addon.PlanAddon` that acts on that mode's flows only.
That is also cheap: measured here, starting the engine (the master, and its CA made in the
fresh folder) takes 0.12-0.18 s, a link's listener ~3 ms, closing a link or the engine ~3 ms;
importing mitmproxy, once per process, 0.5-0.9 s.

The master is driven, not run: ``Master.run()`` would, for as long as it runs, swap the event
loop's task factory for an eager one and its exception handler for mitmproxy's, for the whole
harness. The engine does what ``run()`` does that matters here: it gives the addons their
configuration folder, brings the listeners up and down through the proxyserver addon
(``setup_servers`` after setting ``mode``), waits for mitmproxy's connection handlers to end,
and ends with the ``done`` hook. Options: lazy upstream connections (an answer given on_request
never contacts upstream, as with the inline engine), and no idle timeout of mitmproxy's own
(``tcp_timeout``): a link closes a connection only when its plan says so.

What each plan item becomes is in :mod:`~streamproof.faults.engines.mitmproxy_addon` and declared in
:mod:`~streamproof.faults.engines.catalog`; the one use of mitmproxy's internals (ending a client
socket with a FIN or a reset mid-body) is in :mod:`~streamproof.faults.engines.mitmproxy_wire`.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.catalog import engine_support, intercepted_tls_problems
from streamproof.faults.engines.mitmproxy_addon import PlanAddon
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent, count_requests

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # see mitmproxy_addon's imports
    from mitmproxy import options
    from mitmproxy.addons.proxyserver import Proxyserver
    from mitmproxy.tools.dump import DumpMaster

__all__ = ["CA_CERT_FILE", "MitmproxyEngine", "MitmproxyLink"]

_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})
_NO_IDLE_TIMEOUT: Final = 7 * 24 * 3600
"""mitmproxy's ``tcp_timeout`` (default 600 s) closes a connection quiet that long; the plan
decides when a link closes one, so the engine sets it out of reach."""
_LISTEN_ATTEMPTS: Final = 5
CA_CERT_FILE: Final = "mitmproxy-ca-cert.pem"
"""The CA certificate (PEM, no key) mitmproxy writes into its configuration folder."""


class _SharedMaster:
    """The process's one mitmproxy master, its configuration folder and its listeners."""

    def __init__(self, master: DumpMaster, confdir: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.master = master
        self.confdir = confdir
        self.loop = loop
        self.users = 0
        self._modes: list[str] = []
        self._lock = asyncio.Lock()

    @classmethod
    def make(cls) -> _SharedMaster:
        confdir = Path(tempfile.mkdtemp(prefix="streamproof-mitmproxy-"))
        try:
            opts = options.Options(listen_host="127.0.0.1", mode=[], confdir=str(confdir))
            master = DumpMaster(opts, with_termlog=False, with_dumper=False)
            # Options that belong to addons exist once the addons are loaded. confdir again:
            # the addons that keep files there (the CA) read it on configure only, and the
            # first configure does not name it (mitmproxy's run() makes up for it in running).
            master.options.update(
                confdir=str(confdir),
                connection_strategy="lazy",
                tcp_timeout=_NO_IDLE_TIMEOUT,
                # Forward links intercept TLS towards the fakes, whose certificates are made at
                # run time and self-signed; reverse links' upstreams are the harness's own too.
                ssl_insecure=True,
                # HTTP/1.1 towards clients, one request at a time per connection, as through
                # the inline engine: a client that negotiates HTTP/2 through TLS interception
                # (OkHttp offers it by ALPN) would cancel a request with RST_STREAM on a
                # connection that stays open, which a hook holding the flow never sees, so
                # the link could not record that request's end.
                http2=False,
            )
            # ErrorCheck hooks the root logger to stop a command-line run that logged an error
            # at start-up; the engine reports its own errors, so it is unhooked at once.
            errorcheck = master.addons.get("errorcheck")
            if errorcheck is not None:
                errorcheck.finish()
        except BaseException:
            shutil.rmtree(confdir, ignore_errors=True)
            raise
        return cls(master, confdir, asyncio.get_running_loop())

    async def listen(self, mode: str) -> tuple[str, int]:
        """Add a reverse-proxy mode (a listener); the address it listens on."""
        async with self._lock:
            self._modes.append(mode)
            try:
                await self._apply()
                instance = self._proxyserver().servers[mode]
                if not instance.is_running:
                    raise OSError(f"mitmproxy could not listen: {instance.last_exception}")
                host, port, *_ = instance.listen_addrs[0]
                return str(host), int(port)
            except BaseException:
                self._modes.remove(mode)
                await self._apply()
                raise

    async def unlisten(self, mode: str) -> None:
        async with self._lock:
            if mode in self._modes:
                self._modes.remove(mode)
                await self._apply()

    async def shutdown(self, timeout: float = 2.0) -> None:
        async with self._lock:
            self._modes.clear()
            await self._apply()
        # Every connection handler of mitmproxy's ends (the links closed their clients); wait
        # for the last so that no task of it outlives the engine.
        for _ in range(int(timeout / 0.01)):
            if not self._active_connections():
                break
            await asyncio.sleep(0.01)
        await self.master.done()  # the addons' done hooks; unhooks mitmproxy's log handler
        shutil.rmtree(self.confdir, ignore_errors=True)

    async def _apply(self) -> None:
        self.master.options.update(mode=list(self._modes))
        await self._proxyserver().setup_servers()

    def _active_connections(self) -> int:
        return int(self.master.commands.call("proxyserver.active_connections"))

    def _proxyserver(self) -> Proxyserver:
        proxyserver = self.master.addons.get("proxyserver")
        assert isinstance(proxyserver, Proxyserver)
        return proxyserver


_shared: _SharedMaster | None = None


def _acquire() -> _SharedMaster:
    global _shared
    loop = asyncio.get_running_loop()
    if _shared is None:
        _shared = _SharedMaster.make()
    elif _shared.loop is not loop:
        raise RuntimeError(
            "the mitmproxy engine is already running on another event loop; mitmproxy allows "
            "one master per process, so close that engine first"
        )
    _shared.users += 1
    return _shared


async def _release(shared: _SharedMaster) -> None:
    global _shared
    shared.users -= 1
    if shared.users > 0:
        return
    if _shared is shared:
        _shared = None
    await shared.shutdown()


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class MitmproxyLink:
    """One link carried out by mitmproxy: a reverse-proxy listener of the shared master and the
    addon that executes the link's plan. Satisfies
    :class:`~streamproof.faults.engines.link.FaultLink`.

    ``upstream`` is a base URL; a request's path and query are appended to it unchanged
    (``http://127.0.0.1:9000/v1`` + ``/chat/s1?x=1``).
    """

    __test__ = False

    def __init__(
        self,
        engine: MitmproxyEngine,
        link: str,
        upstream: str | None,
        *,
        time_scale: float | TimeScale = 1.0,
        buffer_sse: bool = False,
    ) -> None:
        if upstream is None:
            # A forward proxy: clients name the server in each request (or CONNECT).
            self._origin: str | None = None
            self.upstream = ""
            parts = urlsplit("")
        else:
            parts = urlsplit(upstream)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"upstream must be an http(s) URL, not {upstream!r}")
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
            self._origin = f"{parts.scheme}://{host}:{port}"
            self.upstream = upstream.rstrip("/")
        self._engine = engine
        self.link = link
        self.buffer_sse = buffer_sse
        """Hold each SSE response until upstream ends it, then send it whole (what a buffering
        corporate proxy does); only on a link with an empty plan."""
        self.time_scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        self._base_path = parts.path.rstrip("/")
        self._addon: PlanAddon | None = None
        self._mode: str | None = None
        self._base_url: str | None = None
        self._faults: tuple[Fault, ...] = ()
        self._epoch = time.monotonic()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (loopback only; port 0: any free port); the base URL."""
        if host not in _LOOPBACK:
            raise ValueError(f"the fault proxy binds loopback only, not {host!r}")
        if self._mode is not None:
            raise RuntimeError(f"link {self.link!r}: the proxy is already running")
        shared = self._engine._running()
        addon = PlanAddon(
            self.link,
            shared.master,
            base_path=self._base_path,
            time_scale=self.time_scale,
            buffer_sse=self.buffer_sse,
        )
        addon.use_plan(self._faults)
        addon.set_epoch(self._epoch)
        shared.master.addons.add(addon)
        try:
            address = await self._listen(shared, addon, host, port)
        except BaseException:
            shared.master.addons.remove(addon)
            raise
        self._addon = addon
        self._engine._links.add(self)
        bound, bound_port = address
        shown = f"[{bound}]" if ":" in bound else bound
        self._base_url = f"http://{shown}:{bound_port}"
        return self._base_url

    async def _listen(
        self, shared: _SharedMaster, addon: PlanAddon, host: str, port: int
    ) -> tuple[str, int]:
        # mitmproxy refuses two modes on the same host:port, port 0 included, so a free port
        # is chosen here; another process may take it first, hence a few attempts.
        attempts = _LISTEN_ATTEMPTS if port == 0 else 1
        for attempt in range(attempts):
            listen_port = port or _free_port(host)
            shown = f"[{host}]" if ":" in host else host
            if self._origin is None:
                mode = f"regular@{shown}:{listen_port}"
            else:
                mode = f"reverse:{self._origin}@{shown}:{listen_port}"
            addon.spec = mode
            try:
                address = await shared.listen(mode)
            except OSError:
                addon.spec = None
                if attempt + 1 == attempts:
                    raise
                continue
            self._mode = mode
            return address
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self) -> None:
        """Stop listening and end everything in progress (recorded ``by: proxy``)."""
        mode, self._mode = self._mode, None
        addon = self._addon
        if mode is None or addon is None:
            return
        shared = self._engine._shared
        self._base_url = None
        if shared is not None:
            await shared.unlisten(mode)
        await addon.close_all()
        if shared is not None and shared.master.addons.get(addon.name) is addon:
            shared.master.addons.remove(addon)
        self._engine._links.discard(self)

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError(f"link {self.link!r}: the proxy is not running; call start()")
        return self._base_url

    # --- per scenario --------------------------------------------------------------------------

    def load(self, faults: Sequence[Fault]) -> None:
        """A new plan: clears the records, the occurrence counters and the request numbering.

        Raises ``ValueError`` naming every item of the plan mitmproxy cannot do (the runners
        judge a plan before; this keeps a link from running a plan it would only pretend to).
        """
        problems = engine_support("mitmproxy").rejections(faults, f"links.{self.link}")
        if self._origin is None:
            problems += intercepted_tls_problems(faults, f"links.{self.link}")
        if faults and self.buffer_sse:
            problems.append(
                f"links.{self.link}: a link that buffers SSE responses carries out no fault plan"
            )
        if problems:
            raise ValueError("; ".join(problems))
        self._faults = tuple(faults)
        if self._addon is not None:
            self._addon.use_plan(self._faults)

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._faults

    def set_epoch(self, t0: float) -> None:
        """Record times relative to ``t0``, a ``time.monotonic()`` value."""
        self._epoch = t0
        if self._addon is not None:
            self._addon.set_epoch(t0)

    @property
    def events(self) -> list[LinkEvent]:
        """Everything recorded since ``load``, in order."""
        return list(self._addon.records) if self._addon is not None else []

    @property
    def upstream_addresses(self) -> tuple[str, ...]:
        """The local address (``host:port``) of each connection the proxy opened upstream
        since ``load``."""
        return tuple(self._addon.upstream) if self._addon is not None else ()

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int:
        """How many requests reached the link, optionally only those matching (``path``: a
        glob)."""
        return count_requests(self.events, method, path, rpc)

    @property
    def open_connections(self) -> int:
        """Downstream TCP connections currently open (idle keep-alive ones included)."""
        return len(self._addon.clients) if self._addon is not None else 0

    @property
    def in_flight(self) -> int:
        """Requests being handled right now."""
        return len(self._addon.active) if self._addon is not None else 0

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no request is in progress; ``False`` if ``timeout`` seconds pass first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.in_flight:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True


class MitmproxyEngine:
    """The mitmproxy engine: the process's mitmproxy master while it is started; each link is a
    :class:`MitmproxyLink`."""

    name = "mitmproxy"

    def __init__(self) -> None:
        self._shared: _SharedMaster | None = None
        self._links: set[MitmproxyLink] = set()

    @property
    def confdir(self) -> Path | None:
        """mitmproxy's configuration folder (its CA) while the engine runs."""
        return self._shared.confdir if self._shared is not None else None

    @property
    def ca_cert(self) -> Path:
        """The PEM file of the CA with which a forward link intercepts TLS (what a client of the
        link must trust, e.g. through ``SSL_CERT_FILE``); made in the engine's configuration
        folder when the engine starts."""
        path = self._running().confdir / CA_CERT_FILE
        if not path.is_file():
            raise RuntimeError(f"mitmproxy made no CA certificate at {path}")
        return path

    async def start(self) -> None:
        if self._shared is None:
            self._shared = _acquire()

    def link(
        self, link: str, upstream: str, *, time_scale: float | TimeScale = 1.0
    ) -> MitmproxyLink:
        return MitmproxyLink(self, link, upstream, time_scale=time_scale)

    def forward_link(
        self, link: str, *, time_scale: float | TimeScale = 1.0, buffer_sse: bool = False
    ) -> MitmproxyLink:
        """A new link (not started) that is a forward proxy, as a corporate proxy is: clients
        reach it through ``HTTP_PROXY``/``HTTPS_PROXY``, its ``base_url`` is the proxy's URL,
        and it intercepts TLS with the engine's CA (:attr:`ca_cert`) without verifying the
        servers' certificates (mitmproxy's ``ssl_insecure``: the fakes' are self-signed).
        ``buffer_sse``: SSE responses are held until they end, then sent whole."""
        return MitmproxyLink(self, link, None, time_scale=time_scale, buffer_sse=buffer_sse)

    async def close(self) -> None:
        """Close every link still open, then let go of the master (shut down with the last
        engine of the process)."""
        for link in list(self._links):
            await link.close()
        shared, self._shared = self._shared, None
        if shared is not None:
            await _release(shared)

    def _running(self) -> _SharedMaster:
        if self._shared is None:
            raise RuntimeError("the mitmproxy engine is not started; call start() first")
        return self._shared
