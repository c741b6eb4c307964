"""The gateway requirements (``GW-…``), from the gateway seed
(``docs/explanation/gateway-rules.md``): the
typed SSE protocol, the client reducer, persistence and the failure modes. Registered in
:data:`streamproof.core.requirements.REGISTRY` on import."""

from __future__ import annotations

from streamproof.core.requirements import GATEWAY_SEED, Requirement, register
from streamproof.core.verdicts import Level

__all__ = ["AG_UI", "AI_SDK_UI", "GATEWAY"]


def _gw(
    id: str, level: Level, statement: str, section: str, *, concurrent: bool = False
) -> Requirement:
    return Requirement(
        id=id,
        level=level,
        statement=statement,
        seed=GATEWAY_SEED,
        section=section,
        kind="gateway",
        concurrent=concurrent,
    )


MUST, SHOULD = Level.MUST, Level.SHOULD

GATEWAY: list[Requirement] = [
    _gw(
        "GW-SSE-RESPONSE",
        MUST,
        "The chat endpoint answers 200 with Content-Type text/event-stream and a body that "
        "parses as Server-Sent Events.",
        "A gateway: Event to Server-Sent Events",
    ),
    _gw(
        "GW-FRAME-TYPES",
        MUST,
        "Every frame is typed by event kind (delta, message, tool_call, tool_result, error, "
        "done) and carries a JSON payload of that type's shape.",
        "A gateway: Event to Server-Sent Events",
    ),
    _gw(
        "GW-FRAME-ID-COUNTER",
        MUST,
        "Every frame carries an SSE id from the gateway's own counter: an integer that strictly "
        "increases (gaps allowed), never an ADK event id; only a message and the tool_call sent "
        "for the same event may share an id.",
        "A gateway: Event to Server-Sent Events (the sequence id is the gateway's own counter)",
    ),
    _gw(
        "GW-FRAME-ID-FRESH",
        SHOULD,
        "Each frame gets a fresh id, even the message and the tool_call sent for one event "
        "(the one pair GW-FRAME-ID-COUNTER lets share an id).",
        "A gateway: Event to Server-Sent Events",
    ),
    _gw(
        "GW-STREAM-TERMINAL",
        MUST,
        "The stream ends with a done or error frame, nothing follows done, and no draft is "
        "left on screen when it ends (a stream the gateway's own run bound ends is "
        "GW-RUN-BOUND-ERROR's to judge).",
        "A gateway: Event to Server-Sent Events; The client: append, then replace",
    ),
    _gw(
        "GW-FRAME-SEQUENCE",
        MUST,
        "The frames of a turn follow the seed's order: tool_call then tool_result for each "
        "tool step (deltas after the message that settles them are GW-NO-DOUBLE-RENDER's).",
        "Worked example: one tool call, streamed",
    ),
    _gw(
        "GW-NO-DOUBLE-RENDER",
        MUST,
        "Replaying the seed's reducer frame by frame, no screen shows an answer twice: deltas "
        "build the draft, the message replaces it, no text is appended twice and no delta "
        "repeats an answer already settled.",
        "The client: append, then replace; Failure modes: Double rendering",
    ),
    _gw(
        "GW-STREAMS-PROGRESSIVELY",
        MUST,
        "The deltas of a streamed answer reach the browser while the answer streams, not held "
        "until the run ends: the first one arrives before the model sends the answer's last "
        "chunk (lag short of that is allowed: model clients and loaded machines hand chunks "
        "over late).",
        "A gateway: Event to Server-Sent Events (subscribe(ev -> send(...)): each event sent "
        "as it is emitted); Inside SSE mode (partial events are emitted to the caller)",
    ),
    _gw(
        "GW-ANSWER-AS-MESSAGE",
        MUST,
        "Every model text that completes without an error code reaches the browser as one "
        "message frame from its author whose text is the aggregate, equal to the deltas "
        "before it up to whitespace and chunk boundaries.",
        "Inside SSE mode: chunk, partial, aggregate, persist",
    ),
    _gw(
        "GW-FINAL-FLAG",
        MUST,
        "A message's final flag is the event's finalResponse(): false for text that comes with "
        "a function call, true for an answer, so a client decides per author and per turn.",
        "The fields that matter while streaming; Failure modes: Treating stream completion as "
        "the answer",
    ),
    _gw(
        "GW-TOOL-CALL-FROM-AGGREGATE",
        MUST,
        "tool_call frames come only from aggregated (non-partial) events: one per aggregated "
        "function-call event, naming its calls.",
        "Inside SSE mode; Failure modes: Acting on partial function calls",
    ),
    _gw(
        "GW-TOOL-ONCE",
        MUST,
        "Each aggregated function call executes its tool exactly once; nothing acts on "
        "partial function calls.",
        "Worked example: one tool call, streamed; Failure modes: Acting on partial function calls",
    ),
    _gw(
        "GW-NO-TOOL-LEAK",
        MUST,
        "Tool payloads never reach the browser: tool results are summarised, and no frame "
        "carries data from a function response.",
        "Failure modes: Leaking tool payloads",
    ),
    _gw(
        "GW-PERSIST-AGGREGATES",
        MUST,
        "The session stores the user message and aggregated events only (function call, "
        "function response, final text, error events), never a partial chunk; a declared "
        "history endpoint that cannot be read fails the persistence requirements.",
        "Inside SSE mode: chunk, partial, aggregate, persist; What to do next 5",
    ),
    _gw(
        "GW-PERSIST-MATCHES-MESSAGE",
        MUST,
        "The stored final text equals the text of the message frame: frame 6 is what was said.",
        "Worked example: one tool call, streamed",
    ),
    _gw(
        "GW-LLM-BUDGET",
        MUST,
        "A runaway tool loop is stopped by an LLM-call budget suited to an interactive request.",
        "Failure modes: Runaway loops; What to do next 4",
    ),
    _gw(
        "GW-ERROR-EVENT",
        MUST,
        "An event that carries an error code becomes an error frame, even when the run then "
        "completes normally.",
        "Failure modes: Errors that are events",
    ),
    _gw(
        "GW-ERROR-FRAME",
        MUST,
        "A run that fails (a model error before or during the stream, an exception, a run "
        "stopped by its LLM-call budget) ends with an error frame, never a hang or a bare done "
        "(a run still going at the gateway's run bound is GW-RUN-BOUND's).",
        "A gateway: Event to Server-Sent Events",
    ),
    _gw(
        "GW-RUN-BOUND",
        MUST,
        "A run still going at the run bound the gateway declares (the seed's emitter: 120 s) "
        "is stopped: its model call is closed and the stream ends, even while the model "
        "stream sends nothing and nothing closes it.",
        "A gateway: Event to Server-Sent Events (new SseEmitter(120_000L); "
        "emitter.onTimeout(sub::dispose)); Failure modes: Orphaned runs",
    ),
    _gw(
        "GW-RUN-BOUND-ERROR",
        SHOULD,
        "A run stopped by its bound ends with an error frame, so the browser's draft is "
        "cleared and the user sees that the answer failed.",
        "The client: append, then replace (clearing the draft on errors); the seed's "
        "controller itself only disposes on timeout, hence SHOULD",
    ),
    _gw(
        "GW-NO-HALF-RECORD",
        MUST,
        "When the answer's stream breaks, the deltas received so far stay a draft: no half "
        "message is stored as the record.",
        "Inside SSE mode (never treat client-side accumulated deltas as the record); "
        "Worked example (reload after frame 5)",
    ),
    _gw(
        "GW-DISPOSE",
        MUST,
        "When the browser goes away, the gateway disposes the run by its next send: within a "
        "bound of its first chance to send after that, its model stream closes and no further "
        "model or tool call starts.",
        "Failure modes: Orphaned runs (dispose on completion, timeout and send failure); "
        "A gateway: Event to Server-Sent Events (disposal)",
    ),
    _gw(
        "GW-DISPOSE-IDLE",
        SHOULD,
        "A closed tab is noticed while nothing flows (a model that stalls or thinks): the "
        "model stream closes within a bound of the browser leaving, not only at the next send.",
        "A gateway: Event to Server-Sent Events (a closed tab cancels the upstream Flowable "
        "instead of leaving a model call running); the seed's SseEmitter notices only at its "
        "next send, hence SHOULD",
    ),
    _gw(
        "GW-DETACH-PERSIST-ONCE",
        MUST,
        "A gateway that declares it detaches runs from a closed tab (on_disconnect: detach) "
        "lets the run end within its bound, and a reload afterwards shows each of its answers "
        "exactly once: none lost, none stored twice.",
        "Inside SSE mode: chunk, partial, aggregate, persist (the aggregate is the record); "
        "Failure modes: Orphaned runs",
    ),
    _gw(
        "GW-PROXY-HONOURED",
        MUST,
        "On a corporate-proxy path every model call goes through the proxy named by "
        "HTTPS_PROXY, and the gateway trusts the proxy's CA given in SSL_CERT_FILE: no model "
        "call bypasses it (reaching the model past it, or trying to and failing TLS at the "
        "model's address) and none fails TLS to it.",
        "streamproof's gateway contract (docs/reference/gateway-contract.md, Through a "
        "corporate proxy), not "
        "the seed: the seed's gateway calls the model itself (runner.runAsync), so the path to "
        "the model is the gateway's, and a scenario's faults on that path reach only a gateway "
        "that takes it",
    ),
    _gw(
        "GW-AUTH",
        SHOULD,
        "The gateway authenticates the user: a chat or history request without a valid "
        "bearer token gets 401.",
        "A gateway: Event to Server-Sent Events (an endpoint that authenticates the user)",
    ),
    _gw(
        "GW-HISTORY-ISOLATION",
        SHOULD,
        "The gateway owns the session ids: one user cannot read another user's history.",
        "A gateway: Event to Server-Sent Events (owns the session ids)",
    ),
    # Under --concurrency K: K sessions at once against one gateway process.
    _gw(
        "GW-CONC-NO-CROSSTALK",
        MUST,
        "With several sessions streaming at once, no frame of one session carries another "
        "session's text: each chat stream carries only the events of its own run.",
        "A gateway: Event to Server-Sent Events (per request: its own SseEmitter, frame counter "
        "(new AtomicLong()) and runAsync(user, sessionId, ...) run, whose events go to that "
        "emitter alone)",
        concurrent=True,
    ),
    _gw(
        "GW-CONC-HISTORY-PER-SESSION",
        MUST,
        "With several sessions running at once, each session's history holds its own turn and "
        "nothing of another's, and each model request carries one session's conversation.",
        "Inside SSE mode: chunk, partial, aggregate, persist (non-partial events are appended "
        "to the run's session); A gateway: Event to Server-Sent Events (runAsync(user, "
        "sessionId, ...))",
        concurrent=True,
    ),
    _gw(
        "GW-CONC-STREAMS-END",
        MUST,
        "With several sessions streaming at once, every chat stream ends within the run's "
        "bounds: no stream is left open, starved or forgotten under load.",
        "A gateway: Event to Server-Sent Events (each emitter completes after a done or error "
        "frame, or at its own timeout: new SseEmitter(120_000L))",
        concurrent=True,
    ),
]


"""Every gateway requirement, in the order reports list them."""


def _wire(
    id: str, statement: str, source: str, section: str, profile: str, level: Level = MUST
) -> Requirement:
    return Requirement(
        id=id,
        level=level,
        statement=statement,
        seed=source,
        section=section,
        kind="gateway",
        profile=profile,
    )


_VERIFY = "@ag-ui/client's verify middleware"

AG_UI: list[Requirement] = [
    _wire(
        "AGUI-RUN-STARTED-FIRST",
        "The first event of the stream is RUN_STARTED (or RUN_ERROR, for a run refused at once).",
        "AG-UI 1.0",
        f"Run lifecycle ({_VERIFY}: the first event must be RUN_STARTED)",
        "ag-ui",
    ),
    _wire(
        "AGUI-EVENTS-PAIRED",
        "TEXT_MESSAGE_CONTENT and TEXT_MESSAGE_END name a message that is open (started and "
        "not ended); TOOL_CALL_ARGS and TOOL_CALL_END a tool call that is open; STEP_FINISHED a "
        "step that is open.",
        "AG-UI 1.0",
        f"Text messages, tool calls and steps: START, CONTENT/ARGS, END per id ({_VERIFY})",
        "ag-ui",
    ),
    _wire(
        "AGUI-NO-REOPEN",
        "No TEXT_MESSAGE_START or TOOL_CALL_START for an id that is already open, and no "
        "STEP_STARTED for a step that is.",
        "AG-UI 1.0",
        f"Text messages, tool calls and steps ({_VERIFY}: a second START for an open id is "
        "rejected)",
        "ag-ui",
    ),
    _wire(
        "AGUI-CLOSED-AT-FINISH",
        "RUN_FINISHED comes with no message, tool call or step left open.",
        "AG-UI 1.0",
        f"Run lifecycle ({_VERIFY}: RUN_FINISHED is rejected while anything is open)",
        "ag-ui",
    ),
    _wire(
        "AGUI-RUN-IDS",
        "RUN_STARTED names the request's threadId, and RUN_FINISHED the threadId and runId of "
        "its RUN_STARTED: the run's ids are stable across the stream.",
        "AG-UI 1.0",
        "Run lifecycle (RunAgentInput's threadId and runId; RUN_STARTED and RUN_FINISHED carry "
        "them)",
        "ag-ui",
    ),
]
"""The AG-UI protocol's own ordering rules, judged on every ``ag-ui`` target."""

_UI_STREAM = "the AI SDK's UI message stream (protocol v1)"

AI_SDK_UI: list[Requirement] = [
    _wire(
        "AISDK-STREAM-HEADER",
        "The chat response announces the protocol: header x-vercel-ai-ui-message-stream: v1.",
        "AI SDK UI stream v1",
        f"{_UI_STREAM}: ui-message-stream-headers",
        "ai-sdk-ui",
    ),
    _wire(
        "AISDK-PART-STARTED",
        "No text-delta or text-end (nor reasoning or tool-input delta) for an id that was "
        "never started.",
        "AI SDK UI stream v1",
        f"{_UI_STREAM}: useChat throws 'Received text-delta for missing text part'",
        "ai-sdk-ui",
    ),
    _wire(
        "AISDK-PART-ENDED",
        "Every text part that was started is ended before finish.",
        "AI SDK UI stream v1",
        f"{_UI_STREAM}: text-start, text-delta, text-end by id",
        "ai-sdk-ui",
    ),
    _wire(
        "AISDK-DONE",
        "Once the message ends (finish or error), data: [DONE] ends the stream, and nothing "
        "follows it.",
        "AI SDK UI stream v1",
        f"{_UI_STREAM}: the stream's end marker",
        "ai-sdk-ui",
    ),
]
"""The AI SDK UI message stream's own rules, judged on every ``ai-sdk-ui`` target."""

register(GATEWAY)
register(AG_UI)
register(AI_SDK_UI)
