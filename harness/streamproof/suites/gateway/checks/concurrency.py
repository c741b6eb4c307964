"""Checks over K sessions run at once against one gateway (``streamproof run --concurrency K``).

Pure functions over the K observations, each with the marker its session was given: the text
put into its user message, the model text scripted for it and the string arguments of its
function calls (:mod:`streamproof.suites.gateway.concurrency`). A marker is unique to one session,
so another session's marker in a frame or a stored event is cross-talk, seen exactly. The
model calls that belong to no session (a request holding no marker, or several) are the fake
model's, recorded apart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.fakes.records import ModelCall
from streamproof.suites.gateway.observation import GatewayObservation

__all__ = [
    "Session",
    "concurrency_verdicts",
    "crosstalk_verdicts",
    "history_per_session_verdicts",
    "streams_end_verdicts",
]


@dataclass(frozen=True)
class Session:
    """One of the K copies: its marker and what was observed of its turn."""

    marker: str
    observation: GatewayObservation


def _label(index: int, sessions: Sequence[Session]) -> str:
    return f"session {index + 1}/{len(sessions)}"


def _foreign(text: str, own: int, sessions: Sequence[Session]) -> list[int]:
    """The indexes of the other sessions whose marker ``text`` holds."""
    return [j for j, s in enumerate(sessions) if j != own and s.marker in text]


def crosstalk_verdicts(sessions: Sequence[Session]) -> list[Verdict]:
    """GW-CONC-NO-CROSSTALK: no frame of one session carries another session's marker."""
    rid = "GW-CONC-NO-CROSSTALK"
    if len(sessions) < 2:
        return [not_applicable(rid, "one session alone: there is no other to mix with")]
    violations: list[str] = []
    first_at: float | None = None
    own_seen = 0
    for i, session in enumerate(sessions):
        for frame in session.observation.frames:
            if session.marker in frame.data:
                own_seen += 1
            others = _foreign(frame.data, i, sessions)
            if others:
                names = ", ".join(_label(j, sessions) for j in others)
                violations.append(
                    f"{_label(i, sessions)}'s frame #{frame.index} ({frame.event}) carries the "
                    f"text of {names}: {frame.data[:160]}"
                )
                first_at = frame.t if first_at is None else min(first_at, frame.t)
    if not violations and own_seen == 0:
        return [
            not_applicable(
                rid,
                f"{rid}: no frame of any session carried its own marker (no scripted text "
                "reached the browser), so cross-talk could not show",
            )
        ]
    return [
        from_violations(
            rid,
            violations,
            rule="each chat stream carries only the events of its own session's run",
            ok=f"{len(sessions)} sessions at once: {own_seen} frame(s) carried their own "
            "session's marker and none another's",
            at=first_at,
        )
    ]


def history_per_session_verdicts(
    sessions: Sequence[Session], unkeyed_calls: Sequence[ModelCall] = ()
) -> list[Verdict]:
    """GW-CONC-HISTORY-PER-SESSION: each stored history holds its own user message and no other
    session's marker; no model request mixes sessions (``unkeyed_calls``: the requests that
    held no session's marker or several)."""
    rid = "GW-CONC-HISTORY-PER-SESSION"
    if len(sessions) < 2:
        return [not_applicable(rid, "one session alone: there is no other to mix with")]
    violations: list[str] = []
    judged = 0
    for i, session in enumerate(sessions):
        history = session.observation.history
        if history is None:
            continue
        judged += 1
        for n, event in enumerate(history):
            text = json.dumps(event, ensure_ascii=False)
            others = _foreign(text, i, sessions)
            if others:
                names = ", ".join(_label(j, sessions) for j in others)
                violations.append(
                    f"{_label(i, sessions)}'s history event #{n} holds the text of {names}"
                )
        dropped = session.observation.disconnected_at is not None  # may have stored nothing
        if not dropped and not any(
            session.marker in json.dumps(e, ensure_ascii=False) for e in history
        ):
            violations.append(
                f"{_label(i, sessions)}'s history ({len(history)} event(s)) does not hold its "
                "own user message"
            )
    for call in unkeyed_calls:
        text = json.dumps(call.body, ensure_ascii=False)
        held = [j for j, s in enumerate(sessions) if s.marker in text]
        what = (
            "the conversations of " + ", ".join(_label(j, sessions) for j in held)
            if held
            else "no session's conversation"
        )
        violations.append(f"model request #{call.index} (agent {call.agent}) carried {what}")
        judged += 1
    if judged == 0:
        return [
            not_applicable(
                rid, f"{rid}: no session's history was read (the target declares no history)"
            )
        ]
    return [
        from_violations(
            rid,
            violations,
            rule="each session's history and each model request hold one session's "
            "conversation, its own",
            ok=f"{len(sessions)} sessions at once: each history holds its own turn and "
            "nothing of another's; every model request carried one session's conversation",
        )
    ]


def streams_end_verdicts(sessions: Sequence[Session]) -> list[Verdict]:
    """GW-CONC-STREAMS-END: every session's chat stream ended (the harness did not have to give
    up waiting on it)."""
    rid = "GW-CONC-STREAMS-END"
    if len(sessions) < 2:
        return [not_applicable(rid, "one session alone: nothing ran at once")]
    violations = [
        f"{_label(i, sessions)}'s stream was still open after {s.observation.stream_wait()} "
        f"({len(s.observation.frames)} frame(s))"
        for i, s in enumerate(sessions)
        if s.observation.response.end == "timeout"
    ]
    return [
        from_violations(
            rid,
            violations,
            rule="every chat stream ends, whatever else is streaming at the same time",
            ok=f"all {len(sessions)} streams ended",
        )
    ]


def concurrency_verdicts(
    sessions: Sequence[Session], unkeyed_calls: Sequence[ModelCall] = ()
) -> list[Verdict]:
    """Every concurrency verdict for the K sessions of one scenario, in a fixed order."""
    return [
        *crosstalk_verdicts(sessions),
        *history_per_session_verdicts(sessions, unkeyed_calls),
        *streams_end_verdicts(sessions),
    ]
