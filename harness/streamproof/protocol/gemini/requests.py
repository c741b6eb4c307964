"""What the fake model reads from a Gemini request: the route of its path, the estimated
prompt tokens, and the ADK agent that makes the call."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from streamproof.protocol.gemini.wire import count_tokens

Method = Literal["streamGenerateContent", "generateContent"]

_ROUTE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_AGENT_NAME = re.compile(r'Your internal name is "([^"]+)"')


def _texts(value: Any) -> Iterator[str]:
    """The ``text`` strings of a Content-shaped value (or the value itself, if a string)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            elif isinstance(item, Mapping | list):
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """Estimated ``promptTokenCount`` for a request, from the text of its contents and system
    instruction."""
    text = "".join(_texts(body.get("contents"))) + "".join(_texts(body.get("systemInstruction")))
    return max(1, count_tokens(text))


def agent_name(body: Mapping[str, Any]) -> str | None:
    """The ADK agent's name: ADK writes ``Your internal name is "NAME"`` into the system
    instruction."""
    instruction = body.get("systemInstruction", body.get("system_instruction"))
    for text in _texts(instruction):
        match = _AGENT_NAME.search(text)
        if match is not None:
            return match.group(1)
    return None


@dataclass(frozen=True, slots=True)
class Route:
    """A parsed ``/{apiVersion}/models/{model}:{method}`` path."""

    api_version: str
    model: str
    method: Method


def parse_route(path: str) -> Route | None:
    """The route for a model path, or ``None`` when the fake does not serve it."""
    match = _ROUTE.match(path)
    if match is None:
        return None
    method = match.group("method")
    if method == "streamGenerateContent":
        return Route(match.group("version"), match.group("model"), "streamGenerateContent")
    if method == "generateContent":
        return Route(match.group("version"), match.group("model"), "generateContent")
    return None
