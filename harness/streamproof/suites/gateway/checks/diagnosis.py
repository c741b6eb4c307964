"""Say what you see: one line naming what the chat response WAS when it is not what the
target's profile expects, so the first thing a failed scenario shows is the cause ("this is
raw ADK event JSON, not typed frames: set profile: adk-events") rather than six MUST failures
that all follow from it.

Pure functions of an observation, like the checks; the verdicts themselves are unchanged (a
``json-not-sse`` gateway still fails GW-SSE-RESPONSE, an untyped one GW-FRAME-TYPES).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from streamproof.core.texts import short
from streamproof.suites.gateway.observation import Frame, GatewayObservation
from streamproof.suites.gateway.scenario import FRAME_TYPES

__all__ = ["diagnose", "looks_like_adk_event"]

_ADK_KEYS = frozenset(
    {"content", "partial", "invocationId", "errorCode", "actions", "turnComplete"}
)
"""Keys of ADK's event JSON (Python and Java dump them camelCase); with ``author``, an object
holding one of them is taken for an ADK event."""

_SSE_LINE = re.compile(r"^(data|event|id|retry):", re.MULTILINE)

_MESSAGE_KEYS = frozenset({"author", "text"})

_SET_ADK = (
    "if the target is ADK's dev server (adk api_server, POST /run_sse) or forwards ADK events "
    "as they come, set 'profile: adk-events' in its target file (docs/how-to/adk-dev-server.md); "
    "a typed gateway sends the seed's frames instead"
)


def looks_like_adk_event(value: Any) -> bool:
    """Whether ``value`` is an ADK event as its JSON dump reads: an ``author`` and one of
    ``content``, ``partial``, ``invocationId``, ``errorCode``, ``actions``, ``turnComplete``."""
    return isinstance(value, Mapping) and "author" in value and bool(_ADK_KEYS & value.keys())


def _adk_frames(frames: Sequence[Frame]) -> int:
    return sum(1 for f in frames if looks_like_adk_event(f.payload()))


def _body_json(excerpt: str) -> Any:
    try:
        return json.loads(excerpt)
    except ValueError:
        return None


def _not_a_stream(obs: GatewayObservation) -> str | None:
    """What the chat response was, when it was not an event stream."""
    response = obs.response
    if response.end == "refused":
        return None  # GW-SSE-RESPONSE already says there was no connection
    media = (response.content_type or "").split(";")[0].strip().lower()
    if response.status == 200 and media == "text/event-stream":
        return None
    setup = (
        f" (creating the session failed first: {obs.session_error})" if obs.session_error else ""
    )
    body = response.body_excerpt
    if response.status != 200:
        said = f": {short(body, 120)}" if body else ""
        hint = ""
        if "session not found" in body.lower() and not setup:
            hint = (
                "; the gateway did not find the session: declare endpoints.session to create "
                "it before the turn (ADK: POST /apps/{app}/users/{user}/sessions/{sessionId})"
            )
        return (
            f"the chat request was refused with HTTP {response.status}{setup}{said}{hint}: no "
            "stream to judge"
        )
    if _SSE_LINE.search(body):
        return (
            f"the body is Server-Sent Events (data:/event:/id: lines) but is served as "
            f"Content-Type {response.content_type!r}: an EventSource rejects it; answer with "
            "Content-Type text/event-stream"
        )
    value = _body_json(body)
    items = value if isinstance(value, list) else [value]
    if value is not None and any(looks_like_adk_event(v) for v in items):
        return (
            f"the chat endpoint answered one plain JSON body of ADK event JSON (Content-Type "
            f"{response.content_type!r}), not a stream: {_SET_ADK}, and ask it to stream "
            "(ADK's /run_sse with streaming: true)"
        )
    if value is not None or media == "application/json":
        return (
            f"the chat endpoint answered a plain JSON body (Content-Type "
            f"{response.content_type!r}), not Server-Sent Events: a gateway streams the turn as "
            "text/event-stream frames"
        )
    return (
        f"the chat endpoint answered Content-Type {response.content_type!r}, not "
        f"text/event-stream{setup}: no SSE at all"
    )


def _typed_profile(obs: GatewayObservation) -> str | None:
    frames = obs.frames
    if not frames:
        return None
    adk = _adk_frames(frames)
    if adk and adk * 2 >= len(frames):
        return f"the stream carries raw ADK event JSON ({adk} of {len(frames)} frames are ADK " + (
            f"events: author, content, partial), not the seed's typed frames; {_SET_ADK}"
        )
    if all(f.event == "message" for f in frames):
        odd = [
            f
            for f in frames
            if not isinstance(p := f.payload(), Mapping) or not _MESSAGE_KEYS <= p.keys()
        ]
        if odd:
            return (
                f"no frame names its type: all {len(frames)} arrive as 'message' (no event: "
                f"line), and {len(odd)} of them are no message (first: "
                f"{short(odd[0].data, 60)}); the seed's frames are typed with event: "
                f"{', '.join(FRAME_TYPES)}"
            )
    return None


def _adk_profile(obs: GatewayObservation) -> str | None:
    frames = obs.frames
    if not frames:
        return None
    typed = [f for f in frames if f.event in FRAME_TYPES and f.event != "message"]
    if typed:
        return (
            f"the stream carries the seed's typed frames ({len(typed)} of {len(frames)} name a "
            f"frame type, first event: {typed[0].event}), not raw ADK events: set 'profile: "
            "typed-frames' (the default) in the target file"
        )
    if not _adk_frames(frames):
        return (
            f"profile adk-events, but none of the {len(frames)} frames is ADK event JSON (an "
            f"object with author and content, partial...; first: {short(frames[0].data, 60)})"
        )
    return None


_WIRE_TYPES: dict[str, tuple[str, frozenset[str]]] = {
    "ag-ui": (
        "AG-UI events",
        frozenset({"RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED", "RUN_ERROR"}),
    ),
    "ai-sdk-ui": (
        "UI message chunks",
        frozenset({"start", "text-delta", "finish", "error", "text-start"}),
    ),
}


def _typed_wire(obs: GatewayObservation) -> str | None:
    """On an ``ag-ui`` or ``ai-sdk-ui`` target: a stream that carries none of that wire's
    events, and what it carries instead."""
    frames = obs.frames
    what, markers = _WIRE_TYPES[obs.profile]
    if not frames:
        return None
    types = [p.get("type") for f in frames if isinstance(p := f.payload(), Mapping)]
    if any(t in markers for t in types):
        return None
    if _adk_frames(frames) * 2 >= len(frames):
        seen = "raw ADK event JSON"
    elif any(f.event in FRAME_TYPES and f.event != "message" for f in frames):
        seen = "the seed's typed frames"
    else:
        seen = f"other data (first: {short(frames[0].data, 60)})"
    others = [name for name in _WIRE_TYPES if name != obs.profile]
    return (
        f"profile {obs.profile}, but none of the {len(frames)} events is one of {what} (a JSON "
        f"object whose type is {', '.join(sorted(markers))}...): the stream carries {seen}; "
        f"set the profile the gateway speaks (typed-frames, adk-events, {', '.join(others)})"
    )


def diagnose(obs: GatewayObservation) -> str | None:
    """One line saying what the response was when it is not what the target's profile
    expects (not an event stream, raw ADK events on a typed target, untyped frames, typed
    frames on an adk-events target); ``None`` when it looks like what was declared."""
    if (what := _not_a_stream(obs)) is not None:
        return what
    if obs.profile == "adk-events":
        return _adk_profile(obs)
    if obs.profile in _WIRE_TYPES:
        return _typed_wire(obs)
    return _typed_profile(obs)
