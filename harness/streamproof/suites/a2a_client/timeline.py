"""An A2A client scenario's story in time (:class:`streamproof.core.timeline.Timeline`), from its
observation.

One epoch for everything: **the call's first request** (the first thing the first turn sent:
usually its agent card fetch). That is where the scenario's clock starts: the client's deadline
is counted from it (``first_request_t``, as the checks count it), and the task's script and the
link's timers start a moment later, with the ``message/stream`` it sends next. The observation
itself is on an earlier clock, the runner's ``t0`` (one ``time.monotonic()`` value given to the
fake server's ledger, the ``a2a`` link and the client turns alike), taken before the client
process is started; the process's start-up before its first request is no part of the scenario
(and under a time scale of 0.1 one second of it would read as ten scenario seconds), so every
time here, a verdict's ``at`` included, is the observation's minus that first request's. All
times are real seconds; the timeline's ``time_scale`` turns them into scenario time.

Lanes, left to right: the client, the ``a2a`` link (only when the client talked through one)
and the fake A2A server; in a push scenario, then the ``push`` link (when there was one) and the
client's webhook, where each delivery is an arrow from the server (:func:`_delivery_items`).
"""

from __future__ import annotations

from collections.abc import Sequence

from streamproof.core.timeline import Lane, Timeline, TimelineItem, clip, failure_items
from streamproof.core.verdicts import Verdict
from streamproof.fakes.a2a.ledger import RequestRecord, SentFrame
from streamproof.faults.timeline import link_fault_items, merge_bursts
from streamproof.suites.a2a_client.checks.exchanges import (
    Exchange,
    exchanges,
    first_request_t,
    turn_exchanges,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import ClientRun
from streamproof.suites.a2a_client.scenario import canonical_method

__all__ = ["timeline"]

_WATCHDOG_SHARE = 0.5
"""A quiet stretch is drawn as the client's watchdog window only when the client waited at least
this share of its idle limit before its tasks/get: a shorter wait was a reaction to something
else (an error, an end of stream), not the watchdog."""


def timeline(observation: A2AClientObservation, verdicts: Sequence[Verdict]) -> Timeline:
    """The client scenario's timeline: every request the server received (with how it ended)
    and each JSON answer, the SSE events that reached the client (runs of one kind merged into
    bursts), the link's faults, the client's watchdog quiet window where the data shows one,
    each turn's deadline and result, and each failed or unmet requirement at its ``at`` (else at
    the end of the run)."""
    obs = observation
    scale = obs.time_scale if obs.time_scale > 0 else 1.0
    linked = obs.link_events is not None
    lanes = [Lane(id="client", label="client")]
    if linked:
        lanes.append(Lane(id="link", label="a2a link"))
    lanes.append(Lane(id="server", label="A2A server"))
    if obs.push:
        if obs.push_link_events is not None:
            lanes.append(Lane(id="push-link", label="push link"))
        lanes.append(Lane(id="webhook", label="webhook (push)"))

    all_ex = exchanges(obs)
    origin = _origin(obs, all_ex)
    items: list[TimelineItem] = []
    for ex in all_ex:
        items += _request_items(obs, ex, linked)
    items += merge_bursts(sorted(_event_marks(all_ex, linked), key=lambda i: i.t))
    if obs.link_events:
        items += link_fault_items(obs.link_events, "link")
    if obs.push:
        items += _delivery_items(obs)
        if obs.push_link_events:
            items += link_fault_items(obs.push_link_events, "push-link")
    for turn in obs.turns:
        turn_ex = turn_exchanges(obs, turn, all_ex)
        items += _watchdog_windows(obs, turn_ex, scale)
        items += _turn_items(obs, turn, turn_ex, scale)
    end = max([t.t_end for t in obs.turns] + [r.t_end or r.t for r in obs.ledger.requests] + [0.0])
    items += failure_items(verdicts, end=end, lane="client")
    return Timeline(
        lanes=tuple(lanes),
        items=tuple(_shifted(item, origin) for item in items),
        time_scale=obs.time_scale,
        horizon_s=obs.deadline_s / scale,
    ).capped()


def _delivery_items(obs: A2AClientObservation) -> list[TimelineItem]:
    """Each push delivery: an arrow from the server to the webhook labelled with what it
    carried, and, when it did not end acknowledged, a cut saying how it ended (a lost one is
    only a cut, on the server's lane: it never left)."""
    items: list[TimelineItem] = []
    for d in obs.ledger.deliveries:
        number = f"#{d.delivery} " if d.delivery is not None else "forged "
        what = d.state or d.artifact_id or d.kind
        fault = f" [{d.fault}]" if d.fault is not None else ""
        answered = f"HTTP {d.receiver_status}" if d.receiver_status is not None else "no answer"
        detail = (
            f"delivery {number.strip()}: {d.kind} {what}{fault}; the webhook: {answered}; "
            f"ended {d.ended}{': ' + d.detail if d.detail else ''}"
        )
        if d.ended == "lost":
            items.append(
                TimelineItem(kind="cut", t=d.t, lane="server", label=f"{number}lost", detail=detail)
            )
            continue
        items.append(
            TimelineItem(
                kind="arrow",
                t=d.t,
                lane="server",
                to="webhook",
                label=f"{number}{what}{fault}",
                detail=detail,
            )
        )
        if d.ended != "acknowledged":
            shown = str(d.receiver_status) if d.ended == "refused" else d.ended
            items.append(
                TimelineItem(
                    kind="cut", t=d.t_end or d.t, lane="webhook", label=shown, detail=detail
                )
            )
    return items


def _origin(obs: A2AClientObservation, all_ex: Sequence[Exchange]) -> float:
    """The observation's time of the call's first request (see the module's docstring): the
    first turn's first request, else its start; 0 with no turn."""
    if not obs.turns:
        return 0.0
    first = min(obs.turns, key=lambda t: t.t_start)
    return first_request_t(first, turn_exchanges(obs, first, all_ex))


def _shifted(item: TimelineItem, origin: float) -> TimelineItem:
    """``item`` on the timeline's epoch: ``origin`` (the observation's time of it) is 0."""
    update: dict[str, float] = {"t": round(item.t - origin, 4)}
    if item.t_end is not None:
        update["t_end"] = round(item.t_end - origin, 4)
    return item.model_copy(update=update)


def _method(ex: Exchange) -> str:
    r = ex.record
    if ex.method is not None:
        rest = r is not None and r.binding == "rest"
        return canonical_method(ex.method) + (" [rest]" if rest else "")
    if r is not None and r.http_method == "GET" and "agent" in r.path:
        return "agent card"
    if r is not None:
        return f"{r.http_method} {r.path}"
    if ex.link is not None:
        return " ".join(p for p in (ex.link.method, ex.link.path) if p) or "a request"
    return "a request"


def _request_items(obs: A2AClientObservation, ex: Exchange, linked: bool) -> list[TimelineItem]:
    """The request (client -> server, or client -> link when it never reached the server) and,
    for a plain JSON answer, the answer (server -> client)."""
    method = _method(ex)
    r = ex.record
    if r is None:
        return [
            TimelineItem(
                kind="arrow",
                t=ex.t,
                lane="client",
                to="link" if linked else "server",
                label=method,
                detail="never reached the server"
                + (f" ({ex.cut_by_link})" if ex.cut_by_link else ""),
            )
        ]
    detail = f"HTTP {r.status}" + (f", task {r.task_id}" if r.task_id else "")
    if r.error_code is not None:
        detail += f", error {r.error_code}"
    items = [
        TimelineItem(
            kind="arrow",
            t=ex.t,
            lane="client",
            to="server",
            label=f"{method} ({r.ended})" if r.response == "sse" else method,
            detail=detail,
        )
    ]
    if (
        ex.op is not None
        and r.response == "json"
        and r.t_end is not None
        and r.ended == "completed"
    ):
        items.append(
            TimelineItem(
                kind="arrow",
                t=r.t_end,
                lane="server",
                to="client",
                label=_answer(obs, r),
                detail=f"answer to {method}: {detail}",
            )
        )
    return items


def _answer(obs: A2AClientObservation, r: RequestRecord) -> str:
    """What a JSON answer said: the task's state for a tasks/* call, an error code, else ok."""
    if r.error_code is not None:
        return f"error {r.error_code}"
    for calls in (obs.ledger.gets, obs.ledger.resubscribes, obs.ledger.cancels):
        for call in calls:
            if call.request == r.index and call.state is not None:
                return call.state
    return "ok" if r.status < 400 else f"HTTP {r.status}"


def _frame_label(frame: SentFrame) -> tuple[str, str]:
    """A frame's label (its kind with its state or artifact id, so runs of equal labels merge
    into a burst) and detail (what it carried)."""
    kind = frame.kind.removesuffix("-update")
    if frame.kind in ("task", "status-update") and frame.state:
        detail = clip(frame.text or "", 40)
        return f"{kind} {frame.state}", detail
    if frame.kind == "artifact-update":
        detail = ("append " if frame.append else "") + clip(frame.text or "", 40)
        return f"{kind} {frame.artifact_id}", detail
    if frame.kind == "error":
        return kind, f"error {frame.error_code}"
    return kind, clip(frame.text or "", 40)


def _event_marks(all_ex: Sequence[Exchange], linked: bool) -> list[TimelineItem]:
    """One mark per SSE event that reached the client: on the link's lane at the time the link
    forwarded it, or (no link) on the client's at the time the server wrote it."""
    marks: list[TimelineItem] = []
    for ex in all_ex:
        if not ex.streaming:
            continue
        if linked and ex.link is not None:
            times = ex.link.events
            for i, t in enumerate(times):
                label, detail = (
                    _frame_label(ex.forwarded[i]) if i < len(ex.forwarded) else ("event", "")
                )
                damage = ex.link.damage[i] if i < len(ex.link.damage) else None
                if damage is not None:
                    label, detail = f"{label} (damaged)", f"{detail}; {damage}".lstrip("; ")
                marks.append(
                    TimelineItem(kind="mark", t=t, lane="link", label=label, detail=detail)
                )
        elif not linked:
            for frame in ex.forwarded:
                label, detail = _frame_label(frame)
                marks.append(
                    TimelineItem(kind="mark", t=frame.t, lane="client", label=label, detail=detail)
                )
    return marks


def _watchdog_windows(
    obs: A2AClientObservation, turn_ex: Sequence[Exchange], scale: float
) -> list[TimelineItem]:
    """The client's quiet window before a watchdog recovery: from the last thing a stream gave
    the client to the tasks/get the client sent next, when the stream ended in no error the
    client could see (it went quiet, or a stall held it) and the client waited a good share of
    its idle limit; anything else was no watchdog's doing, and draws nothing."""
    rpc = [e for e in turn_ex if e.op is not None]
    items: list[TimelineItem] = []
    for i, ex in enumerate(rpc):
        if not ex.streaming or ex.turn_end_delivered or ex.cut_by_link not in (None, "stall"):
            continue
        nxt = next((e for e in rpc[i + 1 :] if e.t >= ex.last_activity), None)
        if nxt is None or nxt.op != "get":
            continue
        gap = nxt.t - ex.last_activity
        if gap < _WATCHDOG_SHARE * obs.idle_s:
            continue
        items.append(
            TimelineItem(
                kind="window",
                t=ex.last_activity,
                t_end=nxt.t,
                lane="client",
                label=f"idle {gap / scale:.0f}s",
                detail=f"nothing reached the client for {gap:.2f}s real (idle limit "
                f"{obs.idle_s / scale:g}s), then it sent tasks/get",
            )
        )
    return items


def _turn_items(
    obs: A2AClientObservation, turn: ClientRun, turn_ex: Sequence[Exchange], scale: float
) -> list[TimelineItem]:
    """The turn's deadline window (from its first request) and its result, or why none."""
    name = "call" if turn.turn == 0 else "follow-up"
    first = first_request_t(turn, turn_ex)
    items = [
        TimelineItem(
            kind="window",
            t=first,
            t_end=first + turn.deadline_s,
            lane="client",
            label=f"deadline {turn.deadline_s / scale:g}s",
            detail=f"the {name}'s deadline, from its first request",
        )
    ]
    result = turn.result
    if result is not None and turn.t_result is not None:
        arts = ", ".join(f"{a.id} ({len(a.text)} chars)" for a in result.artifacts)
        label = result.status + (" incomplete" if result.incomplete else "")
        if result.artifacts:
            label += f" [{', '.join(a.id for a in result.artifacts)}]"
        items.append(
            TimelineItem(
                kind="result",
                t=turn.t_result,
                lane="client",
                label=clip(label, 60),
                detail=f"the {name}'s result: {result.status}"
                + (f", artifacts {arts}" if arts else "")
                + (f", task {result.task_id}" if result.task_id else ""),
            )
        )
    elif turn.failure is not None:
        items.append(
            TimelineItem(
                kind="result",
                t=turn.t_end,
                lane="client",
                label=f"no result ({turn.failure.kind})",
                detail=clip(turn.failure.message, 160),
            )
        )
    return items
