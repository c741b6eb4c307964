"""Checks on the stored session: aggregates only, and the stored text is what was said.

``docs/explanation/gateway-rules.md``, "Inside SSE mode": "Partial events are emitted to the caller
but
not passed to sessionService.appendEvent; non-partial events are appended. [...] the session
history contains the aggregate, never the chunks." The worked example: "The session now holds
the user message, the function-call event, the function-response event and the final text
event, and none of the three deltas. [...] frame 6 is what was said."

``obs.history`` holds the stored ADK events as JSON objects, camelCase as ADK dumps them by
alias (``content.parts[].text / functionCall / functionResponse``, ``partial``, ``errorCode``,
``author``, ``id``); the snake_case spellings are read too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamproof.core.requirements import from_violations, not_applicable, skip
from streamproof.core.texts import compress, repeated, short, squash
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.link_faults import (
    browser_link_history_fault,
    model_link_calls,
)
from streamproof.suites.gateway.checks.stream import label, no_stream, payload_dict
from streamproof.suites.gateway.observation import GatewayObservation, ModelCall

__all__ = [
    "event_text",
    "history_kind",
    "history_kinds",
    "persist_aggregates_verdicts",
    "persist_matches_message_loosely",
    "persist_matches_message_verdicts",
]


def _parts(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []


def _has(parts: Iterable[Mapping[str, Any]], *keys: str) -> bool:
    return any(part.get(key) for part in parts for key in keys)


def event_text(event: Mapping[str, Any]) -> str:
    """The event's text parts joined, as the seed's ``send`` computes a frame's text."""
    return "".join(p["text"] for p in _parts(event) if isinstance(p.get("text"), str))


def history_kind(event: Mapping[str, Any]) -> str | None:
    """``user``, ``function_call``, ``function_response``, ``error``, ``text`` or ``None``.

    In that order of precedence: a model event with text and a function call is a
    ``function_call`` (the worked example's "function-call event"); an error event that kept its
    text (``MAX_TOKENS``) is an ``error``. An event with none of these is not classified.
    """
    if event.get("author") == "user":
        return "user"
    parts = _parts(event)
    if _has(parts, "functionCall", "function_call"):
        return "function_call"
    if _has(parts, "functionResponse", "function_response"):
        return "function_response"
    if event.get("errorCode") or event.get("error_code"):
        return "error"
    if event_text(event):
        return "text"
    return None


def history_kinds(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The kinds of the stored events, in order, skipping events of no kind."""
    return [kind for event in events if (kind := history_kind(event)) is not None]


def _describe(i: int, event: Mapping[str, Any]) -> str:
    kind = history_kind(event) or "event"
    text = event_text(event)
    said = f" {short(text, 40)}" if text else ""
    return f"stored event #{i} ({kind} by {event.get('author')!r}{said})"


def _kinds(kinds: Sequence[str]) -> str:
    return compress(kinds, sep=", ")


def _unreadable(obs: GatewayObservation, rid: str, rule: str) -> list[Verdict] | None:
    """A FAIL when the target declares a history endpoint that could not be read; a SKIP when
    it declares none; ``None`` when the history is there to judge."""
    if obs.history_error and (
        cut := browser_link_history_fault(obs.link_events.get("browser", ()))
    ):
        assert cut.fault is not None
        return [
            not_applicable(
                rid,
                f"not judged: the browser link's fault ({cut.fault.action}, {cut.detail}) hit "
                f"the history read, which failed: {obs.history_error}",
            )
        ]
    if obs.history_error:
        return [
            from_violations(
                rid,
                [f"the declared history endpoint could not be read: {obs.history_error}"],
                rule=rule,
                ok="",
            )
        ]
    if obs.history is None:
        return [skip(rid, "the target declares no history endpoint")]
    return None


def persist_aggregates_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """The session stores the user message and the aggregates, never a partial chunk.

    Stored error events are legitimate records (Python ADK stores the error event of a model
    error, and ``errorCode: INVOCATION_ABORTED`` after a client disconnect). The scenario's
    ``expect.history`` is judged as that expectation, not here.
    """
    rid = "GW-PERSIST-AGGREGATES"
    rule = (
        "the session stores the user message and aggregated events only (function call, function "
        "response, final text, error events), never a partial chunk"
    )
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if (unjudged := _unreadable(obs, rid, rule)) is not None:
        return unjudged
    assert obs.history is not None
    if not obs.history and obs.disconnected_at is not None and not obs.model_calls:
        return [
            not_applicable(
                rid,
                f"not judged: the browser went away at {obs.disconnected_at:.3f}s, before the "
                "run called the model, and the session is empty: the run was disposed before it "
                "stored anything (ADK appends the user message as the run starts)",
            )
        ]
    kinds = history_kinds(obs.history)
    problems: list[str] = []
    if "user" not in kinds:
        problems.append(
            f"the session holds [{_kinds(kinds)}]: the user message {short(obs.request_text)} "
            "was not stored"
        )
    problems += [
        f"{_describe(i, e)} is a partial chunk (partial: true)"
        for i, e in enumerate(obs.history)
        if e.get("partial") is True
    ]
    return [
        from_violations(
            rid,
            problems,
            rule=rule,
            ok=f"{len(obs.history)} stored event(s), no partial chunk: [{_kinds(kinds)}]",
            expected="the user message, then aggregates only",
            observed=f"[{_kinds(kinds)}]",
        )
    ]


def persist_matches_message_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Each ``message`` frame's text is exactly the text of a stored event by its author.

    No whitespace folding here: the message is the aggregate and the aggregate is what is
    stored ("Never treat client-side accumulated deltas as the record").
    """
    return _persist_matches(obs, exact=True)


def persist_matches_message_loosely(obs: GatewayObservation) -> list[Verdict]:
    """GW-PERSIST-MATCHES-MESSAGE on a wire whose message is built from its deltas (AG-UI, the
    AI SDK stream): no aggregate text crosses such a wire, and the seed allows the aggregate to
    differ from the concatenated deltas in whitespace, so the comparison folds whitespace."""
    return _persist_matches(obs, exact=False)


def _persist_matches(obs: GatewayObservation, *, exact: bool) -> list[Verdict]:
    rid = "GW-PERSIST-MATCHES-MESSAGE"
    rule = (
        "the text of every message frame must equal, exactly, the text of a stored event by the "
        "same author: the message is the aggregate, and the aggregate is the record"
        if exact
        else "the text of every settled message must equal, up to whitespace, the text of a "
        "stored event (by the same author, where the wire names one): the aggregate is the record"
    )
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if not any(f.event == "message" for f in obs.frames):
        return [not_applicable(rid, "not judged: the stream carried no message frame")]
    if (unjudged := _unreadable(obs, rid, rule)) is not None:
        return unjudged
    assert obs.history is not None
    stored: dict[str | None, list[str]] = {}
    for event in obs.history:
        author = event.get("author")
        if isinstance(author, str):
            stored.setdefault(author, []).append(event_text(event))
            if author != "user":  # a message by an unnamed author is any agent's
                stored.setdefault(None, []).append(event_text(event))
    problems: list[str] = []
    checked = 0
    for frame in obs.frames:
        d = payload_dict(frame)
        if frame.event != "message" or d is None:
            continue
        author, text = d.get("author"), d.get("text")
        if not (author is None or isinstance(author, str)) or not isinstance(text, str):
            continue
        checked += 1
        texts = stored.get(author, [])
        if text in texts or (not exact and squash(text) in {squash(t) for t in texts}):
            continue
        if any(repeated(text, t) >= 2 for t in texts):
            continue  # the stored answer shown twice in one message: GW-NO-DOUBLE-RENDER's
        near = next((t for t in texts if t and squash(t) == squash(text)), None)
        hint = (
            f"; the stored text {short(near)} differs only in whitespace: the message was not "
            "the aggregate"
            if near is not None
            else ""
        )
        by = f" by {author!r}" if author is not None else ""
        problems.append(
            f"{label(frame)} says {short(text)} but no stored event{by} holds "
            f"{'exactly ' if exact else ''}that text{hint}"
        )
    if not checked:
        return [not_applicable(rid, "not judged: no well-formed message frame (GW-FRAME-TYPES)")]
    return [
        from_violations(
            rid,
            problems,
            rule=rule,
            ok=f"{checked} message frame(s), each stored {'verbatim' if exact else 'as said'}",
        )
    ]


# --- GW-NO-HALF-RECORD -------------------------------------------------------------------------

LOUD_ENDS = frozenset({"fin", "rst", "upstream_error"})


def _cut_calls(obs: GatewayObservation) -> list[ModelCall]:
    """Model calls whose answer never reached the gateway whole: the model failed mid-stream,
    the stream broke loudly on the model link (reset, FIN without terminator), or the
    gateway closed it early.

    A call the link ended with a well-formed end of body (a silent cut) is left out: to the
    gateway it looks like a stream that ended without a finish reason, and ADK stores that
    aggregate by design ("accumulated content is never dropped").

    The link's own loud cut counts whatever the fake model managed to write: a proxy that
    buffers (toxiproxy) may take the whole answer from the model before it resets the
    gateway's side, and what the gateway got is what decides."""
    calls = model_link_calls(obs)
    ends = {
        calls[e.request]: e
        for e in obs.link_events.get("model", ())
        if e.kind == "end" and e.request in calls
    }
    cut: list[ModelCall] = []
    for call in obs.model_calls:
        if call.error_sent is not None:  # {"error": ...} in the middle of the answer
            cut.append(call)
            continue
        end = ends.get(call.index)
        if end is not None and end.by == "proxy" and end.how in LOUD_ENDS:
            cut.append(call)
            continue
        if call.completed:
            continue
        if end is not None and end.how == "clean":
            continue
        if call.closed_early or (end is not None and end.how in LOUD_ENDS):
            cut.append(call)
    return cut


def no_half_record_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A run that breaks mid-answer leaves no half message as the record.

    Seed: "Never treat client-side accumulated deltas as the record" and, in the worked
    example, the reloading user sees "no answer text until the aggregate is persisted". A
    stored text that is a proper prefix of an answer whose stream broke can only be the
    deltas received so far, saved as if they were the answer. (A stream that ends cleanly
    without a finish reason is different: ADK emits that aggregate by design.)
    """
    rid = "GW-NO-HALF-RECORD"
    rule = (
        "when the answer's stream breaks, the deltas received so far are a draft, never the "
        "record: nothing but an aggregate may be stored"
    )
    cut = [c for c in _cut_calls(obs) if squash(c.text_sent)]
    if not cut:
        return [not_applicable(rid, "not judged: no model stream broke mid-answer in this run")]
    if (unjudged := _unreadable(obs, rid, rule)) is not None:
        return unjudged
    assert obs.history is not None
    problems: list[str] = []
    for i, event in enumerate(obs.history):
        if history_kind(event) != "text":
            continue
        stored = squash(event_text(event))
        for call in cut:
            sent = squash(call.text_sent)
            if stored and sent.startswith(stored):
                problems.append(
                    f"{_describe(i, event)} stores {short(event_text(event))!r}, what had "
                    f"arrived of model call #{call.index}'s answer before its stream broke"
                )
                break
    return [
        from_violations(
            rid,
            problems,
            rule=rule,
            ok="no half answer stored",
            expected="no stored text that is a broken answer's beginning",
            observed=f"the session holds [{_kinds(history_kinds(obs.history))}]",
        )
    ]
