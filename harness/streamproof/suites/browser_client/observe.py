"""Turning what a run recorded (the page's screen states and received text, the fake's frames,
the link's records; or a reducer's states) into a
:class:`~.observation.BrowserClientObservation`. Pure."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamproof.fakes.gateway import GatewayFrame, GatewayRequest
from streamproof.fakes.gateway.server import Role
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent
from streamproof.suites.browser_client.observation import (
    BrowserClientObservation,
    Item,
    PageRequest,
    ScreenState,
    SentFrame,
    StreamEnd,
)
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.browser_client.target import Screen

__all__ = ["module_observation", "page_observation", "reducer_screen", "stream_end"]

_TERMINAL = ("done", "error")


def _items(values: Any) -> tuple[Item, ...]:
    out: list[Item] = []
    for value in values or ():
        if isinstance(value, Mapping) and str(value.get("text") or "").strip():
            author = value.get("author")
            out.append(
                Item(author=str(author) if author is not None else None, text=str(value["text"]))
            )
    return tuple(out)


def _history(scenario: BrowserClientScenario) -> tuple[Item, ...]:
    return tuple(
        Item(author=i.author, text=i.text) for i in scenario.stored_history() if i.text is not None
    )


def _block_ends(blocks: Sequence[str], received: str) -> list[int | None]:
    """Where each frame's block ends in the text the page's readers received (``None``: the
    block never arrived whole)."""
    ends: list[int | None] = []
    start = 0
    for block in blocks:
        at = received.find(block, start)
        if at < 0:
            ends.append(None)
        else:
            start = at + len(block)
            ends.append(start)
    return ends


def stream_end(
    events: Sequence[LinkEvent], reached_terminal: bool
) -> tuple[StreamEnd, float | None]:
    """How the page's first chat request ended, from the link's records, and when."""
    chat = next((e for e in events if e.kind == "request" and e.method == "POST"), None)
    if chat is None:
        return "none", None
    end = next((e for e in events if e.kind == "end" and e.request == chat.request), None)
    if end is None:
        return ("terminal", None) if reached_terminal else ("open", None)
    if reached_terminal:
        return "terminal", end.t
    if end.how == "clean":
        if end.by == "proxy" and (end.status or 0) >= 400:
            return "status", end.t
        return "clean", end.t
    if end.by == "client":
        return "left", end.t
    return "broken", end.t


def _role(method: str, path: str, roles: Iterable[GatewayRequest]) -> Role:
    for request in roles:
        if request.method == method and request.path == path:
            return request.role
    if method == "OPTIONS":
        return "preflight"
    return "chat" if method == "POST" else "other"


def _requests(
    events: Sequence[LinkEvent], fake: Sequence[GatewayRequest]
) -> tuple[PageRequest, ...]:
    """Every request the page made, as the link saw it (so one a fault answered for the fake
    counts too); the fake's own record when the link's engine does not see requests."""
    seen = [e for e in events if e.kind == "request"]
    if not seen:
        return tuple(
            PageRequest(
                t=r.t,
                method=r.method,
                path=r.path,
                role=r.role,
                status=r.status,
                last_event_id=r.last_event_id,
            )
            for r in fake
        )
    status: dict[int | None, int] = {}
    for e in events:
        if e.kind in ("response_headers", "end") and e.status is not None:
            status.setdefault(e.request, e.status)
    out = []
    for e in seen:
        method, path = (e.method or "").upper(), e.path or ""
        own = next((r for r in fake if r.method == method and r.path == path), None)
        out.append(
            PageRequest(
                t=e.t,
                method=method,
                path=path,
                role=_role(method, path, fake),
                status=status.get(e.request, 0),
                last_event_id=own.last_event_id if own is not None else None,
            )
        )
    return tuple(out)


def page_observation(
    scenario: BrowserClientScenario,
    *,
    target: str,
    time_scale: float,
    frames: Sequence[GatewayFrame],
    blocks: Sequence[str],
    profile: str,
    sent: Mapping[int, float],
    received: str,
    states: Sequence[Mapping[str, Any]],
    requests: Sequence[GatewayRequest],
    link_events: tuple[LinkEvent, ...],
    reconnect_s: float,
    screen: Screen | None,
    hidden_at: tuple[float, ...],
    console_errors: tuple[str, ...],
    plan: tuple[Fault, ...] | None = None,
) -> BrowserClientObservation:
    ends = _block_ends(blocks, received)
    arrived = sorted(e for e in ends if e is not None)
    sent_frames = tuple(
        SentFrame(
            index=i,
            type=f.type,
            data=f.data,
            t_sent=sent.get(i),
            reached_page=ends[i - 1] is not None,
        )
        for i, f in enumerate(frames, start=1)
    )
    reached_terminal = any(f.reached_page and f.type in _TERMINAL for f in sent_frames)
    how, t_end = stream_end(link_events, reached_terminal)
    screen_states = tuple(
        ScreenState(
            t=float(s["t"]),
            frames=bisect.bisect_right(arrived, int(s.get("recv", 0))),
            settled=bool(s.get("settled")),
            messages=_items(s.get("messages")),
            drafts=_items(s.get("drafts")),
            status=s.get("status") or None,
            error_shown=bool(s.get("error_shown")),
        )
        for s in states
    )
    return BrowserClientObservation(
        scenario=scenario.id,
        target=target,
        mode="page",
        profile=profile,
        prompt=scenario.prompt,
        time_scale=time_scale,
        frames=sent_frames,
        states=screen_states,
        requests=_requests(link_events, requests),
        history=_history(scenario),
        stream_end=how,
        t_stream_end=t_end,
        reconnect_s=reconnect_s,
        # AG-UI carries no author: what a page shows there is a role, not the frame's author.
        shows_authors=profile == "typed-frames"
        and screen is not None
        and (screen.message_author is not None or _authors_in(screen_states)),
        has_status=screen is not None and screen.status is not None,
        has_error_indicator=screen is not None and screen.error is not None,
        link_events=link_events,
        faults=plan if plan is not None else scenario.links.browser,
        tab_hidden_at=hidden_at,
        console_errors=console_errors,
    )


def _authors_in(states: Iterable[ScreenState]) -> bool:
    return any(i.author is not None for s in states for i in (*s.messages, *s.drafts))


def reducer_screen(
    state: Mapping[str, Any],
) -> tuple[tuple[Item, ...], tuple[Item, ...], str | None]:
    """A reducer state's messages, drafts and status (a draft may be one object, a list of
    them, or a ``drafts`` object mapping an author to its text)."""
    draft = state.get("draft")
    drafts: list[Any] = []
    if isinstance(draft, Mapping):
        drafts.append(draft)
    elif isinstance(draft, list):
        drafts.extend(draft)
    by_author = state.get("drafts")
    if isinstance(by_author, Mapping):
        drafts.extend({"author": a, "text": t} for a, t in by_author.items() if isinstance(t, str))
    status = state.get("status")
    return _items(state.get("messages")), _items(drafts), str(status) if status else None


def module_observation(
    scenario: BrowserClientScenario,
    target: str,
    states: Sequence[Mapping[str, Any]],
    time_scale: float,
) -> BrowserClientObservation:
    """A reducer's run: every frame reached it, and each state is the settled screen after a
    frame (the first one before any)."""
    frames = tuple(
        SentFrame(index=i, type=f.type, data=f.payload, t_sent=i * 0.001, reached_page=True)
        for i, f in enumerate(scenario.frames, start=1)
    )
    screens = []
    for n, state in enumerate(states):
        messages, drafts, status = reducer_screen(state if isinstance(state, Mapping) else {})
        screens.append(
            ScreenState(
                t=n * 0.001,
                frames=n,
                settled=True,
                messages=messages,
                drafts=drafts,
                status=status,
                error_shown=False,
            )
        )
    terminal = scenario.frames[-1].type in _TERMINAL
    return BrowserClientObservation(
        scenario=scenario.id,
        target=target,
        mode="module",
        prompt=scenario.prompt,
        time_scale=time_scale,
        frames=frames,
        states=tuple(screens),
        requests=(),
        history=_history(scenario),
        stream_end="terminal" if terminal else "clean",
        t_stream_end=len(frames) * 0.001,
        reconnect_s=0.0,
        shows_authors=True,
        has_status=any("status" in s for s in states if isinstance(s, Mapping)),
        has_error_indicator=False,
    )
