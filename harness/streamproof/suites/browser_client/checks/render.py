"""``BR-RENDER-ONCE`` and ``BR-DRAFT-BY-AUTHOR``: what the screen shows while text streams.
Judged on every state the screen went through, so a double render that lasts one frame is
seen. Pure."""

from __future__ import annotations

import itertools
from collections import Counter

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.browser_client.checks.screen import clip, norm, state_after
from streamproof.suites.browser_client.observation import BrowserClientObservation, ScreenState

__all__ = ["draft_by_author_verdicts", "render_once_verdicts"]

MIN_TEXT = 4
"""Shorter texts are not looked for inside others (a one-word delta occurs anywhere)."""


def _allowed(obs: BrowserClientObservation, state: ScreenState) -> Counter[str]:
    """How often each answer may show in ``state``: as often as it was said, by the frames
    that had reached the page or by the history."""
    said: Counter[str] = Counter(
        norm(str(f.data.get("text", "")))
        for f in obs.frames
        if f.type == "message" and f.index <= state.frames
    )
    stored: Counter[str] = Counter(norm(i.text) for i in obs.history)
    return said | stored


def render_once_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    messages = [f for f in obs.frames if f.type == "message" and f.reached_page]
    if not messages and not obs.history:
        return [not_applicable("BR-RENDER-ONCE", "no message reached the page")]
    violations: list[str] = []
    seen: set[tuple[str, int]] = set()
    at: float | None = None
    for state in obs.states:
        shown = [norm(i.text) for i in (*state.messages, *state.drafts)]
        for text, allowed in _allowed(obs, state).items():
            if len(text) < MIN_TEXT or (text, state.frames) in seen:
                continue
            count = sum(item.count(text) for item in shown)
            if count > allowed:
                seen.add((text, state.frames))
                violations.append(
                    f"{clip(text)} was on screen {count} times after frame {state.frames} "
                    f"(at {state.t:.3f}s)"
                )
                at = at if at is not None else state.t
    for frame in messages:
        after = state_after(obs, frame.index)
        if after is None:
            continue
        author, text = frame.data.get("author"), norm(str(frame.data.get("text", "")))
        for draft in after.drafts:
            same_author = obs.shows_authors and draft.author == author
            if same_author or (norm(draft.text) and norm(draft.text) in text):
                violations.append(
                    f"after message frame {frame.index} ({author}) a draft {clip(draft.text)} "
                    "stayed beside it"
                )
                at = at if at is not None else after.t
    return [
        from_violations(
            "BR-RENDER-ONCE",
            _unique(violations),
            rule="the message replaces the draft; an answer is never on screen twice",
            ok=f"every answer was on screen once, in all {len(obs.states)} screen states",
            at=at,
        )
    ]


def draft_by_author_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    deltas = [f for f in obs.frames if f.type == "delta" and f.reached_page]
    switch = any(
        a.data.get("author") != b.data.get("author") for a, b in itertools.pairwise(deltas)
    )
    if not switch:
        return [
            not_applicable(
                "BR-DRAFT-BY-AUTHOR", "no delta of one author followed another author's delta"
            )
        ]
    by_author: dict[str, set[str]] = {}
    for frame in deltas:
        text = norm(str(frame.data.get("text", "")))
        if len(text) >= MIN_TEXT:
            by_author.setdefault(str(frame.data.get("author")), set()).add(text)
    violations: list[str] = []
    at: float | None = None
    for state in obs.states:
        for draft in state.drafts:
            text = norm(draft.text)
            holds = sorted(a for a, texts in by_author.items() if any(t in text for t in texts))
            wrong = (
                obs.shows_authors
                and draft.author is not None
                and any(a != draft.author for a in holds)
            )
            if len(holds) > 1 or wrong:
                violations.append(
                    f"the draft {clip(draft.text)} (author {draft.author or 'not shown'}) holds "
                    f"text of {' and '.join(holds)} after frame {state.frames}"
                )
                at = at if at is not None else state.t
    return [
        from_violations(
            "BR-DRAFT-BY-AUTHOR",
            _unique(violations),
            rule="a delta from another author starts a new draft",
            ok="each draft held one author's text",
            at=at,
        )
    ]


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
