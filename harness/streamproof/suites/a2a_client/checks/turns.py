"""What every A2A client check asks of an observation: the turns, their exchanges with the
server, and how times and results are rendered in messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.fakes.a2a.ledger import TaskEventRecord
from streamproof.suites.a2a_client.checks.exchanges import (
    DONE_STATES,
    Exchange,
    exchanges,
    first_request_t,
    state_at,
    turn_exchanges,
    turn_task,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import ClientResult, ClientRun
from streamproof.suites.a2a_client.scenario import canonical_method

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
    return on_both_clocks(seconds, obs.time_scale)


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

    def end_unreadable(self) -> bool:
        """The frame that ended the turn reached the client only damaged by a corruption on
        the link (it could not read it), and no other request told it."""
        return any(e.turn_end_unreadable for e in self.rpc) and not any(
            e.turn_end_delivered or (e.op == "send" and e.answered) for e in self.rpc
        )

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


def _shorten(text: str, limit: int = 60) -> str:
    """``text``, or its start and end around an ellipsis and its length, so that two long
    texts that differ in the middle or at the end still look different."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 1
    return f"{text[:head]}…{text[-tail:]} ({len(text)} chars)"
