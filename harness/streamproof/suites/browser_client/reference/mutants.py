"""The reference page's and reducer's seeded bugs ("mutants"), each one defect against the
seed's client rules (docs/explanation/browser-client-rules.md).

A mutant is the reference page opened with ``?bug=NAME`` (the reducer module reads
``globalThis.STREAMPROOF_BUG``); it differs from the correct page in exactly one place. The
reducer's mutants live in ``reducer.mjs`` and are proven on the module too; the transport's
live in the page's own script. Plain data: checks and reports can name mutants cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["AG_UI_INTENDED", "BUGS", "INTENDED", "REDUCER_INTENDED", "SHOWCASE"]

BUGS: Final[Mapping[str, str]] = {
    "append-both": "the message is appended and the draft kept: the answer shows twice",
    "one-draft": "one draft for all authors: a sub-agent's deltas join the coordinator's draft",
    "keep-draft-on-error": "an error frame sets the status but leaves the half sentence on screen",
    "transient-double-render": (
        "the message is shown at once but its draft is removed only at the next frame: for one "
        "frame the answer is on screen twice"
    ),
    "error-not-shown": "an error frame clears the draft and the status: the failure is not shown",
    "final-only": "only final messages are kept: a multi-agent run's other answers vanish",
    "silent-tool-call": "a tool call clears the draft but the status does not say it",
    "replay-deltas-on-reconnect": (
        "on reconnect the draft is kept beside the history's messages, as if the deltas would "
        "resume"
    ),
    "re-post-on-reconnect": "on reconnect the chat request is sent again: a second run",
    "truncated-as-final": (
        "a stream that ends without done or error is taken as finished: the draft becomes a "
        "message and the status reads done"
    ),
}
"""Mutant name -> one-line description of its single defect."""

INTENDED: Final[Mapping[str, str]] = {
    "append-both": "BR-RENDER-ONCE",
    "one-draft": "BR-DRAFT-BY-AUTHOR",
    "keep-draft-on-error": "BR-DRAFT-CLEARED",
    "transient-double-render": "BR-RENDER-ONCE",
    "error-not-shown": "BR-FAILED-SHOWN",
    "final-only": "BR-EVERY-MESSAGE",
    "silent-tool-call": "BR-TOOL-STATUS",
    "replay-deltas-on-reconnect": "BR-RECONNECT-HISTORY",
    "re-post-on-reconnect": "BR-ONE-RUN",
    "truncated-as-final": "BR-TRUNCATED-NOT-FINAL",
}
"""Mutant name -> the requirement that must catch it on the reference page."""

REDUCER_INTENDED: Final[Mapping[str, str]] = {
    name: INTENDED[name]
    for name in (
        "append-both",
        "one-draft",
        "keep-draft-on-error",
        "transient-double-render",
        "error-not-shown",
        "final-only",
        "silent-tool-call",
    )
}
"""The reducer's own mutants, caught on the reference reducer module too."""

AG_UI_INTENDED: Final[Mapping[str, str]] = {
    name: INTENDED[name] for name in ("append-both", "one-draft", "truncated-as-final")
}
"""The AG-UI reference page's mutants (``reference/ag_ui/``): the same defects on that wire."""

SHOWCASE: Final[Mapping[str, str]] = {
    "append-both": "browser_client/worked-example",
    "one-draft": "browser_client/sub-agent-partials",
    "keep-draft-on-error": "browser_client/error-mid-draft",
    "transient-double-render": "browser_client/worked-example",
    "error-not-shown": "browser_client/error-mid-draft",
    "final-only": "browser_client/multi-agent-messages",
    "silent-tool-call": "browser_client/worked-example",
    "replay-deltas-on-reconnect": "browser_client/cut-mid-draft",
    "re-post-on-reconnect": "browser_client/cut-mid-draft",
    "truncated-as-final": "browser_client/ends-without-done",
}
"""Mutant name -> the bundled scenario where its intended requirement catches it."""
