"""A2A client checks: pure functions from an :class:`~harness.observation_a2a.A2AClientObservation`
to verdicts, one verdict per ``A2A-C-…`` requirement (``harness.requirements_a2a``).

They judge the client by the seed's own rules (seed ``001_a4aab3267c38e4f0``, "A2A Client
Streaming Recipe"), no stricter: whatever the recipe legitimately does passes. Where the
recipe itself falls short (chunks streamed between its snapshot and its resubscribe are lost),
the loss is reported against the SHOULD ``A2A-C-GAP`` and nothing else.

Time limits count from the client's first request as the harness saw it (the agent card fetch
usually), never from process start, and allow the scenario's tolerance (at least
:data:`MIN_SLACK_S` real seconds). Messages give times in real seconds and, under a time scale,
in the scenario's own time as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from harness.checks.a2a_exchanges import (
    DONE_STATES,
    INTERRUPTED,
    Exchange,
    artifact_chunks,
    exchanges,
    first_request_t,
    replay_artifacts,
    state_at,
    turn_exchanges,
    turn_task,
)
from harness.checks.frames import from_violations
from harness.fakes.a2a.ledger import TaskEventRecord
from harness.observation_a2a import A2AClientObservation
from harness.requirements import expectation, judge, not_applicable
from harness.scenario_a2a import ResultExpect, canonical_method, ledger_matches
from harness.targets.client_result import ClientResult, ClientRun
from harness.verdicts import Verdict

__all__ = [
    "A2A_CLIENT_CHECKS",
    "MIN_SLACK_S",
    "a2a_expectation_verdicts",
    "artifacts_complete_verdicts",
    "cancel_verdicts",
    "check_a2a_client",
    "complete_once_verdicts",
    "deadline_verdicts",
    "direct_message_verdicts",
    "early_drop_verdicts",
    "failure_states_verdicts",
    "follow_up_verdicts",
    "gap_verdicts",
    "headers_verdicts",
    "interrupted_verdicts",
    "no_resend_verdicts",
    "no_resubscribe_done_verdicts",
    "reassembly_verdicts",
    "recovery_verdicts",
    "result_verdicts",
    "snapshot_first_verdicts",
    "status_verdicts",
    "structured_verdicts",
]

MIN_SLACK_S: Final = 0.25
"""The least tolerance in real seconds on any time limit: process start-up and scheduling
jitter of a loaded CI machine, whatever the time scale."""
_EPSILON: Final = 0.05
_MAX_STATES: Final = 4096
"""Reachable artifact texts kept while enumerating which chunks a client may have missed."""
_ABSENT: Final = "\x00absent"


# --- small helpers -----------------------------------------------------------------------------


def slack(obs: A2AClientObservation) -> float:
    return max(obs.tolerance_s, MIN_SLACK_S)


def _secs(obs: A2AClientObservation, seconds: float) -> str:
    """``5.1s`` or, under a time scale, ``5.1s (51s scenario time)``."""
    real = f"{seconds:.2f}s"
    if obs.time_scale == 1.0:
        return real
    return f"{real} ({seconds / obs.time_scale:.3g}s scenario time)"


def _label(turn: ClientRun) -> str:
    return "the call" if turn.turn == 0 else "the follow-up"


def _status(turn: ClientRun) -> str:
    return turn.result.status if turn.result is not None else "(no result)"


def _not_judged(id: str, message: str) -> Verdict:
    return not_applicable(id, f"not judged: {message}")


def _method(e: Exchange) -> str:
    return canonical_method(e.method) if e.method is not None else "(card)"


class _Turn:
    """One turn with what the checks keep asking about it."""

    def __init__(
        self, obs: A2AClientObservation, run: ClientRun, all_ex: Sequence[Exchange]
    ) -> None:
        self.obs = obs
        self.run = run
        self.ex = turn_exchanges(obs, run, all_ex)
        self.rpc = [e for e in self.ex if e.op is not None]
        self.first = first_request_t(run, self.ex)
        self.task = turn_task(obs, run, self.ex)
        self.end = run.t_end
        # Where the next turn begins: the task's events of this turn all come before it.
        later = [t.t_start for t in obs.turns if t.t_start > run.t_start]
        self.horizon = min(later) if later else float("inf")

    @property
    def result(self) -> ClientResult | None:
        return self.run.result

    def messages(self) -> list[Exchange]:
        return [e for e in self.rpc if e.op in ("send", "stream")]

    def knew_task(self) -> bool:
        return any(e.knows_task for e in self.rpc)

    def outcome(self, until: float | None = None) -> str:
        """How the server ended this turn: ``message`` (a direct reply), the first terminal or
        interrupted state the task reached in the turn (by ``until``, default the end of the
        call), else its state then; ``none`` when no task reached the server."""
        ledger = self.obs.ledger
        indexes = {e.record.index for e in self.messages() if e.record is not None}
        if any(m.outcome == "reply" and m.request in indexes for m in ledger.messages):
            return "message"
        if self.task is None:
            return "none"
        end = self.end if until is None else until
        done = self.done_event()
        if done is not None and done.t <= end and done.state is not None:
            return done.state
        return state_at(self.obs, self.task, end) or "none"

    def done_event(self) -> TaskEventRecord | None:
        """The status update that ended the task's turn (terminal or interrupted), if any."""
        if self.task is None:
            return None
        for e in self.obs.ledger.task_events:
            if (
                e.task_id == self.task
                and e.kind == "status-update"
                and e.state in DONE_STATES
                and self.first <= e.t < self.horizon
            ):
                return e
        return None

    def troubled(self) -> bool:
        """Something went wrong on the wire this turn (the agent card's fetch included): a
        fault fired or the server refused."""
        return any(e.failed or e.cut_by_link is not None for e in self.ex)

    def gave_up_on_the_wire(self) -> bool:
        """The turn's last request failed: the call ended because the server could not be
        reached ("bounded backoff, then fail"), not by abandoning a reachable task."""
        return bool(self.rpc) and (self.rpc[-1].failed or self.rpc[-1].cut_by_link is not None)


def _turns(obs: A2AClientObservation) -> list[_Turn]:
    all_ex = exchanges(obs)
    return [_Turn(obs, run, all_ex) for run in obs.turns]


# --- A2A-C-RESULT, A2A-C-COMPLETE-ONCE ---------------------------------------------------------


def result_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """Every call ends with a result line (DESIGN.md's contract; the seed's ``call`` returns a
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
    turns = _turns(obs)
    if not any(turn.messages() for turn in turns):
        return [_not_judged(rid, "the client sent no message")]
    for turn in turns:
        sent = turn.messages()
        if len(sent) > 1:
            at = ", ".join(f"{_method(e)} at {_secs(obs, e.t - turn.first)}" for e in sent)
            problems.append(f"{_label(turn.run)} sent its message {len(sent)} times ({at})")
    created = len(obs.ledger.tasks)
    return [
        from_violations(
            rid,
            problems,
            rule="after a drop the client recovers by task id (tasks/get, tasks/resubscribe) and "
            "never sends the message again",
            ok=f"one message per call; {created} task(s) created",
            observed=created,
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
        if first.answered or any(f.kind != "error" for f in first.delivered):
            continue
        seen = True
        how = first.cut_by_link or ("an error answer" if first.failed else "an empty stream")
        status = _status(turn.run)
        if turn.result is not None and status not in ("error", "failed"):
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
    ended), the client's next move (a tasks/get, any request, or its result) comes within the
    idle limit plus tolerance of the last thing it received. The scenario's ``expect.ledger``
    (the calls the server must see, e.g. ``message/stream tasks/get tasks/resubscribe``) is
    judged here too.
    """
    rid = "A2A-C-RECOVERY"
    limit = obs.idle_s + slack(obs)
    problems: list[str] = []
    drops = 0
    for turn in _turns(obs):
        for e in turn.rpc:
            if not e.streaming or e.turn_end_delivered or not e.knows_task:
                continue
            if e.record is None and e.op != "subscribe":
                continue
            silent = e.last_activity
            moves = [x.t for x in turn.rpc if x is not e and x.t >= silent - _EPSILON]
            if turn.run.t_result is not None:
                moves.append(turn.run.t_result)
            elif turn.run.failure is not None and turn.run.failure.kind != "hang" and not moves:
                continue  # it exited without a result: A2A-C-RESULT's failure, no timing seen
            drops += 1
            later = [m for m in moves if m >= silent - _EPSILON]
            if later and min(later) - silent <= limit:
                continue
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
        )
    ]


# --- A2A-C-DEADLINE, A2A-C-CANCEL --------------------------------------------------------------


def deadline_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """``return call.done.get(deadline.toMillis(), TimeUnit.MILLISECONDS)``: the caller waits
    with a deadline, so the call is over by then, counted from its first request."""
    rid = "A2A-C-DEADLINE"
    limit = obs.deadline_s + slack(obs)
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        run = turn.run
        if not turn.rpc:
            continue  # no request reached the server: nothing was timed
        if run.t_result is not None:
            took = run.t_result - turn.first
        elif run.failure is not None and run.failure.kind == "hang":
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
        status = _status(run)
        if run.result is not None and status not in ("timeout", "canceled"):
            problems.append(
                f"{_label(run)}: the deadline passed, and the result says {status!r} instead of "
                "a timeout"
            )
    if not judged:
        return [_not_judged(rid, "no task outlived the deadline or the call")]
    return [
        from_violations(
            rid,
            problems,
            rule="on deadline, send tasks/cancel for the task and report a timeout",
            ok="the task was cancelled on the deadline and the result says timeout",
        )
    ]


# --- artifacts ---------------------------------------------------------------------------------


def _reachable(
    chunks: Sequence[TaskEventRecord],
    start: Iterable[str],
    optional: Callable[[TaskEventRecord], bool],
) -> set[str] | None:
    """Every text a client could hold after ``chunks`` when it applies some of them (only the
    ``optional`` ones may be missed) the seed's way: append extends the buffer, otherwise the
    buffer is replaced. ``None`` when there are too many to enumerate."""
    states = set(start)
    for c in chunks:
        text = c.text or ""
        applied = {(s + text if c.append and s != _ABSENT else text) for s in states}
        states = (states | applied) if optional(c) else applied
        if len(states) > _MAX_STATES:
            return None
    return states


class _ArtifactView:
    """One artifact of a turn: its chunks, what the server holds, what the client reported."""

    def __init__(self, turn: _Turn, artifact_id: str, until: float | None = None) -> None:
        obs = turn.obs
        assert turn.task is not None
        end = turn.end if until is None else until
        self.id = artifact_id
        before = replay_artifacts(
            c for c in artifact_chunks(obs, turn.task, 0.0, turn.first - 1e-9)
        )
        self.chunks = [
            c
            for c in artifact_chunks(obs, turn.task, turn.first, end)
            if c.artifact_id == artifact_id
        ]
        self.start = {_ABSENT, before[artifact_id]} if artifact_id in before else {_ABSENT}
        server = replay_artifacts(artifact_chunks(obs, turn.task, 0.0, end))
        self.server_text = server.get(artifact_id)
        fresh = replay_artifacts(self.chunks)
        self.full = {t for t in (self.server_text, fresh.get(artifact_id)) if t is not None}
        windows = _gap_windows(turn)
        self.gap = [c for c in self.chunks if any(a <= c.t <= b for a, b in windows)]

    def anything(self) -> set[str] | None:
        return _reachable(self.chunks, self.start, lambda c: True)

    def gap_only(self) -> set[str] | None:
        gap = {id(c) for c in self.gap}
        return _reachable(self.chunks, self.start, lambda c: id(c) in gap)


def _gap_windows(turn: _Turn) -> list[tuple[float, float]]:
    """(snapshot, tap) for every resubscribe that followed a tasks/get: chunks streamed in
    between reach neither the snapshot nor the new stream (unless it starts with one)."""
    windows: list[tuple[float, float]] = []
    for resub, _previous, get in _resubscribes(turn):
        if get is None or get.record is None or resub.record is None:
            continue
        frames = resub.record.frames
        tap = frames[0].t if frames else (resub.record.t_end or resub.record.t)
        windows.append((get.record.t, tap))
    return windows


def _artifact_ids(turn: _Turn, until: float | None = None) -> list[str]:
    assert turn.task is not None
    end = turn.end if until is None else until
    chunks = artifact_chunks(turn.obs, turn.task, turn.first, end)
    return list(dict.fromkeys(c.artifact_id for c in chunks if c.artifact_id is not None))


SUCCESS: Final = frozenset({"completed", "message"})
"""Result statuses that claim the answer is there: only these owe ``incomplete`` when
chunks are missing."""


def _expect_for(obs: A2AClientObservation, turn: _Turn) -> ResultExpect | None:
    return obs.expect.result if turn.run.turn == 0 else obs.expect.follow_up


def artifacts_complete_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "if the snapshot contains the complete artifact, replace the buffer from it, and if not,
    mark the result incomplete rather than returning a truncated report." An artifact that
    lacks chunks the server streamed, with ``incomplete`` false, fails; content the server
    never had in that shape is :func:`reassembly_verdicts`' business, and chunks lost only
    between a snapshot and its resubscribe are :func:`gap_verdicts`'."""
    rid = "A2A-C-ARTIFACTS-COMPLETE"
    problems: list[str] = []
    notes: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None or not _artifact_ids(turn):
            continue
        if result.status not in SUCCESS:
            # A timeout, error, failure or interruption already says the result is not
            # complete: no incomplete flag is owed (README, the result contract).
            notes.append(f"{_label(turn.run)} says {result.status!r}, not a success")
            continue
        judged += 1
        if result.incomplete:
            notes.append(f"{_label(turn.run)} says incomplete")
            continue
        for aid in _artifact_ids(turn):
            view = _ArtifactView(turn, aid)
            got = result.artifact(aid)
            if got is None:
                if result.status == "completed":
                    problems.append(
                        f"{_label(turn.run)} reports completed without artifact {aid!r}, which "
                        f"the server streamed ({len(view.server_text or '')} chars), and does "
                        "not say incomplete"
                    )
                continue
            if got.text in view.full:
                continue
            anything = view.anything()
            if anything is None or got.text not in anything:
                continue  # not a truncation: see A2A-C-REASSEMBLY
            gap_only = view.gap_only()
            if gap_only is not None and got.text in gap_only:
                notes.append(f"artifact {aid!r} lacks only chunks of a reconnect gap (A2A-C-GAP)")
                continue
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} is truncated ({len(got.text)} of "
                f"{len(view.server_text or '')} chars: {_shorten(got.text)!r} where the server "
                f"has {_shorten(view.server_text or '')!r}) and the result does not say "
                "incomplete"
            )
    if not judged:
        why = "; ".join(notes) or "no result claimed success with streamed artifacts"
        return [_not_judged(rid, why)]
    ok = "the result's artifacts equal the server's"
    if notes:
        ok += "; " + "; ".join(notes)
    return [
        from_violations(
            rid,
            problems,
            rule="return the server's artifacts (rebuilt from the snapshot after a gap) or mark "
            "the result incomplete; never a truncated artifact as complete",
            ok=ok,
        )
    ]


def reassembly_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "When isAppend() is true, the parts extend the artifact with that ID; when false, they
    replace it" and "do not also append from it, or you risk counting a chunk twice. Pick one
    source." Each reported artifact must be a text the client can reach by applying the
    server's chunks that way, missing some at most: never a chunk twice, never a replaced
    chunk kept."""
    rid = "A2A-C-REASSEMBLY"
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        judged += len(result.artifacts)
        known = set(_artifact_ids(turn))
        server_all = replay_artifacts(artifact_chunks(obs, turn.task, 0.0, turn.end))
        for got in result.artifacts:
            if got.id not in known:
                if got.id not in server_all:
                    problems.append(
                        f"{_label(turn.run)} reports artifact {got.id!r}, which the server "
                        "never streamed"
                    )
                elif got.text != server_all[got.id]:
                    problems.append(
                        f"{_label(turn.run)}: artifact {got.id!r} ({_shorten(got.text)!r}) is "
                        f"not the server's ({_shorten(server_all[got.id])!r})"
                    )
                continue
            view = _ArtifactView(turn, got.id)
            if got.text in view.full:
                continue
            anything = view.anything()
            if anything is None:
                continue  # too many chunks to tell; A2A-C-ARTIFACTS-COMPLETE still compares
            if got.text not in anything:
                problems.append(
                    f"{_label(turn.run)}: artifact {got.id!r} is {_shorten(got.text)!r}, which "
                    "no append/replace reassembly of the server's chunks gives (the server has "
                    f"{_shorten(view.server_text or '')!r}): a chunk counted twice or a replaced "
                    "chunk kept"
                )
    if not judged:
        return [_not_judged(rid, "the result reports no artifact")]
    return [
        from_violations(
            rid,
            problems,
            rule="per artifact id, append extends and replace resets; build from one source, "
            "never from both the task snapshot and the update",
            ok="every artifact reassembled from the updates, no chunk twice",
        )
    ]


def gap_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """SHOULD, beyond the recipe: "Because resubscribe does not replay, any artifact chunks
    streamed during the gap are lost from your buffer". The recipe's snapshot covers the
    silence before it, not the moment between the snapshot and the resubscribe; a client that
    reads the resubscribe's Task snapshot (a2a-sdk 1.x servers send one) or checks the task
    once more at the end loses nothing."""
    rid = "A2A-C-GAP"
    problems: list[str] = []
    windows = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        windows += len(_gap_windows(turn))
        if result.incomplete:
            continue
        for aid in _artifact_ids(turn):
            view = _ArtifactView(turn, aid)
            got = result.artifact(aid)
            if got is None or got.text in view.full or not view.gap:
                continue
            gap_only = view.gap_only()
            if gap_only is not None and got.text in gap_only:
                lost = [c.text or "" for c in view.gap if (c.text or "") not in got.text]
                problems.append(
                    f"{_label(turn.run)}: artifact {aid!r} lacks chunk(s) streamed between the "
                    f"snapshot and the resubscribe ({', '.join(repr(_shorten(t)) for t in lost)})"
                    " and the result does not say incomplete"
                )
    if not windows:
        return [_not_judged(rid, "no resubscribe after a snapshot, so no gap")]
    return [
        from_violations(
            rid,
            problems,
            rule="chunks streamed between the tasks/get snapshot and the resubscribe reach the "
            "result (from the resubscribe's snapshot or a final tasks/get), or the result says "
            "incomplete",
            ok="no chunk was lost between a snapshot and its resubscribe",
        )
    ]


def _json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def structured_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "If you need structured output, buffer the raw parts and parse once the last chunk
    arrives, never per chunk." Judged on artifacts whose full text is JSON streamed in pieces
    that are not JSON on their own: a parsed value (``data``) must be the whole artifact's, and
    the call must not fail over a partial chunk."""
    rid = "A2A-C-STRUCTURED"
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        for aid in _artifact_ids(turn, turn.horizon):
            view = _ArtifactView(turn, aid, turn.horizon)
            ok, value = _json(view.server_text or "")
            pieces = [c.text or "" for c in view.chunks]
            if not ok or len(pieces) < 2 or all(_json(p)[0] for p in pieces):
                continue
            judged += 1
            got = result.artifact(aid)
            if got is not None and got.data is not None and got.data != value:
                problems.append(
                    f"{_label(turn.run)}: artifact {aid!r} was parsed as "
                    f"{_shorten(json.dumps(got.data))!r}, not as the whole artifact "
                    f"{_shorten(view.server_text or '')!r}"
                )
            if (
                result.status == "error"
                and turn.outcome(turn.horizon) == "completed"
                and not turn.troubled()
            ):
                problems.append(
                    f"{_label(turn.run)} failed ({_shorten(result.message or '')!r}) although "
                    f"the task completed and artifact {aid!r} is valid JSON once whole: a "
                    "partial chunk was parsed"
                )
    if not judged:
        return [_not_judged(rid, "no structured artifact streamed in pieces")]
    return [
        from_violations(
            rid,
            problems,
            rule="buffer the raw parts and parse once the last chunk arrived",
            ok="structured output parsed whole",
        )
    ]


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
    for turn in follow:
        run = turn.run
        sent = [
            m
            for m in obs.ledger.messages
            if any(e.record is not None and e.record.index == m.request for e in turn.messages())
        ]
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
    (research a2a.md §1.2, §2.1)."""
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


def _shorten(text: str, limit: int = 60) -> str:
    """``text``, or its start and end around an ellipsis and its length, so that two long
    texts that differ in the middle or at the end still look different."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 1
    return f"{text[:head]}…{text[-tail:]} ({len(text)} chars)"


# --- the scenario's own expectations ----------------------------------------------------------


def _expectation(
    name: str, problems: Sequence[str], ok: str, expected: Any, observed: Any
) -> Verdict:
    return expectation(
        name, not problems, "; ".join(problems) or ok, expected=expected, observed=observed
    )


def _result_problems(turn: _Turn, expect: ResultExpect) -> list[str]:
    result = turn.result
    if result is None:
        return [f"{_label(turn.run)} printed no readable result"]
    problems: list[str] = []
    if expect.status is not None and expect.status != result.status:
        problems.append(f"{_label(turn.run)} says {result.status!r}, expected {expect.status!r}")
    for aid, wanted in expect.artifacts.items():
        got = result.artifact(aid)
        full = _ArtifactView(turn, aid).full if turn.task is not None else set()
        if wanted == "incomplete" and not result.incomplete:
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} expected flagged incomplete, and the "
                "result does not say incomplete"
            )
        elif wanted == "complete" and (result.incomplete or got is None or got.text not in full):
            how = (
                "says incomplete"
                if result.incomplete
                else "lacks it"
                if got is None
                else f"has {_shorten(got.text)!r}"
            )
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} expected complete; the result {how}"
            )
    return problems


def a2a_expectation_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The scenario's ``expect`` block, each entry under its own name (``expect.ledger``,
    ``expect.tasks_created``, ``expect.result``, ``expect.follow_up``), never under a
    requirement whose rule it does not state. Entries the scenario leaves out give no verdict."""
    out: list[Verdict] = []
    expect = obs.expect
    if expect.ledger is not None:
        methods = [canonical_method(m) for m in obs.ledger.rpc_methods]
        seen = " ".join(methods) or "(no call)"
        wanted = " ".join(expect.ledger)
        bad = [] if ledger_matches(expect.ledger, methods) else [f"the server received {seen}"]
        out.append(_expectation("expect.ledger", bad, f"the server received {seen}", wanted, seen))
    if expect.tasks_created is not None:
        created = len(obs.ledger.tasks)
        bad = [] if created == expect.tasks_created else [f"the server created {created} task(s)"]
        out.append(
            _expectation(
                "expect.tasks_created", bad, f"{created} task(s)", expect.tasks_created, created
            )
        )
    for turn in _turns(obs):
        wanted_result = _expect_for(obs, turn)
        if wanted_result is None:
            continue
        name = "expect.result" if turn.run.turn == 0 else "expect.follow_up"
        out.append(
            _expectation(
                name,
                _result_problems(turn, wanted_result),
                f"{_label(turn.run)}: {_status(turn.run)}",
                wanted_result.model_dump(exclude_defaults=True),
                _status(turn.run),
            )
        )
    return out


A2AClientCheck = Callable[[A2AClientObservation], list[Verdict]]

A2A_CLIENT_CHECKS: Final[tuple[A2AClientCheck, ...]] = (
    result_verdicts,
    complete_once_verdicts,
    no_resend_verdicts,
    early_drop_verdicts,
    snapshot_first_verdicts,
    no_resubscribe_done_verdicts,
    recovery_verdicts,
    deadline_verdicts,
    cancel_verdicts,
    artifacts_complete_verdicts,
    reassembly_verdicts,
    structured_verdicts,
    status_verdicts,
    failure_states_verdicts,
    interrupted_verdicts,
    direct_message_verdicts,
    follow_up_verdicts,
    headers_verdicts,
    gap_verdicts,
    a2a_expectation_verdicts,
)
"""Every A2A client check, in the registry's order, then the scenario's own expectations."""


def check_a2a_client(obs: A2AClientObservation) -> list[Verdict]:
    """Every A2A client verdict for ``obs``, one per requirement, in a fixed order."""
    return [verdict for check in A2A_CLIENT_CHECKS for verdict in check(obs)]
