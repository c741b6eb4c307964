"""Checks over K calls of one A2A client scenario run at once against one fake agent
(``streamproof run --concurrency K``).

Pure functions over the K calls, each with the marker its prompt was given and its own part of
the server's records (:mod:`streamproof.suites.a2a_client.concurrency`), and over the whole ledger.
A marker is unique to one call and every new task is answered from the script of the marker
its message holds, so a task id, a context id or a marked text of another call in a call's
result, or a request of one call naming another's task, is cross-talk, seen exactly.

The seed's ground: "each call needs its own state: its own buffer, its own future, its own task
ID" (Building the client), and "one task per logical call".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.fakes.a2a.ledger import A2ALedger
from streamproof.suites.a2a_client.checks.turns import slack
from streamproof.suites.a2a_client.observation import A2AClientObservation

__all__ = [
    "Call",
    "calls_end_verdicts",
    "concurrency_verdicts",
    "crosstalk_verdicts",
    "holders",
    "one_task_verdicts",
    "task_owners",
]


@dataclass(frozen=True)
class Call:
    """One of the K calls: its marker and what was observed of it."""

    marker: str
    observation: A2AClientObservation


def _label(index: int, calls: Sequence[Call]) -> str:
    return f"call {index + 1}/{len(calls)}"


def holders(text: str, markers: Sequence[str]) -> list[int]:
    """The indexes of the markers ``text`` holds."""
    return [j for j, marker in enumerate(markers) if marker in text]


def task_owners(ledger: A2ALedger, markers: Sequence[str]) -> dict[str, int]:
    """Task id -> the call whose marker the task's creating message holds (exactly one)."""
    owners: dict[str, int] = {}
    for record in ledger.tasks:
        held = holders(record.text, markers)
        if len(held) == 1:
            owners[record.task_id] = held[0]
    return owners


def _holders(text: str, calls: Sequence[Call]) -> list[int]:
    return holders(text, [c.marker for c in calls])


def _task_owners(ledger: A2ALedger, calls: Sequence[Call]) -> dict[str, int]:
    return task_owners(ledger, [c.marker for c in calls])


def one_task_verdicts(calls: Sequence[Call], ledger: A2ALedger) -> list[Verdict]:
    """A2A-C-CONC-ONE-TASK: each call's message creates one task, and no message or task holds
    no call's prompt or several (a prompt sent with another call's, or none)."""
    rid = "A2A-C-CONC-ONE-TASK"
    if len(calls) < 2:
        return [not_applicable(rid, "not judged: one call alone, there is no other to mix with")]
    violations: list[str] = []
    first_at: float | None = None
    for record in ledger.tasks:
        held = _holders(record.text, calls)
        if len(held) != 1:
            whose = ", ".join(_label(j, calls) for j in held) if held else "no call"
            violations.append(
                f"task {record.task_id} was created from a message holding the prompt of "
                f"{whose}: {record.text[:120]!r}"
            )
            first_at = record.t if first_at is None else min(first_at, record.t)
    for message in ledger.messages:
        if message.outcome == "rejected" and not _holders(message.text, calls):
            violations.append(
                f"a message at {message.t:.2f}s held no call's prompt (each call must send the "
                f"prompt it was given): {message.text[:120]!r}"
            )
    counts = [0] * len(calls)
    for owner in _task_owners(ledger, calls).values():
        counts[owner] += 1
    for i, n in enumerate(counts):
        if n > 1:
            tasks = [t for t in ledger.tasks if _holders(t.text, calls) == [i]]
            violations.append(f"{_label(i, calls)} created {n} tasks")
            first_at = tasks[1].t if first_at is None else min(first_at, tasks[1].t)
    if not ledger.tasks and not violations:
        return [
            not_applicable(
                rid,
                "not judged: no call created a task (the agent answered with messages, or no "
                "message reached it), so there was none to count",
            )
        ]
    return [
        from_violations(
            rid,
            violations,
            rule="each call creates one task, from its own message, whatever else runs at once",
            ok=f"{len(calls)} calls at once: "
            + ", ".join(str(n) for n in counts)
            + " task(s) created, each from its own call's message",
            at=first_at,
        )
    ]


def crosstalk_verdicts(calls: Sequence[Call], ledger: A2ALedger) -> list[Verdict]:
    """A2A-C-CONC-NO-CROSSTALK: no call's result names another call's task or context or holds
    its text, and no call reads, resubscribes to, cancels or continues another call's task."""
    rid = "A2A-C-CONC-NO-CROSSTALK"
    if len(calls) < 2:
        return [not_applicable(rid, "not judged: one call alone, there is no other to mix with")]
    task_owner = _task_owners(ledger, calls)
    contexts: dict[str, set[int]] = {}  # a client may give all its calls one context
    for t in ledger.tasks:
        if t.task_id in task_owner:
            contexts.setdefault(t.context_id, set()).add(task_owner[t.task_id])
    violations: list[str] = []
    first_at: float | None = None
    own_seen = 0

    def note(i: int, what: str, t: float | None) -> None:
        nonlocal first_at
        violations.append(f"{_label(i, calls)} {what}")
        if t is not None:
            first_at = t if first_at is None else min(first_at, t)

    for i, call in enumerate(calls):
        for run in call.observation.turns:
            result = run.result
            if result is None:
                continue
            texts = [result.message or "", *(a.text for a in result.artifacts)]
            if result.task_id is not None and task_owner.get(result.task_id) == i:
                own_seen += 1
            elif any(call.marker in text for text in texts):
                own_seen += 1
            other = task_owner.get(result.task_id or "")
            if other is not None and other != i:
                note(
                    i,
                    f"reported the task of {_label(other, calls)} ({result.task_id})",
                    run.t_result,
                )
            sharing = contexts.get(result.context_id or "", set())
            if sharing and i not in sharing and other in (None, i):  # not said twice
                note(
                    i,
                    f"reported the context of {_label(min(sharing), calls)} ({result.context_id})",
                    run.t_result,
                )
            for text in texts:
                foreign = [j for j in _holders(text, calls) if j != i]
                if foreign:
                    names = ", ".join(_label(j, calls) for j in foreign)
                    note(i, f"reported the text of {names}: {text[:120]!r}", run.t_result)
        own = call.observation.ledger
        for kind, records in (
            ("read (tasks/get)", own.gets),
            ("resubscribed to", own.resubscribes),
            ("cancelled", own.cancels),
        ):
            for record in records:
                other = task_owner.get(record.task_id)
                if other is not None and other != i:
                    note(
                        i, f"{kind} the task of {_label(other, calls)} at {record.t:.2f}s", record.t
                    )
        for message in own.messages:
            other = task_owner.get(message.task_id or "")
            if other is not None and other != i:
                note(i, f"sent a message to the task of {_label(other, calls)}", message.t)
    if not violations and own_seen == 0:
        return [
            not_applicable(
                rid,
                "not judged: no call's result named its own task or held its own text, so "
                "cross-talk could not show",
            )
        ]
    return [
        from_violations(
            rid,
            violations,
            rule="each call keeps its own state (buffer, future, task id): its result and its "
            "requests are about its own task alone",
            ok=f"{len(calls)} calls at once: {own_seen} result(s) named their own task or text "
            "and none another call's",
            at=first_at,
        )
    ]


def calls_end_verdicts(calls: Sequence[Call]) -> list[Verdict]:
    """A2A-C-CONC-CALLS-END: every call ends with its result by its deadline plus tolerance,
    counted from its own first request (else its start), whatever else runs at once."""
    rid = "A2A-C-CONC-CALLS-END"
    if len(calls) < 2:
        return [not_applicable(rid, "not judged: one call alone, nothing ran at once")]
    violations: list[str] = []
    first_at: float | None = None
    for i, call in enumerate(calls):
        obs = call.observation
        for run in obs.turns:
            if run.failure is not None and run.failure.kind == "start":
                continue  # the command could not be started: not the call's doing
            later = [t.t_start for t in obs.turns if t.t_start > run.t_start]
            horizon = min(later) if later else float("inf")
            first = min(
                (r.t for r in obs.ledger.requests if run.t_start <= r.t < horizon),
                default=run.t_start,
            )
            allowed = run.deadline_s + slack(obs)
            what = "its follow-up" if run.turn else "it"
            if run.t_result is None:
                reason = run.failure.kind if run.failure is not None else "no result"
                violations.append(f"{_label(i, calls)}: {what} printed no result ({reason})")
                first_at = first + allowed if first_at is None else min(first_at, first + allowed)
            elif run.t_result - first > allowed:
                violations.append(
                    f"{_label(i, calls)}: {what} printed its result "
                    f"{on_both_clocks(run.t_result - first, obs.time_scale)} after its first "
                    f"request, past its deadline {on_both_clocks(run.deadline_s, obs.time_scale)}"
                    " + tolerance"
                )
                first_at = first + allowed if first_at is None else min(first_at, first + allowed)
    return [
        from_violations(
            rid,
            violations,
            rule="every call ends with its result by its deadline, however many run at once",
            ok=f"all {len(calls)} calls ended with a result by their deadline",
            at=first_at,
        )
    ]


def concurrency_verdicts(calls: Sequence[Call], ledger: A2ALedger) -> list[Verdict]:
    """Every concurrency verdict for the K calls of one scenario, in a fixed order."""
    return [
        *one_task_verdicts(calls, ledger),
        *crosstalk_verdicts(calls, ledger),
        *calls_end_verdicts(calls),
    ]
