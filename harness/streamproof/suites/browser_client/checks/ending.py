"""``BR-DRAFT-CLEARED``, ``BR-FAILED-SHOWN``, ``BR-TOOL-STATUS`` and ``BR-EVERY-MESSAGE``:
what the screen holds once a frame that ends the text has been rendered. Each is judged on the
last screen read before the next frame reached the page. Pure."""

from __future__ import annotations

from streamproof.core.requirements import from_violations, judge, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.browser_client.checks.screen import (
    answers,
    clip,
    norm,
    shown_failed,
    state_after,
)
from streamproof.suites.browser_client.observation import BrowserClientObservation

__all__ = [
    "draft_cleared_verdicts",
    "every_message_verdicts",
    "failed_shown_verdicts",
    "tool_status_verdicts",
]

_ENDS_TEXT = ("tool_call", "error", "done")


def draft_cleared_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    ends = [f for f in obs.frames if f.type in _ENDS_TEXT and f.reached_page]
    if not ends:
        return [not_applicable("BR-DRAFT-CLEARED", "no tool_call, error or done reached the page")]
    violations: list[str] = []
    judged = 0
    at: float | None = None
    for frame in ends:
        state = state_after(obs, frame.index)
        if state is None:
            continue
        judged += 1
        if state.drafts:
            violations.append(
                f"after the {frame.type} frame {frame.index} the draft "
                f"{clip(state.drafts[0].text)} stayed on screen"
            )
            at = at if at is not None else state.t
    if not judged:
        return [
            not_applicable(
                "BR-DRAFT-CLEARED", "the screen was never read after a tool_call, error or done"
            )
        ]
    return [
        from_violations(
            "BR-DRAFT-CLEARED",
            violations,
            rule="tool_call, error and done clear the draft",
            ok=f"no draft stayed after {judged} tool_call/error/done frame(s)",
            at=at,
        )
    ]


def failed_shown_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    error = next((f for f in obs.frames if f.type == "error" and f.reached_page), None)
    if error is not None:
        state = state_after(obs, error.index)
        what = f"the error frame {error.index}"
    elif obs.stream_end == "status":
        state = obs.states[-1] if obs.states else None
        what = "the chat request's error answer"
    else:
        return [not_applicable("BR-FAILED-SHOWN", "the run did not fail")]
    if state is None:
        return [not_applicable("BR-FAILED-SHOWN", f"the screen was never read after {what}")]
    ok = shown_failed(state)
    message = (
        f"after {what} the page showed the run failed"
        if ok
        else f"BR-FAILED-SHOWN: after {what} the page did not show the run failed (status "
        f"{state.status!r}, error indicator {'shown' if state.error_shown else 'not shown'})"
    )
    return [judge("BR-FAILED-SHOWN", ok, message, at=state.t)]


def tool_status_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    calls = [f for f in obs.frames if f.type == "tool_call" and f.reached_page]
    if not calls:
        return [not_applicable("BR-TOOL-STATUS", "no tool_call reached the page")]
    if not obs.has_status:
        return [not_applicable("BR-TOOL-STATUS", "the target shows no status (screen.status)")]
    violations: list[str] = []
    at: float | None = None
    for frame in calls:
        state = state_after(obs, frame.index)
        if state is None:
            continue
        names = [str(n) for n in frame.data.get("names", [])]
        missing = [n for n in names if n not in (state.status or "")]
        if missing:
            violations.append(
                f"after the tool_call frame {frame.index} the status {state.status!r} does not "
                f"name {', '.join(missing)}"
            )
            at = at if at is not None else state.t
    return [
        from_violations(
            "BR-TOOL-STATUS",
            violations,
            rule="the status names the tools being called",
            ok="the status named every tool called",
            at=at,
        )
    ]


def every_message_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    done = next((f for f in obs.frames if f.type == "done" and f.reached_page), None)
    said = [f for f in obs.frames if f.type == "message" and f.reached_page]
    if done is None or not said:
        return [not_applicable("BR-EVERY-MESSAGE", "no run that said something reached done")]
    state = state_after(obs, done.index) or (obs.states[-1] if obs.states else None)
    if state is None:
        return [not_applicable("BR-EVERY-MESSAGE", "the screen was never read after done")]
    shown = answers(obs, state.messages)
    violations: list[str] = []
    position = 0
    for frame in said:
        author, text = frame.data.get("author"), norm(str(frame.data.get("text", "")))
        found = next(
            (
                i
                for i in range(position, len(shown))
                if norm(shown[i].text) == text
                and (not obs.shows_authors or shown[i].author in (None, author))
            ),
            None,
        )
        if found is None:
            anywhere = any(norm(i.text) == text for i in shown)
            how = "out of order or under another author" if anywhere else "not on screen"
            violations.append(f"message frame {frame.index} ({author}: {clip(text)}) is {how}")
        else:
            position = found + 1
    return [
        from_violations(
            "BR-EVERY-MESSAGE",
            violations,
            rule="every message frame, final or not, stays on screen in order with its author",
            ok=f"all {len(said)} message(s) on screen in order after done",
            at=state.t,
        )
    ]
