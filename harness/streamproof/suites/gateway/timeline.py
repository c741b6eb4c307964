"""A gateway scenario's story in time (:class:`streamproof.core.timeline.Timeline`), from its
observation.

One epoch for everything: the moment the harness sent the chat request (``t0`` in the runner).
Frames, the response's end, the history read and the browser's disconnect are measured from it
by the harness; the fake model, the fake tool service and both links are given the same ``t0``
(``set_epoch``), so model calls, tool calls and link records are on that clock too. All times
are real seconds; the timeline's ``time_scale`` turns them into scenario time.

Lanes, left to right: the browser (the harness), the browser link (only when a fault fired on
it: the browser always talks through it, but it is part of the story only when the scenario
made it act), the gateway, the model link (every model call crosses it; only when it recorded
anything), the fake model and the tool service (only when a tool was called).
"""

from __future__ import annotations

from collections.abc import Sequence

from streamproof.core.timeline import Lane, Timeline, TimelineItem, clip, failure_items
from streamproof.core.verdicts import Verdict
from streamproof.faults.timeline import link_fault_items, merge_bursts
from streamproof.suites.gateway.observation import GatewayObservation, ModelCall
from streamproof.suites.gateway.profiles.registry import profile

__all__ = ["timeline"]

RUN_BOUND_REACH = 1.5
"""The gateway's run bound is drawn when it ends before this many times the run's length."""


def _rounded(item: TimelineItem) -> TimelineItem:
    """Times to 0.1 ms: what was measured, without digits that only make the report bigger."""
    update = {"t": round(item.t, 4)}
    if item.t_end is not None:
        update["t_end"] = round(item.t_end, 4)
    return item.model_copy(update=update)


def timeline(observation: GatewayObservation, verdicts: Sequence[Verdict]) -> Timeline:
    """The gateway scenario's timeline: the chat request, each model call and its answer, tool
    calls, the history read, every SSE frame the browser got (runs of one type merged into a
    burst), the handshakes given up at the model past the proxy, what the links did, how the
    response ended, the browser leaving, the gateway's run bound, and each failed or unmet
    requirement at its ``at`` (else at the end of the run).
    Frames of a data-only wire (AG-UI, the AI SDK) are named by their type."""
    obs = profile(observation.profile).wire(observation)
    # The browser always talks through the browser link; it is a party of the story only when
    # the scenario made it do something (a fault fired on it).
    browser_link = any(e.kind == "fault" for e in obs.link_events.get("browser", ()))
    model_link = bool(obs.link_events.get("model"))
    lanes = [Lane(id="browser", label="browser")]
    if browser_link:
        lanes.append(Lane(id="browser-link", label="browser link"))
    lanes.append(Lane(id="gateway", label="gateway"))
    if model_link:
        lanes.append(Lane(id="model-link", label="model link"))
    lanes.append(Lane(id="model", label="fake model"))
    if obs.tool_calls:
        lanes.append(Lane(id="tools", label="tool service"))

    items: list[TimelineItem] = [
        TimelineItem(
            kind="arrow",
            t=0.0,
            lane="browser",
            to="gateway",
            label="chat request",
            detail=clip(obs.request_text, 80),
        )
    ]
    items += _frame_marks(obs)
    items += _model_items(obs.model_calls)
    items += [_from_gateway(c.t, "tools", c.tool, f"answered {c.status}") for c in obs.tool_calls]
    items += [
        _from_gateway(
            r.t, "model", "TLS given up, past the proxy", f"from {r.peer}: {clip(r.reason, 60)}"
        )
        for r in obs.refusals_past_proxy
    ]
    if browser_link:
        items += link_fault_items(obs.link_events["browser"], "browser-link")
    if model_link:
        items += link_fault_items(obs.link_events["model"], "model-link")
    end = _end_of_run(obs)
    items += _ends(obs, end)
    items += failure_items(verdicts, end=end, lane="gateway")
    return Timeline(
        lanes=tuple(lanes),
        items=tuple(_rounded(i) for i in items),
        time_scale=obs.time_scale,
        horizon_s=obs.limits.run_timeout,
    ).capped()


def _from_gateway(t: float, to: str, label: str, detail: str) -> TimelineItem:
    return TimelineItem(kind="arrow", t=t, lane="gateway", to=to, label=label, detail=detail)


def _frame_marks(obs: GatewayObservation) -> list[TimelineItem]:
    """One mark per frame on the browser lane, runs of one event type merged into bursts."""
    marks = [
        TimelineItem(
            kind="mark",
            t=f.t,
            lane="browser",
            label=f.event,
            detail=f"id:{f.id or '-'} {clip(f.data, 40)}",
        )
        for f in obs.frames
    ]
    return merge_bursts(marks)


def _model_items(calls: Sequence[ModelCall]) -> list[TimelineItem]:
    """Each model call: the request (gateway -> model) and, when the fake finished or saw the
    caller go, its answer (model -> gateway)."""
    items: list[TimelineItem] = []
    for call in calls:
        what = [] if call.streaming else ["unary"]
        what += [f"by {call.agent}"] if call.agent else []
        what += [f"a retry of #{call.retry_of}"] if call.retry_of is not None else []
        items.append(
            TimelineItem(
                kind="arrow",
                t=call.t,
                lane="gateway",
                to="model",
                label=f"model call #{call.index}",
                detail=", ".join(what),
            )
        )
        if call.t_end is None:
            continue
        if call.error_sent is not None or call.status >= 400:
            answer = f"error {call.status}"
        elif call.closed_early:
            answer = "closed early"
        elif call.function_calls_sent:
            names = [str(f.get("name", "?")) for f in call.function_calls_sent]
            answer = "calls " + ", ".join(names)
        else:
            answer = call.finish_reason_sent or ("text" if call.completed else "incomplete")
        items.append(
            TimelineItem(
                kind="arrow",
                t=call.t_end,
                lane="model",
                to="gateway",
                label=answer,
                detail=f"{call.chunks_sent} chunk(s)"
                + (f": {clip(call.text_sent, 40)}" if call.text_sent else ""),
            )
        )
    return items


def _ends(obs: GatewayObservation, end: float) -> list[TimelineItem]:
    """The browser leaving, the history read, how the response ended and the run bound (when
    it falls within the run: one that ends long after it only stretches the picture)."""
    items: list[TimelineItem] = []
    response = obs.response
    if obs.disconnected_at is not None:
        items.append(
            TimelineItem(
                kind="cut",
                t=obs.disconnected_at,
                lane="browser",
                label="browser left",
                detail=f"the browser closed the stream after {len(obs.frames)} frame(s)",
            )
        )
    else:
        detail = f"status {response.status}"
        if response.error:
            detail += f": {clip(response.error, 100)}"
        items.append(
            TimelineItem(
                kind="result",
                t=response.elapsed,
                lane="browser",
                label=response.end,
                detail=detail,
            )
        )
    if obs.history_read_at is not None and (obs.history is not None or obs.history_error):
        got = (
            f"{len(obs.history)} event(s)"
            if obs.history is not None
            else clip(obs.history_error or "", 80)
        )
        items.append(
            TimelineItem(
                kind="arrow",
                t=obs.history_read_at,
                lane="browser",
                to="gateway",
                label="history read",
                detail=got,
            )
        )
    if obs.run_bound_s is not None and obs.run_bound_s <= end * RUN_BOUND_REACH:
        items.append(
            TimelineItem(
                kind="window",
                t=0.0,
                t_end=obs.run_bound_s,
                lane="gateway",
                label="run bound",
                detail=f"the gateway's run bound: {obs.run_bound_s:g}s real",
            )
        )
    return items


def _end_of_run(obs: GatewayObservation) -> float:
    """The last moment the observation knows of: where a failure with no ``at`` is drawn."""
    times = [obs.response.elapsed, obs.history_read_at or 0.0]
    times += [c.t_end or c.t for c in obs.model_calls]
    times += [c.t for c in obs.tool_calls]
    return max(times)
