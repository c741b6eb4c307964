"""The fake A2A server's aiohttp shell: lifecycle, routing, the agent card, the ledger.

:class:`FakeA2AServer` serves two paths. ``GET /.well-known/agent-card.json`` is the agent
card, whose ``url`` is the address the client used to reach it (its ``Host`` header), so a
client that goes through a fault proxy keeps going through it; ``public_url`` overrides that.
``POST /`` is the JSON-RPC endpoint: the body is decoded and checked here (bad JSON, bad
request, unknown method, bad params, version, streaming off on the card), and those
request-level errors are always ``application/json``, HTTP 200; a valid call is answered by
its method family (:class:`_RpcCall`). On a script whose wire has 1.0, every other path goes
to the REST routes (:mod:`streamproof.fakes.a2a.rest`). Nothing a client sends makes the fake
answer with a traceback: an unexpected failure is a -32603 (on REST, a 500) whose message names
the exception type only.
What a client sees, method by method, is in the package docstring (:mod:`streamproof.fakes.a2a`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Final, Literal

from aiohttp import web

from streamproof.core.durations import TimeScale
from streamproof.fakes.a2a.call import _POLL
from streamproof.fakes.a2a.clock import _TaskClock
from streamproof.fakes.a2a.dispatch import _RpcCall
from streamproof.fakes.a2a.ledger import A2ALedger, Ending
from streamproof.fakes.a2a.push.relay import PushRelay
from streamproof.fakes.a2a.push.sender import PushDeliveries
from streamproof.fakes.a2a.rest import answer_rest, serves_rest
from streamproof.fakes.a2a.script import A2AScript
from streamproof.fakes.a2a.state import _RequestState, _Run
from streamproof.fakes.serving import serve
from streamproof.protocol import a2a

__all__ = ["RPC_PATH", "FakeA2AServer"]

logger = logging.getLogger(__name__)

_EXCERPT: Final = 500
RPC_PATH: Final = "/"
"""The JSON-RPC endpoint (a2a-sdk's default ``rpc_url``)."""


class FakeA2AServer(_TaskClock):
    """The fake A2A agent. Not a test class (``__test__ = False``) despite its use in tests.

    Usage::

        fake = FakeA2AServer()
        base_url = await fake.start()          # the agent's base URL (card at /.well-known/...)
        fake.load(scenario_script, time_scale=0.1)
        ...                                    # run the client against base_url
        await fake.wait_quiet(5.0)
        ledger = fake.ledger
        await fake.close()
    """

    __test__ = False

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._base_url: str | None = None
        self._stopping = False
        self._run = _Run(None, TimeScale(1.0), None)
        self._drivers: set[asyncio.Task[None]] = set()
        self._relay = PushRelay()
        self._push = PushDeliveries(None, TimeScale(1.0), self._run.now, None, None)
        self._retired_push: set[asyncio.Task[None]] = set()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on ``host:port`` (port 0: any free port); returns the base URL."""
        if self._runner is not None:
            raise RuntimeError("the fake A2A server is already running")
        runner, self._base_url = await serve(self._handle, host, port)
        try:
            await self._relay.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._stopping = False
        self._runner = runner
        return self._base_url

    async def close(self) -> None:
        """Stop serving. Open streams are cut (recorded ``server_closed``), tasks stop."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._stopping = True
        self._retire(self._run)
        await self._push.close()
        if self._retired_push:
            await asyncio.gather(*self._retired_push, return_exceptions=True)
        await self._relay.close()
        await runner.cleanup()
        drivers = list(self._drivers)
        for driver in drivers:
            driver.cancel()
        if drivers:
            await asyncio.gather(*drivers, return_exceptions=True)
        self._base_url = None

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the fake A2A server is not running; await start() first")
        return self._base_url

    @property
    def push_relay_url(self) -> str:
        """Where the ``push`` link forwards deliveries (:mod:`streamproof.fakes.a2a.push.relay`)."""
        if self._relay.base_url is None:
            raise RuntimeError("the fake A2A server is not running; await start() first")
        return self._relay.base_url

    @property
    def card_url(self) -> str:
        return self.base_url + a2a.AGENT_CARD_PATH

    def load(
        self,
        script: A2AScript | None,
        *,
        time_scale: float | TimeScale = 1.0,
        public_url: str | None = None,
        keyed: Mapping[str, A2AScript] | None = None,
        binding: Literal["jsonrpc", "rest"] = "jsonrpc",
        push_via: str | None = None,
    ) -> None:
        """Set the script and forget everything else: tasks stop, open streams are cut, the
        ledger empties and the epoch becomes now. ``public_url`` is the JSON-RPC URL the card
        advertises (default: the address the client used to fetch the card). ``None`` unloads
        the script: as before the first load, the card answers 503 and every call -32603 "no
        scenario is loaded" (still recorded in the ledger).

        ``keyed`` (``--concurrency``: marker -> script) runs each new task, or direct reply,
        from the script of the one marker its message's text holds (``script`` still says how
        the server behaves); a new message that holds no marker or several is refused with
        -32603 and recorded ``rejected``. The agent is also served under ``/<marker>`` for
        each marker (its card advertises that path), so a call given that base URL names
        itself in every request's path.

        ``binding`` is the one the card advertises (``rest``: HTTP+JSON only, a 1.0 wire
        only); a script whose wire has 1.0 is served on both bindings whatever the card says
        (:mod:`streamproof.fakes.a2a.rest`).

        ``push_via`` is the base URL push deliveries are POSTed to (the ``push`` link in front
        of :attr:`push_relay_url`); default: the relay itself, no link."""
        if binding == "rest" and script is not None and script.server.wire == "0.3":
            raise ValueError("the REST binding is served on the 1.0 wire only (server.wire)")
        scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        self._retire(self._run)
        self._run = _Run(script, scale, public_url, keyed, binding)
        old = asyncio.ensure_future(self._push.close()) if self._runner is not None else None
        if old is not None:
            self._retired_push.add(old)
            old.add_done_callback(self._retired_push.discard)
        self._push = PushDeliveries(
            script.push if script is not None else None,
            scale,
            self._run.now,
            self._relay,
            push_via or self._relay.base_url,
        )

    def set_epoch(self, t0: float) -> None:
        """Record times relative to ``t0`` (a ``time.monotonic()`` value)."""
        self._run.epoch = t0

    @property
    def script(self) -> A2AScript | None:
        return self._run.script

    @property
    def ledger(self) -> A2ALedger:
        """Everything recorded since the last :meth:`load`, requests in progress included."""
        run = self._run
        return A2ALedger(
            requests=tuple(s.snapshot() for s in run.requests),
            tasks=tuple(run.task_records),
            messages=tuple(run.messages),
            gets=tuple(run.gets),
            resubscribes=tuple(run.resubscribes),
            cancels=tuple(run.cancels),
            task_events=tuple(run.task_events),
            webhooks=self._push.webhooks,
            deliveries=self._push.deliveries,
        )

    def task(self, task_id: str) -> a2a.Task | None:
        """The current snapshot of a task, as ``tasks/get`` would return it."""
        live = self._run.tasks.get(task_id)
        return live.task if live is not None else None

    @property
    def busy(self) -> bool:
        """Whether a request (an open stream included) is in progress."""
        return self._run.active > 0

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no request and no push delivery is in progress (True) or ``timeout``
        seconds pass (False). Tasks keep running on their clock either way."""
        deadline = time.monotonic() + timeout
        while self._run.active or self._push.busy:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(_POLL, remaining))
        return True

    def _retire(self, run: _Run) -> None:
        run.closed = True
        for live in run.tasks.values():
            if live.driver is not None:
                live.driver.cancel()
            for sub in live.subscribers:
                sub.wakeup.set()

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        run = self._run
        run.active += 1
        state = _RequestState(
            index=len(run.requests),
            t=run.now(),
            connection=run.connection_of(request),
            http_method=request.method,
            path=request.path,
            accept=request.headers.get("Accept"),
            a2a_version=request.headers.get(a2a.VERSION_HEADER),
            content_type=request.headers.get("Content-Type"),
        )
        run.requests.append(state)
        try:
            return await self._route(run, request, state)
        except asyncio.CancelledError:
            if state.ended == "open":
                state.ended = self._cut_reason(run)
            raise
        except Exception as exc:  # never a traceback on the wire
            logger.exception("fake A2A server: unexpected failure")
            if state.ended != "open" or state.response == "sse":
                if state.ended == "open":
                    state.ended = "server_closed"
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            error = a2a.rpc_error(
                a2a.INTERNAL_ERROR,
                f"Internal error ({type(exc).__name__})",
                id=state.rpc_id if isinstance(state.rpc_id, str | int) else None,
            )
            if state.binding == "rest":  # a REST call's error is a status, not an envelope
                state.error_code = error.code
                status, payload = a2a.encode_rest_error(error)
                return await self._send_json(
                    run,
                    request,
                    state,
                    payload,
                    status=status,
                    content_type=a2a.REST_ERROR_CONTENT_TYPE,
                )
            return await self._error_json(run, request, state, error, state.wire)
        finally:
            run.active -= 1
            if state.t_end is None:
                state.t_end = run.now()

    def _cut_reason(self, run: _Run) -> Ending:
        return "server_closed" if self._stopping or run.closed else "client_closed"

    async def _route(
        self, run: _Run, request: web.Request, state: _RequestState
    ) -> web.StreamResponse:
        path, prefix = request.path, run.prefix_of(request.path)
        if prefix is not None:
            path = path.removeprefix(prefix) or RPC_PATH  # keyed: the call's own base URL
        if path == a2a.AGENT_CARD_PATH and request.method in ("GET", "HEAD"):
            return await self._card(run, request, state, prefix or "")
        if path == RPC_PATH and request.method == "POST":
            state.binding = "jsonrpc"
            return await self._rpc(run, request, state)
        if serves_rest(run) and path not in (a2a.AGENT_CARD_PATH, RPC_PATH):
            return await answer_rest(self, run, request, state, path)
        status = 405 if path in (a2a.AGENT_CARD_PATH, RPC_PATH) else 404
        body = {"error": f"{request.method} {request.path} is not served by this agent"}
        return await self._send_json(run, request, state, body, status=status)

    async def _card(
        self, run: _Run, request: web.Request, state: _RequestState, prefix: str = ""
    ) -> web.StreamResponse:
        """The agent card; ``prefix`` (keyed: ``/<marker>``) goes into the URL it advertises,
        so the call that fetched it under its own base URL sends everything there."""
        if run.script is None:
            body = {"error": "no scenario is loaded"}
            return await self._send_json(run, request, state, body, status=503)
        server = run.script.server
        url = run.public_url or f"{request.scheme}://{request.host}{RPC_PATH}"
        if prefix:
            url = url.removesuffix(RPC_PATH) + prefix + RPC_PATH
        card = a2a.agent_card(
            url,
            server.wire,
            name=server.name,
            streaming=server.streaming,
            binding=run.binding,
            push_notifications=run.script.push is not None,
        )
        return await self._send_json(run, request, state, card)

    async def _rpc(
        self, run: _Run, request: web.Request, state: _RequestState
    ) -> web.StreamResponse:
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            error = a2a.rpc_error(a2a.INVALID_REQUEST, "Payload too large")
            return await self._error_json(run, request, state, error, None)
        try:
            value = a2a.loads(body)
        except ValueError as exc:
            state.body_excerpt = body[:_EXCERPT].decode("utf-8", errors="replace")
            error = a2a.rpc_error(a2a.PARSE_ERROR, f"Invalid JSON payload: {exc}")
            return await self._error_json(run, request, state, error, None)
        if isinstance(value, dict):
            method = value.get("method")
            state.rpc_method = method if isinstance(method, str) else None
            state.rpc_id = value.get("id")
            state.params = value.get("params")
            state.wire = a2a.version_of(state.rpc_method) if state.rpc_method else None
        else:
            state.body_excerpt = body[:_EXCERPT].decode("utf-8", errors="replace")
        if run.script is None:
            error = a2a.rpc_error(a2a.INTERNAL_ERROR, "no scenario is loaded")
            return await self._error_json(run, request, state, error, None)
        server = run.script.server
        # the A2A-Version header is checked once the method is known, before its params
        decoded = a2a.decode_served_request(value, server.wire, state.a2a_version)
        if isinstance(decoded, a2a.RpcError):
            served_grammar = state.wire if server.wire == "both" else server.wire
            return await self._error_json(run, request, state, decoded, served_grammar)
        version: a2a.WireVersion = decoded.version if server.wire == "both" else server.wire
        if decoded.streaming and not server.streaming:
            error = a2a.rpc_error(
                a2a.UNSUPPORTED_OPERATION,
                "Streaming is not supported by the agent",
                id=decoded.id,
                method=decoded.method,
            )
            return await self._error_json(run, request, state, error, version)
        call = _RpcCall(self, run, request, state, decoded, version, server)
        return await call.answer()

    # --- answers -------------------------------------------------------------------------------

    async def _send_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        payload: Any,
        *,
        status: int = 200,
        content_type: str = a2a.JSON_CONTENT_TYPE,
    ) -> web.StreamResponse:
        """Write a whole JSON body (``payload`` as JSON; a ``str`` is written as it is, with
        its ``content_type``); recorded ``completed`` once it is out."""
        state.status = status
        state.response = "json"
        text = payload if isinstance(payload, str) else a2a.dumps(payload)
        response = web.Response(
            status=status, body=text.encode("utf-8"), headers={"Content-Type": content_type}
        )
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            state.ended = self._cut_reason(run)
            return response
        state.ended = "completed"
        state.t_end = run.now()
        return response

    async def _error_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        error: a2a.RpcError,
        version: a2a.WireVersion | None,
    ) -> web.StreamResponse:
        state.error_code = error.code
        return await self._send_json(run, request, state, a2a.encode_error(error, version))
