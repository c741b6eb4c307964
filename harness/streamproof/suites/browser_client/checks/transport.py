"""``BR-RECONNECT-HISTORY``, ``BR-ONE-RUN`` and ``BR-TRUNCATED-NOT-FINAL``: what the page does
with the transport, from the requests it made and the screen after the stream ended. How the
stream ended picks the rule (a broken connection, or a clean end without done or error), so
one behaviour is judged once. Pure."""

from __future__ import annotations

from collections import Counter

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.browser_client.checks.screen import (
    answers,
    clip,
    norm,
    status_reads_done,
)
from streamproof.suites.browser_client.observation import BrowserClientObservation

__all__ = ["one_run_verdicts", "reconnect_history_verdicts", "truncated_not_final_verdicts"]


def _partial(obs: BrowserClientObservation) -> dict[str, str]:
    """Each author's text still in a draft when the stream stopped: the deltas that reached
    the page since that author's last message (or a frame that ends the text)."""
    drafts: dict[str, str] = {}
    for frame in obs.frames:
        if not frame.reached_page:
            break
        author = str(frame.data.get("author", ""))
        if frame.type == "delta":
            drafts[author] = drafts.get(author, "") + str(frame.data.get("text", ""))
        elif frame.type == "message":
            drafts.pop(author, None)
        elif frame.type in ("tool_call", "error", "done"):
            drafts.clear()
    return {a: norm(t) for a, t in drafts.items() if norm(t)}


def reconnect_history_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    if obs.mode == "module":
        return [not_applicable("BR-RECONNECT-HISTORY", "a reducer module has no transport")]
    if obs.stream_end != "broken" or obs.t_stream_end is None:
        return [not_applicable("BR-RECONNECT-HISTORY", "the stream did not break")]
    end = obs.t_stream_end
    reads = [r for r in obs.requests if r.role == "history" and r.t >= end]
    violations: list[str] = []
    if not reads:
        violations.append("the page never read the history after the stream broke")
    elif reads[0].t - end > obs.reconnect_s:
        violations.append(
            f"the page read the history {reads[0].t - end:.2f}s after the stream broke "
            f"(allowed {obs.reconnect_s:.2f}s)"
        )
    final = obs.states[-1] if obs.states else None
    if final is not None:
        if final.drafts:
            violations.append(f"a draft {clip(final.drafts[0].text)} stayed after the reconnect")
        stored = Counter(norm(i.text) for i in obs.history)
        shown = Counter(norm(i.text) for i in final.messages)
        extra = [t for t in shown if t not in stored]
        missing = [t for t in stored if t not in shown]
        if extra:
            violations.append(
                f"the screen shows {', '.join(clip(t) for t in extra)}, which the history does "
                "not hold"
            )
        if reads and missing:
            violations.append(
                f"the history's {', '.join(clip(t) for t in missing)} is not on screen"
            )
    return [
        from_violations(
            "BR-RECONNECT-HISTORY",
            violations,
            rule="on reconnect, discard drafts and reload messages from the history endpoint",
            ok="after the break the page read the history and showed exactly its messages",
            at=end,
        )
    ]


def one_run_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    if obs.mode == "module":
        return [not_applicable("BR-ONE-RUN", "a reducer module has no transport")]
    chats = [r for r in obs.requests if r.role == "chat"]
    if len(chats) == 1:
        return [from_violations("BR-ONE-RUN", [], rule="", ok="one chat request for one message")]
    if not chats:
        violations = ["the page sent no chat request after the prompt was typed and sent"]
        at = None
    else:
        times = ", ".join(f"{r.t:.3f}s" for r in chats)
        violations = [f"the page sent the chat request {len(chats)} times (at {times})"]
        at = chats[1].t
    return [
        from_violations(
            "BR-ONE-RUN",
            violations,
            rule="one chat request per user message: never sent again on a broken stream, a "
            "reconnect or a tab shown again",
            ok="",
            at=at,
        )
    ]


def truncated_not_final_verdicts(obs: BrowserClientObservation) -> list[Verdict]:
    if obs.stream_end != "clean":
        return [
            not_applicable(
                "BR-TRUNCATED-NOT-FINAL", "the stream did not end cleanly without done or error"
            )
        ]
    final = obs.states[-1] if obs.states else None
    if final is None:
        return [not_applicable("BR-TRUNCATED-NOT-FINAL", "the screen was never read")]
    violations: list[str] = []
    if status_reads_done(final):
        violations.append(f"the status reads {final.status!r}")
    stored = {norm(i.text) for i in obs.history}
    for author, text in _partial(obs).items():
        if text in stored:
            continue
        promoted = [i for i in answers(obs, final.messages) if text and text in norm(i.text)]
        if promoted:
            violations.append(f"{author}'s unfinished text {clip(text)} is shown as a message")
    return [
        from_violations(
            "BR-TRUNCATED-NOT-FINAL",
            violations,
            rule="a stream that ends without done or error is not a finished answer",
            ok="the unfinished answer was not shown as finished",
            at=obs.t_stream_end,
        )
    ]
