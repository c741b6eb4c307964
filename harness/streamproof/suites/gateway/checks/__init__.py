"""Gateway checks: pure functions from a
:class:`~streamproof.suites.gateway.observation.GatewayObservation` to verdicts, each tied to a
requirement of the registry (:mod:`streamproof.suites.gateway.requirements`).

Users who collect frames, a history and the fakes' records by other means can build an
observation themselves and call any single check, or all of them through the observation's
profile: :func:`streamproof.suites.gateway.profiles.registry.check_gateway`.
"""

from __future__ import annotations

from streamproof.core.requirements import not_applicable
from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.suites.gateway.checks.adk_events import adk_events_verdicts
from streamproof.suites.gateway.checks.auth import auth_verdicts, history_isolation_verdicts
from streamproof.suites.gateway.checks.disposal import (
    detach_verdicts,
    dispose_idle_verdicts,
    dispose_verdicts,
)
from streamproof.suites.gateway.checks.errors import error_event_verdicts, error_frame_verdicts
from streamproof.suites.gateway.checks.expectations import gateway_expectation_verdicts
from streamproof.suites.gateway.checks.frame_ids import (
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
)
from streamproof.suites.gateway.checks.frames import frame_sequence_verdicts, frame_type_verdicts
from streamproof.suites.gateway.checks.link_faults import (
    browser_link_cut,
    browser_link_history_fault,
    browser_link_stall,
)
from streamproof.suites.gateway.checks.persistence import (
    history_kinds,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
)
from streamproof.suites.gateway.checks.progress import streams_progressively_verdicts
from streamproof.suites.gateway.checks.proxy import proxy_honoured_verdicts
from streamproof.suites.gateway.checks.reducer import ReducerState, reduce, replay
from streamproof.suites.gateway.checks.rendering import (
    answer_as_message_verdicts,
    double_render_verdicts,
    final_flag_verdicts,
)
from streamproof.suites.gateway.checks.run_bound import run_bound_error_verdicts, run_bound_verdicts
from streamproof.suites.gateway.checks.stream import sse_response_verdicts, stream_terminal_verdicts
from streamproof.suites.gateway.checks.tools import (
    llm_budget_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.observation import GatewayObservation

__all__ = [
    "ReducerState",
    "adk_events_verdicts",
    "answer_as_message_verdicts",
    "auth_verdicts",
    "browser_link_verdicts",
    "detach_verdicts",
    "dispose_idle_verdicts",
    "dispose_verdicts",
    "double_render_verdicts",
    "error_event_verdicts",
    "error_frame_verdicts",
    "final_flag_verdicts",
    "frame_id_counter_verdicts",
    "frame_id_fresh_verdicts",
    "frame_sequence_verdicts",
    "frame_type_verdicts",
    "gateway_expectation_verdicts",
    "history_isolation_verdicts",
    "history_kinds",
    "llm_budget_verdicts",
    "no_half_record_verdicts",
    "persist_aggregates_verdicts",
    "persist_matches_message_verdicts",
    "proxy_honoured_verdicts",
    "reduce",
    "replay",
    "run_bound_error_verdicts",
    "run_bound_verdicts",
    "sse_response_verdicts",
    "stream_terminal_verdicts",
    "streams_progressively_verdicts",
    "tool_call_from_aggregate_verdicts",
    "tool_leak_verdicts",
    "tool_once_verdicts",
]

WHOLE_STREAM_REQUIREMENTS: frozenset[str] = frozenset(
    {
        "GW-FRAME-ID-COUNTER",
        "GW-STREAM-TERMINAL",
        "GW-FRAME-SEQUENCE",
        "GW-NO-DOUBLE-RENDER",
        "GW-STREAMS-PROGRESSIVELY",
        "GW-ANSWER-AS-MESSAGE",
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "GW-ERROR-EVENT",
        "GW-ERROR-FRAME",
        "GW-RUN-BOUND",
        "GW-RUN-BOUND-ERROR",
    }
)
"""The rules judged from the whole frame stream (its order, its end, every frame between): a
stall on the browser link swallows what the gateway sends while it holds, so the frames that
arrived cannot judge them. The rules on each frame that did arrive (its type, a fresh id, no
tool payload, the final flag, the message stored verbatim) and on the gateway's side (tools,
history, budget) are judged as usual: a slow browser is back-pressure the gateway survives."""


def _unjudged_expectation(verdict: Verdict, why: str) -> Verdict:
    return Verdict(
        requirement=verdict.requirement,
        level=verdict.level,
        outcome=Outcome.NOT_APPLICABLE,
        message=why,
        kind=Kind.EXPECTATION,
    )


def browser_link_verdicts(obs: GatewayObservation, verdicts: list[Verdict]) -> list[Verdict]:
    """``verdicts`` with what a fault on the browser link leaves unjudgeable said so.

    A cut there is the browser going away (the runner records it as the browser closing the
    stream, so the rules judge it as ``request.disconnect_after_frames``); the scenario's
    expectations were written for the whole run, which the browser cut short, and are not
    judged. A stall is a slow browser: :data:`WHOLE_STREAM_REQUIREMENTS` are not judged, and neither
    is ``expect.frames``. A cut or a stall that hit the history read (a fault on every request, or
    on the second) leaves ``expect.history`` unjudged when the read failed (the history rules say so
    too).
    """
    events = obs.link_events.get("browser", ())
    cut, stall = browser_link_cut(events), browser_link_stall(events)
    history = browser_link_history_fault(events) if obs.history_error else None
    if history is not None and history.fault is not None:
        lost = (
            f"not judged: the browser link's fault ({history.fault.action}, {history.detail}) "
            f"hit the history read, which failed: {obs.history_error}"
        )
        verdicts = [
            _unjudged_expectation(v, lost) if v.requirement == "expect.history" else v
            for v in verdicts
        ]
    if cut is None and stall is None:
        return verdicts
    if stall is not None:
        why = (
            f"not judged: the browser link stalled the stream at {stall.t:.3f}s "
            f"({stall.detail}), a slow browser: the link swallows what the gateway sends while "
            "it holds, so the frames that arrived are not the whole stream"
        )
    else:
        assert cut is not None and cut.fault is not None
        why = (
            f"not judged: the browser link cut the stream ({cut.fault.action}, {cut.detail}) "
            f"after {len(obs.frames)} frame(s): the browser went away, as a closed tab does"
        )
    out: list[Verdict] = []
    for verdict in verdicts:
        if verdict.kind is Kind.EXPECTATION and (
            cut is not None or verdict.requirement == "expect.frames"
        ):
            out.append(_unjudged_expectation(verdict, why))
        elif stall is not None and verdict.requirement in WHOLE_STREAM_REQUIREMENTS:
            out.append(not_applicable(verdict.requirement, why))
        else:
            out.append(verdict)
    return out
