"""Hand-built ADK events for the reference's wire mappers: the seed's worked example piece by
piece, a multi-agent hand-over, error events."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from google.adk.events import Event
from google.genai import types

MARKER = "sp-marker-7f3a"
ANSWER = ("Order 1042 shipped ", "on 30 September and ", "is due Monday.")


def event(*parts: types.Part, author: str = "support", **kw: Any) -> Event:
    content = types.Content(role="model", parts=list(parts)) if parts else None
    return Event(author=author, content=content, **kw)


def text(value: str) -> types.Part:
    return types.Part(text=value)


def call(call_id: str | None = "adk-1", name: str = "lookupOrder") -> types.Part:
    return types.Part(
        function_call=types.FunctionCall(id=call_id, name=name, args={"orderId": "1042"})
    )


def response(call_id: str | None = "adk-1", name: str = "lookupOrder") -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(
            id=call_id, name=name, response={"status": "shipped", "secret": MARKER}
        )
    )


def ids() -> Callable[[], str]:
    """Deterministic ids: ``m1``, ``m2`` ..."""
    counter = itertools.count(1)
    return lambda: f"m{next(counter)}"


def worked_example(*, streamed: bool = True) -> list[Event]:
    """The seed's worked example as ADK 2.13 yields it in SSE mode (the call also in a partial,
    under a preview id of its own) or, ``streamed=False``, in NONE mode."""
    events: list[Event] = []
    if streamed:
        events.append(event(call("adk-preview"), partial=True))
    events += [event(call()), event(response())]
    if streamed:
        events += [event(text(chunk), partial=True) for chunk in ANSWER]
    events.append(event(text("".join(ANSWER))))
    return events


def mid_stream_error() -> list[Event]:
    """A model that fails after its first chunk: a partial, then ADK's error event."""
    return [event(text("Order 1042 "), partial=True), event(error_code="UNAVAILABLE")]
