"""The reference gateway's seeded bugs ("mutants"), each one defect from the seed's failure list.

DESIGN.md: every check is proven twice, once by the reference passing it and once by a mutant
failing it. A mutant is the reference gateway started with ``--bug NAME`` (or
``STREAMPROOF_BUG=NAME``); it differs from the correct gateway in exactly one place, a small
``if bug == ...`` hook in ``gateway*.py`` or ``agent.py``, so reading the correct path stays easy.

Each entry below names the seed passage it violates (seed ``000_08c89244bc50b181``: "A gateway:
Event to Server-Sent Events", "Worked example" and "Failure modes"). The registry is plain data
with no ADK import, so checks and reports can name mutants without loading google-adk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from harness.bug_catalog import BugCatalog

BUGS: Final[Mapping[str, str]] = {
    "aggregate-as-delta": (
        "the non-partial text event is sent as a delta (appended) instead of a message: "
        "double rendering"
    ),
    "delta-after-message": (
        "the finished answer is sent again as one more delta after its message: the browser "
        "shows the message and a new draft of the same answer until done clears it"
    ),
    "tool-call-from-partial": (
        "a tool_call frame is also sent for partial events that carry function calls"
    ),
    "act-on-partial-calls": (
        "the gateway itself POSTs to the tool service on a function call in a partial event: "
        "the tool runs twice"
    ),
    "leak-tool-payload": "tool_result carries the raw function responses instead of a count",
    "persist-partials": "partial events are stored in the session too (and show in /history)",
    "event-id-as-frame-id": "the SSE id is the ADK event id instead of the gateway's own counter",
    "reused-frame-ids": (
        "the frame counter advances per ADK event, not per frame (message+tool_call share an id)"
    ),
    "no-terminal-frame": "never sends done nor the run-failure error frame; the body just ends",
    "no-llm-budget": "max_llm_calls is left at ADK's default of 500 (a runaway loop runs on)",
    "swallow-error-event": "events with an error code are handled as if they had none",
    "no-auth": "any token, or none, is accepted, everyone as user alice",
    "shared-history": "the history endpoint ignores who asks: any valid user reads any session",
    "no-dispose": (
        "the run is detached from the request and ignores send failures: a closed tab leaves "
        "model calls and tools running"
    ),
    "dispose-on-write-only": (
        "no handler cancellation: a disconnect is noticed only when the next write fails, so a "
        "stalled model keeps the run alive"
    ),
    "persist-draft-on-error": (
        "when the run fails mid-answer, the deltas shown so far are stored as the answer"
    ),
    "final-always-true": (
        "the text sent with a function call is marked final: true, as if the answer were done"
    ),
    "json-not-sse": "the chat stream is served as application/json, not text/event-stream",
    "untyped-frames": "frames carry no event: line, so every frame arrives as a plain message",
    "tool-call-after-result": "the tool_call frame is held back and sent after its tool_result",
    "tidy-message-text": (
        "the message text is re-spaced (whitespace collapsed), so it is no longer the aggregate"
    ),
    "bare-done-on-failure": (
        "a failed run ends with done: error events and exceptions are not shown as errors"
    ),
    "ignore-proxy": (
        "the proxy variables (HTTPS_PROXY, HTTP_PROXY) are dropped: on a corporate-proxy path "
        "every model call goes straight to the model instead of through the proxy, and TLS to "
        "it fails, the proxy's CA being the only one trusted"
    ),
    "no-run-timeout": (
        "the run has no bound (the SseEmitter's 120 s): a model stream that goes quiet without "
        "closing, a black hole, holds the run and the browser's stream for ever"
    ),
    "buffer-frames": (
        "every frame but the last is held back and written with it when the run ends: the "
        "browser gets the deltas together with the message, so no draft ever shows"
    ),
    "author-from-root": (
        "delta and message frames always name the root agent (support) as their author, not "
        "the event's: a sub-agent's text is shown as the coordinator's, so a browser cannot key "
        "its draft by author (seed: 'Keying the draft by author matters in multi-agent runs')"
    ),
    "shared-draft": (
        "one draft buffer for the whole process instead of one per turn, and a text answer's "
        "message is sent from it: one session at a time nothing shows, two at once and each "
        "message carries the other's text (caught only under --concurrency)"
    ),
    "last-session-wins": (
        "the run goes to the session of the chat request that came last (one process-wide "
        "'current session'), not its own: one session at a time it is its own, several at once "
        "and turns land in another session's history (caught only under --concurrency)"
    ),
    "global-turn-lock": (
        "one turn at a time for the whole process (the per-session lock keyed by nothing): "
        "several sessions at once queue behind each other and the last streams are still "
        "waiting when the browser gives up (caught only under --concurrency)"
    ),
}
"""Mutant name -> one-line description of its single defect."""


INTENDED: Final[Mapping[str, str]] = {
    "aggregate-as-delta": "GW-NO-DOUBLE-RENDER",
    "delta-after-message": "GW-NO-DOUBLE-RENDER",
    "tool-call-from-partial": "GW-TOOL-CALL-FROM-AGGREGATE",
    "act-on-partial-calls": "GW-TOOL-ONCE",
    "leak-tool-payload": "GW-NO-TOOL-LEAK",
    "persist-partials": "GW-PERSIST-AGGREGATES",
    "event-id-as-frame-id": "GW-FRAME-ID-COUNTER",
    "reused-frame-ids": "GW-FRAME-ID-FRESH",
    "no-terminal-frame": "GW-STREAM-TERMINAL",
    "no-llm-budget": "GW-LLM-BUDGET",
    "swallow-error-event": "GW-ERROR-EVENT",
    "no-auth": "GW-AUTH",
    "shared-history": "GW-HISTORY-ISOLATION",
    "no-dispose": "GW-DISPOSE",
    "dispose-on-write-only": "GW-DISPOSE-IDLE",
    "persist-draft-on-error": "GW-NO-HALF-RECORD",
    "author-from-root": "GW-ANSWER-AS-MESSAGE",
    "buffer-frames": "GW-STREAMS-PROGRESSIVELY",
    "final-always-true": "GW-FINAL-FLAG",
    "json-not-sse": "GW-SSE-RESPONSE",
    "untyped-frames": "GW-FRAME-TYPES",
    "tool-call-after-result": "GW-FRAME-SEQUENCE",
    "tidy-message-text": "GW-PERSIST-MATCHES-MESSAGE",
    "bare-done-on-failure": "GW-ERROR-FRAME",
    "no-run-timeout": "GW-RUN-BOUND",
    "ignore-proxy": "GW-PROXY-HONOURED",
    "shared-draft": "GW-CONC-NO-CROSSTALK",
    "last-session-wins": "GW-CONC-HISTORY-PER-SESSION",
    "global-turn-lock": "GW-CONC-STREAMS-END",
}
"""Mutant name -> the requirement that must catch it (the mutant matrix reads this)."""


CONCURRENT: Final[Mapping[str, int]] = {
    "shared-draft": 4,
    "last-session-wins": 4,
    # Its sessions queue behind each other: the 8th waits for 7 turns (about 21 s at the
    # default time scale in answer-streams-while-the-model-pauses, past the browser's wait).
    "global-turn-lock": 8,
}
"""Mutants whose defect shows only with sessions at once: the mutant matrix runs each with
``--concurrency`` this many sessions (no sequential check can catch them)."""


CATALOG = BugCatalog(BUGS, INTENDED)
check_bug = CATALOG.check
describe_bugs = CATALOG.describe
bug_names = CATALOG.names
