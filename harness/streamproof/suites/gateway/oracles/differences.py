"""The known differences between the oracles and our structural verdicts, each with its reason.

A disagreement is one side flagging a structural fact the other does not: an oracle's finding
on a requirement of ours that holds (or on a fact none of ours judges), or a requirement of ours
that fails where the oracle found nothing it maps to. Each row of :data:`KNOWN_DIFFERENCES`
names one such difference, the condition on the stream under which it is the explanation, and
why: a library that does not check something (and what that costs a user), a fact the oracle is
not given, or a rule that is stricter than the protocol's client. A disagreement no row explains
is a failure of the differential: either our verdict is wrong or the table is missing a row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from streamproof.suites.gateway.oracles.finding import Finding, OracleReport
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.stream import Stream

__all__ = ["ANY", "KNOWN_DIFFERENCES", "Condition", "KnownDifference", "Side", "explain"]

Side = Literal["oracle only", "ours only"]
"""``oracle only``: the oracle flags a fact where our requirement holds (or none of ours judges
it); ``ours only``: our requirement fails where the oracle found nothing it maps to."""

Condition = Callable[[Stream, OracleReport, Finding | None], bool]
"""Whether a known difference explains a disagreement on this stream: the stream, the oracle's
report, and the finding (``None`` for an ``ours only`` disagreement)."""

ANY: Final = "*"
"""A row's requirement that matches every requirement."""

_REJECTING: Final = frozenset({"error", "schema", "stream"})
"""The finding kinds with which ``@ag-ui/client`` and ``ai`` stop reading the stream."""


@dataclass(frozen=True)
class KnownDifference:
    name: str
    libraries: tuple[str, ...]
    """The oracles it is about (by library name)."""
    side: Side
    requirement: str | None
    """Ours (``None``: a finding no requirement of ours judges; :data:`ANY`: any)."""
    reason: str
    rules: frozenset[str] = frozenset()
    """For ``oracle only``: the finding's rule (empty: any)."""
    message: str | None = None
    """For ``oracle only``: text the finding's message must contain."""
    when: Condition | None = None
    """The condition on the stream (``None``: always)."""

    def explains(
        self,
        stream: Stream,
        report: OracleReport,
        side: Side,
        requirement: str | None,
        finding: Finding | None,
    ) -> bool:
        if report.library not in self.libraries or self.side != side:
            return False
        if self.requirement != ANY and self.requirement != requirement:
            return False
        if finding is not None:
            if self.rules and finding.rule not in self.rules:
                return False
            if self.message is not None and self.message not in finding.message:
                return False
        return self.when is None or self.when(stream, report, finding)


# --- conditions --------------------------------------------------------------------------------


def browser_left(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """The harness closed the stream on purpose (the scenario's browser went away)."""
    return stream.end == "client-closed"


_TERMINAL: Final = frozenset({"RUN_FINISHED", "RUN_ERROR", "finish", "error"})


def no_terminal_event(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """No event ends the run: no RUN_FINISHED or RUN_ERROR (AG-UI), no finish or error chunk
    (the AI SDK)."""
    return not any(t in _TERMINAL for t in stream.types())


_ENTITY: Final = {
    "TEXT_MESSAGE": ("message", "messageId"),
    "TOOL_CALL": ("tool call", "toolCallId"),
    "REASONING_MESSAGE": ("reasoning message", "messageId"),
}


def _key(kind: str | None, event: object) -> tuple[str, str, str] | None:
    """(entity, id, START/END/...) of a lifecycle event."""
    if kind is None or not isinstance(event, dict):
        return None
    stem, _, step = kind.rpartition("_")
    entity = _ENTITY.get(stem)
    ident = event.get(entity[1]) if entity is not None else None
    if entity is None or not isinstance(ident, str):
        return None
    return entity[0], ident, step


def id_reused_after_end(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """The finding's event belongs to a message or tool call whose id was started again after
    its END (up to that event)."""
    if finding is None or finding.index is None:
        return False
    closed: set[tuple[str, str]] = set()
    reused: set[tuple[str, str]] = set()
    last: tuple[str, str] | None = None
    for kind, event in zip(stream.types()[: finding.index + 1], stream.events, strict=False):
        key = _key(kind, event)
        last = key[:2] if key is not None else None
        if key is None:
            continue
        if key[2] == "START" and key[:2] in closed:
            reused.add(key[:2])
        elif key[2] == "END":
            closed.add(key[:2])
    return last is not None and last in reused


def ids_stable_in_stream(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """Every RUN_FINISHED names RUN_STARTED's threadId and runId: what AGUI-RUN-IDS failed can
    only be the thread RUN_STARTED names against the request's."""
    types = stream.types()
    started = next((i for i, t in enumerate(types) if t == "RUN_STARTED"), None)
    if started is None:
        return False
    return all(
        stream.value(i, key) == stream.value(started, key)
        for i, t in enumerate(types)
        if t == "RUN_FINISHED"
        for key in ("threadId", "runId")
    )


def result_for_unknown_call(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """A TOOL_CALL_RESULT names a tool call no TOOL_CALL_START before it started."""
    started: set[str] = set()
    for kind, event in zip(stream.types(), stream.events, strict=True):
        call = (event or {}).get("toolCallId")
        if kind == "TOOL_CALL_START" and isinstance(call, str):
            started.add(call)
        elif kind == "TOOL_CALL_RESULT" and call not in started:
            return True
    return False


def step_started_while_open(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """A STEP_STARTED comes for a step of that name that is open."""
    open_steps: set[str] = set()
    for kind, event in zip(stream.types(), stream.events, strict=True):
        name = (event or {}).get("stepName")
        if kind == "STEP_STARTED" and isinstance(name, str):
            if name in open_steps:
                return True
            open_steps.add(name)
        elif kind == "STEP_FINISHED" and isinstance(name, str):
            open_steps.discard(name)
    return False


def terminated_but_not_clean(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """A terminal event came, but the connection then broke or stayed open (the libraries are
    given the events, not the connection)."""
    return stream.end in ("error", "timeout") and not no_terminal_event(stream, report, finding)


def stopped_before_end(stream: Stream, report: OracleReport, finding: Finding | None) -> bool:
    """The library stopped reading at an error before the stream's last event."""
    return any(
        f.kind in _REJECTING and f.index is not None and f.index < len(stream.payloads) - 1
        for f in report.findings
    )


# --- the table ---------------------------------------------------------------------------------

_OPEN_AT_END_RULES: Final = frozenset({"AGUI003", "AGUI007", "AGUI103", "AGUI203", "AGUI402"})

KNOWN_DIFFERENCES: Final[tuple[KnownDifference, ...]] = (
    KnownDifference(
        "empty delta",
        (VALIDATE,),
        "oracle only",
        None,
        "ag-ui-validate warns on a TEXT_MESSAGE_CONTENT with an empty delta (the AG-UI docs call "
        "the chunk non-empty); @ag-ui/client's schema accepts it and renders nothing for it, and "
        "no rule of the seed or of ours judges it: an empty delta shows nothing and hides nothing",
        rules=frozenset({"AGUI105"}),
    ),
    KnownDifference(
        "id reused after its end",
        (VALIDATE,),
        "oracle only",
        "AGUI-NO-REOPEN",
        "the id is started again after its END: AGUI-NO-REOPEN, as @ag-ui/client's verify "
        "middleware does, judges a START only against the ids that are open, while "
        "ag-ui-validate keeps every id of the run; when the second START comes from a partial "
        "function call (ag-ui #968, the agui-tool-call-from-partial mutant), "
        "GW-TOOL-CALL-FROM-AGGREGATE fails the stream for it",
        rules=frozenset({"AGUI104", "AGUI205"}),
        when=id_reused_after_end,
    ),
    KnownDifference(
        "validator lost a reused id",
        (VALIDATE,),
        "oracle only",
        "AGUI-EVENTS-PAIRED",
        "after the second START of an id reused after its END, ag-ui-validate no longer counts "
        "that id as open, so it calls the CONTENT/ARGS and END that follow unstarted; they do "
        "follow their START (the 'id reused after its end' difference is the cause)",
        rules=frozenset({"AGUI101", "AGUI102", "AGUI201", "AGUI202"}),
        when=id_reused_after_end,
    ),
    KnownDifference(
        "browser left",
        (VALIDATE,),
        "oracle only",
        "GW-STREAM-TERMINAL",
        "the harness closed the stream on purpose (the scenario's browser goes away, as a closed "
        "tab does): how the stream would have ended is unknown, so GW-STREAM-TERMINAL is not "
        "applicable; ag-ui-validate, given the events that arrived, sees a run never terminated",
        rules=_OPEN_AT_END_RULES,
        when=browser_left,
    ),
    KnownDifference(
        "validator counts a step started twice",
        (VALIDATE,),
        "oracle only",
        "AGUI-CLOSED-AT-FINISH",
        "a STEP_STARTED comes for a step that is open: ag-ui-validate counts two steps of that "
        "name, so the one STEP_FINISHED leaves one open at RUN_FINISHED (AGUI007), where "
        "AGUI-NO-REOPEN, as @ag-ui/client's verify middleware, rejects the second start",
        rules=frozenset({"AGUI007"}),
        when=step_started_while_open,
    ),
    KnownDifference(
        "validator lets a step start twice",
        (VALIDATE,),
        "ours only",
        "AGUI-NO-REOPEN",
        "a STEP_STARTED comes for a step that is open: @ag-ui/client's verify middleware rejects "
        "it, as AGUI-NO-REOPEN does; ag-ui-validate accepts it and flags the step left open at "
        "RUN_FINISHED instead (AGUI007)",
        when=step_started_while_open,
    ),
    KnownDifference(
        "client has no end-of-stream check",
        (CLIENT,),
        "ours only",
        "GW-STREAM-TERMINAL",
        "@ag-ui/client checks each event as it comes and nothing when the stream ends: a run with "
        "no RUN_FINISHED or RUN_ERROR is taken as complete and its half answer kept (ag-ui "
        "#2300); GW-STREAM-TERMINAL fails it, as ag-ui-validate does (AGUI003)",
        when=no_terminal_event,
    ),
    KnownDifference(
        "client compares no run ids",
        (CLIENT,),
        "ours only",
        "AGUI-RUN-IDS",
        "@ag-ui/client compares neither RUN_FINISHED's threadId and runId with RUN_STARTED's nor "
        "RUN_STARTED's thread with the request's; ag-ui-validate warns on the first (AGUI008)",
    ),
    KnownDifference(
        "validator not given the request",
        (VALIDATE,),
        "ours only",
        "AGUI-RUN-IDS",
        "RUN_STARTED names another thread than the request's threadId; ag-ui-validate is given "
        "the events only, not the request they answer",
        when=ids_stable_in_stream,
    ),
    KnownDifference(
        "client takes a result for an unknown call",
        (CLIENT,),
        "ours only",
        "GW-FRAME-SEQUENCE",
        "@ag-ui/client's verify middleware has no rule for TOOL_CALL_RESULT: a result for a tool "
        "call never started is kept as a tool message answering a call no message holds; "
        "ag-ui-validate flags it (AGUI207), as GW-FRAME-SEQUENCE does (a tool_result with no "
        "tool_call before it)",
        when=result_for_unknown_call,
    ),
    KnownDifference(
        "client strips an unknown key",
        (CLIENT,),
        "oracle only",
        None,
        "@ag-ui/client strips a key its event schema does not define, with a warning, and goes "
        "on; ag-ui-validate checks only the fields it knows and GW-FRAME-TYPES the fields each "
        "type requires: an extra key changes nothing a client renders",
        rules=frozenset({"enforce"}),
        message="Removed unrecognised material",
    ),
    KnownDifference(
        "not given the connection",
        (VALIDATE, CLIENT, AI),
        "ours only",
        "GW-STREAM-TERMINAL",
        "the stream's events end with its terminal event, but the connection did not end cleanly "
        "after it (it broke, or stayed open past the run's bound); the libraries are given the "
        "events only, not how the connection ended",
        when=terminated_but_not_clean,
    ),
    KnownDifference(
        "client stops at its first error",
        (CLIENT,),
        "ours only",
        ANY,
        "@ag-ui/client stops the run at its first error and never reads the events after it, so "
        "what we fail there has no counterpart in its findings",
        when=stopped_before_end,
    ),
    KnownDifference(
        "ai stops at its first error",
        (AI,),
        "ours only",
        ANY,
        "the ai package stops at the first chunk its schema or reader rejects (as useChat does) "
        "and never reads the chunks after it, so what we fail there has no counterpart in its "
        "findings",
        when=stopped_before_end,
    ),
    KnownDifference(
        "ai requires no [DONE]",
        (AI,),
        "ours only",
        "AISDK-DONE",
        "parseJsonEventStream skips data: [DONE] wherever it stands and requires none: the end "
        "of the body ends the stream, and chunks after [DONE] are read and rendered; AISDK-DONE "
        "holds the stream to the protocol's end marker",
    ),
    KnownDifference(
        "ai checks nothing at finish",
        (AI,),
        "ours only",
        "AISDK-PART-ENDED",
        "readUIMessageStream checks nothing at finish: a text part never ended simply stays "
        "'streaming'; AISDK-PART-ENDED holds every started part to its end",
    ),
    KnownDifference(
        "ai is not given the headers",
        (AI,),
        "ours only",
        "AISDK-STREAM-HEADER",
        "the oracle is given the events, not the response's headers (the ai package sets "
        "x-vercel-ai-ui-message-stream on the streams it serves; its chat transport does not "
        "read it)",
    ),
    KnownDifference(
        "ai has no end-of-stream check",
        (AI,),
        "ours only",
        "GW-STREAM-TERMINAL",
        "the ai package takes the end of the body for the end of the stream: with no finish or "
        "error chunk nothing is raised and the text so far stays as if complete (the UI message "
        "stream's counterpart of ag-ui #2300); GW-STREAM-TERMINAL fails it",
        when=no_terminal_event,
    ),
)
"""Every known, explained difference, first match wins."""


def explain(
    stream: Stream,
    report: OracleReport,
    side: Side,
    requirement: str | None,
    finding: Finding | None = None,
) -> KnownDifference | None:
    """The known difference that explains this disagreement, if one does."""
    return next(
        (k for k in KNOWN_DIFFERENCES if k.explains(stream, report, side, requirement, finding)),
        None,
    )
