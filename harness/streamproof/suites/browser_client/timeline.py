"""A browser-client scenario's timeline for the report: the page's requests, each frame the fake
gateway sent (and whether it reached the page), the link's faults, the tab hidden, how the
stream ended, and each failed or unmet requirement."""

from __future__ import annotations

from collections.abc import Sequence

from streamproof.core.timeline import Lane, Timeline, TimelineItem, clip, failure_items
from streamproof.core.verdicts import Verdict
from streamproof.faults.timeline import link_fault_items
from streamproof.suites.browser_client.observation import BrowserClientObservation

__all__ = ["timeline"]


def timeline(observation: BrowserClientObservation, verdicts: Sequence[Verdict]) -> Timeline:
    obs = observation
    scale = obs.time_scale if obs.time_scale > 0 else 1.0
    lanes = [Lane(id="page", label="page" if obs.mode == "page" else "reducer")]
    linked = obs.link_events is not None
    if linked:
        lanes.append(Lane(id="link", label="browser link"))
    lanes.append(Lane(id="gateway", label="fake gateway"))
    items: list[TimelineItem] = []
    for request in obs.requests:
        if request.role == "preflight":
            continue
        items.append(
            TimelineItem(
                kind="arrow",
                t=request.t,
                lane="page",
                to="gateway",
                label=f"{request.method} {request.role}",
                detail=f"{request.path} -> {request.status}",
            )
        )
    for frame in obs.frames:
        if frame.t_sent is None:
            continue
        items.append(
            TimelineItem(
                kind="mark",
                t=frame.t_sent,
                lane="gateway",
                label=frame.type,
                detail=clip(str(frame.data)) + ("" if frame.reached_page else " (never reached)"),
            )
        )
    if linked:
        items += link_fault_items(obs.link_events or (), "link")
    for t in obs.tab_hidden_at:
        items.append(TimelineItem(kind="mark", t=t, lane="page", label="tab hidden"))
    end = obs.t_stream_end
    if end is not None:
        items.append(
            TimelineItem(kind="result", t=end, lane="page", label=f"stream {obs.stream_end}")
        )
    last = max([i.t for i in items] + [s.t for s in obs.states] + [0.0])
    items += failure_items(verdicts, end=last, lane="page")
    return Timeline(lanes=tuple(lanes), items=tuple(items), time_scale=scale).capped()
