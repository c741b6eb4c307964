"""What every wire of the reference gateway shares: how a turn ends, the interface the run loop
drives, the data-only SSE writer of AG-UI and the AI SDK, and the tool-result summary.

The run loop (``app.py``) knows no wire. It opens the turn's stream (:meth:`TurnStream.begin`),
hands it every ADK event (:meth:`TurnStream.send_event`) and ends it once
(:meth:`TurnStream.end`) with an :class:`Ending`. A wire whose error event is terminal (AG-UI's
``RUN_ERROR``; the AI SDK's ``error``, on which ``useChat`` stops reading) says so through
:attr:`TurnStream.ended`, and the loop then stops the run: nothing more can be shown.
"""

from __future__ import annotations

import enum
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from aiohttp import web
from google.adk.events import Event

from streamproof.suites.gateway.reference.frames import (
    DONE,
    RUN_FAILED,
    RUN_TIMED_OUT,
    FrameWriter,
    send_bytes,
)


class Ending(enum.Enum):
    """How a turn's stream ends, whatever the wire says for it."""

    DONE = "done"
    """The run completed (the seed's ``done``)."""
    FAILED = "failed"
    """The run raised, hit its LLM budget or the process is stopping (``error {retryable}``)."""
    TIMED_OUT = "timed_out"
    """The run bound expired (``error {code: TIMEOUT, retryable}``)."""


@dataclass(frozen=True)
class TurnRequest:
    """One chat turn as the wire's request states it."""

    session_id: str
    text: str
    streaming: bool
    run_id: str = ""
    """AG-UI's ``runId`` (echoed in ``RUN_STARTED`` and ``RUN_FINISHED``); empty elsewhere."""


class BadRequestError(ValueError):
    """The chat request's body is not what the wire expects; answered 400, naming the key."""


class TurnStream(Protocol):
    """One turn's answer on one wire."""

    @property
    def ended(self) -> bool:
        """The stream already sent its terminal event (an error event ended it)."""
        ...

    async def begin(self) -> None: ...

    async def send_event(self, event: Event) -> None: ...

    async def end(self, ending: Ending) -> None: ...


class TypedFrameStream:
    """The seed's typed frames as a :class:`TurnStream`: :class:`FrameWriter` unchanged, with
    ``done`` or the seed's error frame as the end. An error event is an ``error`` frame and the
    run goes on (the seed: "Errors that are events")."""

    ended = False

    def __init__(self, writer: FrameWriter) -> None:
        self._writer = writer

    async def begin(self) -> None:
        return None

    async def send_event(self, event: Event) -> None:
        await self._writer.send_event(event)

    async def end(self, ending: Ending) -> None:
        frame = {Ending.DONE: DONE, Ending.FAILED: RUN_FAILED, Ending.TIMED_OUT: RUN_TIMED_OUT}
        await self._writer.send(frame[ending])


RUN_FAILED_TEXT: Final = "The run failed; try again."
RUN_TIMED_OUT_TEXT: Final = "The run took too long and was stopped; try again."
"""What the browser is told of a failed run and of one stopped at its bound (on every data-only
wire; the detail stays in the log)."""


def new_id() -> str:
    return uuid.uuid4().hex


DATA_DONE = "[DONE]"
"""The AI SDK UI message stream's end marker: ``data: [DONE]``, not JSON."""


def encode_data(payload: Mapping[str, Any] | str) -> bytes:
    """One data-only SSE event: ``data: <compact JSON>`` and a blank line; a string is written
    as it is (the AI SDK's ``[DONE]``). JSON escapes every CR and LF, so no payload can break
    the framing."""
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


class DataWriter:
    """Writes data-only SSE events (AG-UI, the AI SDK), each in a single write."""

    def __init__(self, response: web.StreamResponse, bug: str | None = None) -> None:
        self._response = response
        self._bug = bug
        self._unsent = b""  # only the buffer-frames mutant holds bytes

    async def write(self, payloads: list[Mapping[str, Any] | str], *, last: bool = False) -> None:
        """Write ``payloads`` in order; ``last``: they end the stream."""
        data = b"".join(encode_data(p) for p in payloads)
        if self._bug == "buffer-frames":
            if not last:
                self._unsent += data  # mutant: held until the stream's last event
                return
            data, self._unsent = self._unsent + data, b""
        if data:
            await send_bytes(self._response, data, self._bug)


class ToolCallIds:
    """The ids under which a turn's tool calls were shown, so that each result names its call.
    ADK gives every aggregated call an id and repeats it on the function response; a response
    without one answers the oldest unanswered call of its tool."""

    def __init__(self, make_id: Callable[[], str]) -> None:
        self._make_id = make_id
        self._unanswered: dict[str, list[str]] = {}  # tool name -> ids of its calls shown

    def shown(self, call_id: str | None, name: str | None) -> str:
        call_id = call_id or self._make_id()
        self._unanswered.setdefault(name or "?", []).append(call_id)
        return call_id

    def answered(self, call_id: str | None, name: str | None) -> str:
        waiting = self._unanswered.get(name or "?", [])
        if call_id is None:
            return waiting.pop(0) if waiting else self._make_id()
        if call_id in waiting:
            waiting.remove(call_id)
        return call_id


def tool_summary(name: str | None) -> str:
    """What the browser is told of a tool's result: that it answered, never what (the seed:
    "Tool results are summarised, not forwarded")."""
    return f"{name or 'tool'} answered"
