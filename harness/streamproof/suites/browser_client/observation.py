"""What a browser-client scenario observed: every screen state the page went through, the frames
the fake gateway sent and which of them reached the page, the requests the page made, and what
the ``browser`` link did. Plain frozen data; the checks (:mod:`.checks`) judge it without I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent

__all__ = [
    "BrowserClientObservation",
    "Item",
    "PageRequest",
    "ScreenState",
    "SentFrame",
    "StreamEnd",
]

StreamEnd = Literal["terminal", "clean", "broken", "status", "left", "open", "none"]
"""How the first chat stream ended as the page got it: at a ``done`` or ``error`` frame
(``terminal``), cleanly without one (``clean``), by a connection failure (``broken``: a reset,
a FIN without the chunked terminator, a stall the page gave up on), answered with an error
status (``status``), closed by the page itself before its end (``left``: a tab hidden, an
abort), still open when the scenario ended (``open``: a stall), or never requested (``none``)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Item(_Model):
    """A message or a draft as shown: its author (``None`` when the page shows none) and text."""

    author: str | None
    text: str


class ScreenState(_Model):
    """The screen at one moment."""

    t: float
    """Seconds since the scenario's epoch."""
    frames: int
    """How many frames had reached the page's reader then (0: none)."""
    settled: bool
    """Read after the page went quiet following a frame (not at a change in between)."""
    messages: tuple[Item, ...]
    drafts: tuple[Item, ...]
    status: str | None
    error_shown: bool
    """The error indicator is visible."""


class SentFrame(_Model):
    index: int
    """1-based, the frame's SSE ``id``."""
    type: str
    data: dict[str, Any]
    t_sent: float | None
    """When the fake wrote it; ``None``: never written (the page had gone)."""
    reached_page: bool
    """The page's reader got it."""


class PageRequest(_Model):
    t: float
    method: str
    path: str
    role: Literal["chat", "history", "preflight", "other"]
    status: int
    last_event_id: str | None = None


class BrowserClientObservation(_Model):
    scenario: str
    target: str
    mode: Literal["page", "module"]
    profile: str = "typed-frames"
    """The wire the page was served (``typed-frames`` or ``ag-ui``)."""
    prompt: str
    time_scale: float
    frames: tuple[SentFrame, ...]
    states: tuple[ScreenState, ...]
    requests: tuple[PageRequest, ...]
    history: tuple[Item, ...]
    """The text messages the history endpoint answers (the user's included)."""
    stream_end: StreamEnd
    t_stream_end: float | None
    reconnect_s: float
    """How long after a broken stream the page had to read the history (real seconds)."""
    shows_authors: bool
    """The page shows who wrote a message (its target declares how, or its items carry one)."""
    has_status: bool
    has_error_indicator: bool
    link_events: tuple[LinkEvent, ...] | None = None
    faults: tuple[Fault, ...] = ()
    tab_hidden_at: tuple[float, ...] = ()
    console_errors: tuple[str, ...] = ()
    screenshot: str | None = None
    """A PNG of the page at the end, relative to the report (a failing scenario's)."""

    def timeline(self) -> str:
        """The run as text: each frame as sent and whether the page got it, each request, and
        the settled screen after each frame."""
        lines = [f"prompt {self.prompt!r}; the stream ended: {self.stream_end}"]
        events: list[tuple[float, str]] = []
        for frame in self.frames:
            if frame.t_sent is not None:
                got = "" if frame.reached_page else " (never reached the page)"
                events.append((frame.t_sent, f"frame {frame.index} {frame.type} {frame.data}{got}"))
        for request in self.requests:
            if request.role != "preflight":
                events.append(
                    (request.t, f"page {request.method} {request.path} -> {request.status}")
                )
        for state in self.states:
            if state.settled:
                events.append((state.t, f"screen: {render_state(state)}"))
        lines += [f"{t:7.3f}s {text}" for t, text in sorted(events, key=lambda e: e[0])]
        return "\n".join(lines)


def render_state(state: ScreenState) -> str:
    """One line: the messages, the drafts, the status and the error indicator."""

    def items(values: tuple[Item, ...]) -> str:
        return "[" + ", ".join(f"{i.author or '?'}: {i.text!r}" for i in values) + "]"

    parts = [f"messages {items(state.messages)}", f"drafts {items(state.drafts)}"]
    if state.status:
        parts.append(f"status {state.status!r}")
    if state.error_shown:
        parts.append("error shown")
    return "; ".join(parts)
