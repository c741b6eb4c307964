"""The task clock: a task's timeline runs from its creation, whether or not anyone listens.

:class:`_TaskClock` is the part of :class:`~streamproof.fakes.a2a.server.FakeA2AServer` that
creates tasks, continues them on a follow-up message, cancels them, and drives each turn's
steps at their scenario times (times the time scale): every status or artifact update is
applied to the task, recorded in the ledger's ``task_events`` and handed to every open stream
of the task; a heartbeat step writes an SSE comment on them. The JSON-RPC methods
(:mod:`~streamproof.fakes.a2a.messages`, :mod:`~streamproof.fakes.a2a.tasks`) only start and read
it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from streamproof.fakes.a2a.ledger import TaskEventRecord, TaskRecord
from streamproof.fakes.a2a.push.sender import PushDeliveries
from streamproof.fakes.a2a.script import A2AScript, ArtifactStep, HeartbeatStep, StatusStep, Step
from streamproof.fakes.a2a.state import (
    _Comment,
    _LiveTask,
    _ping_text,
    _RequestState,
    _Run,
    _Subscriber,
)
from streamproof.protocol import a2a


class _TaskClock:
    """The tasks' clocks, mixed into the server; ``_drivers`` is the server's set of running
    turns (:meth:`~streamproof.fakes.a2a.server.FakeA2AServer.close` cancels them)."""

    _drivers: set[asyncio.Task[None]]
    _push: PushDeliveries

    def _start_turn(self, run: _Run, live: _LiveTask, steps: Sequence[Step]) -> None:
        start = time.monotonic()
        driver = asyncio.create_task(self._drive(run, live, tuple(steps), start))
        live.driver = driver
        self._drivers.add(driver)
        driver.add_done_callback(self._drivers.discard)

    async def _drive(
        self, run: _Run, live: _LiveTask, steps: tuple[Step, ...], start: float
    ) -> None:
        for step in steps:
            delay = start + run.scale(step.at) - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if run.closed:
                return
            self._apply_step(run, live, step)

    def _apply_step(self, run: _Run, live: _LiveTask, step: Step) -> None:
        assert run.script is not None
        server = run.script.server
        if isinstance(step, HeartbeatStep):
            text = f" {step.comment}" if step.comment is not None else _ping_text()
            run.task_events.append(
                TaskEventRecord(
                    task_id=live.id, t=run.now(), kind="heartbeat", turn=live.turn, text=text
                )
            )
            for sub in live.subscribers:
                sub.push(_Comment(text, "heartbeat"))
            return
        event: a2a.StatusUpdate | a2a.ArtifactUpdate
        if isinstance(step, StatusStep):
            state = step.status
            message = _agent_message(step.message, live) if step.message is not None else None
            final = state in a2a.TERMINAL_STATES or (
                state in a2a.INTERRUPTED_STATES and server.interrupted_final
            )
            event = a2a.StatusUpdate(
                task_id=live.id,
                context_id=live.context_id,
                status=a2a.TaskStatus(state=state, message=message, timestamp=a2a.timestamp()),
                final=final,
            )
            if state in a2a.TERMINAL_STATES:
                live.phase = "terminal"
            elif state in a2a.INTERRUPTED_STATES:
                live.phase = "interrupted"
                live.follow_up = step.follow_up
        else:
            assert isinstance(step, ArtifactStep)
            chunk = step.artifact
            part: a2a.TextPart | a2a.DataPart = (
                a2a.TextPart(text=chunk.text)
                if chunk.text is not None
                else a2a.DataPart(data=chunk.data)
            )
            event = a2a.ArtifactUpdate(
                task_id=live.id,
                context_id=live.context_id,
                artifact=a2a.Artifact(artifact_id=chunk.id, name=chunk.name, parts=(part,)),
                append=chunk.append,
                last_chunk=chunk.last,
            )
        self._publish(run, live, event)

    def _publish(
        self, run: _Run, live: _LiveTask, event: a2a.StatusUpdate | a2a.ArtifactUpdate
    ) -> None:
        """Apply an update to the task, record it, and hand it to every open stream."""
        live.task = a2a.apply_event(live.task, event)
        if isinstance(event, a2a.StatusUpdate):
            message = event.status.message
            record = TaskEventRecord(
                task_id=live.id,
                t=run.now(),
                kind="status-update",
                turn=live.turn,
                state=event.status.state.value,
                text=a2a.text_of(message.parts) if message is not None else None,
            )
        else:
            record = TaskEventRecord(
                task_id=live.id,
                t=run.now(),
                kind="artifact-update",
                turn=live.turn,
                artifact_id=event.artifact.artifact_id,
                append=event.append,
                last_chunk=event.last_chunk,
                text=a2a.text_of(event.artifact.parts),
            )
        run.task_events.append(record)
        self._push.publish(live.id, event)
        for sub in live.subscribers:
            sub.push(event)
        if a2a.ends_turn(event):
            live.subscribers = []  # each stream ends after writing this event
            live.turn_over.set()

    def _create_task(
        self,
        run: _Run,
        state: _RequestState,
        message: a2a.Message,
        sub: _Subscriber | None,
        script: A2AScript | None = None,
    ) -> _LiveTask:
        """A new task from ``message``, running ``script``'s timeline (default: the run's)."""
        script = script or run.script
        assert script is not None and script.task is not None
        task_id = a2a.new_id()
        context_id = message.context_id or a2a.new_id()
        user = message.model_copy(update={"task_id": task_id, "context_id": context_id})
        task = a2a.Task(
            id=task_id,
            context_id=context_id,
            status=a2a.TaskStatus(state=a2a.TaskState.SUBMITTED),
            history=(user,),
        )
        live = _LiveTask(task)
        initial = script.initial_message
        if initial is not None:
            status = a2a.TaskStatus(
                state=a2a.TaskState.SUBMITTED, message=_agent_message(initial, live)
            )
            live.task = task.model_copy(update={"status": status})
        run.tasks[task_id] = live
        now = run.now()
        text = a2a.text_of(message.parts)
        run.task_records.append(
            TaskRecord(
                task_id=task_id,
                context_id=context_id,
                t=now,
                request=state.index,
                message_id=message.message_id,
                text=text,
            )
        )
        run.task_events.append(
            TaskEventRecord(
                task_id=task_id, t=now, kind="created", turn=0, state="submitted", text=text
            )
        )
        if sub is not None:
            live.subscribers.append(sub)
        steps = script.task
        if initial is not None or (
            steps
            and isinstance(steps[0], StatusStep)
            and steps[0].status is a2a.TaskState.SUBMITTED
        ):
            steps = steps[1:]  # the creation itself
        self._start_turn(run, live, steps)
        return live

    def _continue_task(
        self, run: _Run, live: _LiveTask, message: a2a.Message, sub: _Subscriber | None
    ) -> None:
        """A follow-up turn: the user message joins the history, the task goes ``working``
        (the first event every stream of the task sees), and the follow-up timeline runs."""
        steps = live.follow_up or ()
        user = message.model_copy(update={"task_id": live.id, "context_id": live.context_id})
        task = live.task
        history = task.history
        if task.status.message is not None:
            history = (*history, task.status.message)
        status = task.status.model_copy(update={"message": None})
        live.task = task.model_copy(update={"history": (*history, user), "status": status})
        live.turn += 1
        live.phase = "running"
        live.follow_up = None
        live.turn_over = asyncio.Event()
        run.task_events.append(
            TaskEventRecord(
                task_id=live.id,
                t=run.now(),
                kind="follow-up",
                turn=live.turn,
                text=a2a.text_of(message.parts),
            )
        )
        if sub is not None:
            live.subscribers.append(sub)
        working = a2a.StatusUpdate(
            task_id=live.id,
            context_id=live.context_id,
            status=a2a.TaskStatus(state=a2a.TaskState.WORKING, timestamp=a2a.timestamp()),
            final=False,
        )
        self._publish(run, live, working)
        self._start_turn(run, live, steps)

    def _cancel_task(self, run: _Run, live: _LiveTask) -> None:
        if live.driver is not None:
            live.driver.cancel()
        live.phase = "terminal"
        live.follow_up = None
        event = a2a.StatusUpdate(
            task_id=live.id,
            context_id=live.context_id,
            status=a2a.TaskStatus(state=a2a.TaskState.CANCELED, timestamp=a2a.timestamp()),
            final=True,
        )
        self._publish(run, live, event)


def _agent_message(text: str, live: _LiveTask) -> a2a.Message:
    return a2a.Message(
        message_id=a2a.new_id(),
        role="agent",
        parts=(a2a.TextPart(text=text),),
        task_id=live.id,
        context_id=live.context_id,
    )
