"""Checks on the frame stream itself: the response, each frame's type and shape, ids, the end.

``docs/explanation/gateway-rules.md``, "A gateway: Event to Server-Sent Events": the controller
answers
``produces = MediaType.TEXT_EVENT_STREAM_VALUE``, sends every frame as
``SseEmitter.event().id(Long.toString(n)).name(type).data(json)`` with ``n`` from its own
``AtomicLong seq``, and ends the stream with ``done`` (the Flowable completed) or ``error`` (it
failed). "Frames are typed by event kind, so the browser never has to inspect model internals."

The small helpers at the top (stream presence, frame labels, whitespace folding, the compact
sequence) are shared by the other check modules.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, Protocol

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import compress, short
from streamproof.core.verdicts import Verdict
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.checks.reducer import replay
from streamproof.suites.gateway.checks.run_bound import bound_note, open_at_bound
from streamproof.suites.gateway.observation import Frame, GatewayObservation
from streamproof.suites.gateway.scenario import FRAME_TYPES

__all__ = [
    "BROWSER_CUTS",
    "FRAME_TYPES",
    "browser_link_cut",
    "browser_link_history_fault",
    "browser_link_stall",
    "frame_id_counter_verdicts",
    "frame_id_fresh_verdicts",
    "frame_sequence_verdicts",
    "frame_type_verdicts",
    "link_faulted_calls",
    "model_link_calls",
    "sse_response_verdicts",
    "stream_terminal_verdicts",
]

TERMINAL = ("done", "error")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


# --- shared helpers ----------------------------------------------------------------------------


class Labelled(Protocol):
    """What :func:`label` reads of a frame."""

    @property
    def index(self) -> int: ...

    @property
    def event(self) -> str: ...

    @property
    def id(self) -> str: ...


def label(frame: Labelled) -> str:
    """``frame #3 (event:delta id:4)``: how messages name a frame; a frame of a profile's seed
    view names the wire's event it was read from: ``frame #5 (TEXT_MESSAGE_CONTENT as
    delta)``."""
    ident = f" id:{frame.id}" if frame.id else ""
    wire = getattr(frame, "wire", None)
    if wire is not None:
        return f"frame #{frame.index} ({wire} as {frame.event}{ident})"
    return f"frame #{frame.index} (event:{frame.event}{ident})"


def payload_dict(frame: Frame) -> dict[str, Any] | None:
    """The frame's data as a JSON object, or ``None`` when it is not one."""
    value = frame.payload()
    return value if isinstance(value, dict) else None


def sequence(frames: Sequence[Frame]) -> str:
    """The event names, compressed by :func:`compress`; ``(no frames)`` for none."""
    return compress([f.event for f in frames]) or "(no frames)"


def _stream_problems(obs: GatewayObservation) -> list[str]:
    response = obs.response
    problems: list[str] = []
    if response.end == "refused":
        detail = f": {response.error}" if response.error else ""
        return [f"the chat request got no connection at all{detail}"]
    if response.status != 200:
        problems.append(f"status {response.status}, not 200")
    media_type = (response.content_type or "").split(";")[0].strip().lower()
    if media_type != "text/event-stream":
        problems.append(f"Content-Type {response.content_type!r}, not text/event-stream")
    if response.end == "not-sse" and not problems:
        problems.append("the body did not parse as Server-Sent Events")
    if problems and response.body_excerpt:
        problems.append(f"the body began {short(response.body_excerpt, 120)}")
    return problems


def has_event_stream(obs: GatewayObservation) -> bool:
    """Whether the chat response was an event stream at all (GW-SSE-RESPONSE passed)."""
    return not _stream_problems(obs)


BROWSER_CUTS = frozenset({"rst", "fin", "end_clean", "refuse"})
"""Fault actions that end the chat stream on the browser link: the browser went away (a
closed tab), as ``request.disconnect_after_frames`` does."""


def _chat_fault(events: Sequence[LinkEvent], actions: frozenset[str]) -> LinkEvent | None:
    chat = next((e.request for e in events if e.kind == "request"), None)
    if chat is None:
        return None
    return next(
        (
            e
            for e in events
            if e.kind == "fault"
            and e.request == chat
            and e.fault is not None
            and e.fault.action in actions
        ),
        None,
    )


def browser_link_cut(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a cut (:data:`BROWSER_CUTS`) on the browser link's chat request
    (its first request; the history read comes after it), if one fired. The browser link is
    the harness's own connection to the gateway: a cut there is the browser leaving."""
    return _chat_fault(events, BROWSER_CUTS)


def browser_link_stall(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a stall on the browser link's chat request, if one fired: a slow
    browser. The link swallows what the gateway sends while it holds, so the frames that
    arrived are not the whole stream the gateway sent."""
    return _chat_fault(events, frozenset({"stall"}))


def browser_link_history_fault(events: Sequence[LinkEvent]) -> LinkEvent | None:
    """The fault record of a cut or a stall on a browser-link request after the chat (the
    history read), if one fired: what the history read got is the link's doing."""
    chat = next((e.request for e in events if e.kind == "request"), None)
    return next(
        (
            e
            for e in events
            if e.kind == "fault"
            and e.request is not None
            and e.request != chat
            and e.fault is not None
            and (e.fault.action in BROWSER_CUTS or e.fault.action == "stall")
        ),
        None,
    )


def left_early(obs: GatewayObservation, requirement_id: str) -> Verdict:
    """The browser went away on purpose, so how the stream would have ended is unknown."""
    cut = browser_link_cut(obs.link_events.get("browser", ()))
    if cut is not None and cut.fault is not None:
        return not_applicable(
            requirement_id,
            f"not judged: the browser link cut the stream ({cut.fault.action}, {cut.detail}) "
            f"after {len(obs.frames)} frame(s): the browser went away, as a closed tab does",
        )
    return not_applicable(
        requirement_id,
        f"not judged: the browser went away after {len(obs.frames)} frame(s), by design of "
        "the scenario",
    )


def no_stream(obs: GatewayObservation, requirement_id: str) -> list[Verdict] | None:
    """``[NOT APPLICABLE]`` when there is no event stream to judge, else ``None``.

    When GW-SSE-RESPONSE fails, every frame-based check says so once instead of piling up
    failures that all have the same cause.
    """
    if has_event_stream(obs):
        return None
    return [not_applicable(requirement_id, "not judged: no event stream (see GW-SSE-RESPONSE)")]


def no_frames(obs: GatewayObservation, requirement_id: str) -> list[Verdict] | None:
    """``[NOT APPLICABLE]`` when there is no event stream or it carried no frame."""
    if (missing := no_stream(obs, requirement_id)) is not None:
        return missing
    if obs.frames:
        return None
    return [not_applicable(requirement_id, "not judged: the stream carried no frame")]


def last_event(obs: GatewayObservation) -> str | None:
    return obs.frames[-1].event if obs.frames else None


def ended_with_done(obs: GatewayObservation) -> bool:
    """The stream's last frame is ``done``: the run completed (the Flowable's onComplete)."""
    return last_event(obs) == "done"


def ended_with_terminal_frame(obs: GatewayObservation) -> bool:
    return obs.response.end == "clean" and last_event(obs) in TERMINAL


def terminal_error_frame(obs: GatewayObservation) -> Frame | None:
    """The ``error`` frame that ended the stream: the first error frame after which only
    ``error`` or ``done`` frames follow (``None`` when the stream did not end in error)."""
    found: Frame | None = None
    for frame in reversed(obs.frames):
        if frame.event == "error":
            found = frame
        elif frame.event != "done":
            break
    return found


# --- the model link: what a fault kept from the gateway ---------------------------------------

_LOSSY_ACTIONS = frozenset({"fin", "rst", "end_clean", "corrupt", "status"})
"""Fault actions after which the gateway cannot have received what the fake model sent."""


def model_link_calls(obs: GatewayObservation) -> dict[int, int]:
    """Model-link request number -> the fake model's call index. The two count alike except
    past a request the link ended without an upstream answer (a fault ``on_request`` cut or
    answered it before forwarding it): that one never reached the fake, so the model client's
    next request (a retry) is the fake's next call, and it has no call of its own."""
    events = obs.link_events.get("model", ())
    requested = {e.request for e in events if e.kind == "request" and e.request is not None}
    answered = {e.request for e in events if e.kind == "response_headers"}
    ended = {e.request for e in events if e.kind == "end"}
    skipped = sorted(r for r in requested if r in ended and r not in answered)
    numbers = {e.request for e in events if e.request is not None}
    return {r: r - bisect_left(skipped, r) for r in sorted(numbers) if r not in skipped}


def link_faulted_calls(obs: GatewayObservation) -> frozenset[int]:
    """Model calls whose answer a fault on the model link kept from the gateway, whole or in
    part: a cut, a rewrite, or a stall that swallowed some of it (``stall`` swallows what
    arrives while it holds, even when it is bounded and the exchange then goes on: the plan
    vocabulary's "what was swallowed meanwhile is lost"). The fake model saw such a call
    complete, but the gateway did not get what it sent, so nothing is owed for that answer
    beyond what reached it. A stall that swallowed nothing (it held before the model's first
    chunk, and every chunk was forwarded after it) keeps nothing back. Link requests are
    matched to the fake's calls by :func:`model_link_calls`."""
    events = obs.link_events.get("model", ())
    calls = model_link_calls(obs)
    ends = {e.request: e.how for e in events if e.kind == "end" and e.request is not None}
    forwarded: dict[int, int] = {}
    for e in events:
        if e.kind == "event" and e.request is not None:
            forwarded[e.request] = forwarded.get(e.request, 0) + 1
    sent = {c.index: c.chunks_sent for c in obs.model_calls}

    def swallowed(request: int) -> bool:
        if ends.get(request) != "clean":
            return True  # a black hole, or a stall the exchange never came out of
        return forwarded.get(request, 0) < sent.get(calls[request], 0)

    return frozenset(
        calls[e.request]
        for e in events
        if e.kind == "fault"
        and e.request is not None
        and e.request in calls
        and e.fault is not None
        and (
            e.fault.action in _LOSSY_ACTIONS or (e.fault.action == "stall" and swallowed(e.request))
        )
    )


# --- GW-SSE-RESPONSE ---------------------------------------------------------------------------


def sse_response_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """The seed's endpoint is ``produces = MediaType.TEXT_EVENT_STREAM_VALUE``: a 200
    ``text/event-stream`` response (parameters such as ``charset`` allowed)."""
    response = obs.response
    if response.end == "client-closed" and response.status is None:
        return [
            not_applicable(
                "GW-SSE-RESPONSE",
                "not judged: the browser went away before the response began "
                f"({response.error or 'no status line'})",
            )
        ]
    observed = f"status {response.status}, Content-Type {response.content_type}, end {response.end}"
    return [
        from_violations(
            "GW-SSE-RESPONSE",
            _stream_problems(obs),
            rule="the chat endpoint must answer 200 with Content-Type text/event-stream and a "
            "body of Server-Sent Events",
            ok="200 text/event-stream",
            expected="status 200, Content-Type text/event-stream",
            observed=observed,
        )
    ]


# --- GW-FRAME-TYPES ----------------------------------------------------------------------------


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _shape_problem(frame: Frame) -> str | None:
    """What is wrong with one frame's type or payload, or ``None``."""
    if frame.event not in FRAME_TYPES:
        return f"{label(frame)} has an unknown type {frame.event!r}"
    d = payload_dict(frame)
    if d is None:
        return f"{label(frame)} data is not a JSON object: {short(frame.data)}"
    wrong: list[str] = []
    if frame.event in ("delta", "message"):
        wrong += [
            f"{k!r} is not a string" for k in ("author", "text") if not isinstance(d.get(k), str)
        ]
    if frame.event == "message" and not isinstance(d.get("final"), bool):
        wrong.append("'final' is not true/false")
    if frame.event == "tool_call" and not _is_str_list(d.get("names")):
        wrong.append("'names' is not a non-empty list of strings")
    if frame.event == "tool_result":
        count = d.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            wrong.append("'count' is not an integer >= 1")
    if frame.event == "error":
        if "code" in d and not isinstance(d["code"], str):
            wrong.append("'code' is not a string")
        if "retryable" in d and not isinstance(d["retryable"], bool):
            wrong.append("'retryable' is not true/false")
    if wrong:
        return f"{label(frame)} {short(frame.data, 80)}: {', '.join(wrong)}"
    return None


def frame_type_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Each frame is one of the seed's six types with that type's payload.

    Shapes from the controller: ``delta {author, text}``, ``message {author, id?, text,
    final}``, ``tool_call {names}``, ``tool_result {count}``, ``error {code?, retryable?}``,
    ``done {}``. Extra keys are allowed (a client reads only what it needs).
    """
    if (skipped := no_frames(obs, "GW-FRAME-TYPES")) is not None:
        return skipped
    problems = [p for f in obs.frames if (p := _shape_problem(f)) is not None]
    return [
        from_violations(
            "GW-FRAME-TYPES",
            problems,
            rule="every frame's event is one of delta, message, tool_call, tool_result, error, "
            "done, and its data is a JSON object: delta {author: string, text: string}, message "
            "{author: string, text: string, final: boolean}, tool_call {names: [string, ...]}, "
            "tool_result {count: integer >= 1}, error {code?: string, retryable?: boolean}, "
            "done {}",
            ok=f"{len(obs.frames)} frame(s), all typed with valid payloads",
            observed=sequence(obs.frames),
        )
    ]


# --- GW-FRAME-ID-COUNTER and GW-FRAME-ID-FRESH ------------------------------------------------


def _int_id(frame: Frame) -> int | None:
    return int(frame.id) if frame.id.isascii() and frame.id.isdigit() else None


def _shares_event(previous: Frame, frame: Frame) -> bool:
    """``frame`` may carry ``previous``'s id: the seed's ``send`` emits a ``message`` and then
    a ``tool_call`` for one function-call event with text, both numbered ``n``."""
    return previous.event == "message" and frame.event == "tool_call"


def frame_id_counter_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Every frame carries the gateway's own counter as its SSE id.

    The seed: "the sequence id is the gateway's own counter, because nothing in the event
    contract promises ids suited to SSE Last-Event-ID resumption". Its controller takes
    ``seq.incrementAndGet()`` once per ADK event and once more for ``done`` or ``error``, so
    ids strictly increase, an event that yields no frame leaves a gap, and the only frames that
    can share an id are the ``message`` and the ``tool_call`` sent for one event.
    """
    if (skipped := no_frames(obs, "GW-FRAME-ID-COUNTER")) is not None:
        return skipped
    stored_ids = {
        e["id"]: i
        for i, e in enumerate(obs.history or ())
        if isinstance(e.get("id"), str) and e["id"]
    }
    problems: list[str] = []
    first_bad: Frame | None = None
    previous: Frame | None = None
    for i, frame in enumerate(obs.frames):
        if problems and first_bad is None:
            first_bad = obs.frames[i - 1]  # the frame the first problem was found on
        if not frame.id_line:
            inherited = f" (the browser keeps the previous id {frame.id!r})" if frame.id else ""
            problems.append(f"{label(frame)} has no id: line of its own{inherited}")
            continue
        if frame.id in stored_ids:
            problems.append(
                f"{label(frame)} uses the id of stored ADK event #{stored_ids[frame.id]}, not "
                "the gateway's own counter"
            )
            continue
        if _UUID.fullmatch(frame.id):
            problems.append(f"{label(frame)} id {frame.id!r} looks like an ADK event id")
            continue
        number = _int_id(frame)
        if number is None:
            problems.append(f"{label(frame)} id {frame.id!r} is not a decimal integer")
            continue
        if previous is not None:
            before = int(previous.id)
            if number < before:
                problems.append(f"{label(frame)} goes backwards after id {previous.id}")
            elif number == before and not _shares_event(previous, frame):
                problems.append(
                    f"{label(frame)} repeats the id of {label(previous)}: only a message and "
                    "the tool_call of the same event may share an id"
                )
        previous = frame
    if problems and first_bad is None:
        first_bad = obs.frames[-1]
    return [
        from_violations(
            "GW-FRAME-ID-COUNTER",
            problems,
            rule="every frame has its own id: line holding the gateway's counter, a decimal "
            "integer that strictly increases along the stream (gaps allowed) and is never an "
            "ADK event id; only a message and the tool_call sent for the same event may share "
            "an id",
            ok=f"{len(obs.frames)} frame id(s) from the gateway's own counter",
            expected="id: 1, 2, 3, ... (strictly increasing; a message and its tool_call may "
            "share one)",
            observed=" ".join(f.id or "-" for f in obs.frames) or "(no frames)",
            at=first_bad.t if first_bad is not None else None,
        )
    ]


def frame_id_fresh_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """SHOULD: a fresh id even for the ``message`` and ``tool_call`` of one event.

    The seed's own controller takes one number per ADK event, so the ``message`` and the
    ``tool_call`` it sends for one function-call event with text share it: GW-FRAME-ID-COUNTER
    allows exactly that and nothing else. A browser that reconnects with that id cannot tell
    which of the two it saw, hence this SHOULD. Every other id problem (none, one that is no
    counter, a repeat, a step back) is the MUST's alone; a stream with no such pair numbered by
    a counter has nothing to judge here.
    """
    rid = "GW-FRAME-ID-FRESH"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    pairs = [
        (previous, frame)
        for previous, frame in zip(obs.frames, obs.frames[1:], strict=False)
        if _shares_event(previous, frame)
        and previous.id_line
        and frame.id_line
        and _int_id(previous) is not None  # an id that is no counter is the MUST's
    ]
    if not pairs:
        return [
            not_applicable(
                rid,
                "not judged: no message came with a tool_call of its event (the one pair of "
                "frames that may share an id)",
            )
        ]
    shared = [(p, f) for p, f in pairs if p.id == f.id]
    problems = [
        f"{label(p)} and {label(f)} share id {f.id}: a browser that reconnects with "
        f"Last-Event-ID: {f.id} cannot tell which of them it saw"
        for p, f in shared
    ]
    return [
        from_violations(
            rid,
            problems,
            rule="each frame should get a fresh id, even the message and the tool_call sent for "
            "one event",
            ok=f"{len(pairs)} message(s) sent with a tool_call, each with an id of its own",
            observed=" ".join(f.id or "-" for f in obs.frames) or "(no frames)",
            at=shared[0][1].t if shared else None,
        )
    ]


# --- GW-STREAM-TERMINAL ------------------------------------------------------------------------


def stream_terminal_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """The stream ends with ``done`` or ``error``, nothing follows ``done``, no draft is left.

    The seed's controller sends ``done`` on completion and ``error`` on failure and then calls
    ``emitter.complete()``; "Clearing the draft on errors and on completion matters for the
    other common bug: a half-rendered sentence that stays on screen after the run failed."
    ``error`` then ``done`` (an error event on a run that completes) and two ``error`` frames
    (an error event followed by an exception) are both what the seed's controller sends.

    A stream the gateway's own run bound ended without a terminal frame is not judged here:
    the seed's controller does exactly that (``emitter.onTimeout(sub::dispose)``), and
    GW-RUN-BOUND and GW-RUN-BOUND-ERROR judge that ending (:func:`.run_bound.open_at_bound`).
    """
    if (skipped := no_stream(obs, "GW-STREAM-TERMINAL")) is not None:
        return skipped
    response = obs.response
    if response.end == "client-closed":
        return [left_early(obs, "GW-STREAM-TERMINAL")]
    bound = open_at_bound(obs)
    if bound is not None and not ended_with_terminal_frame(obs):
        return [not_applicable("GW-STREAM-TERMINAL", bound_note(obs, bound))]
    problems: list[str] = []
    at: float | None = None  # when it showed: a frame after done, else the end of the wait
    if response.end == "timeout":
        problems.append(
            f"the stream was still open after {obs.stream_wait()}: the gateway never ended it"
        )
    elif response.end == "error":
        detail = f" ({response.error})" if response.error else ""
        problems.append(f"the connection broke before the stream ended{detail}")
    frames = obs.frames
    if not frames:
        problems.append("the stream carried no frame at all")
    else:
        last = frames[-1]
        if last.event not in TERMINAL:
            problems.append(f"the last frame is {label(last)}, not done or error")
        done = next((f for f in frames if f.event == "done"), None)
        if done is not None:
            after = [f for f in frames if f.index > done.index]
            if after:
                problems.append(f"{label(after[0])} follows {label(done)}")
                at = after[0].t
        draft = replay(frames)[-1].draft
        if draft is not None:
            problems.append(f"a draft from {draft.author!r} is left on screen: {short(draft.text)}")
    return [
        from_violations(
            "GW-STREAM-TERMINAL",
            problems,
            rule="the stream must end (cleanly) with a done or error frame, nothing may follow "
            "done, and the seed's reducer must end with no draft on screen",
            ok=f"the stream ended with {last_event(obs)}",
            expected="... done  (or ... error)",
            observed=f"{sequence(frames)}; end {response.end}",
            at=at if at is not None else response.elapsed,
        )
    ]


# --- GW-FRAME-SEQUENCE -------------------------------------------------------------------------


def _error_coded_tool_steps(obs: GatewayObservation) -> bool:
    """Whether a completed model call carried function calls *and* a non-STOP finish reason.

    ADK then puts an ``errorCode`` on the function-call aggregate, and the seed's ``send`` checks
    the error code first: that event becomes an ``error`` frame, not a ``tool_call``, while the
    tools still run and their response event still becomes a ``tool_result``.
    """
    return any(
        c.completed
        and c.error_sent is None
        and c.function_calls_sent
        and c.finish_reason_sent not in (None, "STOP")
        for c in obs.model_calls
    )


def _tool_result_problems(obs: GatewayObservation) -> list[tuple[float, str]]:
    """Each problem with the time of the frame it was found on."""
    problems: list[tuple[float, str]] = []
    pending = 0
    unbounded = False  # an error frame may stand for an error-coded function-call aggregate
    error_coded = _error_coded_tool_steps(obs)
    for frame in obs.frames:
        d = payload_dict(frame) or {}
        if frame.event == "tool_call":
            names = d.get("names")
            pending += len(names) if isinstance(names, list) and names else 1
        elif frame.event == "error" and error_coded:
            unbounded = True
        elif frame.event == "tool_result":
            count = d.get("count")
            answered = count if isinstance(count, int) and not isinstance(count, bool) else 1
            answered = max(answered, 1)
            if unbounded:
                continue
            if answered > pending:
                what = "no tool_call" if pending == 0 else f"only {pending} unanswered call(s)"
                problems.append(
                    (frame.t, f"{label(frame)} answers {answered} call(s) but {what} came first")
                )
                pending = 0
            else:
                pending -= answered
    return problems


def frame_sequence_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """The seed's order: a tool result answers a call shown before it.

    The worked example: ``tool_call``, ``tool_result``, three ``delta``, ``message``, ``done``.
    ADK runs tools only from the aggregated function-call event, so a ``tool_result`` always
    follows its ``tool_call``. The aggregate follows its partials too, but a delta after the
    message that settles its text is a double render (the screen shows the message and a draft
    of it), GW-NO-DOUBLE-RENDER's alone. (That the stream ends with ``done`` or ``error`` is
    GW-STREAM-TERMINAL's rule; the scenario's own ``expect.frames`` is judged as that
    expectation.)
    """
    rid = "GW-FRAME-SEQUENCE"
    if (skipped := no_frames(obs, rid)) is not None:
        return skipped
    kinds = {f.event for f in obs.frames}
    if not kinds & {"tool_call", "tool_result"}:
        return [
            not_applicable(
                rid,
                "not judged: no tool step in this stream (deltas against their message are "
                "GW-NO-DOUBLE-RENDER's)",
            )
        ]
    found = _tool_result_problems(obs)
    problems = [text for _, text in found]
    return [
        from_violations(
            rid,
            problems,
            rule="every tool_result follows a tool_call it answers",
            ok=f"frame order {sequence(obs.frames)}",
            observed=sequence(obs.frames),
            at=min((t for t, _ in found), default=None),
        )
    ]
