"""One captured stream as the differential reads it: the events the oracles are given, and the
little of the observation around them that a known difference may depend on (how the response
ended, the thread the request named)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamproof.suites.gateway.observation import GatewayObservation

__all__ = ["Stream", "stream_of"]


def _parsed(payload: str) -> Mapping[str, Any] | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Stream:
    """A stream's events (their data, in order) and how its response ended."""

    name: str
    """What the stream is called in a table: the scenario's id, a capture's or a file's name."""
    profile: str
    payloads: tuple[str, ...]
    end: str = "clean"
    """How the response body ended (``ChatResponse.end``: ``clean``, ``client-closed`` ...)."""
    request_thread: str | None = None
    """The ``threadId`` the request named (AG-UI), if it was JSON with one."""
    events: tuple[Mapping[str, Any] | None, ...] = field(init=False, repr=False, compare=False)
    """Each payload as a JSON object (``None``: not one)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(_parsed(p) for p in self.payloads))

    def types(self) -> tuple[str | None, ...]:
        """Each event's ``type`` (``[DONE]`` for the AI SDK's end marker; ``None``: none)."""
        return tuple(
            "[DONE]"
            if p.strip() == "[DONE]"
            else (t if isinstance(t := (e or {}).get("type"), str) else None)
            for p, e in zip(self.payloads, self.events, strict=True)
        )

    def value(self, index: int | None, key: str) -> Any:
        """``key`` of event ``index`` (``None`` when there is no such event or field)."""
        if index is None or not 0 <= index < len(self.events):
            return None
        event = self.events[index]
        return event.get(key) if event is not None else None


def stream_of(obs: GatewayObservation, name: str | None = None) -> Stream:
    """The stream of one observation, named ``name`` (default: its scenario's id)."""
    body = obs.request_body if isinstance(obs.request_body, dict) else {}
    thread = body.get("threadId")
    return Stream(
        name=name or obs.scenario,
        profile=obs.profile,
        payloads=tuple(f.data for f in obs.frames),
        end=obs.response.end,
        request_thread=thread if isinstance(thread, str) else None,
    )
