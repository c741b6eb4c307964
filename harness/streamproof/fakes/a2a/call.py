"""One JSON-RPC call being answered: its errors, its plain results, and its SSE streams.

:class:`_Call` is what every method family builds on (:mod:`~streamproof.fakes.a2a.messages`,
:mod:`~streamproof.fakes.a2a.tasks`): errors as JSON or as a one-frame SSE stream per the script,
a JSON result, a stream that writes a task's events until the turn ends, and the waits in
between, which watch the client (a 20 ms poll of the transport) so a dropped connection is
recorded ``client_closed`` promptly even when nothing is being written. Every block written on
a stream is recorded as a :class:`~streamproof.fakes.a2a.ledger.SentFrame`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Final, Protocol

from aiohttp import web

from streamproof.fakes.a2a.ledger import Ending, FrameKind, SentFrame
from streamproof.fakes.a2a.push.sender import PushDeliveries
from streamproof.fakes.a2a.script import A2AScript, ServerBehaviour
from streamproof.fakes.a2a.state import (
    _Comment,
    _Event,
    _Item,
    _LiveTask,
    _ping_text,
    _RequestState,
    _Run,
    _Subscriber,
)
from streamproof.protocol import a2a, sse


class _Fake(Protocol):
    """What a call needs of the server that answers it (:class:`FakeA2AServer`); a protocol, so
    the call and the server do not import each other."""

    _stopping: bool
    _push: PushDeliveries

    def _cut_reason(self, run: _Run) -> Ending: ...

    def _cancel_task(self, run: _Run, live: _LiveTask) -> None: ...

    def _create_task(
        self,
        run: _Run,
        state: _RequestState,
        message: a2a.Message,
        sub: _Subscriber | None,
        script: A2AScript | None = None,
    ) -> _LiveTask: ...

    def _continue_task(
        self, run: _Run, live: _LiveTask, message: a2a.Message, sub: _Subscriber | None
    ) -> None: ...

    async def _send_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        payload: Any,
        *,
        status: int = 200,
        content_type: str = ...,
    ) -> web.StreamResponse: ...

    async def _error_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        error: a2a.RpcError,
        version: a2a.WireVersion | None,
    ) -> web.StreamResponse: ...


_POLL: Final = 0.02
"""Seconds between checks of a client's connection while the fake waits."""

_SSE_HEADERS: Final = {
    # what a2a-sdk servers (sse-starlette) send (§1.5)
    "Content-Type": a2a.SSE_CONTENT_TYPE,
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
}


class _Gone:
    """The client went away."""


class _Cut:
    """The fake is closing, or a new scenario was loaded."""


_GONE: Final = _Gone()
_CUT: Final = _Cut()


class _Call:
    """One decoded JSON-RPC call being answered."""

    def __init__(
        self,
        fake: _Fake,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        rpc: a2a.RpcRequest,
        version: a2a.WireVersion,
        server: ServerBehaviour,
    ) -> None:
        self.fake = fake
        self.run = run
        self.request = request
        self.state = state
        self.rpc = rpc
        self.version = version
        self.server = server
        self.event_id = 0
        self.next_ping: float | None = None

    # --- errors and plain results --------------------------------------------------------------

    def _error(self, code: int, message: str | None = None) -> a2a.RpcError:
        return a2a.rpc_error(code, message, id=self.rpc.id, method=self.rpc.method)

    async def _json_error(self, error: a2a.RpcError) -> web.StreamResponse:
        return await self.fake._error_json(self.run, self.request, self.state, error, self.version)

    async def _fail(self, error: a2a.RpcError) -> web.StreamResponse:
        """An error found while handling the call: for a streaming call, as a one-frame SSE
        stream or as JSON (``server.stream_errors_on`` the call's wire); otherwise JSON."""
        if not self.rpc.streaming or self.server.stream_errors_on(self.version) == "json":
            return await self._json_error(error)
        self.state.error_code = error.code
        response = self._sse_response()
        try:
            await response.prepare(self.request)
            await self._write(response, error)
            await response.write_eof()
        except ConnectionError:
            self.state.ended = self.fake._cut_reason(self.run)
            return response
        self.state.ended = "completed"
        return response

    async def _result(self, result: Any) -> web.StreamResponse:
        payload = a2a.encode_result(self.rpc.id, result, self.version)
        return await self.fake._send_json(self.run, self.request, self.state, payload)

    def _terminal_text(self, live: _LiveTask, code: int) -> str:
        state = live.task.status.state
        spelled = a2a.state_name(state, "0.3" if code == a2a.INVALID_PARAMS else "1.0")
        return f"Task {live.id} is in terminal state: {spelled}"

    # --- streams -------------------------------------------------------------------------------

    def _sse_response(self) -> web.StreamResponse:
        self.state.status = 200
        self.state.response = "sse"
        return web.StreamResponse(status=200, headers=_SSE_HEADERS)

    async def _stream(
        self,
        sub: _Subscriber,
        first: Sequence[a2a.Task],
        live: _LiveTask | None,
        history_length: int | None = None,
    ) -> web.StreamResponse:
        """Write ``first``, then what the subscriber receives, until an event that ends the
        turn; watch the client meanwhile."""
        response = self._sse_response()
        try:
            await response.prepare(self.request)
            for snapshot in first:
                await self._write(response, snapshot, history_length)
            while True:
                item = await self._next(sub)
                if item is _GONE:
                    self.state.ended = "client_closed"
                    return response
                if isinstance(item, _Cut):
                    self.state.ended = "server_closed"
                    return self._abandon(item)
                assert not isinstance(item, _Gone)
                await self._write(response, item)
                if not isinstance(item, _Comment) and a2a.ends_turn(item):
                    break
            await response.write_eof()
        except ConnectionError:
            self.state.ended = self.fake._cut_reason(self.run)
            return response
        finally:
            if live is not None and sub in live.subscribers:
                live.subscribers.remove(sub)
        self.state.ended = "completed"
        return response

    async def _next(self, sub: _Subscriber) -> _Item | _Gone | _Cut:
        """The next thing to write: an item, a due ping, or why the stream must end."""
        while True:
            if sub.items:
                return sub.items.popleft()
            if self.fake._stopping or self.run.closed:
                return _CUT
            transport = self.request.transport
            if transport is None or transport.is_closing():
                return _GONE
            timeout = _POLL
            ping_every = self.server.ping_every
            if ping_every is not None:
                # on a fixed cadence from the stream's start, data or not (sse-starlette)
                if self.next_ping is None:
                    self.next_ping = time.monotonic() + self.run.scale(ping_every)
                until = self.next_ping - time.monotonic()
                if until <= 0:
                    self.next_ping += self.run.scale(ping_every)
                    return _Comment(_ping_text(), "ping")
                timeout = min(timeout, until)
            sub.wakeup.clear()
            try:
                await asyncio.wait_for(sub.wakeup.wait(), timeout)
            except TimeoutError:
                pass

    async def _wait(
        self, seconds: float | None, until: asyncio.Event | None
    ) -> _Gone | _Cut | None:
        """Wait ``seconds`` (or until ``until`` is set) watching the client; ``None`` when the
        wait ran its course."""
        deadline = time.monotonic() + seconds if seconds is not None else None
        while True:
            if until is not None and until.is_set():
                return None
            if self.fake._stopping or self.run.closed:
                return _CUT
            transport = self.request.transport
            if transport is None or transport.is_closing():
                return _GONE
            timeout = _POLL
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                timeout = min(timeout, remaining)
            if until is not None:
                try:
                    await asyncio.wait_for(until.wait(), timeout)
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(timeout)

    def _abandon(self, why: _Gone | _Cut) -> web.StreamResponse:
        """End an answer cut short. When the fake cut it, the connection is aborted so the
        client sees a broken stream rather than a clean (and misleading) end of body."""
        if isinstance(why, _Gone):
            self.state.ended = "client_closed"
            return web.Response(status=499)
        self.state.ended = "server_closed"
        transport = self.request.transport
        if transport is not None:
            transport.abort()
        return web.Response(status=499)

    async def _write(
        self,
        response: web.StreamResponse,
        item: _Item | a2a.RpcError,
        history_length: int | None = None,
    ) -> None:
        """Write one SSE block (one ``write`` call) and record it."""
        line_end = self.server.line_end_chars
        now = self.run.now()
        if isinstance(item, _Comment):
            await response.write(sse.encode_comment(item.text, line_end) + line_end.encode("ascii"))
            self.state.frames.append(SentFrame(t=now, kind=item.kind, text=item.text))
            return
        event_id: str | None = None
        if self.server.event_ids:
            event_id = str(self.event_id)
            self.event_id += 1
        if isinstance(item, a2a.RpcError):
            payload, event = self._error_block(item)
            await response.write(
                sse.encode(a2a.dumps(payload), event=event, id=event_id, line_end=line_end)
            )
            self.state.frames.append(
                SentFrame(t=now, kind="error", error_code=item.code, event_id=event_id)
            )
            return
        payload = self._event_payload(item, history_length)
        await response.write(sse.encode(a2a.dumps(payload), id=event_id, line_end=line_end))
        self.state.frames.append(_frame_record(now, item, event_id, self.version))

    def _error_block(self, error: a2a.RpcError) -> tuple[Any, str | None]:
        """An error's SSE data and event name: a JSON-RPC error response, ``event: error``
        when the script asks for it."""
        return a2a.encode_error(error, self.version), "error" if self.server.error_event else None

    def _event_payload(self, item: _Event, history_length: int | None) -> Any:
        """An event's SSE data: a JSON-RPC response whose result is the event."""
        result = a2a.encode_stream_event(item, self.version, history_length=history_length)
        return a2a.encode_result(self.rpc.id, result, self.version)


def _frame_record(
    t: float, event: _Event, event_id: str | None, version: a2a.WireVersion
) -> SentFrame:
    kind: FrameKind = event.kind
    if isinstance(event, a2a.Task):
        return SentFrame(t=t, kind=kind, state=event.status.state.value, event_id=event_id)
    if isinstance(event, a2a.Message):
        return SentFrame(t=t, kind=kind, text=a2a.text_of(event.parts), event_id=event_id)
    if isinstance(event, a2a.StatusUpdate):
        message = event.status.message
        return SentFrame(
            t=t,
            kind=kind,
            state=event.status.state.value,
            final=event.final if version == "0.3" else None,  # 1.0 has no "final"
            text=a2a.text_of(message.parts) if message is not None else None,
            event_id=event_id,
        )
    return SentFrame(
        t=t,
        kind=kind,
        artifact_id=event.artifact.artifact_id,
        append=event.append,
        last_chunk=event.last_chunk,
        text=a2a.text_of(event.artifact.parts),
        event_id=event_id,
    )
