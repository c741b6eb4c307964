"""The reference gateway on the Vercel AI SDK UI message stream (protocol v1): ADK events to
UI message chunks, the writer, and the request.

``POST /api/chat`` (``?mode=none`` for NONE mode) takes the body of ``useChat``'s default
transport: ``{"id": <session id>, "messages": [...], "trigger": "submit-message"}``; the user's
text is the text parts of the last user message. The answer carries the stream's headers
(``x-vercel-ai-ui-message-stream: v1`` among them) and one chunk per ``data:`` line, then
``data: [DONE]``. Every chunk's keys were checked against the ``ai`` package's chunk schema
(``src/ui-message-stream/ui-message-chunks.ts``, ai 7.0.173, and the same chunks in 5.0.x and
6.0.x) and its reader (``src/ui/process-ui-message-stream.ts``); the package is not a dependency
of the reference.

:class:`AiSdkMapper` (pure, one per turn) is the seed's ``send`` on this wire:

* ``start {messageId}`` first: the one assistant message the turn builds.
* Text, per answer: a partial opens a text part if its author has none open (``text-start
  {id}``), each partial is one ``text-delta {id, delta}``, the aggregate closes it (``text-end
  {id}``) without sending its text again; an aggregate with no partials before it (NONE mode)
  is ``text-start``, one ``text-delta`` with the whole text, ``text-end``. Every answer gets a
  part id of its own, and open parts are kept per author, so a sub-agent's answer after the
  coordinator's is always a separate part (a UI message has one role and no author field).
* Tool calls only from aggregated events: ``tool-input-start {toolCallId, toolName}`` and
  ``tool-input-available {toolCallId, toolName, input}`` per call, under ADK's function-call
  id; a function call in a partial event is ignored (ADK runs it once, from the aggregate).
* A function response is ``tool-output-available {toolCallId, output: a summary}``, never the
  tool's answer (the seed: "Leaking tool payloads").
* ``finish {finishReason: "stop"}`` when the run completes, then ``[DONE]``.
* ``error {errorText}`` for a failed run, the run bound and an event with an error code, then
  ``[DONE]`` and nothing else: this is what the SDK's own ``streamText`` sends when a model
  call fails (an ``error`` chunk, the stream closes, the SSE transform adds ``[DONE]``).
  **Errors that are events:** ``useChat`` stops reading at the first ``error`` chunk (its
  ``onError`` throws), so, as on AG-UI, the first error event ends the stream and the gateway
  stops the run there; ADK has stored the error event before yielding it.
* No ``start-step`` / ``finish-step``: they are optional, and ADK's event stream does not mark
  where one model call ends and the next begins; inventing the boundaries would add chunks
  that say nothing the rest does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from aiohttp import web
from google.adk.events import Event

from streamproof.suites.gateway.reference.frames import event_text
from streamproof.suites.gateway.reference.stream import (
    DATA_DONE,
    RUN_FAILED_TEXT,
    RUN_TIMED_OUT_TEXT,
    BadRequestError,
    DataWriter,
    Ending,
    ToolCallIds,
    TurnRequest,
    new_id,
    tool_summary,
)

PATH: Final = "/api/chat"
HEADERS: Final[Mapping[str, str]] = {"x-vercel-ai-ui-message-stream": "v1"}
"""The headers the UI message stream adds to the gateway's SSE headers (content type, no cache,
no proxy buffering): ``ui-message-stream-headers.ts``."""

Chunk = dict[str, Any]


class AiSdkMapper:
    """One turn's ADK events to UI message chunks (pure: no I/O)."""

    def __init__(self, bug: str | None = None, *, make_id: Callable[[], str] = new_id) -> None:
        self._bug = bug
        self._make_id = make_id
        self._open: dict[str, str] = {}  # author -> id of the text part its partials stream into
        self._calls = ToolCallIds(make_id)
        self.ended = False
        """A terminal chunk (finish or error) was produced."""

    def started(self) -> list[Chunk]:
        return [{"type": "start", "messageId": self._make_id()}]

    def event(self, event: Event) -> list[Chunk]:
        """The chunks for one ADK event, in order (maybe none)."""
        if self.ended:
            return []
        if event.error_code and self._bug != "swallow-error-event":
            return self.failed(f"The model ended with an error: {event.error_code}.")
        text = event_text(event)
        if event.partial:
            out = self._stream_text(event.author, text) if text else []
            if self._bug == "aisdk-tool-call-from-partial":
                out += self._tool_calls(event)  # mutant: a call from a partial
            return out
        out = self._settle_text(event.author, text) if text else []
        out += self._tool_calls(event)
        for response in event.get_function_responses():
            out.append(
                {
                    "type": "tool-output-available",
                    "toolCallId": self._calls.answered(response.id, response.name),
                    "output": tool_summary(response.name),
                }
            )
        return out

    def _stream_text(self, author: str, text: str) -> list[Chunk]:
        part_id = self._open.get(author)
        delta = {"type": "text-delta", "id": "", "delta": text}
        if part_id is not None:
            return [{**delta, "id": part_id}]
        part_id = self._open[author] = self._make_id()
        opened = [{"type": "text-start", "id": part_id}, {**delta, "id": part_id}]
        if self._bug == "aisdk-delta-before-start":
            opened.reverse()  # mutant: the delta comes before its part is started
        return opened

    def _settle_text(self, author: str, text: str) -> list[Chunk]:
        """The aggregate's text: end the part its partials streamed (its text was sent), or
        send it whole as a part of its own."""
        part_id = self._open.pop(author, None)
        if part_id is None:
            part_id = self._make_id()
            return [
                {"type": "text-start", "id": part_id},
                {"type": "text-delta", "id": part_id, "delta": text},
                {"type": "text-end", "id": part_id},
            ]
        out: list[Chunk] = []
        if self._bug == "aisdk-resend-text":
            out.append({"type": "text-delta", "id": part_id, "delta": text})  # mutant: again
        if self._bug != "aisdk-open-at-finish":
            out.append({"type": "text-end", "id": part_id})
        return out

    def _tool_calls(self, event: Event) -> list[Chunk]:
        out: list[Chunk] = []
        for call in event.get_function_calls():
            call_id, name = self._calls.shown(call.id, call.name), call.name or "?"
            out += [
                {"type": "tool-input-start", "toolCallId": call_id, "toolName": name},
                {
                    "type": "tool-input-available",
                    "toolCallId": call_id,
                    "toolName": name,
                    "input": dict(call.args or {}),
                },
            ]
        return out

    def finished(self) -> list[Chunk]:
        self.ended = True
        return [{"type": "finish", "finishReason": "stop"}]

    def failed(self, text: str = RUN_FAILED_TEXT) -> list[Chunk]:
        if self._bug == "aisdk-finish-on-error":
            return self.finished()  # mutant: the failure is reported as a success
        self.ended = True
        return [{"type": "error", "errorText": text}]

    def ending(self, ending: Ending) -> list[Chunk]:
        if ending is Ending.DONE:
            return self.finished()
        return self.failed(RUN_TIMED_OUT_TEXT if ending is Ending.TIMED_OUT else RUN_FAILED_TEXT)

    def closing(self) -> list[str]:
        """What follows the terminal chunk: the end marker."""
        return [] if self._bug == "aisdk-no-done" else [DATA_DONE]


class AiSdkStream:
    """A turn's UI message chunks on the response (a :class:`~.stream.TurnStream`)."""

    def __init__(self, response: web.StreamResponse, bug: str | None = None) -> None:
        self._mapper = AiSdkMapper(bug)
        self._writer = DataWriter(response, bug)

    @property
    def ended(self) -> bool:
        return self._mapper.ended

    async def begin(self) -> None:
        await self._writer.write(list(self._mapper.started()))

    async def send_event(self, event: Event) -> None:
        out: list[Mapping[str, Any] | str] = list(self._mapper.event(event))
        if self._mapper.ended:
            out += self._mapper.closing()
        await self._writer.write(out, last=self._mapper.ended)

    async def end(self, ending: Ending) -> None:
        out: list[Mapping[str, Any] | str] = [*self._mapper.ending(ending)]
        await self._writer.write([*out, *self._mapper.closing()], last=True)


def read_request(body: Any) -> TurnRequest:
    """The turn a ``useChat`` request asks for: the session is ``id``, the text is the text
    parts of the last user message. ``streaming`` is set by the caller from ``?mode``."""
    if not isinstance(body, Mapping):
        raise BadRequestError("the body must be a JSON object (useChat's request)")
    session_id = body.get("id")
    if not isinstance(session_id, str) or not session_id:
        raise BadRequestError("id: missing or not a non-empty string (the chat's session id)")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequestError("messages: missing or not a list")
    users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not users:
        raise BadRequestError("messages: no message with role 'user'")
    parts = users[-1].get("parts")
    if not isinstance(parts, list):
        raise BadRequestError("messages: the last user message has no parts list")
    text = "".join(
        part["text"]
        for part in parts
        if isinstance(part, Mapping)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    )
    if not text.strip():
        raise BadRequestError("messages: the last user message has no text part")
    return TurnRequest(session_id=session_id, text=text, streaming=True)
