"""Dropped streams: the snapshot before every resubscribe (A2A-C-SNAPSHOT-FIRST), no resubscribe
to a finished task (-NO-RESUBSCRIBE-DONE) and recovery within the idle limit (-RECOVERY)."""

from __future__ import annotations

from streamproof.core.requirements import from_violations
from streamproof.core.verdicts import Verdict
from streamproof.suites.a2a_client.checks.exchanges import (
    DONE_STATES,
    Exchange,
)
from streamproof.suites.a2a_client.checks.turns import (
    _EPSILON,
    _label,
    _method,
    _not_judged,
    _secs,
    _Turn,
    _turns,
    slack,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation

# --- A2A-C-SNAPSHOT-FIRST, A2A-C-NO-RESUBSCRIBE-DONE -------------------------------------------


def _resubscribes(turn: _Turn) -> list[tuple[Exchange, Exchange | None, Exchange | None]]:
    """Each resubscribe with the stream before it and the last snapshot in between."""
    out: list[tuple[Exchange, Exchange | None, Exchange | None]] = []
    previous: Exchange | None = None
    for i, e in enumerate(turn.rpc):
        if e.op == "subscribe":
            since = previous.t if previous is not None else turn.first
            gets = [
                g
                for g in turn.rpc[:i]
                if g.op == "get"
                and g.t >= since
                and (e.task_id is None or g.task_id is None or g.task_id == e.task_id)
            ]
            out.append((e, previous, gets[-1] if gets else None))
        if e.streaming:
            previous = e
    return out


def snapshot_first_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "Fetch the snapshot before resubscribing." Every resubscribe follows a tasks/get of the
    task taken after the stream it replaces was opened."""
    rid = "A2A-C-SNAPSHOT-FIRST"
    problems: list[str] = []
    count = 0
    for turn in _turns(obs):
        for resub, previous, get in _resubscribes(turn):
            count += 1
            if get is None:
                after = f" after {_method(previous)}" if previous is not None else ""
                problems.append(
                    f"{_label(turn.run)}: {_method(resub)} at "
                    f"{_secs(obs, resub.t - turn.first)} with no tasks/get{after}"
                )
    if not count:
        return [_not_judged(rid, "the client never resubscribed")]
    return [
        from_violations(
            rid,
            problems,
            rule="take a tasks/get snapshot before every resubscribe (resubscribe does not "
            "replay; the snapshot is what the client rebuilds from)",
            ok=f"each of {count} resubscribe(s) followed a tasks/get snapshot",
        )
    ]


def no_resubscribe_done_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "The task may have finished while you were disconnected, and resubscribing to a finished
    task gains nothing": ``call.onState(snap.getStatus()); if (!call.done.isDone())
    client.resubscribe(...)``."""
    rid = "A2A-C-NO-RESUBSCRIBE-DONE"
    states = {g.request: g.state for g in obs.ledger.gets}
    problems: list[str] = []
    count = 0
    for turn in _turns(obs):
        for get in (e for e in turn.rpc if e.op == "get" and e.record is not None):
            assert get.record is not None
            state = states.get(get.record.index)
            if state not in DONE_STATES:
                continue
            count += 1
            later = [e for e in turn.rpc if e.op == "subscribe" and e.t > get.t]
            if later:
                problems.append(
                    f"{_label(turn.run)}: the tasks/get at {_secs(obs, get.t - turn.first)} "
                    f"showed {state!r}, yet {_method(later[0])} followed"
                )
    if not count:
        return [_not_judged(rid, "no snapshot showed a finished task")]
    return [
        from_violations(
            rid,
            problems,
            rule="a snapshot in a terminal or interrupted state ends the call; do not resubscribe",
            ok=f"{count} snapshot(s) showed the task finished, and no resubscribe followed",
        )
    ]


# --- A2A-C-RECOVERY ----------------------------------------------------------------------------


def recovery_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "Handle both with the same recovery, triggered either by the error handler or by a
    watchdog that notices no event for longer than the agent's expected heartbeat." The worked
    example: cut at 40 s, the watchdog recovers at 60 s with a 20 s idle limit.

    For every stream of a known task that stopped short of the turn's end (stalled, reset,
    ended) before the client's result, the client's next move (a tasks/get, any request, or its
    result) comes within the idle limit plus tolerance of the last thing it received. A stream
    still delivering after the result is no drop: the call was over, the process not yet gone.
    The scenario's ``expect.ledger`` (the calls the server must see, e.g. ``message/stream
    tasks/get tasks/resubscribe``) is judged here too.
    """
    rid = "A2A-C-RECOVERY"
    limit = obs.idle_s + slack(obs)
    problems: list[str] = []
    overdue: list[float] = []  # when each missing recovery was due (quiet since + limit)
    drops = 0
    for turn in _turns(obs):
        for e in turn.rpc:
            if not e.streaming or e.turn_end_delivered or not e.knows_task:
                continue
            if e.record is None and e.op != "subscribe":
                continue
            silent = e.last_activity
            if turn.run.t_result is not None and silent > turn.run.t_result + _EPSILON:
                # Still delivering after the result: the call was over (the process had yet to
                # exit and close it), so no stream went quiet on it.
                continue
            moves = [x.t for x in turn.rpc if x is not e and x.t >= silent - _EPSILON]
            if turn.run.t_result is not None:
                moves.append(turn.run.t_result)
            elif turn.run.failure is not None and turn.run.failure.kind != "hang" and not moves:
                continue  # it exited without a result: A2A-C-RESULT's failure, no timing seen
            elif not moves and turn.end - silent <= limit:
                continue  # stopped (killed) before its idle limit ran out: A2A-C-RESULT's
            drops += 1
            later = [m for m in moves if m >= silent - _EPSILON]
            if later and min(later) - silent <= limit:
                continue
            overdue.append(min(silent + limit, turn.end))
            how = e.cut_by_link or "stopped"
            since = f"{_secs(obs, silent - turn.first)} after the first request"
            if later:
                problems.append(
                    f"{_label(turn.run)}: {_method(e)} went quiet ({how}) at {since}, and the "
                    f"client waited {_secs(obs, min(later) - silent)} before it acted"
                )
            else:
                problems.append(
                    f"{_label(turn.run)}: {_method(e)} went quiet ({how}) at {since}, and the "
                    f"client never recovered: it waited {_secs(obs, turn.end - silent)} until "
                    "it was stopped"
                )
    idle = f"idle limit {_secs(obs, obs.idle_s)} + tolerance {_secs(obs, slack(obs))}"
    if not drops:
        return [_not_judged(rid, "no stream of a known task was dropped")]
    return [
        from_violations(
            rid,
            problems,
            rule=f"a stream that goes quiet or fails is recovered (tasks/get) within the {idle}",
            ok=f"{drops} dropped stream(s), each recovered within the {idle}",
            at=min(overdue, default=None),
        )
    ]
