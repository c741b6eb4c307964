"""The A2A client requirements (``A2A-C-…``), from the client seed
(docs/explanation/a2a-client-rules.md).

Each rule is the seed's recipe ("A2A Client Streaming Recipe") turned into something a check can
judge from outside the client: the fake server's ledger, the fault link's records and the one
result line the client prints. Sections are the seed's own headings. Every rule is a MUST of the
recipe except ``A2A-C-GAP``, a SHOULD that goes beyond it: the recipe itself loses the chunks
streamed between its ``tasks/get`` snapshot and its ``tasks/resubscribe``, so losing them is
reported (non-strict) but never failed.

Time limits are measured from the client's first request as the harness saw it, never from
process start, so a slow-booting runtime is not penalised for its boot.
"""

from __future__ import annotations

from streamproof.core.requirements import CLIENT_SEED, Requirement, register
from streamproof.core.verdicts import Level

__all__ = ["A2A_CLIENT"]

_WHEN_OVER = "Knowing when the call is over"
_DROPS = "Dropped streams and resubscribe"
_REASSEMBLY = "Reassembling streamed artifacts"
_BUILDING = "Building the client"
_PUSH = "Push notifications"


def _c(
    id: str, level: Level, statement: str, section: str, *, concurrent: bool = False
) -> Requirement:
    return Requirement(
        id=id,
        level=level,
        statement=statement,
        seed=CLIENT_SEED,
        section=section,
        kind="a2a-client",
        concurrent=concurrent,
    )


MUST, SHOULD = Level.MUST, Level.SHOULD


def _rules() -> list[Requirement]:
    return [
        _c(
            "A2A-C-RESULT",
            MUST,
            "Every call ends with a result: the client prints one result JSON object as its last "
            "stdout line and exits, without crashing or hanging past its bound.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-COMPLETE-ONCE",
            MUST,
            "Completion is idempotent: a final update followed by a terminal state finishes the "
            "call once, so exactly one result is reported.",
            "A consumer that tracks state",
        ),
        _c(
            "A2A-C-NO-RESEND",
            MUST,
            "One task per logical call: after a drop the client never sends the message again (no "
            "second message/stream or message/send in the call), so no second task is started.",
            _DROPS,
        ),
        _c(
            "A2A-C-EARLY-DROP",
            MUST,
            "A stream dropped before the first event (no task id yet) fails the call; the client "
            "does not resend, so the server creates no second task.",
            _DROPS,
        ),
        _c(
            "A2A-C-SNAPSHOT-FIRST",
            MUST,
            "Every tasks/resubscribe is preceded by a tasks/get snapshot of the same task, taken "
            "after the stream it replaces was opened.",
            _DROPS,
        ),
        _c(
            "A2A-C-NO-RESUBSCRIBE-DONE",
            MUST,
            "A snapshot that shows the task finished (a terminal state, or input-required or "
            "auth-required) ends the call; the client does not resubscribe.",
            _DROPS,
        ),
        _c(
            "A2A-C-RECOVERY",
            MUST,
            "After a quiet or loud drop of a task's stream, recovery (tasks/get) begins within the "
            "idle limit plus tolerance of the last event received.",
            f"{_DROPS}; Worked example: a summary that survives a proxy timeout",
        ),
        _c(
            "A2A-C-DEADLINE",
            MUST,
            "The call ends (its result is printed) by the deadline plus tolerance, counted from "
            "the client's first request.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-CANCEL",
            MUST,
            "When the deadline passes with the task unfinished, the client sends tasks/cancel for "
            "it and reports a timeout; a call abandoned earlier while its task still runs "
            "cancels it too.",
            f"Cancellation and shutdown; {_WHEN_OVER}",
        ),
        _c(
            "A2A-C-ARTIFACTS-COMPLETE",
            MUST,
            "A result that claims success (completed, message) carries the server's artifacts or "
            "says incomplete: a truncated artifact is never reported as complete (a timeout, "
            "error or failure already says the result is not complete).",
            _DROPS,
        ),
        _c(
            "A2A-C-REASSEMBLY",
            MUST,
            "Artifacts are reassembled per artifact id from the updates (append extends, "
            "otherwise replace) and no chunk is counted twice, e.g. from both a task snapshot and "
            "the update.",
            _REASSEMBLY,
        ),
        _c(
            "A2A-C-STRUCTURED",
            MUST,
            "Structured output is parsed once the last chunk has arrived, never per chunk.",
            _REASSEMBLY,
        ),
        _c(
            "A2A-C-STATUS",
            MUST,
            "The result's status follows the task: completed as completed, failed as failed, "
            "canceled as canceled; a call the client could not finish is a timeout or an error, "
            "never a success; a client that never sent its message follows no task.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-FAILURE-STATES",
            MUST,
            "REJECTED and UNKNOWN are reported as failures (rejected, unknown, failed or error), "
            "never as completed.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-INTERRUPTED",
            MUST,
            "INPUT_REQUIRED and AUTH_REQUIRED end the call without finishing the task: the result "
            "says input-required or auth-required and carries the task and context ids.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-DIRECT-MESSAGE",
            MUST,
            "A direct message reply ends the call: the result says message and carries its text.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-FOLLOW-UP",
            MUST,
            "The follow-up turn after input-required or auth-required sends one message carrying "
            "the same task and context ids, and creates no new task.",
            _WHEN_OVER,
        ),
        _c(
            "A2A-C-HEADERS",
            MUST,
            "Streaming requests send Accept: text/event-stream, and each request's A2A-Version "
            "fits its wire (absent or 0.x for 0.3 methods, 1.x for 1.0 methods).",
            _BUILDING,
        ),
        _c(
            "A2A-C-GAP",
            SHOULD,
            "Chunks streamed between the tasks/get snapshot and the resubscribe are not lost: the "
            "result has them or says incomplete (the recipe alone loses them).",
            _DROPS,
        ),
        # Push notifications: the seed's principles for a client that takes the task's updates
        # from a webhook (docs/explanation/a2a-client-rules.md#push-notifications).
        _c(
            "A2A-C-PUSH-AUTH",
            MUST,
            "The webhook rejects a delivery that fails authentication (no token, or not the one "
            "it registered) with a non-2xx answer, and the call's result carries nothing of it: "
            "no state and no text the task never had.",
            f"{_PUSH}; A consumer that tracks state",
        ),
        _c(
            "A2A-C-PUSH-ONCE",
            MUST,
            "A duplicated or replayed delivery changes nothing: the result is what the task's "
            "updates give applied once (an append chunk delivered twice is not appended twice).",
            f"{_PUSH}; {_REASSEMBLY}",
        ),
        _c(
            "A2A-C-PUSH-STALE",
            MUST,
            "A stale update never reopens a finished call: once the terminal delivery has reached "
            "the client, a delivery after it changes neither the result's status nor its "
            "artifacts, and the result follows without waiting for more.",
            f"{_PUSH}; {_WHEN_OVER}",
        ),
        _c(
            "A2A-C-PUSH-SILENCE",
            MUST,
            "When deliveries stop while the call is open, the client recovers from the server's "
            "own record (GetTask) within its idle limit plus tolerance of the last news it had "
            "(a delivery, or an answer of the server's), and again after each quiet idle limit.",
            f"{_PUSH}; {_DROPS}",
        ),
        # Under --concurrency K: K calls at once against one agent.
        _c(
            "A2A-C-CONC-ONE-TASK",
            MUST,
            "With several calls at once, each call creates exactly one task, from its own "
            "message (its own prompt): no call starts a second task or one for another call.",
            _BUILDING,
            concurrent=True,
        ),
        _c(
            "A2A-C-CONC-NO-CROSSTALK",
            MUST,
            "With several calls at once, each call keeps its own state: its result names its own "
            "task and context and holds only its own task's text, and it reads, resubscribes "
            "to, cancels or continues no other call's task.",
            _BUILDING,
            concurrent=True,
        ),
        _c(
            "A2A-C-CONC-CALLS-END",
            MUST,
            "With several calls at once, every call ends with its result by its deadline plus "
            "tolerance, counted from its own first request: no call waits on another.",
            _WHEN_OVER,
            concurrent=True,
        ),
    ]


A2A_CLIENT: list[Requirement] = _rules()
"""Every A2A client requirement, in the order reports list them."""

register(A2A_CLIENT)
