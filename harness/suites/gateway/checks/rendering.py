"""Checks on what a browser renders: each answer once, and as the aggregate ``message``.

Seed ``000_08c89244bc50b181``, "The client: append, then replace": "append deltas to a draft,
then replace the draft with the message when it arrives. Never append both." And "Inside SSE
mode": the aggregate "may differ from the concatenated deltas in whitespace or chunk
boundaries", so every text comparison here ignores whitespace (:func:`squash`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harness.requirements import from_violations, not_applicable
from harness.suites.gateway.checks.frames import (
    label,
    link_faulted_calls,
    no_stream,
    payload_dict,
    sequence,
    terminal_error_frame,
)
from harness.suites.gateway.checks.reducer import Draft, replay
from harness.suites.gateway.observation import Frame, GatewayObservation, ModelCall
from harness.texts import repeated, short, squash
from harness.verdicts import Verdict

__all__ = ["answer_as_message_verdicts", "double_render_verdicts"]


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


def _raw_prefix(text: str, squashed_length: int) -> str:
    """The shortest prefix of ``text`` holding ``squashed_length`` non-whitespace characters."""
    seen = 0
    for i, ch in enumerate(text):
        if seen == squashed_length:
            return text[:i]
        if not ch.isspace():
            seen += 1
    return text


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# --- GW-NO-DOUBLE-RENDER -----------------------------------------------------------------------


def _draft_problem(frame: Frame, draft: Draft, sent: Sequence[str]) -> str:
    shown = squash(draft.text)
    best = max(sent, key=lambda t: _common_prefix(shown, squash(t)), default="")
    k = _common_prefix(shown, squash(best))
    rest = shown[k:]
    seen = f"after {label(frame)} the draft of {draft.author!r} reads {short(draft.text, 80)}"
    target = squash(best)
    if k and rest and (target.startswith(rest) or rest.startswith(target)):
        again = draft.text[len(_raw_prefix(draft.text, k)) :]
        return f"{seen}: the draft shows {short(again.strip() or again, 80)} twice"
    if not sent:
        return f"{seen}, but the model sent no text for {draft.author!r}"
    return f"{seen}, which is not how any model text for {draft.author!r} begins"


def _in_order(part: str, whole: str) -> bool:
    """Whether ``part``'s characters all occur in ``whole`` in the same order."""
    rest = iter(whole)
    return all(ch in rest for ch in part)


def _draft_problems(obs: GatewayObservation) -> list[str]:
    problems: list[str] = []
    faulted = link_faulted_calls(obs)
    reported: Draft | None = None
    for frame, state in zip(obs.frames, replay(obs.frames), strict=True):
        draft = state.draft
        if draft is None:
            reported = None
            continue
        if frame.event != "delta":
            continue
        if reported is not None and reported.author == draft.author:
            if draft.text.startswith(reported.text):
                continue  # the same draft keeps growing: reported once
        sent = [c.text_sent for c in obs.model_calls if _by(c, draft.author) and c.text_sent]
        if any(squash(t).startswith(squash(draft.text)) for t in sent):
            reported = None
            continue
        if any(
            _in_order(squash(draft.text), squash(c.text_sent))
            for c in obs.model_calls
            if c.index in faulted and _by(c, draft.author)
        ):
            # The model link swallowed some of that answer on the way (a stall): the draft
            # is the rest of it, in order, which is all the gateway got.
            reported = None
            continue
        problems.append(_draft_problem(frame, draft, sent))
        reported = draft
    return problems


def _message_problems(obs: GatewayObservation) -> list[str]:
    """An answer shown in more message frames than the model said it.

    Counted per author and whitespace-folded text: whole ``message`` frames with the text, plus
    runs of two or more consecutive messages that together spell it (a gateway that sent each
    chunk as a message and then the aggregate). A message that is a model text repeated is
    reported too (the deltas and the aggregate joined into one message).
    """
    messages = _texts(obs.frames, "message")
    problems: list[str] = []
    authors = sorted({m.author for m in messages}, key=lambda a: (a is not None, a or ""))
    for author in authors:
        said = Counter(
            squash(c.text_sent) for c in obs.model_calls if _by(c, author) and squash(c.text_sent)
        )
        completed = {squash(c.text_sent) for c in obs.model_calls if _by(c, author) and c.completed}
        completed.discard("")
        mine = [m for m in messages if m.author == author]
        shown: dict[str, list[str]] = {}
        for m in mine:
            shown.setdefault(squash(m.text), []).append(f"#{m.frame.index}")
        for run in _runs(obs.frames, author):
            for i in range(len(run)):
                for j in range(i + 2, len(run) + 1):
                    joined = squash("".join(m.text for m in run[i:j]))
                    if joined in completed:
                        span = f"#{run[i].frame.index}-#{run[j - 1].frame.index}"
                        shown.setdefault(joined, []).append(span)
        for text, where in shown.items():
            if text in completed and len(where) > said[text]:
                original = next(
                    c.text_sent
                    for c in obs.model_calls
                    if _by(c, author) and squash(c.text_sent) == text
                )
                problems.append(
                    f"the answer {short(original)} from {author!r} is rendered {len(where)} times "
                    f"(message frames {', '.join(where)}) but the model said it {said[text]} "
                    "time(s)"
                )
        for m in mine:
            text = squash(m.text)
            if text in said:
                continue
            for t in completed:
                if (
                    len(text) > len(t)
                    and len(text) % len(t) == 0
                    and text == t * (len(text) // len(t))
                ):
                    problems.append(
                        f"{label(m.frame)} shows the answer {short(_raw_prefix(m.text, len(t)))} "
                        f"{len(text) // len(t)} times in one message"
                    )
                    break
    return problems


def _runs(frames: Sequence[Frame], author: str | None) -> list[list[_Text]]:
    """Runs of ``author``'s message frames not separated by a tool_call, tool_result, error,
    done, or another author's message (deltas in between do not break a run)."""
    runs: list[list[_Text]] = [[]]
    for frame in frames:
        if frame.event == "delta":
            continue
        text = _texts([frame], "message")
        if text and text[0].author == author:
            runs[-1].append(text[0])
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if len(r) >= 2]


def double_render_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Replaying the seed's reducer renders each answer once.

    "Double rendering. The client appends deltas and then appends the aggregate." A gateway
    causes it when a delta repeats text already in the draft (e.g. the aggregate sent as one
    more delta), or when the same answer arrives in two ``message`` frames. After every delta,
    the draft must be the beginning of something the model sent for that author.
    """
    if (skipped := no_stream(obs, "GW-NO-DOUBLE-RENDER")) is not None:
        return skipped
    if not any(f.event in ("delta", "message") for f in obs.frames):
        return [not_applicable("GW-NO-DOUBLE-RENDER", "not judged: no text frame was rendered")]
    if not obs.model_calls:
        return [
            not_applicable(
                "GW-NO-DOUBLE-RENDER",
                "not judged: no model calls were recorded, so what the model said is unknown",
            )
        ]
    problems = _draft_problems(obs) + _message_problems(obs)
    final = replay(obs.frames)[-1] if obs.frames else None
    rendered = [short(m.text, 40) for m in final.messages] if final is not None else []
    return [
        from_violations(
            "GW-NO-DOUBLE-RENDER",
            problems,
            rule="with the seed's reducer (append deltas to a draft, replace the draft with the "
            "message) every answer must render once: a delta carries only new text, and an "
            "answer is not sent again as a second message",
            ok="each answer rendered once",
            observed=f"rendered messages: {', '.join(rendered) or '(none)'}",
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
