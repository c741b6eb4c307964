"""The reference gateway's seeded bugs ("mutants"), each one defect from the seed's failure list.

docs/explanation/mutants.md: every check is proven twice, once by the reference passing it and once
by a mutant
failing it. A mutant is the reference gateway started with ``--bug NAME`` (or
``STREAMPROOF_BUG=NAME``); it differs from the correct gateway in exactly one place, a small
``if bug == ...`` hook in ``app.py``, ``frames.py``, ``ag_ui.py``, ``ai_sdk.py`` or ``agent.py``,
so reading the correct path stays easy.

The reference speaks three wires (``--wire``) under two disconnect policies
(``--on-disconnect``). :data:`BUGS` are the typed-frames reference's mutants (the mutant matrix
runs them against ``reference-gateway.yaml``); those in :data:`EVERY_WIRE` apply on the other
wires too. :data:`WIRE_BUGS` are the mutants of AG-UI, of the AI SDK UI stream and of the detach
policy. :func:`applies` says which mutant has a meaning where; the gateway refuses any other.

Each entry below names the seed passage it violates (``docs/explanation/gateway-rules.md``: "A
gateway:
Event to Server-Sent Events", "Worked example" and "Failure modes"). The registry is plain data
with no ADK import, so checks and reports can name mutants without loading google-adk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from streamproof.mutants.catalog import BugCatalog

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


Wire = Literal["typed-frames", "ag-ui", "ai-sdk-ui"]
"""The wire the reference speaks (``server --wire``): the seed's typed frames, AG-UI events,
or the AI SDK UI message stream (v1)."""

WIRES: Final[tuple[Wire, ...]] = ("typed-frames", "ag-ui", "ai-sdk-ui")

OnDisconnect = Literal["dispose", "detach"]
"""What the reference does with a run whose browser went away (``server --on-disconnect``):
``dispose`` it (the seed's rule), or let it run to its end within its bound (``detach``)."""


WIRE_BUGS: Final[Mapping[str, str]] = {
    "agui-tool-call-from-partial": (
        "a TOOL_CALL_START (with its ARGS and END) is also sent for a function call seen in a "
        "partial event, under the partial's own call id: the duplicate of ag-ui issue #968 "
        "(seed: 'Acting on partial function calls')"
    ),
    "agui-resend-text": (
        "the answer's whole text is sent again as one more TEXT_MESSAGE_CONTENT after it was "
        "streamed, before its END: the bug ag-ui PR #810 fixed (seed: 'Double rendering')"
    ),
    "agui-open-at-finish": (
        "a streamed answer's TEXT_MESSAGE_END is never sent, so the message is still open at "
        "RUN_FINISHED (AG-UI: no RUN_FINISHED while a message is open; seed: no draft left "
        "on screen)"
    ),
    "agui-finished-on-error": (
        "a model failure (an error event, a failed run) ends with RUN_FINISHED instead of "
        "RUN_ERROR (seed: 'Errors that are events'; the error frame of a failed run)"
    ),
    "agui-leak-tool-result": (
        "TOOL_CALL_RESULT carries the raw function response instead of a summary (seed: "
        "'Leaking tool payloads')"
    ),
    "agui-no-run-started": (
        "the stream never opens with RUN_STARTED: it begins with the run's first message or tool "
        "call (AG-UI: a run begins with RUN_STARTED; @ag-ui/client rejects anything else first)"
    ),
    "agui-content-before-start": (
        "a streamed message's first TEXT_MESSAGE_CONTENT is sent before its TEXT_MESSAGE_START "
        "(AG-UI: CONTENT only for an open message)"
    ),
    "agui-start-twice": (
        "a streamed message's TEXT_MESSAGE_START is sent twice, the second while the message "
        "is open (AG-UI: no second START for an open id)"
    ),
    "agui-run-id-changes": (
        "RUN_FINISHED names a run id of the gateway's own making, not the runId its RUN_STARTED "
        "echoed from the request (AG-UI: a run's ids are stable)"
    ),
    "aisdk-tool-call-from-partial": (
        "tool-input-start and tool-input-available are also sent for a function call seen in "
        "a partial event (seed: 'Acting on partial function calls')"
    ),
    "aisdk-resend-text": (
        "the answer's whole text is sent again as one more text-delta after it was streamed, "
        "before its text-end (seed: 'Double rendering')"
    ),
    "aisdk-open-at-finish": (
        "a streamed text part's text-end is never sent, so it is still open at finish (AI SDK: "
        "every started part ends before finish; seed: no draft left on screen)"
    ),
    "aisdk-finish-on-error": (
        "a model failure (an error event, a failed run) ends with finish instead of error "
        "(seed: 'Errors that are events'; the error frame of a failed run)"
    ),
    "aisdk-no-done": (
        "the stream never ends with data: [DONE] (the UI message stream's end marker)"
    ),
    "aisdk-delta-before-start": (
        "a text part's first text-delta is sent before its text-start (useChat throws "
        "'Received text-delta for missing text part')"
    ),
    "aisdk-no-stream-header": (
        "the chat response lacks the x-vercel-ai-ui-message-stream: v1 header (the UI message "
        "stream's announcement of its protocol)"
    ),
    "detach-persist-twice": (
        "under on_disconnect: detach, the answer of a run whose browser went away is stored "
        "twice: the 'ghost' answer of ag-ui discussion #733, persisted once more by the gateway"
    ),
}
"""The mutants of the other wires and of the detach policy: name -> one-line defect. They are
not in :data:`BUGS` because the mutant matrix and the end-to-end mutant tests run
:data:`BUGS` against the typed-frames reference (``reference-gateway.yaml``); each of these
needs its own target file (``reference-ag-ui.yaml``, ``reference-ai-sdk-ui.yaml``,
``reference-ag-ui-detach.yaml``), which lists it under ``bugs``."""


WIRE_INTENDED: Final[Mapping[str, str]] = {
    "agui-tool-call-from-partial": "GW-TOOL-CALL-FROM-AGGREGATE",
    "agui-resend-text": "GW-NO-DOUBLE-RENDER",
    "agui-open-at-finish": "AGUI-CLOSED-AT-FINISH",
    "agui-finished-on-error": "GW-ERROR-FRAME",
    "agui-leak-tool-result": "GW-NO-TOOL-LEAK",
    "agui-no-run-started": "AGUI-RUN-STARTED-FIRST",
    "agui-content-before-start": "AGUI-EVENTS-PAIRED",
    "agui-start-twice": "AGUI-NO-REOPEN",
    "agui-run-id-changes": "AGUI-RUN-IDS",
    "aisdk-tool-call-from-partial": "GW-TOOL-CALL-FROM-AGGREGATE",
    "aisdk-resend-text": "GW-NO-DOUBLE-RENDER",
    "aisdk-open-at-finish": "AISDK-PART-ENDED",
    "aisdk-finish-on-error": "GW-ERROR-FRAME",
    "aisdk-no-done": "AISDK-DONE",
    "aisdk-delta-before-start": "AISDK-PART-STARTED",
    "aisdk-no-stream-header": "AISDK-STREAM-HEADER",
    "detach-persist-twice": "GW-DETACH-PERSIST-ONCE",
}
"""Wire mutant -> the requirement meant to catch it. A message or text part left open at the
run's end is the protocol's own rule (AGUI-CLOSED-AT-FINISH, AISDK-PART-ENDED): the seed view
settles it there, so the seed's GW-STREAM-TERMINAL does not report it a second time (the
profiles' docstrings, ``profiles/ag_ui.py`` and ``profiles/ai_sdk_ui.py``)."""


EVERY_WIRE: Final[frozenset[str]] = frozenset(
    {
        # the run loop, the endpoints and the session store: the same on every wire
        "act-on-partial-calls",
        "persist-partials",
        "no-llm-budget",
        "no-run-timeout",
        "no-auth",
        "shared-history",
        "no-dispose",
        "dispose-on-write-only",
        "persist-draft-on-error",
        "last-session-wins",
        "global-turn-lock",
        "no-terminal-frame",
        "json-not-sse",
        # hooks every wire's mapping or writer honours
        "swallow-error-event",
        "buffer-frames",
    }
)
"""Mutants of :data:`BUGS` that apply on every wire; the rest of :data:`BUGS` are defects of
the typed frames themselves (ids, event names, the final flag, the author field ...), whose
counterpart on another wire, where there is one, is a mutant of :data:`WIRE_BUGS`."""

_ON_WIRE: Final[Mapping[str, Wire]] = {
    name: ("ag-ui" if name.startswith("agui-") else "ai-sdk-ui")
    for name in WIRE_BUGS
    if name.startswith(("agui-", "aisdk-"))
}
_DISPOSE_ONLY: Final[frozenset[str]] = frozenset({"no-dispose", "dispose-on-write-only"})
_DETACH_ONLY: Final[frozenset[str]] = frozenset({"detach-persist-twice"})


def applies(name: str, wire: Wire, on_disconnect: OnDisconnect) -> str | None:
    """``None`` if mutant ``name`` has a meaning on ``wire`` under ``on_disconnect``, else why
    not (one sentence)."""
    if name in _DISPOSE_ONLY and on_disconnect != "dispose":
        return f"{name} is a defect of disposal; with --on-disconnect {on_disconnect} it has none"
    if name in _DETACH_ONLY and on_disconnect != "detach":
        return f"{name} is a defect of the detach policy; it needs --on-disconnect detach"
    own = _ON_WIRE.get(name)
    if own is not None and own != wire:
        return f"{name} is a mutant of the {own} wire; this gateway speaks {wire}"
    if name in BUGS and name not in EVERY_WIRE and wire != "typed-frames":
        return f"{name} is a defect of the typed frames; it has no meaning on the {wire} wire"
    return None


def bugs_for(wire: Wire, on_disconnect: OnDisconnect = "dispose") -> list[str]:
    """Every mutant that has a meaning on ``wire`` under ``on_disconnect``, in table order."""
    return [name for name in (*BUGS, *WIRE_BUGS) if applies(name, wire, on_disconnect) is None]


CATALOG = BugCatalog({**BUGS, **WIRE_BUGS}, {**INTENDED, **WIRE_INTENDED})
check_bug = CATALOG.check
bug_names = CATALOG.names


def describe_bugs(wire: Wire = "typed-frames", on_disconnect: OnDisconnect = "dispose") -> str:
    """The ``--list-bugs`` text for a gateway on ``wire`` under ``on_disconnect``."""
    names = bugs_for(wire, on_disconnect)
    return BugCatalog(
        {n: CATALOG.bugs[n] for n in names}, {n: CATALOG.intended[n] for n in names}
    ).describe()
