"""The A2A client observation: everything recorded while one ``a2a-client`` scenario ran.

Plain, frozen, serialisable data, so checks are pure functions of it and users who run their
client against the fake by other means can build one themselves. Every time is in seconds since
the scenario's epoch (one ``time.monotonic()`` origin shared by the fake server's ledger, the
``a2a`` link's records and the client turns), in real, scaled time.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from streamproof.fakes.a2a.ledger import A2ALedger
from streamproof.fakes.a2a.push.script import DeliveryFault
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent
from streamproof.suites.a2a_client.result import ClientRun
from streamproof.suites.a2a_client.scenario import A2AClientExpect

__all__ = ["A2AClientObservation", "ServerArtifact", "ServerTask"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ServerArtifact(_Record):
    id: str
    name: str | None = None
    text: str


class ServerTask(_Record):
    """A task as the fake server held it when the scenario ended."""

    task_id: str
    context_id: str
    state: str
    """0.3 spelling: ``completed``, ``input-required``..."""
    artifacts: tuple[ServerArtifact, ...] = ()


class A2AClientObservation(_Record):
    scenario: str
    target: str
    wire: str
    """What the fake served: ``0.3``, ``1.0`` or ``both``."""
    binding: Literal["jsonrpc", "rest", "grpc"] = "jsonrpc"
    """The binding the run was on: what the card advertised and ``STREAMPROOF_A2A_BINDING``
    said (the ledger's records say which binding each request came on)."""
    resubscribe_snapshot: bool = True
    """Whether a resubscribe started with a Task snapshot (a2a-sdk 1.x) or not (0.3.x)."""
    snapshot_artifacts: bool = True
    """Whether ``tasks/get`` returned the task's artifacts or only its status."""
    time_scale: float = 1.0
    deadline_s: float
    """The client's deadline as it was told (scaled)."""
    idle_s: float
    tolerance_s: float
    """The scenario's tolerance, scaled (checks add a small real-time floor)."""
    turns: tuple[ClientRun, ...] = ()
    """Each run of the client command: the call, then the follow-up if there was one."""
    ledger: A2ALedger = A2ALedger()
    link_events: tuple[LinkEvent, ...] | None = None
    """What the ``a2a`` link saw and did; ``None`` when the client talked to the fake
    directly."""
    faults: tuple[Fault, ...] = ()
    """The link's plan (fault indexes in link records refer to it)."""
    server_tasks: tuple[ServerTask, ...] = ()
    push: bool = False
    """Whether the client was told to take the task's updates from a webhook
    (``STREAMPROOF_A2A_PUSH=1``); the deliveries are in the ledger."""
    push_link_events: tuple[LinkEvent, ...] | None = None
    """What the ``push`` link saw and did (None: no push link)."""
    push_faults: tuple[DeliveryFault, ...] = ()
    """The scenario's delivery faults (``push.faults``)."""
    follow_up: str | None = None
    """The answer the scenario sends in a second turn (``client.follow_up``), if any."""
    reply_text: str | None = None
    """The direct reply the script gives instead of a task, if it does."""
    expect: A2AClientExpect = A2AClientExpect()

    @field_serializer("faults")
    def _faults_as_written(self, faults: tuple[Fault, ...]) -> list[dict[str, Any]]:
        """Each fault as a scenario spells it (its one action, its one trigger), so a dumped
        observation reads back."""
        return [f.model_dump(mode="json", exclude_none=True, by_alias=True) for f in faults]

    def timeline(self, limit: int = 40) -> str:
        """What happened, in order, for a failure report: the calls the server received (with
        the frames each carried), the faults the link fired, and each turn's outcome."""
        rows: list[tuple[float, str]] = []
        for r in self.ledger.requests:
            what = r.rpc_method or f"{r.http_method} {r.path}"
            if r.binding == "rest":  # the route says what the method name does not
                what += f" via {r.http_method} {r.path}"
            kinds = [f.state or f.artifact_id or f.kind for f in r.frames]
            detail = f" [{', '.join(kinds)}]" if kinds else ""
            code = f" error {r.error_code}" if r.error_code is not None else ""
            rows.append((r.t, f"{what}{code}{detail} ({r.ended})"))
        for e in self.link_events or ():
            if e.kind == "fault":
                rows.append((e.t, f"link fault: {e.detail}"))
            elif e.kind == "end" and e.by == "proxy":
                rows.append((e.t, f"link ended {e.rpc or e.path}: {e.how} ({e.detail})"))
        for turn in self.turns:
            label = "call" if turn.turn == 0 else "follow-up"
            rows.append((turn.t_start, f"{label} started"))
            if turn.result is not None and turn.t_result is not None:
                res = turn.result
                arts = ", ".join(f"{a.id}({len(a.text)} chars)" for a in res.artifacts)
                rows.append(
                    (
                        turn.t_result,
                        f"{label} result: {res.status} taskId={res.task_id} "
                        f"artifacts=[{arts}] incomplete={res.incomplete}",
                    )
                )
            if turn.failure is not None:
                rows.append((turn.t_exit or turn.t_start, f"{label} failed: {turn.failure.kind}"))
        rows.sort(key=lambda row: row[0])
        lines = [f"  {t:8.3f}s  {text}" for t, text in rows]
        if len(lines) > limit:
            lines = [
                *lines[: limit // 2],
                f"  ... {len(lines) - limit} more ...",
                *lines[-limit // 2 :],
            ]
        for turn in self.turns:
            if turn.stderr_tail:
                tail = "\n".join(f"    {line}" for line in turn.stderr_tail.splitlines()[-10:])
                lines.append(f"  turn {turn.turn} stderr (tail):\n{tail}")
        return "\n".join(lines) if lines else "  (nothing recorded)"
