"""``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe`` (``GetTask``, ``CancelTask``,
``SubscribeToTask`` in 1.0): the calls that name an existing task by its id.

``tasks/get`` answers with the task as it stands (without its artifacts under
``snapshot_artifacts: false``); ``tasks/cancel`` honours or refuses per the script (a finished
task: -32002); ``tasks/resubscribe`` opens a stream of the task's live events, a Task snapshot
first if the script says so, or fails on a finished task with the configured error. Each call
is recorded as a :class:`~harness.fakes.a2a.ledger.TaskCall`.
"""

from __future__ import annotations

from aiohttp import web

from harness.fakes.a2a.call import _Call
from harness.fakes.a2a.ledger import TaskCall
from harness.fakes.a2a.state import _LiveTask, _Subscriber
from harness.protocol import a2a


class _TaskMethods(_Call):
    """The ``tasks/*`` family of a call."""

    def _call_record(self, task_id: str, live: _LiveTask | None, code: int | None) -> TaskCall:
        return TaskCall(
            t=self.state.t,
            request=self.state.index,
            task_id=task_id,
            state=live.task.status.state.value if live is not None else None,
            error_code=code,
        )

    async def _get(self, params: a2a.TaskQueryParams) -> web.StreamResponse:
        run = self.run
        self.state.task_id = params.id
        live = run.tasks.get(params.id)
        if live is None:
            run.gets.append(self._call_record(params.id, None, a2a.TASK_NOT_FOUND))
            return await self._fail(self._error(a2a.TASK_NOT_FOUND))
        run.gets.append(self._call_record(params.id, live, None))
        snapshot = live.task
        if not self.server.snapshot_artifacts:  # the status (and history), no artifacts
            snapshot = snapshot.model_copy(update={"artifacts": ()})
        task = a2a.encode_task(snapshot, self.version, history_length=params.history_length)
        return await self._result(task)

    async def _cancel(self, params: a2a.TaskIdParams | a2a.TaskQueryParams) -> web.StreamResponse:
        run = self.run
        self.state.task_id = params.id
        live = run.tasks.get(params.id)
        code: int | None = None
        if live is None:
            code = a2a.TASK_NOT_FOUND
        elif live.phase == "terminal" or self.server.cancel == "refuse":
            code = a2a.TASK_NOT_CANCELABLE
        run.cancels.append(self._call_record(params.id, live, code))
        if code is not None or live is None:
            assert code is not None
            return await self._fail(self._error(code))
        self.fake._cancel_task(run, live)
        return await self._result(a2a.encode_task(live.task, self.version))

    async def _resubscribe(
        self, params: a2a.TaskIdParams | a2a.TaskQueryParams
    ) -> web.StreamResponse:
        run = self.run
        self.state.task_id = params.id
        live = run.tasks.get(params.id)
        if live is None:
            run.resubscribes.append(self._call_record(params.id, None, a2a.TASK_NOT_FOUND))
            return await self._fail(self._error(a2a.TASK_NOT_FOUND))
        if live.phase == "terminal":
            code = self.server.terminal_resubscribe_error
            run.resubscribes.append(self._call_record(params.id, live, code))
            text = None if code == a2a.TASK_NOT_FOUND else self._terminal_text(live, code)
            return await self._fail(self._error(code, text))
        run.resubscribes.append(self._call_record(params.id, live, None))
        sub = _Subscriber()
        live.subscribers.append(sub)
        first = (live.task,) if self.server.resubscribe_snapshot else ()
        return await self._stream(sub, first, live)
