"""How the call ended, mapped to the result: A2A-C-STATUS, -FAILURE-STATES, -INTERRUPTED,
-DIRECT-MESSAGE, -FOLLOW-UP; and the protocol headers (-HEADERS)."""

from __future__ import annotations

from streamproof.core.requirements import from_violations
from streamproof.core.verdicts import Verdict
from streamproof.suites.a2a_client.checks.exchanges import (
    INTERRUPTED,
)
from streamproof.suites.a2a_client.checks.push import forged_status
from streamproof.suites.a2a_client.checks.turns import (
    _label,
    _not_judged,
    _secs,
    _shorten,
    _status,
    _Turn,
    _turns,
    slack,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.scenario import canonical_method

# --- status mapping ----------------------------------------------------------------------------


def _timed_out_legitimately(obs: A2AClientObservation, turn: _Turn) -> bool:
    run = turn.run
    return run.t_result is not None and run.t_result >= run.t_start + obs.deadline_s - slack(obs)


def status_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The four completion conditions of "Knowing when the call is over", mapped to the result:
    a completed task is a success, failed and canceled are failures; a call the client could not
    finish (its deadline, a drop it could not recover) is a timeout or an error, never a
    success. Rejected/unknown, interrupted states and direct replies have their own rules."""
    rid = "A2A-C-STATUS"
    problems: list[str] = []
    seen: list[str] = []
    for turn in _turns(obs):
        result = turn.result
        if result is None:
            continue
        outcome = turn.outcome()
        seen.append(f"{_label(turn.run)}: server {outcome}, result {result.status}")
        if not turn.messages() and not turn.troubled():
            if result.status == "timeout" and _timed_out_legitimately(obs, turn):
                continue  # its deadline passed before it could send it (a slow agent card)
            problems.append(
                f"{_label(turn.run)} never sent its message to the agent, though nothing failed "
                f"on the wire, and the result says {result.status!r}: it follows no task"
            )
            continue
        if outcome in ("rejected", "unknown", "message") or outcome in INTERRUPTED:
            continue
        status = result.status
        if status == "timeout":
            if not _timed_out_legitimately(obs, turn):
                took = turn.end - turn.run.t_start
                problems.append(
                    f"{_label(turn.run)} reported a timeout after {_secs(obs, took)}, before "
                    f"its deadline of {_secs(obs, obs.deadline_s)}"
                )
            continue
        if status == "error" and (turn.troubled() or not turn.knew_task()):
            continue
        if forged_status(obs, turn.run, status):
            continue  # a forged delivery's state, taken: A2A-C-PUSH-AUTH
        allowed = {
            "completed": {"completed"},
            "failed": {"failed", "error"},
            "canceled": {"canceled", "error"},
        }.get(outcome, {"error"})
        if status not in allowed:
            what = (
                f"the task was still {outcome!r}"
                if outcome in ("submitted", "working")
                else "no task reached the server"
                if outcome == "none"
                else f"the task ended {outcome!r}"
            )
            problems.append(
                f"{_label(turn.run)}: {what}, and the result says {status!r} (expected "
                f"{' or '.join(sorted(allowed))})"
            )
    if not seen:
        return [_not_judged(rid, "no result to judge (see A2A-C-RESULT)")]
    return [
        from_violations(
            rid,
            problems,
            rule="completed is a success; failed and canceled are failures; an unfinished call "
            "is a timeout or an error",
            ok="; ".join(seen),
        )
    ]


def failure_states_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "Treat REJECTED and UNKNOWN as failures in your result type. Callers that only check for
    COMPLETED will otherwise report an empty success.\""""
    rid = "A2A-C-FAILURE-STATES"
    problems: list[str] = []
    judged = False
    for turn in _turns(obs):
        result = turn.result
        outcome = turn.outcome()
        if result is None or outcome not in ("rejected", "unknown"):
            continue
        judged = True
        allowed = {outcome, "failed", "error"}
        if result.status == "timeout" and _timed_out_legitimately(obs, turn):
            continue
        if result.status not in allowed:
            problems.append(
                f"{_label(turn.run)}: the task ended {outcome.upper()}, and the result says "
                f"{result.status!r}"
            )
    if not judged:
        return [_not_judged(rid, "no task ended rejected or unknown")]
    return [
        from_violations(
            rid,
            problems,
            rule="REJECTED and UNKNOWN are failures (rejected, unknown, failed or error), never "
            "completed",
            ok="rejected/unknown reported as a failure",
        )
    ]


def interrupted_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "INPUT_REQUIRED or AUTH_REQUIRED. The last two end the stream without finishing the
    task. The agent is waiting for you, so the result must say so, and the caller must reply
    with a message carrying the same task and context IDs.\""""
    rid = "A2A-C-INTERRUPTED"
    problems: list[str] = []
    judged = False
    contexts = {t.task_id: t.context_id for t in obs.ledger.tasks}
    for turn in _turns(obs):
        outcome = turn.outcome()
        result = turn.result
        if outcome not in INTERRUPTED or result is None:
            continue  # no readable result: A2A-C-RESULT says so
        if turn.done_event() is None:
            continue  # it was waiting before this turn (a follow-up that never got through)
        if turn.end_unreadable() and not turn.knew_task():
            continue  # the state reached it damaged and it had no task id to ask by
        judged = True
        if result.status != outcome:
            problems.append(
                f"{_label(turn.run)}: the task is waiting ({outcome!r}), and the result says "
                f"{result.status!r}"
            )
        if turn.task is not None and (
            result.task_id != turn.task or result.context_id != contexts.get(turn.task)
        ):
            problems.append(
                f"{_label(turn.run)}: the result carries taskId {result.task_id!r} and contextId "
                f"{result.context_id!r}; the waiting task is {turn.task!r} in context "
                f"{contexts.get(turn.task)!r}"
            )
    if not judged:
        return [_not_judged(rid, "no task stopped at input-required or auth-required")]
    return [
        from_violations(
            rid,
            problems,
            rule="input-required and auth-required end the call, and the result says so with "
            "the task and context ids",
            ok="the interrupted task was reported with its ids",
        )
    ]


def direct_message_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """``if (event instanceof MessageEvent m) done.complete(Result.message(text(...)))``."""
    rid = "A2A-C-DIRECT-MESSAGE"
    problems: list[str] = []
    judged = False
    for turn in _turns(obs):
        result = turn.result
        if turn.outcome() != "message" or result is None:
            continue  # no readable result: A2A-C-RESULT says so
        if turn.end_unreadable():
            continue  # the reply reached it damaged: there was nothing it could read
        judged = True
        status = _status(turn.run)
        if result.status != "message":
            problems.append(
                f"{_label(turn.run)}: the agent replied with a message, and the result says "
                f"{status!r}"
            )
        elif obs.reply_text is not None and (result.message or "").strip() != (
            obs.reply_text.strip()
        ):
            problems.append(
                f"{_label(turn.run)}: the reply was {_shorten(obs.reply_text)!r}, and the result "
                f"carries {_shorten(result.message or '')!r}"
            )
    if not judged:
        return [_not_judged(rid, "the agent sent no direct reply")]
    return [
        from_violations(
            rid,
            problems,
            rule="a direct message reply ends the call with status message and its text",
            ok="the direct reply was reported as a message",
        )
    ]


def follow_up_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The follow-up ``Message.Builder()...taskId(result.taskId()).contextId(result.contextId())``
    continues the waiting task; it starts nothing new."""
    rid = "A2A-C-FOLLOW-UP"
    turns = _turns(obs)
    follow = [t for t in turns if t.run.turn > 0]
    if not follow:
        return [_not_judged(rid, "no follow-up turn was run")]
    problems: list[str] = []
    judged = 0
    for turn in follow:
        run = turn.run
        sent = [
            m
            for m in obs.ledger.messages
            if any(e.record is not None and e.record.index == m.request for e in turn.messages())
        ]
        if not sent and turn.messages():
            continue  # sent, but a fault on the link stopped it before the server: ids unseen
        if not sent and (turn.troubled() or _timed_out_legitimately(obs, turn)):
            continue  # its agent card failed (or came after its deadline): nothing to send by
        judged += 1
        if not sent:
            problems.append("the follow-up turn sent no message to the server")
            continue
        first = sent[0]
        if first.task_id != run.task_id_given or first.context_id != run.context_id_given:
            problems.append(
                f"the follow-up message carries taskId {first.task_id!r} and contextId "
                f"{first.context_id!r}; the first result gave {run.task_id_given!r} and "
                f"{run.context_id_given!r}"
            )
        created = [t for t in obs.ledger.tasks if t.t >= turn.first]
        if created:
            problems.append(f"the follow-up created {len(created)} new task(s)")
    if not judged:
        return [_not_judged(rid, "no follow-up message reached the server")]
    return [
        from_violations(
            rid,
            problems,
            rule="the follow-up message carries the same task and context ids and starts no "
            "new task",
            ok="the follow-up continued the waiting task",
        )
    ]


def headers_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """Protocol hygiene the recipe gets from its pinned SDK: streams ask for
    ``text/event-stream``; 1.0 requests say ``A2A-Version: 1.x``, 0.3 ones say nothing or 0.x
    (docs/explanation/wire-facts/a2a.md §1.2, §2.1)."""
    rid = "A2A-C-HEADERS"
    problems: list[str] = []
    judged = 0
    for r in obs.ledger.requests:
        if r.rpc_method is None or r.wire is None:
            continue
        judged += 1
        op = canonical_method(r.rpc_method)
        if op in ("message/stream", "tasks/resubscribe") and "text/event-stream" not in (
            r.accept or ""
        ):
            problems.append(f"{r.rpc_method} sent Accept: {r.accept!r}")
        version = (r.a2a_version or "").strip()
        major = version.split(".", 1)[0]
        if r.wire == "1.0" and major != "1":
            problems.append(f"{r.rpc_method} (1.0) sent A2A-Version: {r.a2a_version!r}")
        if r.wire == "0.3" and version and major != "0":
            problems.append(f"{r.rpc_method} (0.3) sent A2A-Version: {r.a2a_version!r}")
    if not judged:
        return [_not_judged(rid, "the client sent no JSON-RPC request")]
    return [
        from_violations(
            rid,
            problems,
            rule="streams send Accept: text/event-stream; A2A-Version fits the wire",
            ok="headers fit the wire",
        )
    ]
