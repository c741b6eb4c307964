"""Writing the fake model's answers: a whole JSON answer or a stream of events, each after its
delay, watching the caller meanwhile, and noting in the call's record what went out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from aiohttp import web

from streamproof.core.durations import TimeScale
from streamproof.fakes.model.call_state import CallState
from streamproof.protocol import gemini
from streamproof.protocol.gemini import ModelTurn

__all__ = ["POLL", "Answering", "answer_response"]

POLL = 0.02
"""Seconds between checks of the caller's connection while a delay runs."""


class _Sent(NamedTuple):
    """One event of a streamed answer as written: its delay, its bytes, and what it carried."""

    delay: float
    data: bytes
    text: str
    function_calls: Sequence[Mapping[str, Any]]
    finish_reason: str | None
    error: Mapping[str, Any] | None


class Answering:
    """How :class:`~streamproof.fakes.model.FakeModel` writes an answer: the base of the fake,
    whose constructor sets the attributes below."""

    _line_end: str
    _stopping: bool
    _epoch: float

    async def _send(
        self, request: web.Request, state: CallState, answer: gemini.Answer
    ) -> web.StreamResponse:
        """Write a whole JSON answer and record it once it is out."""
        state.status = answer.status
        response = answer_response(answer)
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            self._hung_up(state)
            return response
        state.text.append(answer.text)
        state.function_calls.extend(answer.function_calls)
        state.finish_reason = answer.finish_reason
        state.error = answer.error
        state.chunks_sent = 1 if answer.status == 200 else 0
        state.completed = True
        return response

    async def _stream(
        self,
        request: web.Request,
        state: CallState,
        route: gemini.Route,
        turn: ModelTurn,
        scale: TimeScale,
    ) -> web.StreamResponse:
        if turn.replay is not None:
            # A canned stream (a ``fixture:`` turn) is written byte for byte, its own line ends
            # included, with the recorded (or given) delay before each event.
            return await self._write_stream(
                request,
                state,
                scale,
                (
                    _Sent(e.delay, e.raw, e.text, e.function_calls, e.finish_reason, e.error)
                    for e in turn.replay
                ),
            )
        events = gemini.stream_events(
            turn,
            model_version=route.model,
            response_id=gemini.new_response_id(),
            prompt_tokens=gemini.prompt_tokens(state.body),
        )
        return await self._write_stream(
            request,
            state,
            scale,
            (
                _Sent(
                    e.delay,
                    e.frame(self._line_end),
                    e.text,
                    (e.function_call,) if e.function_call is not None else (),
                    e.finish_reason,
                    e.error,
                )
                for e in events
            ),
        )

    async def _write_stream(
        self,
        request: web.Request,
        state: CallState,
        scale: TimeScale,
        events: Iterable[_Sent],
    ) -> web.StreamResponse:
        """Stream ``events`` (each after its delay), noting in ``state`` what was sent: text
        with the time it went, function calls, the finish reason, an error."""
        state.status = 200
        response = web.StreamResponse(status=200, headers={"Content-Type": gemini.SSE_CONTENT_TYPE})
        try:
            await response.prepare(request)
            for event in events:
                if not await self._pause(request, state, scale(event.delay)):
                    return self._abandon(request, response)
                await response.write(event.data)
                state.chunks_sent += 1
                if event.text:
                    state.text.append(event.text)
                    state.text_chunk_times.append(round(time.monotonic() - self._epoch, 4))
                state.function_calls.extend(dict(c) for c in event.function_calls)
                if event.finish_reason is not None:
                    state.finish_reason = event.finish_reason
                if event.error is not None:
                    state.error = dict(event.error)
            await response.write_eof()
        except ConnectionError:
            self._hung_up(state)
            return response
        state.completed = True
        return response

    async def _pause(self, request: web.Request, state: CallState, seconds: float) -> bool:
        """Wait ``seconds`` watching the caller; False (recorded) when it went away."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            transport = request.transport
            if self._stopping:
                return False
            if transport is None or transport.is_closing():
                self._hung_up(state)
                return False
            remaining = deadline - loop.time()
            if remaining <= 0:
                return True
            await asyncio.sleep(min(POLL, remaining))

    def _abandon(self, request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        """End an answer cut short. When the fake is stopping, the connection is aborted so the
        caller sees a broken stream rather than a clean (and misleading) end of body."""
        transport = request.transport
        if self._stopping and transport is not None:
            transport.abort()
        return response

    def _hung_up(self, state: CallState) -> None:
        if not self._stopping:
            state.closed_early = True


def answer_response(answer: gemini.Answer) -> web.Response:
    return web.Response(
        status=answer.status,
        body=answer.encoded(),
        headers={"Content-Type": gemini.JSON_CONTENT_TYPE},
    )
