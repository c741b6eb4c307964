"""One chat turn as the browser takes it: the request through the browser link, the stream
read to its end (or left), the waits the gateway is owed after it, the history read, and the
auth probes; what the harness saw, before it becomes an observation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from streamproof.fakes.records import ModelCall, TlsRefusal, ToolCall
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.drivers.auth import auth_probes
from streamproof.suites.gateway.drivers.chat import browser_left, chat_request, stream_chat
from streamproof.suites.gateway.drivers.history import HistoryRead, read_history, set_up_session
from streamproof.suites.gateway.observation import AuthProbe, ChatResponse, Frame
from streamproof.suites.gateway.profiles.base import ReadAs
from streamproof.suites.gateway.profiles.registry import profile
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.suites.gateway.target.gateways import Gateways
from streamproof.suites.gateway.target.waits import Waits

__all__ = ["Snapshot", "Turn", "TurnDriver"]

Snapshot = Callable[[], tuple[tuple[ModelCall, ...], tuple[ToolCall, ...], tuple[TlsRefusal, ...]]]
"""Reads one turn's model and tool calls (of its session, under ``--concurrency``) and the
TLS handshakes refused at the fake model (none per session under ``--concurrency``: a
refusal names no session)."""


@dataclass(frozen=True)
class Turn:
    """What the harness saw of one chat turn, before it becomes an observation."""

    response: ChatResponse
    frames: tuple[Frame, ...]
    disconnected_at: float | None
    history: tuple[dict[str, Any], ...] | None
    history_error: str | None
    history_read_at: float
    model_calls: tuple[ModelCall, ...]
    tool_calls: tuple[ToolCall, ...]
    link_events: dict[str, tuple[LinkEvent, ...]]
    model_tls_refusals: tuple[TlsRefusal, ...]
    proxy_upstream: tuple[str, ...]
    probes: tuple[AuthProbe, ...] | None
    stream_wait: float
    request_text: str
    request_body: Any = None
    after_run: HistoryRead | None = None


class TurnDriver:
    """Drives the turns of one target on the gateway in use, speaking the target's profile."""

    def __init__(self, target: GatewayTarget, gateways: Gateways, waits: Waits) -> None:
        self.target = target
        self.gateways = gateways
        self.waits = waits
        self.wire = profile(target.profile)

    async def set_up_session(
        self, http: aiohttp.ClientSession, session_id: str, headers: dict[str, str]
    ) -> str | None:
        """Set-up, not the browser's traffic: straight to the gateway, before the clock."""
        assert self.gateways.gateway is not None
        endpoint = self.gateways.gateway.endpoint("session", session_id)
        return await set_up_session(http, endpoint, headers)

    async def drive(
        self,
        scenario: GatewayScenario,
        session_id: str,
        headers: dict[str, str],
        text: str,
        t0: float,
        snapshot: Snapshot,
    ) -> Turn:
        """One chat turn of ``session_id`` as the browser sends it (through the browser
        link), then its history and auth probes; ``snapshot`` reads this turn's model and tool
        calls once the stream has ended and the gateway settled."""
        gateway, links, waits = self.gateways.gateway, self.gateways.links, self.waits
        assert gateway is not None
        which = "chat" if scenario.request.streaming else "chat_none"
        # What the browser does goes through the browser link.
        endpoint = gateway.endpoint(which, session_id, base=links.browser_url)
        history_endpoint = gateway.endpoint("history", session_id, base=links.browser_url)
        assert endpoint is not None  # none_mode is declared exactly when chat_none is set
        request = scenario.request
        stream_wait = waits.stream(scenario, self.gateways.declared_run_bound)
        body = chat_request(self.target, text, session_id, streaming=request.streaming)
        wire = self.wire
        read_as = ReadAs(self.target.frames, request.streaming)
        async with aiohttp.ClientSession() as http:
            response, frames = await stream_chat(
                http,
                endpoint,
                body.data,
                {**headers, "Content-Type": body.content_type},
                timeout=stream_wait,
                t0=t0,
                disconnect_after=request.disconnect_after_frames,
                # The scenario counts the seed's frames: on another wire, the events that read
                # as one of them (an AG-UI RUN_STARTED is none).
                count=lambda got: len(wire.seed_frames(got, read_as)),
            )
            disconnected_at = response.elapsed if response.end == "client-closed" else None
            if disconnected_at is None:
                response, disconnected_at = browser_left(response, links.by_name["browser"].events)
            history_read_at: float | None = None
            after_run: HistoryRead | None = None
            if disconnected_at is not None:
                if request.reload:
                    history_read_at = time.monotonic() - t0
                    history, history_error = await read_history(http, history_endpoint, headers)
                if self.target.on_disconnect == "detach":
                    # The run goes on without the browser, on purpose: let it end (within its
                    # bound), then read what a later reload shows.
                    await waits.quiet(waits.detached(scenario, self.gateways.run_bound), t0)
                    read_at = time.monotonic() - t0
                    stored, stored_error = await read_history(http, history_endpoint, headers)
                    after_run = HistoryRead(stored, stored_error, round(read_at, 4))
                    if history_read_at is None:
                        history_read_at, history, history_error = read_at, stored, stored_error
                else:
                    await waits.disposal(scenario, t0, disconnected_at)
            else:
                await waits.settle(links.by_name["model"], response.end)
            if history_read_at is None:
                history_read_at = time.monotonic() - t0
                history, history_error = await read_history(http, history_endpoint, headers)
            # Snapshot before the auth probes: a gateway that wrongly accepts a probe would
            # start another run, and its model calls are not part of this turn.
            model_calls, tool_calls, refusals = snapshot()
            link_events = links.events()
            proxy_upstream = links.proxy_upstream()
            probes = None
            if scenario.expect.auth and self.target.auth_declared:
                probes = await auth_probes(http, gateway, session_id, self.target)
            elif scenario.expect.auth:
                probes = ()
        return Turn(
            response=response,
            frames=tuple(frames),
            disconnected_at=disconnected_at,
            history=history,
            history_error=history_error,
            history_read_at=history_read_at,
            model_calls=model_calls,
            tool_calls=tool_calls,
            link_events=link_events,
            model_tls_refusals=refusals,
            proxy_upstream=proxy_upstream,
            probes=probes,
            stream_wait=stream_wait,
            request_text=text,
            request_body=body.json,
            after_run=after_run,
        )
