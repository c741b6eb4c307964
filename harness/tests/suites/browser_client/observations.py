"""Hand-built browser-client observations for the checks' tests: a run described frame by frame
and screen by screen, the way a page would have shown it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamproof.suites.browser_client.observation import (
    BrowserClientObservation,
    Item,
    PageRequest,
    ScreenState,
    SentFrame,
    StreamEnd,
)

PROMPT = "Where is order 1042?"
ANSWER = "Order 1042 shipped on 30 September and is due Monday."

WORKED = [
    ("tool_call", {"names": ["lookupOrder"]}),
    ("tool_result", {"count": 1}),
    ("delta", {"author": "support", "text": "Order 1042 shipped "}),
    ("delta", {"author": "support", "text": "on 30 September and "}),
    ("delta", {"author": "support", "text": "is due Monday."}),
    ("message", {"author": "support", "text": ANSWER, "final": True}),
    ("done", {}),
]


def item(author: str | None, text: str) -> Item:
    return Item(author=author, text=text)


def screen(
    frames: int,
    messages: Sequence[tuple[str | None, str]] = (),
    drafts: Sequence[tuple[str | None, str]] = (),
    status: str | None = None,
    error: bool = False,
    *,
    t: float | None = None,
    settled: bool = True,
) -> ScreenState:
    return ScreenState(
        t=frames * 0.1 if t is None else t,
        frames=frames,
        settled=settled,
        messages=(item("user", PROMPT), *(item(a, x) for a, x in messages)),
        drafts=tuple(item(a, x) for a, x in drafts),
        status=status,
        error_shown=error,
    )


def seed_screens(frames: Sequence[tuple[str, dict[str, Any]]]) -> list[ScreenState]:
    """The screens the seed's reducer shows after each frame."""
    out = [screen(0)]
    messages: list[tuple[str | None, str]] = []
    draft: tuple[str, str] | None = None
    status: str | None = None
    for n, (kind, data) in enumerate(frames, start=1):
        if kind == "delta":
            if draft is None or draft[0] != data["author"]:
                draft = (data["author"], data["text"])
            else:
                draft = (draft[0], draft[1] + data["text"])
        elif kind == "message":
            messages.append((data["author"], data["text"]))
            draft = None
        elif kind == "tool_call":
            draft, status = None, "Calling " + ", ".join(data["names"])
        elif kind in ("error", "done"):
            draft, status = None, kind
        out.append(
            screen(
                n,
                messages,
                [(draft[0], draft[1].strip())] if draft else [],
                status,
                error=status == "error",
            )
        )
    return out


def observe(
    frames: Sequence[tuple[str, dict[str, Any]]] = WORKED,
    states: Sequence[ScreenState] | None = None,
    *,
    reached: int | None = None,
    requests: Sequence[PageRequest] | None = None,
    history: Sequence[tuple[str, str]] = (("user", PROMPT), ("support", ANSWER)),
    stream_end: StreamEnd = "terminal",
    t_stream_end: float | None = 1.0,
    mode: str = "page",
    shows_authors: bool = True,
    has_status: bool = True,
) -> BrowserClientObservation:
    reached = len(frames) if reached is None else reached
    return BrowserClientObservation(
        scenario="browser_client/test",
        target="test-page",
        mode=mode,  # type: ignore[arg-type]
        prompt=PROMPT,
        time_scale=1.0,
        frames=tuple(
            SentFrame(index=n, type=k, data=d, t_sent=n * 0.1, reached_page=n <= reached)
            for n, (k, d) in enumerate(frames, start=1)
        ),
        states=tuple(seed_screens(frames[:reached]) if states is None else states),
        requests=tuple(
            [PageRequest(t=0.05, method="POST", path="/chat/s", role="chat", status=200)]
            if requests is None
            else requests
        ),
        history=tuple(item(a, x) for a, x in history),
        stream_end=stream_end,
        t_stream_end=t_stream_end,
        reconnect_s=1.0,
        shows_authors=shows_authors,
        has_status=has_status,
        has_error_indicator=True,
    )


def outcome(verdicts: Sequence[Any], requirement: str) -> str:
    (verdict,) = [v for v in verdicts if v.requirement == requirement]
    return str(verdict.outcome.value)
