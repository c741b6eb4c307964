"""What one call (or one of K calls at once) is judged on: the scenario's settings, the client's
turns, the fake's ledger and the tasks as the fake holds them at the end, gathered into an
:class:`~streamproof.suites.a2a_client.observation.A2AClientObservation` for the checks."""

from __future__ import annotations

from collections.abc import Iterable

from streamproof.core.durations import TimeScale
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.a2a.ledger import A2ALedger
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent
from streamproof.protocol import a2a
from streamproof.suites.a2a_client.observation import (
    A2AClientObservation,
    ServerArtifact,
    ServerTask,
)
from streamproof.suites.a2a_client.result import ClientRun
from streamproof.suites.a2a_client.scenario import A2AClientScenario

__all__ = ["observe", "server_tasks"]


def observe(
    scenario: A2AClientScenario,
    fake: FakeA2AServer,
    *,
    target: str,
    scale: TimeScale,
    turns: tuple[ClientRun, ...],
    ledger: A2ALedger,
    tolerance_s: float,
    link_events: tuple[LinkEvent, ...] | None,
    faults: tuple[Fault, ...],
    reply: str | None,
    follow_up: str | None,
) -> A2AClientObservation:
    """The observation of a call whose ``turns`` ran on ``target``, its tasks read from
    ``fake``."""
    return A2AClientObservation(
        scenario=scenario.id,
        target=target,
        wire=scenario.server.wire,
        binding=scenario.run_binding,
        resubscribe_snapshot=scenario.server.resubscribe_snapshot,
        snapshot_artifacts=scenario.server.snapshot_artifacts,
        time_scale=scale.factor,
        deadline_s=scale(scenario.client.deadline),
        idle_s=scale(scenario.client.idle),
        tolerance_s=tolerance_s,
        turns=turns,
        ledger=ledger,
        link_events=link_events,
        faults=faults,
        server_tasks=tuple(server_tasks(fake, (r.task_id for r in ledger.tasks))),
        push=scenario.push is not None,
        push_faults=scenario.push.faults if scenario.push is not None else (),
        reply_text=reply,
        follow_up=follow_up,
        expect=scenario.expect,
    )


def server_tasks(fake: FakeA2AServer, task_ids: Iterable[str]) -> list[ServerTask]:
    """The tasks ``task_ids`` as the fake holds them now (the server's own record)."""
    out: list[ServerTask] = []
    for task_id in task_ids:
        task = fake.task(task_id)
        if task is None:
            continue
        out.append(
            ServerTask(
                task_id=task.id,
                context_id=task.context_id,
                state=task.status.state.value,
                artifacts=tuple(
                    ServerArtifact(id=a.artifact_id, name=a.name, text=a2a.text_of(a.parts))
                    for a in task.artifacts
                ),
            )
        )
    return out
