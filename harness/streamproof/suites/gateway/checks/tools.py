"""Checks on tool steps: shown from the aggregate, run once, summarised, and bounded in number.

``docs/explanation/gateway-rules.md``, "Inside SSE mode": "Only a non-partial event with function
calls
triggers runFunctionCalls. So a client that sees a function call in a partial event and tries
to act on it is ahead of the framework, and the call will be executed once, later, from the
aggregate." The model's side of each call comes from the fake model's records
(``obs.model_calls``); the executions from the fake tool service's (``obs.tool_calls``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import compress, short
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls
from streamproof.suites.gateway.checks.run_bound import open_at_bound
from streamproof.suites.gateway.checks.stream import ended_with_done, label, no_stream, payload_dict
from streamproof.suites.gateway.observation import Frame, GatewayObservation, ModelCall

__all__ = [
    "llm_budget_verdicts",
    "tool_call_from_aggregate_verdicts",
    "tool_leak_verdicts",
    "tool_once_verdicts",
]


ADK_INTERNAL = frozenset({"transfer_to_agent", "finish_task"})
"""Function calls ADK answers itself (agent transfer, a task agent finishing): they never
reach the tool service. Agent tools (a sub-agent exposed as a tool) are answered by ADK too;
``obs.service_tools`` tells which names the tool service really serves."""


def _names(call: ModelCall) -> list[str]:
    return [str(fc.get("name", "?")) for fc in call.function_calls_sent]


def _aggregated(call: ModelCall) -> bool:
    """The call produced a function-call aggregate that the seed shows as a ``tool_call``:
    complete, and with no error code (a non-STOP finish reason makes ADK set ``errorCode``,
    and the seed's ``send`` then sends ``error`` for that event)."""
    return (
        call.completed
        and bool(call.function_calls_sent)
        and call.error_sent is None
        and call.finish_reason_sent in (None, "STOP")
    )


def _frame_names(frame: Frame) -> list[str]:
    d = payload_dict(frame) or {}
    names = d.get("names")
    return [str(n) for n in names] if isinstance(names, list) else []


def _render(steps: Iterable[list[str]]) -> str:
    return compress([f"[{', '.join(s)}]" for s in steps]) or "(none)"


# --- GW-TOOL-CALL-FROM-AGGREGATE ---------------------------------------------------------------


def tool_call_from_aggregate_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """One ``tool_call`` per aggregated function-call event, naming its calls, in order.

    "Acting on partial function calls. A UI or proxy triggers side effects from a partial
    event." ADK shows a streamed function call twice (partial, then aggregate); the seed's
    ``send`` emits ``tool_call`` only in the non-partial branch. When the run did not end with
    ``done``, the tool_call frames must be a prefix of the expected ones.
    """
    rid = "GW-TOOL-CALL-FROM-AGGREGATE"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    frames = [f for f in obs.frames if f.event == "tool_call"]
    if frames and not obs.model_calls:
        return [
            not_applicable(
                rid, "not judged: no model calls were recorded, so the aggregates are unknown"
            )
        ]
    # A call the model link kept from the gateway, whole or in part (link_faulted_calls), may
    # or may not have reached ADK as an aggregate: its tool_call frame may be there or not.
    faulted = link_faulted_calls(obs)
    aggregates = [c for c in obs.model_calls if _aggregated(c)]
    if not frames and not any(c.index not in faulted for c in aggregates):
        return [not_applicable(rid, "not judged: no function-call event and no tool_call frame")]
    expected = [_names(c) for c in aggregates if c.index not in faulted]
    observed = [_frame_names(f) for f in frames]
    done = ended_with_done(obs)
    problems: list[str] = []
    mismatched: list[str] = []
    extra = 0
    pos = 0
    for frame, seen in zip(frames, observed, strict=True):
        while (
            pos < len(aggregates)
            and aggregates[pos].index in faulted
            and _names(aggregates[pos]) != seen
        ):
            pos += 1  # a kept-back call whose aggregate the gateway never got
        if pos >= len(aggregates):
            extra += 1
            continue
        call = aggregates[pos]
        pos += 1
        if seen != _names(call):
            mismatched.append(
                f"{label(frame)} names {seen} but the aggregated answer of model call "
                f"#{call.index} called {_names(call)}"
            )
    if extra:
        problems.append(
            f"{len(frames)} tool_call frame(s) for {len(frames) - extra} aggregated "
            f"function-call event(s): {extra} came from partial events (the aggregate is the "
            "only source)" + _repeated_example(obs.frames)
        )
    else:
        problems.extend(mismatched)
        missing = [_names(c) for c in aggregates[pos:] if c.index not in faulted]
        if done and missing:
            problems.append(
                f"the run completed (done) but {len(missing)} aggregated function-call event(s) "
                f"got no tool_call frame: {_render(missing)}"
            )
    return [
        from_violations(
            rid,
            problems,
            rule="each aggregated (non-partial) function-call event gets one tool_call frame "
            "naming its calls; partial events never do",
            ok=f"{len(frames)} tool_call frame(s), one per aggregated function-call event",
            expected=_render(expected),
            observed=_render(observed),
        )
    ]


def _repeated_example(frames: Iterable[Frame]) -> str:
    """``; e.g. frame #1 repeats frame #0 ...``: a tool_call shown twice before its result."""
    previous: Frame | None = None
    for frame in frames:
        if frame.event == "tool_result":
            previous = None
        elif frame.event == "tool_call":
            if previous is not None and _frame_names(previous) == _frame_names(frame):
                return (
                    f"; e.g. {label(frame)} repeats {label(previous)} with no tool_result "
                    "between them"
                )
            previous = frame
    return ""


# --- GW-TOOL-ONCE ------------------------------------------------------------------------------


def tool_once_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Each aggregated function call runs its tool exactly once.

    The worked example: "the flow runs the tool exactly once from the aggregate too". At most
    once per function call in a completed model answer (an error-coded aggregate may still run
    its tools), and, when the run completed with ``done``, at least once per call of a clean
    aggregate to a tool the tool service serves (ADK answers agent transfers and agent tools
    itself, without calling the service).
    """
    rid = "GW-TOOL-ONCE"
    delivered = [c for c in obs.model_calls if c.completed and c.error_sent is None]
    most = Counter(n for c in delivered for n in _names(c))
    served = obs.service_tools
    faulted = link_faulted_calls(obs)  # the gateway may never have got these aggregates
    least = Counter(
        n
        for c in obs.model_calls
        if _aggregated(c) and c.index not in faulted
        for n in _names(c)
        if (n in served if served is not None else n not in ADK_INTERNAL)
    )
    ran = Counter(t.tool for t in obs.tool_calls)
    if not most and not least and not ran:
        return [
            not_applicable(rid, "not judged: the model called no tool and no tool was executed")
        ]
    done = ended_with_done(obs)
    problems: list[str] = []
    for name in sorted(set(most) | set(ran)):
        if ran[name] > most[name]:
            problems.append(
                f"{name} ran {ran[name]} time(s) but the model's completed answers called it "
                f"{most[name]} time(s): something acted on a partial function call"
            )
        elif done and ran[name] < least[name]:
            problems.append(
                f"{name} ran {ran[name]} time(s) but aggregated events called it "
                f"{least[name]} time(s) and the run completed (done)"
            )
    return [
        from_violations(
            rid,
            problems,
            rule="a tool runs once per function call in an aggregated (non-partial) event, "
            "never for a partial one",
            ok=f"tool executions match the aggregated calls: {dict(sorted(ran.items())) or 'none'}",
            expected=dict(sorted(least.items())),
            observed=dict(sorted(ran.items())),
        )
    ]


# --- GW-NO-TOOL-LEAK ---------------------------------------------------------------------------


def tool_leak_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """No frame carries data from a tool's answer.

    "Tool results are summarised, not forwarded, because raw tool payloads can contain data the
    user should not see." The fake tool service hides a per-run secret (``obs.marker``) in every
    answer; it must not appear in any frame's event, id or data (JSON-escaped forms included).
    """
    rid = "GW-NO-TOOL-LEAK"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if not obs.marker:
        return [not_applicable(rid, "not judged: no tool payload carried a marker in this run")]
    if not obs.tool_calls:
        return [not_applicable(rid, "not judged: no tool was executed, so no payload to leak")]
    forms = [obs.marker]
    for _ in range(3):  # the payload JSON-encoded inside a string, up to three times over
        forms.append(json.dumps(forms[-1])[1:-1])
    problems: list[str] = []
    leaked: list[float] = []  # when each leaking frame arrived
    for frame in obs.frames:
        where = [
            field
            for field, value in (("event", frame.event), ("id", frame.id), ("data", frame.data))
            if any(form in value for form in forms)
        ]
        if where:
            problems.append(
                f"{label(frame)} carries the tool's secret {obs.marker!r} in its "
                f"{' and '.join(where)}: {short(frame.data, 100)}"
            )
            leaked.append(frame.t)
    return [
        from_violations(
            rid,
            problems,
            rule="tool payloads never reach the browser: tool_result carries a count, and no "
            "frame carries data from a function response",
            ok=f"no frame carries the tool payload marker ({len(obs.frames)} frame(s) searched)",
            at=leaked[0] if leaked else None,
        )
    ]


# --- GW-LLM-BUDGET -----------------------------------------------------------------------------


def llm_budget_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A runaway tool loop is stopped by an interactive LLM-call budget.

    "Runaway loops. A tool that always triggers another call keeps the stream open.
    maxLlmCalls defaults to 500; set a budget suited to an interactive request." The seed's
    controller sets ``setMaxLlmCalls(20)``. Judged when the model's script could outrun the
    scenario's budget (a turn repeated ``forever``) or the gateway made more calls than the
    budget, and not when the gateway's declared run bound ended the loop before it made more
    calls than the budget (nothing then shows whether a budget is set); how the stopped run
    ends is GW-ERROR-FRAME's and GW-STREAM-TERMINAL's rule.
    """
    rid = "GW-LLM-BUDGET"
    calls, budget = len(obs.model_calls), obs.limits.model_calls
    scripted = obs.scripted_calls
    runaway = scripted == "forever" or (isinstance(scripted, int) and scripted > budget)
    if calls <= budget and not runaway:
        return [
            not_applicable(
                rid,
                f"not judged: {calls} model call(s), and the model's script ends within the "
                f"budget of {budget}: no runaway loop to stop",
            )
        ]
    bound = open_at_bound(obs)
    if calls <= budget and bound is not None:
        # The gateway's own run bound ended the loop first: whether a budget would have
        # stopped it cannot be seen (a slow machine loops fewer times before the bound).
        return [
            not_applicable(
                rid,
                f"not judged: the gateway's run bound of {on_both_clocks(bound, obs.time_scale)} "
                f"ended the loop after {calls} model call(s), before the budget of {budget} "
                "could show whether one is set",
            )
        ]
    problems: list[str] = []
    if calls > budget:
        problems.append(
            f"{calls} model calls for one request; an interactive budget must stop a loop by "
            f"{budget}"
        )
    elif obs.response.end == "timeout":
        problems.append(
            f"the loop was not stopped: the stream was still open after {obs.stream_wait()} "
            f"with {calls} model call(s) made"
        )
    return [
        from_violations(
            rid,
            problems,
            rule=f"a request may make at most {budget} model calls (the scenario's interactive "
            "budget): a runaway loop must be stopped",
            ok=f"{calls} model call(s), within the budget of {budget}",
            expected=f"<= {budget} model calls",
            observed=f"{calls} model calls, end {obs.response.end}",
        )
    ]
