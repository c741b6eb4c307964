"""The seed's client reducer, as pure Python: what a browser following the seed renders.

The seed (section "The client: append, then replace") gives the reducer in JavaScript::

    case "delta":   new draft if none or another author, else append d.text to the draft
    case "message": messages = [...messages, d], draft = null   // the aggregate replaces the draft
    case "tool_call": draft = null, status = "Calling " + d.names.join(", ")
    case "error": case "done": draft = null, status = frame.type
    default: state unchanged

This module mirrors it branch for branch. Where the JavaScript would throw (data that is not
JSON, a ``tool_call`` without a ``names`` list) the browser's event handler aborts and the state
stays as it was, so :func:`reduce` returns the state unchanged; so it does for a ``delta`` or
``message`` whose payload lacks the string fields it reads (JavaScript would render
``undefined``; GW-FRAME-TYPES reports those frames).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

__all__ = ["Draft", "FrameLike", "Message", "ReducerState", "reduce", "replay"]


class FrameLike(Protocol):
    """What the reducer reads from a frame: its type (the SSE event name) and its data."""

    @property
    def event(self) -> str: ...

    @property
    def data(self) -> str: ...


@dataclass(frozen=True)
class Draft:
    """The text being streamed for one author, built from ``delta`` frames (``author`` is
    ``None`` where the wire names none: a profile's seed view of AG-UI, say)."""

    author: str | None
    text: str


@dataclass(frozen=True)
class Message:
    """A settled message: the payload of a ``message`` frame (``d`` in the seed)."""

    author: str | None
    text: str
    final: Any = None
    id: Any = None


@dataclass(frozen=True)
class ReducerState:
    messages: tuple[Message, ...] = ()
    draft: Draft | None = None
    status: str | None = None
    """``undefined`` in the seed until a tool_call, error or done frame sets it."""


def _parse(data: str) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _author(d: dict[str, Any]) -> bool:
    """The payload names its author: a string, or ``null`` (a profile's seed view of a wire
    that names none: any agent's). A payload without the key would render ``undefined``."""
    return "author" in d and (d["author"] is None or isinstance(d["author"], str))


def reduce(state: ReducerState, frame: FrameLike) -> ReducerState:
    """The state after ``frame``, exactly as the seed's ``reduce(state, frame)``."""
    kind = frame.event
    if kind not in ("delta", "message", "tool_call", "error", "done"):
        return state  # default: return state (tool_result and unknown types render nothing)
    d = _parse(frame.data)
    if d is None:
        return state  # JSON.parse threw (or gave no object): the handler aborted
    if kind == "delta":
        author, text = d.get("author"), d.get("text")
        if not _author(d) or not isinstance(text, str):
            return state
        if state.draft is None or state.draft.author != author:
            return replace(state, draft=Draft(author, text))
        return replace(state, draft=Draft(author, state.draft.text + text))
    if kind == "message":
        author, text = d.get("author"), d.get("text")
        if not _author(d) or not isinstance(text, str):
            return state
        message = Message(author, text, d.get("final"), d.get("id"))
        return replace(state, messages=(*state.messages, message), draft=None)
    if kind == "tool_call":
        names = d.get("names")
        if not isinstance(names, list):
            return state  # d.names.join is not a function: the handler threw
        joined = ", ".join("" if n is None else str(n) for n in names)
        return replace(state, draft=None, status="Calling " + joined)
    return replace(state, draft=None, status=kind)  # error, done


def replay(frames: Iterable[FrameLike]) -> list[ReducerState]:
    """The state after each frame, starting from the empty state (one entry per frame)."""
    states: list[ReducerState] = []
    state = ReducerState()
    for frame in frames:
        state = reduce(state, frame)
        states.append(state)
    return states
