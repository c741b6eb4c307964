"""The :class:`FakeModel`: its lifecycle, its script and records, and the routing of a call to
the turn that answers it (see :mod:`streamproof.fakes.model`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web

from streamproof.core.durations import TimeScale
from streamproof.fakes.model.answering import POLL, Answering, answer_response
from streamproof.fakes.model.call_state import CallState
from streamproof.fakes.records import ModelCall, TlsRefusal, is_retry
from streamproof.fakes.serving import serve
from streamproof.fakes.tls import SelfSignedCert
from streamproof.fakes.tls_listener import TlsListener
from streamproof.protocol import gemini
from streamproof.protocol.gemini import ModelTurn

__all__ = ["FakeModel"]


class FakeModel(Answering):
    """The fake Gemini endpoint. Not a test class (``__test__ = False``) despite its use in tests.

    Usage::

        fake = FakeModel()
        base_url = await fake.start()
        fake.load(scenario.model, time_scale=2.0)
        ...  # point ADK at base_url: Gemini(model=..., base_url=base_url)
        await fake.wait_idle(5.0)
        records = fake.calls
        await fake.close()
    """

    __test__ = False

    def __init__(self, *, line_end: str = "\r\n") -> None:
        if line_end not in ("\r\n", "\n", "\r"):
            raise ValueError(f"line_end must be an SSE line end (CRLF, LF or CR), not {line_end!r}")
        self._line_end = line_end
        self._runner: web.AppRunner | None = None
        self._base_url: str | None = None
        self._tls: SelfSignedCert | None = None
        self._tls_url: str | None = None
        self._tls_listener: TlsListener | None = None
        self._refusals: list[TlsRefusal] = []
        self._stopping = False
        self._active = 0
        self._turns: tuple[ModelTurn, ...] = ()
        self._scale = TimeScale(1.0)
        self._runaway_cap = 200
        self._cursor = 0
        self._uses = 0
        self._picked = 0
        self._states: list[CallState] = []
        self._epoch = time.monotonic()
        self._keyed: dict[str, FakeModel] = {}
        """In keyed mode (:meth:`load_keyed`): per key, a script of its own (an unstarted
        FakeModel used only for its script cursor and records)."""

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on ``host:port`` (port 0: any free port); returns the base URL."""
        if self._runner is not None:
            raise RuntimeError("the fake model is already running")
        runner, self._base_url = await serve(self._handle, host, port)
        self._stopping = False
        self._runner = runner
        return self._base_url

    async def serve_tls(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve the same fake over HTTPS too, on ``host:port`` (port 0: any free port), with a
        self-signed certificate made now (:class:`~streamproof.fakes.tls.SelfSignedCert`, removed
        on :meth:`close`); returns the ``https://`` base URL. Calls through either URL share one
        script and one list of records; the handshakes clients gave up are in
        :attr:`tls_refusals`. Once is enough: a second call returns the same URL."""
        if self._runner is None:
            raise RuntimeError("the fake model is not running; await start() first")
        if self._tls_url is not None:
            return self._tls_url
        assert self._runner.server is not None
        cert = SelfSignedCert()
        listener = TlsListener(self._runner.server, cert.server_context(), self._refused)
        try:
            bound = await listener.start(host, port)
        except BaseException:
            cert.close()
            raise
        self._tls, self._tls_listener = cert, listener
        shown = f"[{host}]" if ":" in host else host
        self._tls_url = f"https://{shown}:{bound}"
        return self._tls_url

    def _refused(self, peer: str, reason: str) -> None:
        t = round(time.monotonic() - self._epoch, 4)
        self._refusals.append(TlsRefusal(t=t, peer=peer, reason=reason))

    @property
    def tls_refusals(self) -> tuple[TlsRefusal, ...]:
        """The TLS handshakes clients gave up at the HTTPS port since the last load: a client
        that does not trust the certificate, which no one but the corporate proxy does."""
        return tuple(self._refusals)

    @property
    def tls_url(self) -> str | None:
        """The ``https://`` base URL once :meth:`serve_tls` ran, else ``None``."""
        return self._tls_url

    async def close(self) -> None:
        """Stop serving; streams in progress end at once (not recorded as closed early)."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._stopping = True
        listener, self._tls_listener = self._tls_listener, None
        if listener is not None:
            await listener.close()
        await runner.cleanup()
        self._base_url = None
        self._tls_url = None
        if self._tls is not None:
            self._tls.close()
            self._tls = None

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the fake model is not running; await start() first")
        return self._base_url

    # --- script and records --------------------------------------------------------------------

    def load(
        self,
        turns: Sequence[ModelTurn],
        *,
        time_scale: float | TimeScale = 1.0,
        runaway_cap: int = 200,
    ) -> None:
        """Set the script and forget every record; the epoch becomes now."""
        if runaway_cap < 1:
            raise ValueError("runaway_cap must be at least 1")
        self._turns = tuple(turns)
        self._scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        self._runaway_cap = runaway_cap
        self._cursor = 0
        self._uses = 0
        self._picked = 0
        self._states = []
        self._refusals = []
        self._epoch = time.monotonic()
        self._keyed = {}

    def load_keyed(
        self,
        scripts: Mapping[str, Sequence[ModelTurn]],
        *,
        time_scale: float | TimeScale = 1.0,
        runaway_cap: int = 200,
    ) -> None:
        """Keyed mode, for several conversations served at once: each key has its own script,
        cursor and records. A call belongs to the key whose text its request body holds (a
        key is put into each conversation's user message, and a model request carries the
        conversation so far); it is answered from that key's script and recorded under it
        (:meth:`calls_for`). A call whose body holds no key, or several, is answered as a call
        past the script (HTTP 500) and recorded in :attr:`calls`: a conversation mixed with
        another's. Keys must not contain one another."""
        keys = list(scripts)
        if not keys or any(not k for k in keys):
            raise ValueError("load_keyed needs at least one non-empty key")
        for a in keys:
            for b in keys:
                if a != b and a in b:
                    raise ValueError(f"key {a!r} is part of key {b!r}: calls would be ambiguous")
        self.load((), time_scale=time_scale, runaway_cap=runaway_cap)
        for key, turns in scripts.items():
            child = FakeModel(line_end=self._line_end)
            child.load(turns, time_scale=time_scale, runaway_cap=runaway_cap)
            child._epoch = self._epoch
            self._keyed[key] = child

    def calls_for(self, key: str) -> list[ModelCall]:
        """In keyed mode, every call of ``key``'s conversation since :meth:`load_keyed`."""
        return self._keyed[key].calls

    def _owner(self, raw: bytes) -> FakeModel:
        """The script that answers a call with body ``raw``: in keyed mode the one key's (self
        when no key or several are found), else self."""
        if not self._keyed:
            return self
        text = raw.decode("utf-8", "replace")
        found = [child for key, child in self._keyed.items() if key in text]
        return found[0] if len(found) == 1 else self

    def extend(self, turns: Sequence[ModelTurn]) -> None:
        """Add ``turns`` to the end of the script, keeping the records and the cursor: calls
        already answered stay answered, and a call past the old end now gets the first new
        turn (what a test that scripts its turns one at a time needs)."""
        self._turns = (*self._turns, *turns)

    def set_epoch(self, t0: float) -> None:
        """Record call times relative to ``t0`` (a ``time.monotonic()`` value)."""
        self._epoch = t0
        for child in self._keyed.values():
            child._epoch = t0

    @property
    def calls(self) -> list[ModelCall]:
        """Every call since the last :meth:`load`, those still streaming included (in keyed mode
        only the calls that matched no key or several; :meth:`calls_for` has each key's)."""
        return [s.snapshot() for s in self._states]

    @property
    def call_count(self) -> int:
        """How many calls came since the last load, every key's in keyed mode included."""
        return len(self._states) + sum(len(c._states) for c in self._keyed.values())

    @property
    def busy(self) -> bool:
        """Whether a model response is in progress."""
        return self._active > 0

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until no response is in progress (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        while self._active:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(POLL, remaining))
        return True

    def _pick(self, state: CallState) -> tuple[int | None, ModelTurn | None]:
        """The script index and turn answering ``state``'s call (index None: off-script). A
        retry of a call answered by an error turn that repeats for retries gets that turn again
        and uses up nothing."""
        self._picked += 1
        if self._picked > self._runaway_cap:
            return None, gemini.runaway_turn(self._runaway_cap)
        if state.retry_of is not None:
            repeated = self._states[state.retry_of].turn
            if repeated is not None and self._turns[repeated].repeats_for_retries:
                return repeated, self._turns[repeated]
        if self._cursor >= len(self._turns):
            return None, None
        index = self._cursor
        turn = self._turns[index]
        if turn.times != "forever":
            self._uses += 1
            if self._uses >= turn.times:
                self._cursor += 1
                self._uses = 0
        return index, turn

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        route = gemini.parse_route(request.path)
        if route is None or request.method != "POST":
            return answer_response(gemini.not_found(f"{request.method} {request.path}"))
        self._active += 1
        state: CallState | None = None
        owner = self  # keyed mode: the script of the call's key (its epoch is this one's)
        try:
            start = time.monotonic()
            raw = await request.read()
            try:
                parsed: Any = json.loads(raw)
            except ValueError:
                parsed = None
            body = parsed if isinstance(parsed, dict) else {}
            owner = self._owner(raw)
            state = CallState(
                index=len(owner._states),
                t=start - owner._epoch,
                path=request.path,
                model=route.model,
                streaming=route.method == "streamGenerateContent",
                agent=gemini.agent_name(body),
                body=body,
            )
            previous = owner._states[-1] if owner._states else None
            if previous is not None and is_retry(state.snapshot(), previous.snapshot()):
                state.retry_of = previous.index
            owner._states.append(state)
            return await self._answer(request, state, route, parsed, owner)
        except asyncio.CancelledError:
            if state is not None and not self._stopping and not state.completed:
                state.closed_early = True
            raise
        finally:
            if state is not None:
                state.t_end = time.monotonic() - owner._epoch
            self._active -= 1

    async def _answer(
        self,
        request: web.Request,
        state: CallState,
        route: gemini.Route,
        parsed: Any,
        owner: FakeModel,
    ) -> web.StreamResponse:
        """Answer from ``owner``'s script (self, or in keyed mode the call's key's)."""
        if not isinstance(parsed, dict):
            return await self._send(
                request, state, gemini.invalid_argument("streamproof: the body is not JSON")
            )
        if state.streaming and request.query.get("alt") != "sse":
            return await self._send(
                request,
                state,
                gemini.invalid_argument("streamproof: the fake streams only with alt=sse"),
            )
        index, turn = owner._pick(state)
        state.turn = index
        if turn is None:
            return await self._send(
                request, state, gemini.error_answer(gemini.unscripted_error(owner._picked))
            )
        scale = owner._scale
        if turn.http_error is not None or not state.streaming:
            answer = gemini.generate_content_answer(
                turn,
                model_version=route.model,
                response_id=gemini.new_response_id(),
                prompt_tokens=gemini.prompt_tokens(state.body),
            )
            state.status = answer.status
            if not await self._pause(request, state, scale(gemini.total_delay(turn))):
                return self._abandon(request, web.Response(status=499))
            return await self._send(request, state, answer)
        return await self._stream(request, state, route, turn, scale)
