"""What a gateway target declares about its wire: the profile, the frame-name mapping of a
``typed-frames`` gateway with its own names, and the disconnect policy.

Plain validated data (no I/O, no checks), shared by the target file, the observation and the
profiles.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

__all__ = [
    "PROFILES_WITH_SESSION_IN_BODY",
    "FieldPath",
    "FrameKind",
    "FrameMapping",
    "KindMapping",
    "OnDisconnect",
    "ProfileName",
    "field_at",
    "has_field",
]

ProfileName = Literal["typed-frames", "adk-events", "ag-ui", "ai-sdk-ui"]
"""The wire a gateway speaks: the seed's typed SSE frames (optionally under the team's own
names, :class:`FrameMapping`), ADK's raw event JSON (``adk api_server``), AG-UI events (as
``ag-ui-adk`` streams them), or the Vercel AI SDK UI message stream (protocol v1)."""

PROFILES_WITH_SESSION_IN_BODY: Final[frozenset[str]] = frozenset({"ag-ui", "ai-sdk-ui"})
"""Profiles whose own request carries the session id in its JSON body (AG-UI's ``threadId``,
the AI SDK's chat ``id``), so the chat endpoint's path need not."""

OnDisconnect = Literal["dispose", "detach"]
"""What the gateway does with the run when the browser goes away: ``dispose`` it (the seed's
wiring, judged by GW-DISPOSE) or ``detach`` it (the run finishes and its answer is stored once,
judged by GW-DETACH-PERSIST-ONCE)."""

FrameKind = Literal["delta", "message", "tool_call", "tool_result", "error", "done"]

_PATH = re.compile(r"^[A-Za-z_$][\w$-]*(\.[A-Za-z_$][\w$-]*)*$")

FieldPath = str
"""Where a field lives in a frame's JSON payload: a key, or keys joined by dots
(``meta.author``)."""

_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "delta": ("author", "text"),
    "message": ("author", "text", "final"),
    "tool_call": ("names",),
    "tool_result": ("count",),
    "error": ("code", "retryable"),
    "done": (),
}
"""The payload fields of each of the seed's frame kinds that a mapping may relocate."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class KindMapping(_Model):
    """One of the seed's frame kinds under the team's own names: the SSE ``event:`` name it is
    sent as, and where each of its payload fields lives (default: the seed's own key)."""

    event: str
    author: FieldPath | None = None
    text: FieldPath | None = None
    final: FieldPath | None = None
    names: FieldPath | None = None
    count: FieldPath | None = None
    code: FieldPath | None = None
    retryable: FieldPath | None = None

    @field_validator("event")
    @classmethod
    def _event_name(cls, v: str) -> str:
        if not v or any(c in v for c in "\r\n:") or v != v.strip():
            raise ValueError(f"{v!r} is not an SSE event name (no colon, newline or edge spaces)")
        return v

    @field_validator("author", "text", "final", "names", "count", "code", "retryable")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        if v is not None and not _PATH.match(v):
            raise ValueError(f"{v!r} is not a field path (keys joined by dots, e.g. meta.author)")
        return v

    def path(self, field: str) -> FieldPath:
        """Where ``field`` lives in this kind's payload."""
        found: str | None = getattr(self, field)
        return found if found is not None else field


class FrameMapping(_Model):
    """The seed's six frame kinds under a team's own event names and payload fields (the
    ``frames:`` key of a ``typed-frames`` target). A kind left out keeps the seed's name and
    fields."""

    delta: KindMapping | str | None = None
    """``token`` is short for ``{event: token}`` (the seed's fields, under another name)."""
    message: KindMapping | str | None = None
    tool_call: KindMapping | str | None = None
    tool_result: KindMapping | str | None = None
    error: KindMapping | str | None = None
    done: KindMapping | str | None = None

    @field_validator("delta", "message", "tool_call", "tool_result", "error", "done")
    @classmethod
    def _shorthand(cls, v: KindMapping | str | None) -> KindMapping | str | None:
        if isinstance(v, str):
            KindMapping(event=v)  # the same rules for the name as the long form
        return v

    def _kind(self, kind: str) -> KindMapping | None:
        value: KindMapping | str | None = getattr(self, kind)
        return KindMapping(event=value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> FrameMapping:
        seen: dict[str, str] = {}
        for kind in _FIELDS:
            name = self.event_name(kind)
            if name in seen:
                raise ValueError(
                    f"{kind} and {seen[name]} are both sent as event {name!r}: a browser could "
                    "not tell them apart"
                )
            seen[name] = kind
            mapping = self._kind(kind)
            if mapping is None:
                continue
            for field in ("author", "text", "final", "names", "count", "code", "retryable"):
                if getattr(mapping, field) is not None and field not in _FIELDS[kind]:
                    raise ValueError(
                        f"{kind}.{field}: a {kind} frame has no {field} "
                        f"(its fields: {', '.join(_FIELDS[kind]) or 'none'})"
                    )
        return self

    def event_name(self, kind: str) -> str:
        """The SSE event name ``kind`` is sent as."""
        mapping = self._kind(kind)
        return mapping.event if mapping is not None else kind

    def kind_of(self, event: str) -> str | None:
        """The seed's kind of a frame sent as ``event``, or ``None`` for a name it does not use."""
        return next((k for k in _FIELDS if self.event_name(k) == event), None)

    def fields(self, kind: str) -> dict[str, FieldPath]:
        """Each payload field of ``kind`` and where it lives."""
        mapping = self._kind(kind)
        return {f: mapping.path(f) if mapping else f for f in _FIELDS[kind]}


_MISSING: Final = object()


def field_at(payload: Any, path: FieldPath) -> Any:
    """The value at ``path`` (keys joined by dots) in a JSON object, or a sentinel when any key
    on the way is missing (:func:`has_field` tells)."""
    value = payload
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def has_field(value: Any) -> bool:
    """Whether :func:`field_at` found something."""
    return value is not _MISSING
