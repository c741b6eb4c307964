"""The reference gateway's frames: one ADK event mapped to typed SSE frames, and their writer.

This is the seed's ``send`` (``docs/explanation/gateway-rules.md``): :func:`event_frames` is a pure
function from one ADK event to the frames the browser is sent for it; :class:`FrameWriter`
numbers them with the gateway's own counter and writes each one in a single write. The mutants
that change what goes on the wire hook in here (see ``mutants.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import web
from google.adk.events import Event

from streamproof.suites.gateway.reference.agent import AGENT_NAME

Frame = tuple[str, dict[str, Any]]
"""One typed frame before numbering: (event type, JSON payload)."""


# --- the frame mapping (pure; the seed's send()) -----------------------------------------------


def event_text(event: Event) -> str:
    """The text of an event: its text parts joined, as the seed's ``send`` computes it."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    return "".join(part.text or "" for part in parts)


def event_frames(event: Event, bug: str | None = None) -> list[Frame]:
    """Map one ADK event to the frames the gateway sends for it, in order (maybe none).

    Branch for branch the seed's ``send``: an error code wins; a partial event yields at most a
    ``delta`` (a function call seen in a partial is never shown nor acted on: ADK executes it
    once, later, from the aggregate); a non-partial event with function calls yields its text as a
    non-final ``message`` and then ``tool_call``; function responses yield a ``tool_result``
    *count*; any other text is a ``message`` carrying the event id and ``is_final_response()``.
    Every ``delta`` and ``message`` names the event's own author: in a multi-agent run the
    browser keys its draft by author, and one run holds text by several agents.
    """
    text = event_text(event)
    author = AGENT_NAME if bug == "author-from-root" else event.author
    if event.error_code and bug != "swallow-error-event":
        if bug == "bare-done-on-failure":
            return []  # mutant: failures are not shown as errors
        return [("error", {"code": str(event.error_code)})]
    if event.partial:
        frames: list[Frame] = []
        if text:
            frames.append(("delta", {"author": author, "text": text}))
        if bug == "tool-call-from-partial" and event.get_function_calls():
            frames.append(("tool_call", {"names": _call_names(event)}))
        return frames
    if event.get_function_calls():
        frames = []
        if text:
            # The mutant marks this text final, as if the answer were done.
            final = bug == "final-always-true"
            frames.append(("message", {"author": author, "text": text, "final": final}))
        frames.append(("tool_call", {"names": _call_names(event)}))
        return frames
    responses = event.get_function_responses()
    if responses:
        payload: dict[str, Any] = {"count": len(responses)}
        if bug == "leak-tool-payload":
            payload["responses"] = [r.model_dump(mode="json", exclude_none=True) for r in responses]
        return [("tool_result", payload)]
    if text:
        if bug == "aggregate-as-delta":
            return [("delta", {"author": author, "text": text})]
        if bug == "tidy-message-text":
            text = " ".join(text.split())  # mutant: the message is no longer the aggregate
        settled: list[Frame] = [
            (
                "message",
                {
                    "author": author,
                    "id": event.id,
                    "text": text,
                    "final": event.is_final_response(),
                },
            )
        ]
        if bug == "delta-after-message":
            # mutant: the finished answer goes out once more as a delta after its message
            settled.append(("delta", {"author": author, "text": text}))
        return settled
    return []


def _call_names(event: Event) -> list[str]:
    return [call.name or "?" for call in event.get_function_calls()]


def encode_frame(
    frame_id: str, frame_type: str, payload: Mapping[str, Any], *, typed: bool = True
) -> bytes:
    """One SSE frame: ``id``, ``event`` and a single-line JSON ``data`` field (JSON escapes
    every CR and LF, so the payload can never break the framing). ``typed=False`` (a mutant)
    leaves out the ``event`` line, so every frame arrives as a plain ``message``."""
    data = json.dumps(payload, separators=(",", ":"))  # ASCII only: no encoding can fail
    event = f"event: {frame_type}\n" if typed else ""
    return f"id: {frame_id}\n{event}data: {data}\n\n".encode()


DONE: Final[Frame] = ("done", {})
RUN_FAILED: Final[Frame] = ("error", {"retryable": True})
RUN_TIMED_OUT: Final[Frame] = ("error", {"code": "TIMEOUT", "retryable": True})


class ClientGoneError(Exception):
    """A frame could not be written: the client went away, so the run must stop."""


async def send_bytes(response: web.StreamResponse, data: bytes, bug: str | None) -> None:
    """Write ``data`` in one write; a closed socket is the client gone (:class:`ClientGoneError`:
    the run must stop), except for the ``no-dispose`` mutant, which writes on regardless."""
    try:
        await response.write(data)
    except ConnectionError as exc:  # aiohttp: ClientConnectionResetError on a closed socket
        if bug == "no-dispose":
            return  # mutant: a send failure does not stop the run
        raise ClientGoneError(str(exc)) from exc


class FrameWriter:
    """Numbers frames with the gateway's own counter and writes each one in a single write."""

    def __init__(self, response: web.StreamResponse, bug: str | None = None) -> None:
        self._response = response
        self._bug = bug
        self._seq = 0
        self._held: list[Frame] = []  # only the tool-call-after-result mutant holds frames
        self._unsent = b""  # only the buffer-frames mutant holds bytes

    def _next_id(self) -> str:
        self._seq += 1
        return str(self._seq)

    async def send_event(self, event: Event) -> None:
        frames = event_frames(event, self._bug)
        if self._bug == "reused-frame-ids":
            shared = self._next_id()
            ids = [shared] * len(frames)
        elif self._bug == "event-id-as-frame-id":
            ids = [event.id] * len(frames)
        else:
            ids = [self._next_id() for _ in frames]
        for frame_id, (frame_type, payload) in zip(ids, frames, strict=True):
            if self._bug == "tool-call-after-result" and frame_type == "tool_call":
                self._held.append((frame_type, payload))  # mutant: sent after its result
                continue
            await self._write(frame_id, frame_type, payload)
            if frame_type == "tool_result":
                held, self._held = self._held, []
                for late in held:
                    await self.send(late)

    async def send(self, frame: Frame) -> None:
        await self._write(self._next_id(), *frame)

    async def _write(self, frame_id: str, frame_type: str, payload: Mapping[str, Any]) -> None:
        data = encode_frame(frame_id, frame_type, payload, typed=self._bug != "untyped-frames")
        if self._bug == "buffer-frames":
            if frame_type not in ("done", "error"):
                self._unsent += data  # mutant: held until the run's last frame
                return
            data, self._unsent = self._unsent + data, b""
        await send_bytes(self._response, data, self._bug)
