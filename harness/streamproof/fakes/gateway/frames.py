"""The fake gateway's frames as bytes on the wire and its history as ADK events. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["GatewayFrame", "history_events"]


@dataclass(frozen=True)
class GatewayFrame:
    type: str
    data: dict[str, Any]
    gap_s: float = 0.0
    """Wait this long (already scaled) before sending it."""
    retry: int | None = None

    def data_text(self) -> str:
        """The payload as one line of JSON."""
        return json.dumps(self.data, separators=(",", ":"), ensure_ascii=False)

    def block(self, index: int) -> str:
        """The SSE event as sent: ``id`` (the gateway's counter), ``event``, one ``data`` line."""
        retry = f"retry: {self.retry}\n" if self.retry is not None else ""
        return f"{retry}id: {index}\nevent: {self.type}\ndata: {self.data_text()}\n\n"


def history_events(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored ADK events (the shape ADK's session JSON uses, camelCase) for history items
    ``{author, text}``, ``{author, tool_call: [names]}`` or ``{author, tool_result: name}``."""
    events: list[dict[str, Any]] = []
    for n, item in enumerate(items, start=1):
        author = str(item["author"])
        if item.get("text") is not None:
            parts: list[dict[str, Any]] = [{"text": item["text"]}]
        elif item.get("tool_call") is not None:
            parts = [{"functionCall": {"name": name, "args": {}}} for name in item["tool_call"]]
        else:
            parts = [{"functionResponse": {"name": item.get("tool_result"), "response": {}}}]
        events.append(
            {
                "id": f"event-{n}",
                "author": author,
                "invocationId": "invocation-1",
                "content": {"role": "user" if author == "user" else "model", "parts": parts},
            }
        )
    return events
