"""What a fault on a link did to the exchange: the browser link's cuts and stalls (the browser
leaving, a slow browser), and which model calls a fault on the model link kept from the gateway.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.observation import GatewayObservation

__all__ = [
    "BROWSER_CUTS",
    "browser_link_cut",
    "browser_link_history_fault",
    "browser_link_stall",
    "link_faulted_calls",
    "model_link_calls",
]


# --- the browser link: the browser leaving, a slow browser ----------------------------------


BROWSER_CUTS = frozenset({"rst", "fin", "end_clean", "refuse"})
"""Fault actions that end the chat stream on the browser link: the browser went away (a
closed tab), as ``request.disconnect_after_frames`` does."""


def _chat_fault(events: Sequence[LinkEvent], actions: frozenset[str]) -> LinkEvent | None:
    chat = next((e.request for e in events if e.kind == "request"), None)
    if chat is None:
        return None
    return next(
        (
            e
            for e in events
            if e.kind == "fault"
            and e.request == chat
            and e.fault is not None
            and e.fault.action in actions
        ),
        None,
    )


def browser_link_cut(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a cut (:data:`BROWSER_CUTS`) on the browser link's chat request
    (its first request; the history read comes after it), if one fired. The browser link is
    the harness's own connection to the gateway: a cut there is the browser leaving."""
    return _chat_fault(events, BROWSER_CUTS)


def browser_link_stall(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a stall on the browser link's chat request, if one fired: a slow
    browser. The link swallows what the gateway sends while it holds, so the frames that
    arrived are not the whole stream the gateway sent."""
    return _chat_fault(events, frozenset({"stall"}))


def browser_link_history_fault(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a cut or a stall on a browser-link request after the chat (the
    history read), if one fired: what the history read got is the link's doing."""
    chat = next((e.request for e in events if e.kind == "request"), None)
    return next(
        (
            e
            for e in events
            if e.kind == "fault"
            and e.request is not None
            and e.request != chat
            and e.fault is not None
            and (e.fault.action in BROWSER_CUTS or e.fault.action == "stall")
        ),
        None,
    )


# --- the model link: what a fault kept from the gateway ---------------------------------------

_LOSSY_ACTIONS = frozenset({"fin", "rst", "end_clean", "corrupt", "status"})
"""Fault actions after which the gateway cannot have received what the fake model sent."""


def model_link_calls(obs: GatewayObservation) -> dict[int, int]:
    """Model-link request number -> the fake model's call index. The two count alike except
    past a request the link ended without an upstream answer (a fault ``on_request`` cut or
    answered it before forwarding it): that one never reached the fake, so the model client's
    next request (a retry) is the fake's next call, and it has no call of its own."""
    events = obs.link_events.get("model", ())
    requested = {e.request for e in events if e.kind == "request" and e.request is not None}
    answered = {e.request for e in events if e.kind == "response_headers"}
    ended = {e.request for e in events if e.kind == "end"}
    skipped = sorted(r for r in requested if r in ended and r not in answered)
    numbers = {e.request for e in events if e.request is not None}
    return {r: r - bisect_left(skipped, r) for r in sorted(numbers) if r not in skipped}


def link_faulted_calls(obs: GatewayObservation) -> frozenset[int]:
    """Model calls whose answer a fault on the model link kept from the gateway, whole or in
    part: a cut, a rewrite, or a stall that swallowed some of it (``stall`` swallows what
    arrives while it holds, even when it is bounded and the exchange then goes on: the plan
    vocabulary's "what was swallowed meanwhile is lost"). The fake model saw such a call
    complete, but the gateway did not get what it sent, so nothing is owed for that answer
    beyond what reached it. A stall that swallowed nothing (it held before the model's first
    chunk, and every chunk was forwarded after it) keeps nothing back. Link requests are
    matched to the fake's calls by :func:`model_link_calls`."""
    events = obs.link_events.get("model", ())
    calls = model_link_calls(obs)
    ends = {e.request: e.how for e in events if e.kind == "end" and e.request is not None}
    forwarded: dict[int, int] = {}
    for e in events:
        if e.kind == "event" and e.request is not None:
            forwarded[e.request] = forwarded.get(e.request, 0) + 1
    sent = {c.index: c.chunks_sent for c in obs.model_calls}

    def swallowed(request: int) -> bool:
        if ends.get(request) != "clean":
            return True  # a black hole, or a stall the exchange never came out of
        return forwarded.get(request, 0) < sent.get(calls[request], 0)

    return frozenset(
        calls[e.request]
        for e in events
        if e.kind == "fault"
        and e.request is not None
        and e.request in calls
        and e.fault is not None
        and (
            e.fault.action in _LOSSY_ACTIONS or (e.fault.action == "stall" and swallowed(e.request))
        )
    )
