"""GW-DISPOSE: a closed tab must not leave the run going.

Seed, "Failure modes": "Orphaned runs. A closed tab with no disposal wiring leaves model calls
and tools running. Dispose the subscription on completion, timeout and send failure." The
harness closes the browser connection on purpose (``request.disconnect_after_frames``) and
then watches the fakes: the gateway's open model stream must close, and no new model or tool
call may start, within the scenario's disposal bound. A gateway that notices a disconnect only
at its next write fails this when the model stalls, because then nothing is written.
"""

from __future__ import annotations

from harness.durations import on_both_clocks
from harness.requirements import from_violations, not_applicable
from harness.suites.gateway.observation import GatewayObservation
from harness.verdicts import Verdict

MIN_BOUND = 0.5
"""Seconds: the scaled bound never shrinks below this (the runner waits the same)."""


def dispose_bound(obs: GatewayObservation) -> float:
    return max(obs.limits.dispose_within * obs.time_scale, MIN_BOUND)


def dispose_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "GW-DISPOSE"
    left = obs.disconnected_at
    if left is None:
        return [not_applicable(rid, "not judged: the browser stayed until the stream ended")]
    bound = dispose_bound(obs)

    def both(real_s: float) -> str:
        return on_both_clocks(real_s, obs.time_scale)

    # The bound may have been raised to a floor: quote the scenario's own figure beside it.
    bound_text = on_both_clocks(bound, obs.time_scale, obs.limits.dispose_within)

    deadline = left + bound
    problems: list[str] = []
    for call in obs.model_calls:
        after = call.t - left
        if call.t > deadline:
            problems.append(
                f"model call #{call.index} started {both(after)} after the browser left"
            )
        elif call.t_end is None:
            problems.append(
                f"model call #{call.index} (started at {both(call.t)}) was still streaming "
                f"{bound_text} after the browser left at {both(left)}"
            )
        elif call.t_end > deadline:
            problems.append(
                f"model call #{call.index} stayed open until {both(call.t_end - left)} after "
                f"the browser left (bound {bound_text})"
            )
    for tool in obs.tool_calls:
        if tool.t > deadline:
            problems.append(f"tool {tool.tool} ran {both(tool.t - left)} after the browser left")
    open_calls = sum(1 for c in obs.model_calls if c.t <= left and (c.t_end or 1e9) > left)
    return [
        from_violations(
            rid,
            problems,
            rule="when the browser goes away the gateway must dispose the run: close its model "
            f"stream and start no model or tool call within {bound_text}",
            ok=f"the run was disposed within {bound_text} of the browser leaving "
            f"({open_calls} model stream(s) were open then)",
            expected=f"model streams closed and no new calls within {bound_text}",
            observed="; ".join(problems[:3]) if problems else "disposed",
        )
    ]
