"""Reading the observed screen: normalised texts, the user's own message told apart from the
answers, the states after a given frame, and what "shown failed" means
(docs/reference/browser-client-contract.md#reading-the-screen). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable

from streamproof.suites.browser_client.observation import (
    BrowserClientObservation,
    Item,
    ScreenState,
)

__all__ = [
    "answers",
    "clip",
    "norm",
    "shown_failed",
    "state_after",
    "status_reads_done",
]

_FAILED = re.compile(r"error|fail|interrupt", re.IGNORECASE)
_DONE = re.compile(r"\bdone\b|\bcomplete|\bfinished\b", re.IGNORECASE)


def norm(text: str) -> str:
    """``text`` with its whitespace collapsed, as a reader sees it."""
    return " ".join(text.split())


def clip(text: str, limit: int = 60) -> str:
    text = norm(text)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def answers(obs: BrowserClientObservation, items: Iterable[Item]) -> list[Item]:
    """``items`` without the user's own message (author ``user``, or the prompt's text)."""
    prompt = norm(obs.prompt)
    return [i for i in items if i.author != "user" and norm(i.text) != prompt]


def state_after(obs: BrowserClientObservation, frames: int) -> ScreenState | None:
    """The page's rendering of frame ``frames``: the settled read the harness took once the
    page went quiet after it (else the last screen read before the next frame arrived). Not
    the last read of all: a stream cut just after the frame changes the screen again."""
    last = None
    for state in obs.states:
        if state.frames == frames:
            if state.settled:
                return state
            last = state
    return last


def shown_failed(state: ScreenState) -> bool:
    return state.error_shown or bool(state.status and _FAILED.search(state.status))


def status_reads_done(state: ScreenState) -> bool:
    return bool(state.status and _DONE.search(state.status))
