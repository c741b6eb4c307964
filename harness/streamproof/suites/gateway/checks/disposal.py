"""GW-DISPOSE and GW-DISPOSE-IDLE: a closed tab must not leave the run going.

Seed, "Failure modes": "Orphaned runs. A closed tab with no disposal wiring leaves model calls
and tools running. Dispose the subscription on completion, timeout and send failure." The
harness closes the browser connection on purpose (``request.disconnect_after_frames``) and
then watches the fakes.

The seed's wiring notices a closed tab when the emitter completes, times out or fails to send,
so the MUST (GW-DISPOSE) is judged from the gateway's first chance to send after the browser
left: the model's next chunk (the second one, as a model client may hand each chunk over one
chunk late) or the end of its stream, whichever comes first. From then, within the scenario's
disposal bound, the open model stream must close and no new model or tool call may start.

The seed also says why: "a closed tab cancels the upstream Flowable instead of leaving a model
call running". While nothing flows (a model that stalls or thinks) a gateway that notices a
disconnect only at its next send keeps the model call open for as long as the quiet lasts; the
seed's own Spring ``SseEmitter`` is such a gateway. Noticing it sooner (handler cancellation,
a heartbeat) is GW-DISPOSE-IDLE, a SHOULD, judged only when that quiet outlasted the bound,
and only on a run that GW-DISPOSE did not already find undisposed: a run never disposed is one
failure, the MUST's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.texts import short, squash
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.checks.persistence import event_text
from streamproof.suites.gateway.observation import GatewayObservation

MIN_BOUND = 0.5
"""Seconds: the scaled bound never shrinks below this (the runner waits the same)."""


def dispose_bound(obs: GatewayObservation) -> float:
    return max(obs.limits.dispose_within * obs.time_scale, MIN_BOUND)


def send_chance(obs: GatewayObservation, left: float) -> float | None:
    """When the gateway first had something to send after the browser left at ``left``: the
    second text chunk a model stream wrote after it (one chunk of lag allowed), or a model
    stream that the model itself finished (its end hands over what was held), or a tool call,
    whichever came first. None: nothing came its way (or it closed the streams first)."""
    chances: list[float] = []
    for call in obs.model_calls:
        if call.t_end is not None and call.t_end < left:
            continue
        after = [t for t in call.text_chunk_times if t > left]
        if len(after) >= 2:
            chances.append(after[1])
        if call.t_end is not None and call.completed:
            chances.append(max(call.t_end, left))
    chances.extend(tool.t for tool in obs.tool_calls if tool.t > left)
    return min(chances) if chances else None


def _late(obs: GatewayObservation, left: float, deadline: float, bound_text: str) -> list[str]:
    """What was still going at ``deadline``: open model streams, calls started after it."""

    def both(real_s: float) -> str:
        return on_both_clocks(real_s, obs.time_scale)

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
    return problems


@dataclass(frozen=True)
class _Leaving:
    """What both disposal rules read: when the browser left, the bound, the gateway's next
    chance to send, and what was still going a bound after the browser left."""

    left: float
    bound_text: str
    chance: float | None
    quiet: bool
    at_once: list[str]
    open_calls: int


def _leaving(obs: GatewayObservation) -> _Leaving | None:
    left = obs.disconnected_at
    if left is None:
        return None
    bound = dispose_bound(obs)
    # The bound may have been raised to a floor: quote the scenario's own figure beside it.
    bound_text = on_both_clocks(bound, obs.time_scale, obs.limits.dispose_within)
    chance = send_chance(obs, left)
    return _Leaving(
        left=left,
        bound_text=bound_text,
        chance=chance,
        quiet=chance is None or chance > left + bound,
        at_once=_late(obs, left, left + bound, bound_text),
        open_calls=sum(1 for c in obs.model_calls if c.t <= left and (c.t_end or 1e9) > left),
    )


_STAYED = "not judged: the browser stayed until the stream ended"
_DETACHES = (
    "not judged: the target declares on_disconnect: detach (its runs outlive the browser on "
    "purpose; GW-DETACH-PERSIST-ONCE judges what it then owes)"
)


def dispose_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-DISPOSE: disposed by the gateway's next chance to send after the browser left."""
    rid = "GW-DISPOSE"
    if obs.on_disconnect == "detach":
        return [not_applicable(rid, _DETACHES)]
    it = _leaving(obs)
    if it is None:
        return [not_applicable(rid, _STAYED)]
    if it.chance is None and it.at_once:
        return [
            not_applicable(
                rid,
                "not judged: nothing came the gateway's way to send after the browser left "
                "(the seed's wiring notices a closed tab at its next send; GW-DISPOSE-IDLE "
                "judges the quiet)",
            )
        ]
    if it.chance is None:
        since, problems = "", it.at_once
    else:
        since = f", {on_both_clocks(it.chance - it.left, obs.time_scale)} after"
        problems = _late(obs, it.left, it.chance + dispose_bound(obs), it.bound_text)
    bound_text = it.bound_text
    return [
        from_violations(
            rid,
            problems,
            rule="when the browser goes away the gateway must dispose the run by its next "
            "send: close its model stream and start no model or tool call within "
            f"{bound_text} of its first chance to send after the browser left{since}",
            ok=f"the run was disposed within {bound_text} of the browser leaving or of the "
            f"gateway's next chance to send ({it.open_calls} model stream(s) were open then)",
            expected=f"model streams closed and no new calls within {bound_text} of the next send",
            observed="; ".join(problems[:3]) if problems else "disposed",
        )
    ]


def dispose_idle_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-DISPOSE-IDLE: a closed tab noticed while nothing flows, within the bound."""
    rid = "GW-DISPOSE-IDLE"
    if obs.on_disconnect == "detach":
        return [not_applicable(rid, _DETACHES)]
    it = _leaving(obs)
    if it is None:
        return [not_applicable(rid, _STAYED)]
    if not it.quiet:
        return [
            not_applicable(
                rid,
                "not judged: the gateway had something to send within the bound of the "
                "browser leaving (GW-DISPOSE judges that)",
            )
        ]
    if it.at_once and any(v.outcome is Outcome.FAIL for v in dispose_verdicts(obs)):
        return [
            not_applicable(
                rid,
                "not judged: the run was not disposed even by the gateway's next send, "
                "GW-DISPOSE's failure; noticing the closed tab sooner, while nothing flowed, "
                "is moot",
            )
        ]
    bound_text = it.bound_text
    return [
        from_violations(
            rid,
            it.at_once,
            rule="a closed tab should be noticed while nothing flows: the model stream "
            f"closed and no model or tool call started within {bound_text} of the browser "
            "leaving, not only at the gateway's next send",
            ok=f"the run was disposed within {bound_text} of the browser leaving, while "
            f"nothing flowed ({it.open_calls} model stream(s) were open then)",
            expected=f"model streams closed and no new calls within {bound_text}",
            observed="; ".join(it.at_once[:3]) if it.at_once else "disposed",
        )
    ]


# --- GW-DETACH-PERSIST-ONCE --------------------------------------------------------------------


def _stored_answers(history: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """Stored model texts (no function call, not partial), whitespace folded, counted."""
    return Counter(
        squash(event_text(e))
        for e in history
        if e.get("author") != "user" and e.get("partial") is not True and squash(event_text(e))
    )


def detach_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-DETACH-PERSIST-ONCE: a run the gateway detaches from a closed tab finishes within its
    bound and its answer is stored exactly once.

    A gateway may let the run finish when the browser leaves (``ag-ui-adk`` keeps it as a
    detached task) instead of disposing it, the seed's wiring. It then owes what the seed's
    persistence rules imply for a run that completes: the aggregate is the record, so a reload
    after the run shows each answer the model gave once, none lost, none stored twice; and the
    run still ends ("Orphaned runs": a run nobody bounds is the failure the seed names).
    """
    rid = "GW-DETACH-PERSIST-ONCE"
    if obs.on_disconnect != "detach":
        return [
            not_applicable(
                rid, "not judged: the target disposes its runs when the browser leaves (GW-DISPOSE)"
            )
        ]
    if obs.disconnected_at is None:
        return [not_applicable(rid, _STAYED)]
    if obs.history_after_run_error:
        return [
            from_violations(
                rid,
                [f"the history could not be read after the run: {obs.history_after_run_error}"],
                rule="a detached run's answer must be readable from the history once it ended",
                ok="",
            )
        ]
    if obs.history_after_run is None:
        return [not_applicable(rid, "not judged: the target declares no history endpoint")]
    problems: list[str] = []
    read_at = obs.history_after_run_at or 0.0
    still_open = [c for c in obs.model_calls if c.t_end is None or c.t_end > read_at]
    if still_open:
        problems.append(
            f"model call #{still_open[0].index} was still open when the history was read "
            f"{on_both_clocks(read_at - obs.disconnected_at, obs.time_scale)} after the browser "
            "left: the detached run did not end"
        )
    said = Counter(
        squash(c.text_sent)
        for c in obs.model_calls
        if c.completed
        and c.error_sent is None
        and c.finish_reason_sent in (None, "STOP")
        and not c.function_calls_sent
        and squash(c.text_sent)
    )
    stored = _stored_answers(obs.history_after_run)
    for text, times in said.items():
        original = next(c.text_sent for c in obs.model_calls if squash(c.text_sent) == text)
        if stored[text] < times:
            problems.append(
                f"the answer {short(original)} is not in the history after the run: the "
                "detached run's answer was lost"
            )
        elif stored[text] > times:
            problems.append(
                f"the answer {short(original)} is stored {stored[text]} times, but the model "
                f"said it {times} time(s)"
            )
    if not said and not problems:
        return [
            not_applicable(rid, "not judged: the detached run gave no clean text answer to store")
        ]
    return [
        from_violations(
            rid,
            problems,
            rule="a run detached from a closed tab must end within its bound, and a reload "
            "after it shows each answer the model gave exactly once",
            ok=f"the detached run ended and its {sum(said.values())} answer(s) are stored once",
        )
    ]
