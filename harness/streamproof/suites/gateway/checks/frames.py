"""Checks on each frame: its type and payload (GW-FRAME-TYPES) and the order of the tool steps
(GW-FRAME-SEQUENCE).

``docs/explanation/gateway-rules.md``, "A gateway: Event to Server-Sent Events": the controller
sends every frame as ``SseEmitter.event().id(Long.toString(n)).name(type).data(json)``.
"Frames are typed by event kind, so the browser never has to inspect model internals."
"""

from __future__ import annotations

from typing import Any

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import short
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.stream import label, no_frames, payload_dict, sequence
from streamproof.suites.gateway.observation import Frame, GatewayObservation
from streamproof.suites.gateway.scenario import FRAME_TYPES

__all__ = ["FRAME_TYPES", "frame_sequence_verdicts", "frame_type_verdicts"]


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
