"""Hand-built gateway observations for the check tests.

:func:`worked_example` is the seed's worked example ("Where is order 1042?") as a correct
gateway produces it: the frames, the fake model's and fake tool's records and the stored session.
The other builders are the seed's legitimate variants (every check must pass them) and the
helpers the tests use to break one thing at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.observation import (
    AuthProbe,
    ChatResponse,
    Frame,
    GatewayObservation,
    ModelCall,
    ToolCall,
)
from streamproof.suites.gateway.scenario import GatewayExpect

MARKER = "sp-secret-3b9f1c"
AGENT = "support"
QUESTION = "Where is order 1042?"
CHUNKS = ("Order 1042 shipped ", "on 30 September and ", "is due Monday.")
ANSWER = "".join(CHUNKS)
LOOKUP = {"name": "lookupOrder", "args": {"orderId": "1042"}}
TOOL_ANSWER = {"status": "shipped", "eta": "Monday", "secret": MARKER}

# ADK event ids are UUIDs (Java: UUID.randomUUID(); Python: uuid4).
EV_USER = "6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e01"
EV_CALL = "6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e02"
EV_RESPONSE = "6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e03"
EV_ANSWER = "6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e04"

FrameSpec = tuple[str, Any]
"""(event, payload): the payload is JSON-encoded unless it is already a string."""

SSE_OK = ChatResponse(status=200, content_type="text/event-stream; charset=utf-8", end="clean")


# --- frames ------------------------------------------------------------------------------------


def frame(
    index: int,
    event: str,
    payload: Any,
    *,
    id: str | int | None = None,
    id_line: bool = True,
    t: float | None = None,
) -> Frame:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return Frame(
        index=index,
        t=t if t is not None else 0.1 * (index + 1),
        event=event,
        id=str(index + 1 if id is None else id),
        id_line=id_line,
        data=data,
    )


def frames(*specs: FrameSpec, ids: Sequence[str | int] | None = None) -> tuple[Frame, ...]:
    """Frames numbered 1, 2, 3, ... (or with ``ids``), 0.1 s apart."""
    if ids is not None and len(ids) != len(specs):
        raise ValueError("one id per frame")
    return tuple(
        frame(i, event, payload, id=None if ids is None else ids[i])
        for i, (event, payload) in enumerate(specs)
    )


def delta(text: str, author: str = AGENT) -> FrameSpec:
    return ("delta", {"author": author, "text": text})


def message(
    text: str, *, final: bool = True, author: str = AGENT, id: str | None = None
) -> FrameSpec:
    payload: dict[str, Any] = {"author": author}
    if id is not None:
        payload["id"] = id
    payload.update(text=text, final=final)
    return ("message", payload)


def tool_call(*names: str) -> FrameSpec:
    return ("tool_call", {"names": list(names)})


def tool_result(count: int = 1) -> FrameSpec:
    return ("tool_result", {"count": count})


def error(**payload: Any) -> FrameSpec:
    return ("error", payload)


DONE: FrameSpec = ("done", {})


def renumber(old: Iterable[Frame], ids: Sequence[str | int] | None = None) -> tuple[Frame, ...]:
    """The frames re-indexed from 0 (and renumbered 1, 2, ... unless ``ids``)."""
    specs = [(f.event, f.data) for f in old]
    return frames(*specs, ids=ids)


# --- the fakes' records ------------------------------------------------------------------------


def model_call(
    index: int,
    *,
    text: str = "",
    calls: Sequence[dict[str, Any]] = (),
    finish: str | None = "STOP",
    agent: str | None = AGENT,
    status: int = 200,
    completed: bool = True,
    closed_early: bool = False,
    error_sent: dict[str, Any] | None = None,
    chunks: int = 1,
    t: float | None = None,
    body: dict[str, Any] | None = None,
    turn: int | None = -1,
    retry_of: int | None = None,
) -> ModelCall:
    return ModelCall(
        index=index,
        t=t if t is not None else 0.05 + 0.2 * index,
        path="/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        model="gemini-2.5-flash",
        streaming=True,
        agent=agent,
        turn=index if turn == -1 else turn,
        status=status,
        chunks_sent=chunks,
        completed=completed,
        closed_early=closed_early,
        text_sent=text,
        function_calls_sent=tuple(dict(c) for c in calls),
        finish_reason_sent=finish,
        error_sent=error_sent,
        body=body or {},
        retry_of=retry_of,
    )


def tool_run(tool: str = "lookupOrder", t: float = 0.15) -> ToolCall:
    return ToolCall(t=t, tool=tool, arguments={"orderId": "1042"}, status=200)


# --- stored ADK events (camelCase, as ADK dumps them by alias) ---------------------------------

_ACTIONS: dict[str, Any] = {"stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}}


def user_event(text: str = QUESTION, id: str = EV_USER) -> dict[str, Any]:
    return {
        "id": id,
        "invocationId": "e-1",
        "author": "user",
        "content": {"role": "user", "parts": [{"text": text}]},
        "actions": _ACTIONS,
    }


def call_event(
    *calls: dict[str, Any], text: str = "", author: str = AGENT, id: str = EV_CALL
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"id": f"adk-{i}", **c}} for i, c in enumerate(calls)]
    return {
        "id": id,
        "invocationId": "e-1",
        "author": author,
        "partial": False,
        "finishReason": "STOP",
        "content": {"role": "model", "parts": parts},
        "actions": _ACTIONS,
    }


def response_event(name: str = "lookupOrder", id: str = EV_RESPONSE) -> dict[str, Any]:
    return {
        "id": id,
        "invocationId": "e-1",
        "author": AGENT,
        "content": {
            "role": "user",
            "parts": [{"functionResponse": {"id": "adk-0", "name": name, "response": TOOL_ANSWER}}],
        },
        "actions": _ACTIONS,
    }


def text_event(
    text: str = ANSWER, *, author: str = AGENT, id: str = EV_ANSWER, partial: bool | None = False
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": id,
        "invocationId": "e-1",
        "author": author,
        "finishReason": "STOP",
        "content": {"role": "model", "parts": [{"text": text}]},
        "actions": _ACTIONS,
    }
    if partial is not None:
        event["partial"] = partial
    return event


def error_event(code: str, *, text: str = "", id: str = EV_ANSWER) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": id,
        "invocationId": "e-1",
        "author": AGENT,
        "errorCode": code,
        "errorMessage": f"{code} happened",
        "actions": _ACTIONS,
    }
    if text:
        event.update(
            partial=False,
            finishReason=code,
            content={"role": "model", "parts": [{"text": text}]},
        )
    return event


# --- observations ------------------------------------------------------------------------------


def observation(**fields: Any) -> GatewayObservation:
    """An observation with harmless defaults for everything not given."""
    base: dict[str, Any] = {
        "scenario": "test/hand-built",
        "target": "hand-built",
        "marker": MARKER,
        "request_text": QUESTION,
        "streaming": True,
        "response": SSE_OK,
        "auth_probes": (),
        "auth_declared": False,
    }
    base.update(fields)
    return GatewayObservation(**base)


def worked_example(**overrides: Any) -> GatewayObservation:
    """The seed's worked example, frame for frame, as a correct gateway produces it."""
    fields: dict[str, Any] = {
        "scenario": "gateway/one-tool-call-streamed",
        "frames": frames(
            tool_call("lookupOrder"),
            tool_result(1),
            *(delta(c) for c in CHUNKS),
            message(ANSWER, id=EV_ANSWER),
            DONE,
        ),
        "model_calls": (
            model_call(0, calls=[LOOKUP], t=0.05),
            model_call(1, text=ANSWER, chunks=3, t=0.25),
        ),
        "tool_calls": (tool_run(),),
        "history": (user_event(), call_event(LOOKUP), response_event(), text_event()),
        "expect": GatewayExpect(
            frames="tool_call tool_result delta+ message done",
            history=("user", "function_call", "function_response", "text"),
            tool_calls={"lookupOrder": 1},
        ),
    }
    fields.update(overrides)
    return observation(**fields)


def text_with_tool_call(*, fresh: bool = False) -> GatewayObservation:
    """Text that accompanies a function call: a ``message`` with ``final: false`` and the
    ``tool_call`` of the same ADK event, numbered as the seed's controller does (one id per
    event, so the two share an id, and the partial function-call event leaves a gap), or
    ``fresh``: one id per frame."""
    intro = "Let me check."
    return worked_example(
        frames=frames(
            delta(intro),
            message(intro, final=False),
            tool_call("lookupOrder"),
            tool_result(1),
            *(delta(c) for c in CHUNKS),
            message(ANSWER, id=EV_ANSWER),
            DONE,
            ids=list(range(1, 10)) if fresh else [1, 3, 3, 4, 5, 6, 7, 8, 9],
        ),
        model_calls=(
            model_call(0, text=intro, calls=[LOOKUP], chunks=2, t=0.05),
            model_call(1, text=ANSWER, chunks=3, t=0.45),
        ),
        history=(user_event(), call_event(LOOKUP, text=intro), response_event(), text_event()),
        expect=GatewayExpect(frames="delta message tool_call tool_result delta+ message done"),
    )


def error_then_done() -> GatewayObservation:
    """A model answer cut by ``MAX_TOKENS``: ADK puts ``errorCode`` on the aggregate and the run
    completes, so the seed's controller sends ``error`` and then ``done``."""
    cut = "Order 1042 shipped on 30 September and"
    return observation(
        scenario="gateway/max-tokens",
        frames=frames(
            delta("Order 1042 shipped "),
            delta("on 30 September and"),
            error(code="MAX_TOKENS"),
            DONE,
        ),
        model_calls=(model_call(0, text=cut, finish="MAX_TOKENS", chunks=2),),
        history=(user_event(), error_event("MAX_TOKENS", text=cut)),
        expect=GatewayExpect(frames="delta+ error done", history=("user", "error")),
    )


def error_twice() -> GatewayObservation:
    """A model error in the middle of the stream, as Python ADK reports it: an error event
    (``send`` makes it ``error``), then ``run_async`` raises (``onError``: a second ``error``)."""
    failure = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}
    return observation(
        scenario="gateway/mid-stream-error",
        frames=frames(delta("Order 1042 "), error(code="UNAVAILABLE"), error(retryable=True)),
        model_calls=(model_call(0, text="Order 1042 ", finish=None, error_sent=failure, chunks=2),),
        history=(user_event(), error_event("UNAVAILABLE")),
        expect=GatewayExpect(frames="delta* error error? done?", history=("user", "error")),
    )


def http_error_twice() -> GatewayObservation:
    """The model answers HTTP 503 before streaming: error event, then the exception."""
    failure = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}
    return observation(
        scenario="gateway/model-http-error",
        frames=frames(error(code="UNAVAILABLE"), error(retryable=True)),
        model_calls=(model_call(0, finish=None, status=503, error_sent=failure, chunks=0),),
        history=(user_event(), error_event("UNAVAILABLE")),
    )


HI_BODY: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Hello?"}]}]}


def http_error_retried(retries: int = 3) -> GatewayObservation:
    """ADK Java on its defaults: the client sends the failed request again (the fake repeats the
    error turn for each retry), then the error reaches the gateway as an exception, with no
    error event: one error frame, and the session holds the user message alone."""
    failure = {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}
    calls = tuple(
        model_call(
            i,
            finish=None,
            status=503,
            error_sent=failure,
            chunks=0,
            body=HI_BODY,
            turn=0,
            retry_of=i - 1 if i else None,
        )
        for i in range(retries + 1)
    )
    return observation(
        scenario="gateway/model-http-error",
        frames=frames(error(retryable=True)),
        model_calls=calls,
        history=(user_event(),),
        scripted_calls=1,
        expect=GatewayExpect(frames="error+ done?", model_calls="1+"),
    )


def whitespace_aggregate() -> GatewayObservation:
    """The aggregate differs from the concatenated deltas in whitespace and chunk boundaries
    ("Never treat client-side accumulated deltas as the record")."""
    chunks = ("Order 1042 shipped ", " on 30 September\nand", "is due  Monday. ")
    return worked_example(
        frames=frames(
            tool_call("lookupOrder"),
            tool_result(1),
            *(delta(c) for c in chunks),
            message(ANSWER, id=EV_ANSWER),
            DONE,
        ),
        model_calls=(
            model_call(0, calls=[LOOKUP], t=0.05),
            model_call(1, text="".join(chunks), chunks=3, t=0.25),
        ),
    )


def aborted_in_history() -> GatewayObservation:
    """A stored ``INVOCATION_ABORTED`` event from an earlier, disconnected turn: a record."""
    aborted = error_event("INVOCATION_ABORTED", id="6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e00")
    example = worked_example()
    assert example.history is not None
    return example.model_copy(
        update={"history": (aborted, *example.history), "expect": GatewayExpect()}
    )


def extra_payload_keys() -> GatewayObservation:
    """Extra keys in payloads are allowed; ``error`` and ``done`` carry whatever they like."""
    return worked_example(
        frames=frames(
            ("tool_call", {"names": ["lookupOrder"], "step": 1}),
            ("tool_result", {"count": 1, "ok": True}),
            *(("delta", {"author": AGENT, "text": c, "seq": i}) for i, c in enumerate(CHUNKS)),
            ("message", {"author": AGENT, "id": EV_ANSWER, "text": ANSWER, "final": True, "x": 1}),
            ("done", {"reason": "completed"}),
        )
    )


def multi_agent() -> GatewayObservation:
    """A coordinator transfers to ``support`` (ADK answers ``transfer_to_agent`` itself, no
    tool runs), then ``support`` streams its answer."""
    intro = "Passing you to support."
    transfer = {"name": "transfer_to_agent", "args": {"agent_name": AGENT}}
    return observation(
        scenario="gateway/transfer",
        frames=frames(
            delta(intro, author="coordinator"),
            message(intro, final=False, author="coordinator"),
            tool_call("transfer_to_agent"),
            tool_result(1),
            *(delta(c) for c in CHUNKS),
            message(ANSWER, id=EV_ANSWER),
            DONE,
        ),
        model_calls=(
            model_call(0, agent="coordinator", text=intro, calls=[transfer], t=0.05),
            model_call(1, text=ANSWER, chunks=3, t=0.45),
        ),
        history=(
            user_event(),
            call_event(transfer, text=intro, author="coordinator"),
            response_event("transfer_to_agent"),
            text_event(),
        ),
    )


def budget_stopped(calls: int = 20) -> GatewayObservation:
    """A runaway tool loop stopped by a budget of ``calls`` model calls: the script answers
    every call with a function call (``times: forever``), the tool runs after each, the next
    call is refused, ``onError`` sends error."""
    steps: list[FrameSpec] = []
    for _ in range(calls):
        steps += [tool_call("lookupOrder"), tool_result(1)]
    history: list[dict[str, Any]] = [user_event()]
    for i in range(calls):
        history += [
            call_event(LOOKUP, id=f"6f1d2c3a-0000-4d5e-8f90-{2 * i:012d}"),
            response_event(id=f"6f1d2c3a-0000-4d5e-8f90-{2 * i + 1:012d}"),
        ]
    return observation(
        scenario="gateway/runaway-loop",
        frames=frames(*steps, error(retryable=True)),
        model_calls=tuple(model_call(i, calls=[LOOKUP]) for i in range(calls)),
        tool_calls=tuple(tool_run() for _ in range(calls)),
        history=tuple(history),
        scripted_calls="forever",
        service_tools=("lookupOrder",),
    )


def with_auth(**statuses: int | None) -> GatewayObservation:
    """The worked example plus auth probes; ``statuses`` override the correct answers
    (keyword names use ``_`` for ``-``)."""
    answers: dict[str, int | None] = {
        "chat-no-token": 401,
        "chat-wrong-token": 401,
        "history-no-token": 401,
        "history-wrong-token": 401,
        "history-other-user": 404,
    }
    answers.update({k.replace("_", "-"): v for k, v in statuses.items()})
    probes = tuple(
        AuthProbe(
            name=name,
            method="POST" if name.startswith("chat") else "GET",
            url=f"http://127.0.0.1:8080/{'chat' if name.startswith('chat') else 'history'}/s1",
            status=status,
            expected="401" if name != "history-other-user" else "401|403|404",
        )
        for name, status in answers.items()
    )
    return worked_example(auth_probes=probes, auth_declared=True)


LEGITIMATE: dict[str, Callable[[], GatewayObservation]] = {
    "worked-example": worked_example,
    "shared-id-message-and-tool-call": text_with_tool_call,
    "error-then-done": error_then_done,
    "error-twice": error_twice,
    "http-error-twice": http_error_twice,
    "whitespace-aggregate": whitespace_aggregate,
    "aborted-in-history": aborted_in_history,
    "extra-payload-keys": extra_payload_keys,
    "multi-agent-transfer": multi_agent,
    "budget-stopped-loop": budget_stopped,
    "with-auth": with_auth,
}
"""Observations of correct gateways: no check may fail them (FRESH may be non-strict)."""


# --- assertions --------------------------------------------------------------------------------


def one(verdicts: Sequence[Verdict], requirement: str) -> Verdict:
    """The single verdict of ``verdicts``, which must be for ``requirement``."""
    assert len(verdicts) == 1, verdicts
    (verdict,) = verdicts
    assert verdict.requirement == requirement
    return verdict


def assert_passes(verdicts: Sequence[Verdict], requirement: str) -> Verdict:
    verdict = one(verdicts, requirement)
    assert verdict.outcome is Outcome.PASS, verdict.render()
    return verdict


def assert_holds(verdicts: Sequence[Verdict], requirement: str) -> Verdict:
    """Nothing wrong: a judged pass, or not applicable (with its reason)."""
    verdict = one(verdicts, requirement)
    assert verdict.outcome in (Outcome.PASS, Outcome.NOT_APPLICABLE), verdict.render()
    return verdict


def assert_not_applicable(
    verdicts: Sequence[Verdict], requirement: str, *fragments: str
) -> Verdict:
    verdict = one(verdicts, requirement)
    assert verdict.outcome is Outcome.NOT_APPLICABLE, verdict.render()
    for fragment in fragments:
        assert fragment in verdict.message, verdict.render()
    return verdict


def assert_fails(
    verdicts: Sequence[Verdict],
    requirement: str,
    *fragments: str,
    outcome: Outcome = Outcome.FAIL,
) -> Verdict:
    """One failing verdict whose message starts with the id and contains every fragment."""
    verdict = one(verdicts, requirement)
    assert verdict.outcome is outcome, verdict.render()
    assert verdict.message.startswith(f"{requirement}: "), verdict.message
    for fragment in fragments:
        assert fragment in verdict.message, f"{fragment!r} not in {verdict.message!r}"
    assert "Rule: " in verdict.message
    return verdict


def assert_skips(verdicts: Sequence[Verdict], requirement: str, *fragments: str) -> Verdict:
    verdict = one(verdicts, requirement)
    assert verdict.outcome is Outcome.SKIP, verdict.render()
    for fragment in fragments:
        assert fragment in verdict.message, f"{fragment!r} not in {verdict.message!r}"
    return verdict
