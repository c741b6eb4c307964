"""Observations: everything recorded while a scenario ran, as plain serialisable data.

Checks are pure functions of an observation. Users who collect frames, a history and the
fakes' records by other means can build a :class:`GatewayObservation` themselves and call the
same checks (see :mod:`streamproof.suites.gateway.checks`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from streamproof.core.durations import on_both_clocks
from streamproof.fakes.records import ModelCall, TlsRefusal, ToolCall
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.profiles.wire import FrameMapping, OnDisconnect, ProfileName
from streamproof.suites.gateway.scenario import GatewayExpect, GatewayLimits, ModelPath

__all__ = [
    "AuthProbe",
    "ChatResponse",
    "Frame",
    "GatewayObservation",
    "ModelCall",
    "ToolCall",
]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Frame(_Record):
    """One SSE event as the browser's EventSource would dispatch it."""

    index: int
    t: float
    """Seconds since the chat request was sent."""
    event: str
    """The event type (``message`` when the block had no ``event:`` line, per WHATWG)."""
    id: str
    """The last event id in force for this event (WHATWG: it persists across events)."""
    id_line: bool = True
    """Whether this event's own block carried an ``id:`` line."""
    data: str
    wire: str | None = None
    """Set on a frame of a profile's seed view: the wire's own name of the event it was read
    from (AG-UI's ``TEXT_MESSAGE_CONTENT``, a team's own event name); ``None`` on a frame as
    received."""

    def payload(self) -> Any:
        """The data parsed as JSON, or ``None`` when it is not JSON."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


class ChatResponse(_Record):
    status: int | None
    content_type: str | None
    end: Literal["clean", "error", "timeout", "not-sse", "refused", "client-closed"]
    """How the response body ended: a clean end of body, a transport error, the harness's
    run timeout, a response that was not an event stream, no connection at all, or the
    harness (the browser) went away on purpose."""
    error: str | None = None
    elapsed: float = 0.0
    body_excerpt: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    """The response headers, names in lower case (the AI SDK's stream announces its protocol
    in one)."""


class AuthProbe(_Record):
    name: str
    method: str
    url: str
    status: int | None
    expected: str
    error: str | None = None


class GatewayObservation(_Record):
    scenario: str
    target: str
    profile: ProfileName = "typed-frames"
    """The wire the target declared; the checks judge by it (:mod:`.profiles`)."""
    frame_mapping: FrameMapping | None = None
    """A ``typed-frames`` target's own event names and payload fields, if it declared any."""
    on_disconnect: OnDisconnect = "dispose"
    """What the target declares it does with the run when the browser goes away."""
    request_body: Any = None
    """The chat request's JSON body as sent (AG-UI's ``RunAgentInput``...), ``None`` for a text
    body."""
    session_error: str | None = None
    """What went wrong creating the session through ``endpoints.session``, if anything."""
    marker: str
    """The secret put into every tool payload; it must never reach a frame."""
    request_text: str
    streaming: bool
    response: ChatResponse
    frames: tuple[Frame, ...] = ()
    model_calls: tuple[ModelCall, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    service_tools: tuple[str, ...] | None = None
    """The tools the fake tool service serves; a call to any other name (an agent transfer,
    a sub-agent used as a tool) is answered inside ADK. ``None``: unknown."""
    history: tuple[dict[str, Any], ...] | None = None
    history_error: str | None = None
    history_read_at: float | None = None
    """When the history was read (seconds since the chat request)."""
    disconnected_at: float | None = None
    """When the browser went away on purpose (``request.disconnect_after_frames``)."""
    history_after_run: tuple[dict[str, Any], ...] | None = None
    """For a target that detaches its runs: the history read once the detached run had ended
    (or its bound had passed), as a user reloading later sees it."""
    history_after_run_error: str | None = None
    history_after_run_at: float | None = None
    link_events: dict[str, tuple[LinkEvent, ...]] = Field(default_factory=dict)
    """What each proxied hop saw: connections, requests, events forwarded, faults fired."""
    auth_probes: tuple[AuthProbe, ...] | None = None
    auth_declared: bool = False
    scripted_calls: int | Literal["forever"] | None = None
    """How many model calls the scenario's script answers (``forever``: a turn repeats without
    end, a runaway loop); ``None``: unknown."""
    scripted_agents: tuple[str | None, ...] = ()
    """Per scripted model call (one entry per call, a turn repeated ``times`` counted out), the
    agent the scenario expects to make it; ``None``: any agent."""
    expect: GatewayExpect = GatewayExpect()
    limits: GatewayLimits = GatewayLimits()
    time_scale: float = 1.0
    stream_wait_s: float | None = None
    """The real seconds the harness waited for the stream's end: the scenario's scaled
    ``run_timeout``, never below a floor that protects verdicts under load."""
    target_log: str = ""
    """The tail of the target's stdout and stderr, when the harness started it."""
    model_path: ModelPath = "direct"
    """How the gateway was told to reach the model (the scenario's ``model_path``): directly,
    or through a corporate proxy named by ``HTTPS_PROXY`` (``forward-proxy``; a proxy that
    buffers each response whole: ``buffering-proxy``)."""
    model_link_shared: bool = False
    """Under ``--concurrency``: the sessions' model calls share one model link whose requests
    name no session, so this copy holds none of its records, and whether the proxy carried the
    model calls is judged over every session at once (:mod:`.checks.proxy`)."""
    model_tls_refusals: tuple[TlsRefusal, ...] = ()
    """On a proxy path: the TLS handshakes clients gave up at the fake model's HTTPS port,
    whose certificate no one but the proxy trusts."""
    proxy_upstream: tuple[str, ...] = ()
    """On a proxy path: the local address of each connection the proxy opened to the model. A
    refused handshake from one of them is the proxy's own (it let go of a connection whose
    request the gateway had dropped), not the gateway's."""
    run_bound_s: float | None = None
    """The run bound the gateway was given (real seconds, ``STREAMPROOF_RUN_TIMEOUT``) when the
    target declares that it honours it; ``None``: no bound to judge against."""

    @property
    def refusals_past_proxy(self) -> tuple[TlsRefusal, ...]:
        """The refused handshakes at the model that none of the proxy's own connections made:
        a client that went past the proxy."""
        own = set(self.proxy_upstream)
        return tuple(r for r in self.model_tls_refusals if r.peer not in own)

    @property
    def model_link_buffers(self) -> bool:
        """The model link held each model response until it ended (``model_path:
        buffering-proxy``): the gateway got every chunk at once, whatever it does."""
        return self.model_path == "buffering-proxy"

    def stream_wait(self) -> str:
        """How long the stream was given to end, on both clocks (``10.00s (60s scenario
        time)``), for messages about a stream still open at the end of that wait."""
        run_timeout = self.limits.run_timeout
        real = self.stream_wait_s if self.stream_wait_s is not None else run_timeout
        return on_both_clocks(real, self.time_scale, run_timeout)

    def frame_log(self, limit: int = 60) -> str:
        """The frames as the seed writes them: ``id:3  event:delta  {...}``."""
        lines = [
            f"  {f.t:7.3f}s  id:{f.id or '-':<6} event:{f.event:<11} {f.data}" for f in self.frames
        ]
        if len(lines) > limit:
            lines = [
                *lines[: limit // 2],
                f"  ... {len(lines) - limit} more ...",
                *lines[-limit // 2 :],
            ]
        return "\n".join(lines) if lines else "  (no frames)"
