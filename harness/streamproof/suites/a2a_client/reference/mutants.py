"""The reference A2A client's seeded bugs ("mutants"), each one defect against the client seed.

docs/explanation/mutants.md: every check is proven twice, once by the reference passing it and once
by a mutant
failing it. A mutant is the reference client started with ``--bug NAME`` (or
``STREAMPROOF_BUG=NAME``); it differs from the correct client in exactly one place, a small
``if bug == ...`` hook in ``client.py``, ``call.py`` or ``recovery.py``.

Each entry names the seed passage it violates (``docs/explanation/a2a-client-rules.md``).
``SHOWCASE``
names the bundled scenario where the intended requirement catches it. The registry is plain
data with no a2a-sdk import, so checks and reports can name mutants cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from streamproof.mutants.catalog import BugCatalog

__all__ = [
    "BUGS",
    "CONCURRENT",
    "INTENDED",
    "SHOWCASE",
    "bug_names",
    "check_bug",
    "describe_bugs",
]

BUGS: Final[Mapping[str, str]] = {
    "no-watchdog": (
        "no idle watchdog: a quiet drop (a proxy's idle cut) goes unnoticed until the deadline"
    ),
    "resend-on-drop": (
        "after a drop the original message is sent again instead of tasks/get + resubscribe: "
        "a second task"
    ),
    "resubscribe-without-snapshot": (
        "recovery resubscribes straight away, without the tasks/get snapshot"
    ),
    "resubscribe-after-terminal": (
        "recovery resubscribes even when the snapshot shows the task already finished"
    ),
    "no-cancel-on-deadline": "on deadline the call reports a timeout without tasks/cancel",
    "truncated-as-complete": (
        "after a drop the buffer is neither rebuilt from a snapshot nor marked incomplete"
    ),
    "rejected-as-success": "REJECTED and UNKNOWN are reported as completed",
    "append-from-task-too": (
        "a Task event's artifacts are appended to the buffer as well as the updates'"
    ),
    "ignores-input-required": (
        "INPUT_REQUIRED and AUTH_REQUIRED do not end the call: it waits on (until the deadline)"
    ),
    "finish-twice": "completion is not idempotent: the final update and the state each finish",
    "parse-per-chunk": (
        "structured (.json) artifacts are parsed on every chunk; a partial chunk fails the call"
    ),
    "gap-loss": (
        "the recipe to the letter: nothing but the tasks/get snapshot rebuilds the buffer, so "
        "chunks streamed between it and the resubscribe are lost"
    ),
    "follow-up-new-task": (
        "the follow-up ignores STREAMPROOF_TASK_ID/CONTEXT_ID and starts a new task"
    ),
    "ignores-message": "a direct Message reply is not a completion condition",
    "no-sse-accept": "streaming requests send Accept: application/json",
    "log-after-result": (
        "a log line is printed on stdout after the result, so the last stdout line is not it"
    ),
    "hang-on-early-drop": (
        "a drop before the first event (no task id) is not a failure: the call waits on until "
        "the deadline and reports a timeout"
    ),
    "ignores-deadline": (
        "the call waits for the task with no deadline (a bare done.get()), nor bounds its "
        "agent card's fetch: it runs past its deadline, and only the watchdog or the task's end "
        "stops it"
    ),
    "failed-as-completed": "FAILED and CANCELED are reported as completed",
    "snapshot-without-artifacts-ignored": (
        "a tasks/get snapshot without artifacts leaves the buffer as it is, not marked "
        "incomplete, though chunks streamed during the gap are lost (the recipe's 'else if "
        "(!call.artifacts.isEmpty()) call.incomplete = true' left out)"
    ),
    "shared-task-file": (
        "the call's task id also goes to one 'current task' file per machine, and the result "
        "is that task's final snapshot (tasks/get): with calls at once, another call's task"
    ),
    "shared-outbox": (
        "the message goes to one outbox file per machine until the call ends, and a call that "
        "finds another's message pending there sends it again first: a second task for it"
    ),
    "one-call-at-a-time": (
        "calls queue for a machine-wide lock (taken after the agent card, held until the "
        "process exits), and a call's deadline starts when its turn comes: it ends late"
    ),
    "accept-unauthenticated": (
        "the webhook does not check the token: a forged delivery (no token, a wrong one) is "
        "applied like the agent's own"
    ),
    "double-apply-duplicate": (
        "the webhook applies every delivery it gets: one that comes twice (a duplicate, a "
        "replay) is applied twice, an append chunk appended twice"
    ),
    "reopen-on-stale": (
        "a delivery after the terminal one is still applied: a stale working update reopens "
        "the finished call, which waits on for another end"
    ),
    "no-fallback-when-silent": (
        "no GetTask when deliveries stop: the call waits for a delivery that never comes, "
        "until its deadline"
    ),
}
"""Mutant name -> one-line description of its single defect."""

INTENDED: Final[Mapping[str, str]] = {
    "no-watchdog": "A2A-C-RECOVERY",
    "resend-on-drop": "A2A-C-NO-RESEND",
    "resubscribe-without-snapshot": "A2A-C-SNAPSHOT-FIRST",
    "resubscribe-after-terminal": "A2A-C-NO-RESUBSCRIBE-DONE",
    "no-cancel-on-deadline": "A2A-C-CANCEL",
    "truncated-as-complete": "A2A-C-ARTIFACTS-COMPLETE",
    "rejected-as-success": "A2A-C-FAILURE-STATES",
    "append-from-task-too": "A2A-C-REASSEMBLY",
    "ignores-input-required": "A2A-C-INTERRUPTED",
    "finish-twice": "A2A-C-COMPLETE-ONCE",
    "parse-per-chunk": "A2A-C-STRUCTURED",
    "gap-loss": "A2A-C-GAP",
    "follow-up-new-task": "A2A-C-FOLLOW-UP",
    "ignores-message": "A2A-C-DIRECT-MESSAGE",
    "no-sse-accept": "A2A-C-HEADERS",
    "log-after-result": "A2A-C-RESULT",
    "hang-on-early-drop": "A2A-C-EARLY-DROP",
    "ignores-deadline": "A2A-C-DEADLINE",
    "failed-as-completed": "A2A-C-STATUS",
    "snapshot-without-artifacts-ignored": "A2A-C-ARTIFACTS-COMPLETE",
    "shared-task-file": "A2A-C-CONC-NO-CROSSTALK",
    "shared-outbox": "A2A-C-CONC-ONE-TASK",
    "one-call-at-a-time": "A2A-C-CONC-CALLS-END",
    "accept-unauthenticated": "A2A-C-PUSH-AUTH",
    "double-apply-duplicate": "A2A-C-PUSH-ONCE",
    "reopen-on-stale": "A2A-C-PUSH-STALE",
    "no-fallback-when-silent": "A2A-C-PUSH-SILENCE",
}
"""Mutant name -> the requirement that must catch it (the mutant matrix reads this)."""

SHOWCASE: Final[Mapping[str, str]] = {
    "no-watchdog": "a2a_client/summary-survives-proxy-timeout",
    "resend-on-drop": "a2a_client/reset-mid-stream",
    "resubscribe-without-snapshot": "a2a_client/reset-mid-stream",
    "resubscribe-after-terminal": "a2a_client/task-finishes-while-disconnected",
    "no-cancel-on-deadline": "a2a_client/deadline-and-cancel",
    "truncated-as-complete": "a2a_client/chunk-lost-in-the-silence",
    "rejected-as-success": "a2a_client/rejected",
    "append-from-task-too": "a2a_client/chunk-lost-in-the-silence",
    "ignores-input-required": "a2a_client/input-required-follow-up",
    "finish-twice": "a2a_client/happy-path-1-0-wire",
    "parse-per-chunk": "a2a_client/structured-output",
    "gap-loss": "a2a_client/gap-between-snapshot-and-resubscribe",
    "follow-up-new-task": "a2a_client/input-required-follow-up",
    "ignores-message": "a2a_client/direct-message-reply",
    "no-sse-accept": "a2a_client/happy-path-1-0-wire",
    "log-after-result": "a2a_client/result-is-one-last-line",
    "hang-on-early-drop": "a2a_client/stall-before-first-event",
    "ignores-deadline": "a2a_client/deadline-inside-a-quiet-cut",
    "failed-as-completed": "a2a_client/failed",
    "snapshot-without-artifacts-ignored": "a2a_client/snapshot-without-artifacts",
    "shared-task-file": "a2a_client/happy-path-1-0-wire",
    "shared-outbox": "a2a_client/deadline-and-cancel",
    "one-call-at-a-time": "a2a_client/deadline-and-cancel",
    "accept-unauthenticated": "a2a_client/push-forged-deliveries",
    "double-apply-duplicate": "a2a_client/push-duplicated-and-replayed",
    "reopen-on-stale": "a2a_client/push-stale-after-the-end",
    "no-fallback-when-silent": "a2a_client/push-deliveries-stop",
}
"""Mutant name -> the bundled scenario in which its intended requirement fails."""


CONCURRENT: Final[Mapping[str, int]] = {
    "shared-task-file": 4,
    "shared-outbox": 4,
    "one-call-at-a-time": 4,
}
"""Mutants whose defect shows only with calls at once: the mutant matrix runs each with
``--concurrency`` this many calls (no sequential check can catch them)."""


CATALOG = BugCatalog(BUGS, INTENDED)
check_bug = CATALOG.check
describe_bugs = CATALOG.describe
bug_names = CATALOG.names
