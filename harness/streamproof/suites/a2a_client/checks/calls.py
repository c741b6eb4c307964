"""The call as a whole: one result (A2A-C-RESULT, -COMPLETE-ONCE), one message per call
(-NO-RESEND, -EARLY-DROP), and its deadline (-DEADLINE, -CANCEL)."""

from __future__ import annotations

from streamproof.core.requirements import from_violations, judge
from streamproof.core.verdicts import Verdict
from streamproof.suites.a2a_client.checks.exchanges import (
    state_at,
)
from streamproof.suites.a2a_client.checks.turns import (
    _EPSILON,
    _label,
    _method,
    _not_judged,
    _secs,
    _status,
    _turns,
    slack,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation

# --- A2A-C-RESULT, A2A-C-COMPLETE-ONCE ---------------------------------------------------------


def result_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """Every call ends with a result line (docs/reference/a2a-client-contract.md; the seed's
    ``call`` returns a
    ``Result`` or throws, it never leaves the caller without an answer)."""
    rid = "A2A-C-RESULT"
    if not obs.turns:
        return [judge(rid, False, f"{rid}: the client was never run")]
    problems = [f"{_label(t)}: {t.failure.message}" for t in obs.turns if t.failure is not None]
    return [
        from_violations(
            rid,
            problems,
            rule="the client prints one result JSON object as its last stdout line and exits",
            ok=", ".join(f"{_label(t)}: {_status(t)}" for t in obs.turns),
        )
    ]


def complete_once_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "make completion idempotent: CompletableFuture.complete ignores every call after the
    first, so a final status update followed by a terminal state cannot finish the call
    twice." A call that finishes twice prints two results."""
    rid = "A2A-C-COMPLETE-ONCE"
    if not any(t.run.result_lines and t.messages() for t in _turns(obs)):
        return [_not_judged(rid, "no call both sent its message and printed a result")]
    problems = [
        f"{_label(t)} printed {t.result_lines} result lines: it completed {t.result_lines} times"
        for t in obs.turns
        if t.result_lines > 1
    ]
    return [
        from_violations(
            rid,
            problems,
            rule="a final update followed by a terminal state finishes the call once",
            ok="each call completed once",
        )
    ]


# --- A2A-C-NO-RESEND, A2A-C-EARLY-DROP ---------------------------------------------------------


def no_resend_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "Do not blindly resend the original message after a drop. Without a task ID the server
    sees a new request and starts a second task." One logical call sends its message once."""
    rid = "A2A-C-NO-RESEND"
    problems: list[str] = []
    resent: list[float] = []  # when each call sent its message the second time
    turns = _turns(obs)
    if not any(turn.messages() for turn in turns):
        return [_not_judged(rid, "the client sent no message")]
    for turn in turns:
        sent = turn.messages()
        if len(sent) > 1:
            at = ", ".join(f"{_method(e)} at {_secs(obs, e.t - turn.first)}" for e in sent)
            problems.append(f"{_label(turn.run)} sent its message {len(sent)} times ({at})")
            resent.append(sent[1].t)
    created = len(obs.ledger.tasks)
    return [
        from_violations(
            rid,
            problems,
            rule="after a drop the client recovers by task id (tasks/get, tasks/resubscribe) and "
            "never sends the message again",
            ok=f"one message per call; {created} task(s) created",
            observed=created,
            at=min(resent, default=None),
        )
    ]


def early_drop_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """``if (call.taskId == null) { call.done.completeExceptionally(...); return; // resending
    risks a duplicate task }``: a stream lost before its first event fails the call."""
    rid = "A2A-C-EARLY-DROP"
    problems: list[str] = []
    seen = False
    for turn in _turns(obs):
        sent = turn.messages()
        if not sent or turn.run.task_id_given is not None:
            continue
        first = sent[0]
        if first.answered or any(f.kind != "error" for f in first.readable):
            continue  # an event reached it (one it may have read, after a damaged one)
        seen = True
        how = first.cut_by_link or ("an error answer" if first.failed else "an empty stream")
        status = _status(turn.run)
        quiet = first.cut_by_link in (None, "stall") and not first.failed
        unnoticed = first.last_activity + obs.idle_s > turn.first + obs.deadline_s - slack(obs)
        if status == "timeout" and quiet and unnoticed:
            pass  # a quiet stream no watchdog could call dropped before the deadline passed
        elif turn.result is not None and status not in ("error", "failed"):
            problems.append(
                f"{_label(turn.run)}'s {_method(first)} ended with {how} before any event, and "
                f"the result says {status!r} instead of a failure"
            )
        if len(sent) > 1:
            problems.append(
                f"{_label(turn.run)} sent its message again after the early drop "
                f"({len(sent)} times in all)"
            )
    if not seen:
        return [_not_judged(rid, "no stream was dropped before its first event")]
    return [
        from_violations(
            rid,
            problems,
            rule="with no task id there is nothing to recover: fail the call, never resend",
            ok="the call failed after the early drop, without resending",
        )
    ]


# --- A2A-C-DEADLINE, A2A-C-CANCEL --------------------------------------------------------------


def deadline_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """``return call.done.get(deadline.toMillis(), TimeUnit.MILLISECONDS)``: the caller waits
    with a deadline, so the call is over by then, counted from its first request (the agent
    card's fetch included: a call stuck on its card is judged too)."""
    rid = "A2A-C-DEADLINE"
    limit = obs.deadline_s + slack(obs)
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        run = turn.run
        if not turn.ex:
            continue  # the client sent nothing: nothing was timed
        if run.t_result is not None:
            took = run.t_result - turn.first
        elif run.failure is not None and run.failure.kind == "hang":
            if turn.end - turn.first <= limit:
                continue  # killed (a slow start) before its deadline had passed: A2A-C-RESULT
            judged += 1
            problems.append(
                f"{_label(run)} was still running {_secs(obs, turn.end - turn.first)} after its "
                f"first request, with no result (deadline {_secs(obs, obs.deadline_s)})"
            )
            continue
        else:
            continue  # no readable result line: when the call ended was not seen (A2A-C-RESULT)
        judged += 1
        if took > limit:
            problems.append(
                f"{_label(run)} ended {_secs(obs, took)} after its first request (deadline "
                f"{_secs(obs, obs.deadline_s)} + tolerance {_secs(obs, slack(obs))})"
            )
    if not judged:
        return [_not_judged(rid, "no call with a request and a readable result (A2A-C-RESULT)")]
    return [
        from_violations(
            rid,
            problems,
            rule="the call ends by its deadline plus tolerance, counted from the first request",
            ok=f"every call ended within the deadline of {_secs(obs, obs.deadline_s)}",
        )
    ]


def cancel_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "When the deadline passes or the user abandons the request, call cancelTask(new
    TaskIdParams(taskId), null) so the remote agent stops spending tokens and tool calls." The
    recipe's ``call`` then rethrows the timeout: the result is a timeout."""
    rid = "A2A-C-CANCEL"
    problems: list[str] = []
    missed: list[float] = []  # when each missing cancel was due
    judged = 0
    for turn in _turns(obs):
        run = turn.run
        if turn.task is None or not turn.knew_task():
            continue
        deadline_at = turn.first + obs.deadline_s
        cancels = [e for e in turn.rpc if e.op == "cancel" and e.task_id in (None, turn.task)]
        done = turn.done_event()
        by_client = (
            done is not None
            and done.state == "canceled"
            and any(c.t <= done.t + _EPSILON for c in cancels)
        )
        ended_at = run.t_result if run.t_result is not None else turn.end
        if not by_client and done is not None and done.t <= min(deadline_at, ended_at) + slack(obs):
            continue  # the task finished (or stopped for input) before the call ended
        if ended_at < deadline_at - slack(obs):
            # The client gave up early on a task still running: it abandoned the request, and
            # "when [...] the user abandons the request, call cancelTask". (A call that ended
            # because the server stopped answering is the recipe's "bounded backoff, then fail".)
            if turn.gave_up_on_the_wire() and not cancels:
                continue
            judged += 1
            if not [e for e in cancels if e.t <= ended_at + slack(obs)]:
                problems.append(
                    f"{_label(run)} ended {_secs(obs, ended_at - turn.first)} in, while the "
                    f"task was still {state_at(obs, turn.task, ended_at)!r}, without sending "
                    "tasks/cancel"
                )
                missed.append(ended_at)
            continue
        judged += 1
        in_time = [e for e in cancels if e.t <= deadline_at + slack(obs)]
        if not in_time:
            late = f" (one came {_secs(obs, cancels[0].t - turn.first)} in)" if cancels else ""
            problems.append(
                f"{_label(run)}: the task was still {state_at(obs, turn.task, deadline_at)!r} at "
                f"the deadline ({_secs(obs, obs.deadline_s)}) and no tasks/cancel was sent by "
                f"then{late}"
            )
            missed.append(deadline_at)
        status = _status(run)
        if run.result is not None and status not in ("timeout", "canceled"):
            problems.append(
                f"{_label(run)}: the deadline passed, and the result says {status!r} instead of "
                "a timeout"
            )
            if run.t_result is not None:
                missed.append(run.t_result)
    if not judged:
        return [_not_judged(rid, "no task outlived the deadline or the call")]
    return [
        from_violations(
            rid,
            problems,
            rule="on deadline, send tasks/cancel for the task and report a timeout",
            ok="the task was cancelled on the deadline and the result says timeout",
            at=min(missed, default=None),
        )
    ]
