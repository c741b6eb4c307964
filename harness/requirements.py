"""The requirement registry: every rule streamproof checks, with its id, level and seed source.

Ids are stable: reports, mutants and users' CI configuration refer to them. A check never
invents a requirement; it looks one up here and builds its verdict with :func:`judge`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness.verdicts import Kind, Level, Outcome, Verdict

GATEWAY_SEED = "000_08c89244bc50b181"
CLIENT_SEED = "001_a4aab3267c38e4f0"


class Requirement(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    level: Level
    statement: str
    seed: str
    section: str
    kind: Literal["gateway", "a2a-client"]


def _gw(id: str, level: Level, statement: str, section: str) -> Requirement:
    return Requirement(
        id=id, level=level, statement=statement, seed=GATEWAY_SEED, section=section, kind="gateway"
    )


MUST, SHOULD = Level.MUST, Level.SHOULD

_GATEWAY = [
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
        "Each frame gets a fresh id, so ids strictly increase along the stream.",
        "A gateway: Event to Server-Sent Events",
    ),
    _gw(
        "GW-STREAM-TERMINAL",
        MUST,
        "The stream ends with a done or error frame, nothing follows done, and no draft is "
        "left on screen when it ends.",
        "A gateway: Event to Server-Sent Events; The client: append, then replace",
    ),
    _gw(
        "GW-FRAME-SEQUENCE",
        MUST,
        "The frames of a turn follow the seed's order: tool_call then tool_result for each "
        "tool step, and the deltas of streamed text before the message that settles them.",
        "Worked example: one tool call, streamed",
    ),
    _gw(
        "GW-NO-DOUBLE-RENDER",
        MUST,
        "Replaying the seed's reducer renders each answer once: deltas build the draft, the "
        "message replaces it, and no text is appended twice.",
        "The client: append, then replace; Failure modes: Double rendering",
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
        "stopped by its LLM-call budget) ends with an error frame, never a hang or a bare done.",
        "A gateway: Event to Server-Sent Events",
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
        "When the browser goes away, the gateway disposes the run: its model stream closes "
        "and no further model or tool call starts within a bound, even while no bytes flow.",
        "Failure modes: Orphaned runs; A gateway: Event to Server-Sent Events (disposal)",
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
]


def _a2a_client() -> list[Requirement]:
    from harness.requirements_a2a import A2A_CLIENT

    return list(A2A_CLIENT)


REGISTRY: dict[str, Requirement] = {r.id: r for r in [*_GATEWAY, *_a2a_client()]}


def requirement(id: str) -> Requirement:
    try:
        return REGISTRY[id]
    except KeyError:
        raise KeyError(f"unknown requirement id {id!r}") from None


def judge(
    id: str,
    ok: bool,
    message: str,
    *,
    expected: Any = None,
    observed: Any = None,
) -> Verdict:
    """A verdict for requirement ``id``: pass, or fail / non-strict depending on its level."""
    req = requirement(id)
    if ok:
        outcome = Outcome.PASS
    else:
        outcome = Outcome.FAIL if req.level is Level.MUST else Outcome.NON_STRICT
    return Verdict(
        requirement=id,
        level=req.level,
        outcome=outcome,
        message=message,
        expected=expected,
        observed=observed,
    )


def not_applicable(id: str, message: str) -> Verdict:
    """A requirement this run gave nothing to judge (no tool call, no resubscribe, ...).

    Never a pass: a rule that was not exercised is reported as such, with the reason."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.NOT_APPLICABLE, message=message)


def expectation(
    name: str,
    ok: bool,
    message: str,
    *,
    expected: Any = None,
    observed: Any = None,
) -> Verdict:
    """A verdict on one of the scenario's own expectations (``expect.frames``, ...).

    A scenario's expectations are what its author wrote down about this one run; a mismatch
    fails the scenario under the expectation's name, never under a requirement whose rule it
    does not break."""
    return Verdict(
        requirement=name,
        level=Level.MUST,
        outcome=Outcome.PASS if ok else Outcome.FAIL,
        message=message if ok else f"{name}: {message}",
        expected=expected,
        observed=observed,
        kind=Kind.EXPECTATION,
    )


def skip(id: str, message: str) -> Verdict:
    """A requirement that could not be judged because the target did not declare what it needs."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.SKIP, message=message)


def info(id: str, message: str) -> Verdict:
    """A requirement this observation cannot judge (e.g. the browser left before the end)."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.INFO, message=message)


def _known_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [r for r in ids if r not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown requirement id(s): {', '.join(unknown)}")
    return ids


RequirementIds = Annotated[tuple[str, ...], Field(min_length=1), AfterValidator(_known_ids)]
"""A scenario's ``requirements:``: at least one id, every one in the registry."""
