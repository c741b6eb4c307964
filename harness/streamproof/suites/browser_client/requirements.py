"""The browser-client requirements (``BR-…``), from the gateway seed's client rules
(docs/explanation/browser-client-rules.md).

Each rule is what the seed asks of the code that renders the gateway's stream ("The client:
append, then replace", its reducer, and the failure modes), turned into something a check can
judge from outside the page: the screen as read after every frame and at every change in
between, and the requests the page made to the fake gateway. One behaviour, one rule: how a
stream ended picks which rule judges what the page did next (a broken connection:
``BR-RECONNECT-HISTORY``; a clean end without ``done`` or ``error``: ``BR-TRUNCATED-NOT-FINAL``).
"""

from __future__ import annotations

from streamproof.core.requirements import GATEWAY_SEED, Requirement, register
from streamproof.core.verdicts import Level

__all__ = ["BROWSER_CLIENT"]

_CLIENT = "The client: append, then replace"
_FAILURES = "Failure modes"
_EXAMPLE = "Worked example: one tool call, streamed"

MUST, SHOULD = Level.MUST, Level.SHOULD


def _b(id: str, level: Level, statement: str, section: str) -> Requirement:
    return Requirement(
        id=id,
        level=level,
        statement=statement,
        seed=GATEWAY_SEED,
        section=section,
        kind="browser-client",
    )


def _rules() -> list[Requirement]:
    return [
        _b(
            "BR-RENDER-ONCE",
            MUST,
            "An answer is on screen once: at no moment does a message's text show twice (in two "
            "messages, or in a message and a draft); the message replaces its author's draft, "
            "it is never shown beside it.",
            _CLIENT,
        ),
        _b(
            "BR-DRAFT-BY-AUTHOR",
            MUST,
            "Drafts are keyed by author: a delta from another author than the draft's starts a "
            "new draft, so one author's partial text never joins another's.",
            _CLIENT,
        ),
        _b(
            "BR-DRAFT-CLEARED",
            MUST,
            "A frame that ends the text clears the draft: once a tool_call, error or done frame "
            "has been rendered, no draft is on screen (no half-rendered sentence stays after "
            "the run failed or finished).",
            _CLIENT,
        ),
        _b(
            "BR-FAILED-SHOWN",
            MUST,
            "A failed run is shown as failed: after an error frame, or an error answer to the "
            "chat request, the page's error indicator or status says the run failed.",
            _CLIENT,
        ),
        _b(
            "BR-TOOL-STATUS",
            SHOULD,
            "A tool call is shown: after a tool_call frame the status names the tools being "
            "called.",
            _EXAMPLE,
        ),
        _b(
            "BR-EVERY-MESSAGE",
            MUST,
            "Every message is kept, in order, with its author: once the run is done, each "
            "message frame (final or not) is on screen in the order it came, so a multi-agent "
            "run's several answers all show.",
            _FAILURES,
        ),
        _b(
            "BR-RECONNECT-HISTORY",
            MUST,
            "On reconnect, drafts are discarded and messages reloaded from the history "
            "endpoint: after a stream that broke before done or error, the page reads the "
            "history and shows its messages and no draft; it never rebuilds the answer from "
            "deltas.",
            _CLIENT,
        ),
        _b(
            "BR-ONE-RUN",
            MUST,
            "One run per user message: the page sends the chat request once; a broken stream, "
            "a reconnect or the tab hidden and shown again never sends it again (each chat "
            "request starts a model run).",
            _CLIENT,
        ),
        _b(
            "BR-TRUNCATED-NOT-FINAL",
            MUST,
            "A stream that ends without done or error is never shown as a finished answer: its "
            "draft is not turned into a message and the status does not read done.",
            _FAILURES,
        ),
    ]


BROWSER_CLIENT: list[Requirement] = _rules()
register(BROWSER_CLIENT)
