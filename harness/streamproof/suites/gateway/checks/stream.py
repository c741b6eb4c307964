"""The stream as a whole: the helpers every check reads it with, and the rules on the response
and its end (GW-SSE-RESPONSE, GW-STREAM-TERMINAL).

``docs/explanation/gateway-rules.md``, "A gateway: Event to Server-Sent Events": the controller
answers ``produces = MediaType.TEXT_EVENT_STREAM_VALUE`` and ends the stream with ``done`` (the
Flowable completed) or ``error`` (it failed).

The small helpers at the top (stream presence, frame labels, the compact sequence, how the
stream ended) are shared by the other check modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import compress, short
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.link_faults import browser_link_cut
from streamproof.suites.gateway.checks.reducer import replay
from streamproof.suites.gateway.checks.run_bound import bound_note, open_at_bound
from streamproof.suites.gateway.observation import Frame, GatewayObservation

__all__ = [
    "TERMINAL",
    "ended_with_done",
    "ended_with_terminal_frame",
    "has_event_stream",
    "label",
    "last_event",
    "left_early",
    "no_frames",
    "no_stream",
    "payload_dict",
    "sequence",
    "sse_response_verdicts",
    "stream_terminal_verdicts",
    "terminal_error_frame",
]

TERMINAL = ("done", "error")


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
