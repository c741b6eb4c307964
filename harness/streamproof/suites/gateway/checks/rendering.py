"""Checks on what a browser renders: each answer once, and as the aggregate ``message``.

``docs/explanation/gateway-rules.md``, "The client: append, then replace": "append deltas to a
draft,
then replace the draft with the message when it arrives. Never append both." And "Inside SSE
mode": the aggregate "may differ from the concatenated deltas in whitespace or chunk
boundaries", so every text comparison here ignores whitespace (:func:`squash`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import repeated, short, squash
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls
from streamproof.suites.gateway.checks.screen import (
    Screen,
    double_render_problems,
    typed_frame_screens,
)
from streamproof.suites.gateway.checks.stream import (
    label,
    no_stream,
    payload_dict,
    sequence,
    terminal_error_frame,
)
from streamproof.suites.gateway.observation import Frame, GatewayObservation, ModelCall

__all__ = ["answer_as_message_verdicts", "double_render_verdicts", "screens_render_once"]


@dataclass(frozen=True)
class _Text:
    """A ``delta`` or ``message`` frame whose payload has string ``author`` and ``text``."""

    frame: Frame
    author: str | None
    """``None``: the wire names no author (any agent's)."""
    text: str


def _texts(frames: Sequence[Frame], kind: str) -> list[_Text]:
    out: list[_Text] = []
    for frame in frames:
        d = payload_dict(frame)
        if frame.event != kind or d is None:
            continue
        author, text = d.get("author"), d.get("text")
        named = isinstance(author, str) or ("author" in d and author is None)
        if named and isinstance(text, str):
            out.append(_Text(frame, author, text))
    return out


def _by(call: ModelCall, author: str | None) -> bool:
    """The call may have produced text for ``author`` (any author when its agent is unknown,
    any agent when the wire names no author)."""
    return author is None or call.agent is None or call.agent == author


def _clean(call: ModelCall) -> bool:
    """The call completed without an error: ADK's aggregate carries no error code, so the
    seed's ``send`` turns its text into a ``message``."""
    return call.completed and call.error_sent is None and call.finish_reason_sent in (None, "STOP")


# --- GW-NO-DOUBLE-RENDER -----------------------------------------------------------------------


def double_render_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Replaying the seed's reducer renders each answer once, on every screen.

    "Double rendering. The client appends deltas and then appends the aggregate." A gateway
    causes it when a delta repeats text already in the draft (the aggregate sent as one more
    delta), when a delta after its answer's message starts a draft of that same answer (the
    message and the draft side by side until ``done``), or when the same answer arrives in two
    ``message`` frames. Judged on the screens after every frame (:mod:`.screen`).
    """
    return screens_render_once(
        obs,
        typed_frame_screens(obs.frames),
        "with the seed's reducer (append deltas to a draft, replace the draft with the message) "
        "every answer must render once on every screen: a delta carries only new text of an "
        "answer still to come, and an answer is not sent again, as a second message or as a "
        "delta after its message",
    )


def screens_render_once(
    obs: GatewayObservation, screens: Sequence[Screen], rule: str
) -> list[Verdict]:
    """GW-NO-DOUBLE-RENDER on ``screens``, what a wire's own client shows after each of
    ``obs``'s frames (the seed's reducer, AG-UI's messages, the AI SDK's text parts)."""
    rid = "GW-NO-DOUBLE-RENDER"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if not any(s.messages or s.drafts for s in screens):
        return [not_applicable(rid, "not judged: no text frame was rendered")]
    if not obs.model_calls:
        return [
            not_applicable(
                rid, "not judged: no model calls were recorded, so what the model said is unknown"
            )
        ]
    problems = double_render_problems(screens, obs.model_calls, link_faulted_calls(obs))
    rendered = [short(m.text, 40) for m in screens[-1].messages]
    return [
        from_violations(
            rid,
            [p.text for p in problems],
            rule=rule,
            ok="each answer rendered once",
            observed=f"rendered messages: {', '.join(rendered) or '(none)'}",
            at=min((p.t for p in problems), default=None),
        )
    ]


# --- GW-ANSWER-AS-MESSAGE ----------------------------------------------------------------------


def _missing_answers(obs: GatewayObservation, messages: Sequence[_Text]) -> list[str]:
    """Model calls whose clean text has no ``message`` frame."""
    if obs.response.end in ("error", "client-closed"):
        return []  # the connection broke or the browser left: later messages could not arrive
    ended = terminal_error_frame(obs)
    faulted = link_faulted_calls(obs)
    calls = [
        c
        for c in obs.model_calls
        if _clean(c)
        and c.index not in faulted
        and squash(c.text_sent)
        and (ended is None or c.t < ended.t)
    ]
    used: set[int] = set()
    problems: list[str] = []
    for call in sorted(calls, key=lambda c: c.agent is None):  # known authors claim first
        match = next(
            (
                m
                for m in messages
                if m.frame.index not in used
                and _by(call, m.author)
                # an answer shown twice in its message is GW-NO-DOUBLE-RENDER's failure
                and repeated(m.text, call.text_sent) >= 1
            ),
            None,
        )
        if match is not None:
            used.add(match.frame.index)
            continue
        who = f"from {call.agent!r}" if call.agent else ""
        problems.append(
            f"model call #{call.index} completed ({call.finish_reason_sent or 'no finish reason'}) "
            f"with the text {short(call.text_sent)}, but no message frame {who} carries it"
        )
    return problems


def _message_vs_deltas(obs: GatewayObservation) -> list[str]:
    """Each message equals the deltas of its author before it, whitespace aside."""
    problems: list[str] = []
    pending: dict[str | None, list[_Text]] = {}
    for frame in obs.frames:
        text = _texts([frame], frame.event) if frame.event in ("delta", "message") else []
        if frame.event == "delta" and text:
            pending.setdefault(text[0].author, []).append(text[0])
        elif frame.event == "message" and text:
            m = text[0]
            deltas = pending.pop(m.author, [])
            streamed = "".join(d.text for d in deltas)
            if deltas and squash(streamed) != squash(m.text):
                first, last = deltas[0].frame.index, deltas[-1].frame.index
                problems.append(
                    f"{label(frame)} says {short(m.text)} but the deltas before it "
                    f"(frames #{first}-#{last}) spelled {short(streamed)}"
                )
        elif frame.event in ("tool_call", "error", "done"):
            pending.clear()  # the seed's reducer drops the draft on these
    return problems


def answer_as_message_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Every clean model text reaches the browser as a ``message`` holding the aggregate.

    The seed's ``send`` makes a ``message`` of every non-partial event with text ("the
    aggregate replaces the draft; it is the record"); a text that accompanies a function call
    is a ``message`` with ``final: false``. A model call that ended with a non-STOP finish
    reason becomes an ``error`` frame instead (ADK sets ``errorCode``), so it is not required
    here; neither are calls made after the stream had already ended in error.
    """
    if (skipped := no_stream(obs, "GW-ANSWER-AS-MESSAGE")) is not None:
        return skipped
    messages = _texts(obs.frames, "message")
    faulted = link_faulted_calls(obs)
    clean_text = any(
        _clean(c) and c.index not in faulted and squash(c.text_sent) for c in obs.model_calls
    )
    if not messages and not clean_text:
        return [
            not_applicable(
                "GW-ANSWER-AS-MESSAGE",
                "not judged: no model text completed cleanly and no message frame was sent",
            )
        ]
    problems = _missing_answers(obs, messages) + _message_vs_deltas(obs)
    return [
        from_violations(
            "GW-ANSWER-AS-MESSAGE",
            problems,
            rule="each model text that completes without an error must arrive as one message "
            "frame from its author whose text is the aggregate; a message equals the deltas "
            "before it, up to whitespace and chunk boundaries",
            ok=f"{len(messages)} message frame(s), each the aggregate of its text",
            observed=sequence(obs.frames),
        )
    ]


# --- GW-FINAL-FLAG -----------------------------------------------------------------------------


def final_flag_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A message's ``final`` is the event's ``finalResponse()``.

    Seed: "a client should key its 'answer is done' logic on finalResponse() rather than on
    stream completion. A multi-agent run can produce several final responses, from different
    authors" — the gateway's ``message`` carries ``"final", ev.finalResponse()``, and ``false``
    for the text that comes with a function call. A message whose text is a model answer with
    function calls must say ``final: false``; a clean text-only answer must say ``true``.
    Messages whose origin cannot be told from the model calls are not judged.
    """
    rid = "GW-FINAL-FLAG"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    problems: list[str] = []
    judged = 0
    for frame in obs.frames:
        payload = payload_dict(frame) if frame.event == "message" else None
        if payload is None or not isinstance(payload.get("final"), bool):
            continue  # not a message, or a malformed one (GW-FRAME-TYPES says so)
        text, author = squash(str(payload.get("text", ""))), payload.get("author")
        expected = {
            not call.function_calls_sent
            for call in obs.model_calls
            if _clean(call) and squash(call.text_sent) == text and _by(call, str(author))
        }
        if len(expected) != 1:
            continue
        judged += 1
        want = expected.pop()
        if payload["final"] is not want:
            why = "an answer with no function call" if want else "text sent with a function call"
            problems.append(
                f"{label(frame)} says final: {str(payload['final']).lower()}, but it is {why}"
            )
    if not judged:
        return [
            not_applicable(
                rid,
                "not judged: no message frame whose text is a clean model answer (with or "
                "without a function call)",
            )
        ]
    return [
        from_violations(
            rid,
            problems,
            rule="a message's final flag is the event's finalResponse(): false for text that "
            "comes with a function call, true for an answer",
            ok=f"{judged} message(s) carry the right final flag",
            expected="final: true only on answers",
            observed="; ".join(problems[:2]) if problems else "as expected",
        )
    ]
