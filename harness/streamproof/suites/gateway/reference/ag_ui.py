"""The reference gateway on AG-UI: ADK events to AG-UI events, the writer, and the request.

``POST /ag-ui`` (``?mode=none`` for NONE mode) takes AG-UI's ``RunAgentInput``; the session is
its ``threadId`` and the user's text its last user message. The answer is data-only SSE
(``data: {camelCase JSON with "type"}``, no ``id:`` or ``event:`` lines), as AG-UI's own
Python encoder writes it (``ag-ui-protocol`` 1.0). Checked against that package's event models
and ``@ag-ui/client`` 1.0's ``verifyEvents``; neither is a dependency of the reference.

:class:`AgUiMapper` (pure, one per turn) is the seed's ``send`` on this wire:

* ``RUN_STARTED {threadId, runId, protocolVersion: "1.0"}`` first (a 1.0 producer declares its
  version on the event that opens the run).
* Text, per answer: a partial opens a message if its author has none open
  (``TEXT_MESSAGE_START {messageId, role: "assistant", name: author}``), each partial is one
  ``TEXT_MESSAGE_CONTENT {messageId, delta}``, and the aggregate closes it
  (``TEXT_MESSAGE_END``) without sending its text again. An aggregate with no partials before
  it (NONE mode) is ``START``, one ``CONTENT`` with the whole text, ``END``.
* Multi-agent: AG-UI keys text by ``messageId``, not by author, so every model answer gets a
  message id of its own, and open messages are kept per author (the seed: "Keying the draft by
  author matters in multi-agent runs"). A sub-agent's answer after the coordinator's is thus
  always a separate message. ``TEXT_MESSAGE_START.name`` (AG-UI 1.0: "an optional display name
  for the author") carries the ADK author.
* Tool calls only from aggregated events: for each call, ``TOOL_CALL_START {toolCallId,
  toolCallName, parentMessageId?}``, ``TOOL_CALL_ARGS {toolCallId, delta: the JSON
  arguments}``, ``TOOL_CALL_END``; the id is ADK's function-call id, which the function
  response repeats. A function call in a partial event is ignored: ADK runs it once, later,
  from the aggregate (since google-adk 1.22 a partial call even carries another id: ag-ui #968).
* A function response is ``TOOL_CALL_RESULT {messageId, toolCallId, content: a summary, role:
  "tool"}``: the tool's answer never reaches the browser (the seed: "Leaking tool payloads").
* ``RUN_FINISHED {threadId, runId}`` when the run completes.
* ``RUN_ERROR {message, code?}`` for a failed run (``code`` ``TIMEOUT`` at the run bound) and
  for an event with an error code (``code`` is the event's). **Errors that are events:**
  ``RUN_ERROR`` is terminal in AG-UI (nothing may follow it), so the first error event ends the
  stream and the gateway stops the run there, instead of holding the error back until the run
  ends: the error is shown when it happens, and a run whose output can no longer reach the
  browser is not left running. ADK has stored the error event before yielding it. A message
  still open stays open: ``RUN_ERROR`` may come at any point, and a half answer must not be
  closed as if it were complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from aiohttp import web
from google.adk.events import Event

from streamproof.suites.gateway.reference.frames import event_text
from streamproof.suites.gateway.reference.stream import (
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

PATH: Final = "/ag-ui"
PROTOCOL_VERSION: Final = "1.0"

AgUiEvent = dict[str, Any]


class AgUiMapper:
    """One turn's ADK events to AG-UI events (pure: no I/O)."""

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        bug: str | None = None,
        *,
        make_id: Callable[[], str] = new_id,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self._bug = bug
        self._make_id = make_id
        self._open: dict[str, str] = {}  # author -> id of the message its partials stream into
        self._calls = ToolCallIds(make_id)
        self.ended = False
        """A terminal event (RUN_FINISHED or RUN_ERROR) was produced."""

    def started(self) -> list[AgUiEvent]:
        if self._bug == "agui-no-run-started":
            return []  # mutant: the run is never opened
        return [
            {
                "type": "RUN_STARTED",
                "threadId": self.thread_id,
                "runId": self.run_id,
                "protocolVersion": PROTOCOL_VERSION,
            }
        ]

    def event(self, event: Event) -> list[AgUiEvent]:
        """The AG-UI events for one ADK event, in order (maybe none)."""
        if self.ended:
            return []
        if event.error_code and self._bug != "swallow-error-event":
            return self.failed(
                str(event.error_code), f"The model ended with an error: {event.error_code}."
            )
        text = event_text(event)
        if event.partial:
            out = self._stream_text(event.author, text) if text else []
            if self._bug == "agui-tool-call-from-partial":
                out += self._tool_calls(event, None)  # mutant: a call from a partial
            return out
        out = []
        message_id: str | None = None
        if text:
            message_id, settled = self._settle_text(event.author, text)
            out += settled
        if event.get_function_calls():
            out += self._tool_calls(event, message_id)
        for response in event.get_function_responses():
            content = (
                json.dumps(response.response, separators=(",", ":"), default=str)
                if self._bug == "agui-leak-tool-result"
                else tool_summary(response.name)
            )
            out.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": self._make_id(),
                    "toolCallId": self._calls.answered(response.id, response.name),
                    "content": content,
                    "role": "tool",
                }
            )
        return out

    def _stream_text(self, author: str, text: str) -> list[AgUiEvent]:
        message_id = self._open.get(author)
        if message_id is not None:
            return [_content(message_id, text)]
        message_id = self._open[author] = self._make_id()
        opened = [self._start(message_id, author), _content(message_id, text)]
        if self._bug == "agui-content-before-start":
            opened.reverse()  # mutant: the content comes before its message is started
        if self._bug == "agui-start-twice":
            opened.insert(1, self._start(message_id, author))  # mutant: started again, open
        return opened

    def _settle_text(self, author: str, text: str) -> tuple[str, list[AgUiEvent]]:
        """The aggregate's text: close the message its partials streamed (its text was sent),
        or send it whole as a message of its own."""
        message_id = self._open.pop(author, None)
        if message_id is None:
            message_id = self._make_id()
            whole = [self._start(message_id, author), _content(message_id, text), _end(message_id)]
            return message_id, whole
        out: list[AgUiEvent] = []
        if self._bug == "agui-resend-text":
            out.append(_content(message_id, text))  # mutant: the streamed text once more
        if self._bug != "agui-open-at-finish":
            out.append(_end(message_id))
        return message_id, out

    @staticmethod
    def _start(message_id: str, author: str) -> AgUiEvent:
        return {
            "type": "TEXT_MESSAGE_START",
            "messageId": message_id,
            "role": "assistant",
            "name": author,
        }

    def _tool_calls(self, event: Event, parent: str | None) -> list[AgUiEvent]:
        out: list[AgUiEvent] = []
        for call in event.get_function_calls():
            call_id = self._calls.shown(call.id, call.name)
            start: AgUiEvent = {
                "type": "TOOL_CALL_START",
                "toolCallId": call_id,
                "toolCallName": call.name or "?",
            }
            if parent is not None:
                start["parentMessageId"] = parent
            args = json.dumps(call.args or {}, separators=(",", ":"), default=str)
            out += [
                start,
                {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": args},
                {"type": "TOOL_CALL_END", "toolCallId": call_id},
            ]
        return out

    def finished(self) -> list[AgUiEvent]:
        self.ended = True
        run_id = self.run_id
        if self._bug == "agui-run-id-changes":
            run_id = self._make_id()  # mutant: not the run RUN_STARTED opened
        return [{"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": run_id}]

    def failed(self, code: str | None, message: str = RUN_FAILED_TEXT) -> list[AgUiEvent]:
        if self._bug == "agui-finished-on-error":
            return self.finished()  # mutant: the failure is reported as a success
        self.ended = True
        error: AgUiEvent = {"type": "RUN_ERROR", "message": message}
        if code is not None:
            error["code"] = code
        return [error]

    def ending(self, ending: Ending) -> list[AgUiEvent]:
        if ending is Ending.DONE:
            return self.finished()
        if ending is Ending.TIMED_OUT:
            return self.failed("TIMEOUT", RUN_TIMED_OUT_TEXT)
        return self.failed(None)


def _content(message_id: str, text: str) -> AgUiEvent:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text}


def _end(message_id: str) -> AgUiEvent:
    return {"type": "TEXT_MESSAGE_END", "messageId": message_id}


class AgUiStream:
    """A turn's AG-UI events on the response (a :class:`~.stream.TurnStream`)."""

    def __init__(
        self, response: web.StreamResponse, thread_id: str, run_id: str, bug: str | None = None
    ) -> None:
        self._mapper = AgUiMapper(thread_id, run_id, bug)
        self._writer = DataWriter(response, bug)

    @property
    def ended(self) -> bool:
        return self._mapper.ended

    async def begin(self) -> None:
        await self._writer.write(list(self._mapper.started()))

    async def send_event(self, event: Event) -> None:
        out = self._mapper.event(event)
        await self._writer.write(list(out), last=self._mapper.ended)

    async def end(self, ending: Ending) -> None:
        await self._writer.write(list(self._mapper.ending(ending)), last=True)


def read_request(body: Any) -> TurnRequest:
    """The turn a ``RunAgentInput`` asks for: the session is ``threadId``, the text is the last
    user message's (a string, or the text of its ``text`` parts). ``streaming`` is set by the
    caller from ``?mode``."""
    if not isinstance(body, Mapping):
        raise BadRequestError("the body must be a JSON object (AG-UI's RunAgentInput)")
    thread_id, run_id = body.get("threadId"), body.get("runId")
    if not isinstance(thread_id, str) or not thread_id:
        raise BadRequestError("threadId: missing or not a non-empty string")
    if not isinstance(run_id, str) or not run_id:
        raise BadRequestError("runId: missing or not a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequestError("messages: missing or not a list")
    users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not users:
        raise BadRequestError("messages: no message with role 'user'")
    text = _content_text(users[-1].get("content"))
    if not text.strip():
        raise BadRequestError("messages: the last user message has no text content")
    return TurnRequest(session_id=thread_id, text=text, streaming=True, run_id=run_id)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""
