"""The session's other endpoints: creating it before the turn (``endpoints.session``) and
reading its stored events (``endpoints.history``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import aiohttp

__all__ = ["HistoryRead", "read_history", "set_up_session"]


@dataclass(frozen=True)
class HistoryRead:
    """A history read after a detached run ended: the events, or what went wrong, and when."""

    events: tuple[dict[str, Any], ...] | None
    error: str | None
    at: float


async def set_up_session(
    http: aiohttp.ClientSession, endpoint: tuple[str, str] | None, headers: dict[str, str]
) -> str | None:
    """Create the scenario's session through ``endpoints.session`` (when the target declares
    one); what went wrong, or ``None``. A failure is recorded, not raised: the turn is still
    sent, and its verdicts (with the diagnosis) say what the gateway made of it."""
    if endpoint is None:
        return None
    method, url = endpoint
    try:
        async with http.request(
            method,
            url,
            json={},
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=10),
        ) as resp:
            body = await resp.read()
            if 200 <= resp.status < 300:
                return None
            excerpt = body[:300].decode("utf-8", "replace")
            return f"{method} {url} answered {resp.status}: {excerpt}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"{method} {url} failed: {type(exc).__name__}: {exc}"


async def read_history(
    http: aiohttp.ClientSession, endpoint: tuple[str, str] | None, headers: dict[str, str]
) -> tuple[tuple[dict[str, Any], ...] | None, str | None]:
    """The stored events of the session at ``endpoint`` (none declared: nothing to read), or
    what went wrong."""
    if endpoint is None:
        return None, None
    method, url = endpoint
    try:
        async with http.request(
            method, url, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as resp:
            body = await resp.read()
            if resp.status != 200:
                excerpt = body[:300].decode("utf-8", "replace")
                return None, f"{method} {url} answered {resp.status}: {excerpt}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        return None, f"{method} {url} failed: {type(exc).__name__}: {exc}"
    try:
        data = json.loads(body)
    except ValueError as exc:
        return None, f"{method} {url} did not answer JSON: {exc}"
    events = data.get("events") if isinstance(data, dict) else data
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        return None, (
            f"{method} {url} answered JSON that is neither a list of events nor an object "
            "with an 'events' list"
        )
    return tuple(events), None
