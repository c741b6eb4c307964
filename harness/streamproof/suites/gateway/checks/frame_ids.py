"""Checks on the frames' SSE ids: the gateway's own counter (GW-FRAME-ID-COUNTER), fresh even
for the two frames of one event (GW-FRAME-ID-FRESH).

``docs/explanation/gateway-rules.md``, "A gateway: Event to Server-Sent Events": every frame is
sent with ``.id(Long.toString(n))``, ``n`` from the controller's own ``AtomicLong seq``.
"""

from __future__ import annotations

import re

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.stream import label, no_frames
from streamproof.suites.gateway.observation import Frame, GatewayObservation

__all__ = ["frame_id_counter_verdicts", "frame_id_fresh_verdicts"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


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
