"""Gateway checks: pure functions from a
:class:`~harness.suites.gateway.observation.GatewayObservation` to verdicts, each tied to a
requirement of the registry (:mod:`harness.suites.gateway.requirements`).

Users who collect frames, a history and the fakes' records by other means can build an
observation themselves and call :func:`check_gateway`, or any single check.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.suites.gateway.checks.adk_events import adk_events_verdicts
from harness.suites.gateway.checks.auth import auth_verdicts, history_isolation_verdicts
from harness.suites.gateway.checks.disposal import dispose_idle_verdicts, dispose_verdicts
from harness.suites.gateway.checks.errors import error_event_verdicts, error_frame_verdicts
from harness.suites.gateway.checks.expectations import gateway_expectation_verdicts
from harness.suites.gateway.checks.frames import (
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
    frame_sequence_verdicts,
    frame_type_verdicts,
    sse_response_verdicts,
    stream_terminal_verdicts,
)
from harness.suites.gateway.checks.persistence import (
    history_kinds,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
)
from harness.suites.gateway.checks.progress import streams_progressively_verdicts
from harness.suites.gateway.checks.reducer import ReducerState, reduce, replay
from harness.suites.gateway.checks.rendering import (
    answer_as_message_verdicts,
    double_render_verdicts,
    final_flag_verdicts,
)
from harness.suites.gateway.checks.run_bound import run_bound_error_verdicts, run_bound_verdicts
from harness.suites.gateway.checks.tools import (
    llm_budget_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_leak_verdicts,
    tool_once_verdicts,
)
from harness.suites.gateway.observation import GatewayObservation
from harness.verdicts import Verdict

__all__ = [
    "GATEWAY_CHECKS",
    "ReducerState",
    "adk_events_verdicts",
    "answer_as_message_verdicts",
    "auth_verdicts",
    "check_gateway",
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

GatewayCheck = Callable[[GatewayObservation], list[Verdict]]

GATEWAY_CHECKS: tuple[GatewayCheck, ...] = (
    sse_response_verdicts,
    frame_type_verdicts,
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
    stream_terminal_verdicts,
    frame_sequence_verdicts,
    double_render_verdicts,
    streams_progressively_verdicts,
    answer_as_message_verdicts,
    final_flag_verdicts,
    tool_call_from_aggregate_verdicts,
    tool_once_verdicts,
    tool_leak_verdicts,
    llm_budget_verdicts,
    error_event_verdicts,
    error_frame_verdicts,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
    no_half_record_verdicts,
    dispose_verdicts,
    dispose_idle_verdicts,
    run_bound_verdicts,
    run_bound_error_verdicts,
    auth_verdicts,
    history_isolation_verdicts,
    gateway_expectation_verdicts,
)
"""Every gateway check, in a fixed order: stream, rendering, tools, errors, persistence, auth,
then the scenario's own expectations."""


def check_gateway(obs: GatewayObservation) -> list[Verdict]:
    """Every gateway verdict for ``obs``, in a fixed order, judged by the target's profile:
    the seed's typed frames, or ADK's raw events (:mod:`.adk_events`)."""
    if obs.profile == "adk-events":
        return adk_events_verdicts(obs)
    return [verdict for check in GATEWAY_CHECKS for verdict in check(obs)]
