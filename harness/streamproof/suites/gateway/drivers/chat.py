"""The chat turn on the wire: the request a turn sends (the target's ``chat_body``, else its
profile's own), the event stream read as the browser reads it, and a cut on the browser link
recorded as the browser leaving.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp

from streamproof.faults.records import LinkEvent
from streamproof.protocol.sse import Decoder
from streamproof.suites.gateway.checks.link_faults import browser_link_cut
from streamproof.suites.gateway.observation import ChatResponse, Frame
from streamproof.suites.gateway.profiles.base import ChatBody
from streamproof.suites.gateway.profiles.registry import profile
from streamproof.suites.gateway.target.config import GatewayTarget

__all__ = ["browser_left", "chat_request", "stream_chat"]


def chat_request(target: GatewayTarget, text: str, session_id: str, *, streaming: bool) -> ChatBody:
    """The chat request of one turn: the target's ``chat_body`` filled in, else its profile's own
    request (the user's text as the body on the seed's wire)."""
    filled = target.filled_chat_body(text, session_id, streaming=streaming)
    if filled is not None:
        return ChatBody(json.dumps(filled).encode("utf-8"), "application/json", filled)
    request = profile(target.profile).request
    if request is None:
        return ChatBody(text.encode("utf-8"), "text/plain; charset=utf-8")
    return request(text, session_id, streaming)


async def stream_chat(
    http: aiohttp.ClientSession,
    endpoint: tuple[str, str],
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    t0: float,
    disconnect_after: int | None = None,
    count: Callable[[list[Frame]], int] = len,
) -> tuple[ChatResponse, list[Frame]]:
    """Send one chat turn and read its event stream until it ends, ``timeout`` (real seconds
    from ``t0``) passes, or the browser leaves after ``disconnect_after`` frames (as ``count``
    counts them): how the response ended, and the frames as received."""
    method, url = endpoint
    frames: list[Frame] = []
    decoder = Decoder()
    status: int | None = None
    content_type: str | None = None
    response_headers: dict[str, str] = {}
    deadline = t0 + timeout

    def add(events: list[Any]) -> None:
        now = time.monotonic() - t0
        for ev in events:
            frames.append(
                Frame(
                    index=len(frames),
                    t=round(now, 4),
                    event=ev.type,
                    id=ev.id,
                    id_line=ev.id_line,
                    data=ev.data,
                )
            )

    def result(end: str, error: str | None = None, body: str = "") -> ChatResponse:
        return ChatResponse(
            status=status,
            content_type=content_type,
            end=end,
            error=error,
            elapsed=round(time.monotonic() - t0, 4),
            body_excerpt=body[:500],
            headers=response_headers,
        )

    try:
        async with asyncio.timeout_at(_loop_time_for(deadline)):
            async with http.request(
                method,
                url,
                data=body,
                headers={**headers, "Accept": "text/event-stream"},
            ) as resp:
                status = resp.status
                content_type = resp.headers.get("Content-Type")
                response_headers = {k.lower(): v for k, v in resp.headers.items()}
                if status != 200 or not (content_type or "").startswith("text/event-stream"):
                    excerpt = (await resp.content.read(4096)).decode("utf-8", "replace")
                    return result("not-sse", body=excerpt), frames
                if disconnect_after == 0:
                    resp.close()
                    return result("client-closed"), frames
                try:
                    async for chunk in resp.content.iter_any():
                        add(decoder.feed(chunk))
                        if disconnect_after is not None and count(frames) >= disconnect_after:
                            # The browser goes away: close the socket, as a closed tab does.
                            resp.close()
                            return result("client-closed"), frames
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
                    add(decoder.close())
                    return result("error", f"{type(exc).__name__}: {exc}"), frames
                add(decoder.close())
                return result("clean"), frames
    except TimeoutError:
        return result("timeout", f"no end of stream within {timeout:.2f}s real time"), frames
    except aiohttp.ClientConnectorError as exc:
        return result("refused", f"{type(exc).__name__}: {exc}"), frames
    except aiohttp.ClientError as exc:
        return result("error", f"{type(exc).__name__}: {exc}"), frames


def browser_left(
    response: ChatResponse, events: Sequence[LinkEvent]
) -> tuple[ChatResponse, float | None]:
    """A cut on the browser link (the harness's own connection to the gateway) is the browser
    going away, a closed tab: the response is recorded as the browser closing it at the cut,
    with how the link cut it, so the rules judge it as ``request.disconnect_after_frames``
    (GW-DISPOSE and the rest apply; how the stream would have ended is not known)."""
    cut = browser_link_cut(events)
    if cut is None or cut.fault is None:
        return response, None
    how = f"the browser link cut the stream ({cut.fault.action}, {cut.detail}) at {cut.t:.3f}s"
    seen = f"; the browser saw: {response.error}" if response.error else ""
    left = response.model_copy(update={"end": "client-closed", "error": how + seen})
    return left, round(cut.t, 4)


def _loop_time_for(monotonic_deadline: float) -> float:
    loop = asyncio.get_running_loop()
    return loop.time() + (monotonic_deadline - time.monotonic())
