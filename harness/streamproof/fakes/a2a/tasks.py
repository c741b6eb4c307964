"""``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe`` (``GetTask``, ``CancelTask``,
``SubscribeToTask`` in 1.0): the calls that name an existing task by its id; and 1.0's
``ListTasks``, which pages through them all.

``tasks/get`` answers with the task as it stands (without its artifacts under
``snapshot_artifacts: false``); ``tasks/cancel`` honours or refuses per the script (a finished
task: -32002); ``tasks/resubscribe`` opens a stream of the task's live events, a Task snapshot
first if the script says so, or fails on a finished task with the configured error. Each call
is recorded as a :class:`~streamproof.fakes.a2a.ledger.TaskCall`.

``ListTasks`` (1.0 §3.1.4) lists the tasks of the current run, most recently updated first
(a2a-sdk's order: by status timestamp, then id, descending), filtered by ``contextId``,
``status`` and ``statusTimestampAfter``, without artifacts unless ``includeArtifacts``, with
``historyLength`` applied; a page holds ``pageSize`` tasks (default 50, as a2a-sdk), and its
``nextPageToken`` is an opaque cursor past the page's last task, so the tasks created meanwhile
(which sort first) do not shift the pages. A token the fake did not issue gets -32602.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Final

from aiohttp import web

from streamproof.fakes.a2a.call import _Call
from streamproof.fakes.a2a.ledger import TaskCall
from streamproof.fakes.a2a.state import _LiveTask, _Subscriber
from streamproof.protocol import a2a


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
        await self.fake._push.settled(params.id)  # a stale delivery comes first (push/sender.py)
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

    async def _list(self, params: a2a.ListTasksParams) -> web.StreamResponse:
        tasks = [live.task for live in self.run.tasks.values()]
        if params.context_id is not None:
            tasks = [t for t in tasks if t.context_id == params.context_id]
        if params.status is not None:
            tasks = [t for t in tasks if t.status.state is params.status]
        after = params.status_timestamp_after
        if after is not None:
            tasks = [t for t in tasks if (m := _moment(t)) is not None and m >= after]
        tasks.sort(key=_order, reverse=True)
        start = 0
        if params.page_token is not None:
            cursor = _read_token(params.page_token)
            if cursor is None:
                return await self._fail(
                    self._error(a2a.INVALID_PARAMS, f"Invalid page token: {params.page_token}")
                )
            start = next((i for i, t in enumerate(tasks) if _order(t) < cursor), len(tasks))
        size = params.page_size or DEFAULT_PAGE_SIZE
        page = tasks[start : start + size]
        more = start + size < len(tasks)
        encoded = []
        for task in page:
            if not params.include_artifacts:
                task = task.model_copy(update={"artifacts": ()})
            encoded.append(
                a2a.encode_task(task, self.version, history_length=params.history_length)
            )
        result = {
            "tasks": encoded,
            "nextPageToken": _token(_order(page[-1])) if more and page else "",
            "pageSize": size,
            "totalSize": len(tasks),
        }
        return await self._result(result)


DEFAULT_PAGE_SIZE: Final = 50
"""ListTasks' page size when the client names none (a2a-sdk's ``DEFAULT_LIST_TASKS_PAGE_SIZE``)."""

_Order = tuple[bool, datetime, str]


def _moment(task: a2a.Task) -> datetime | None:
    stamp = task.status.timestamp
    if stamp is None:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _order(task: a2a.Task) -> _Order:
    """ListTasks' sort key (descending): tasks with a status timestamp, newest first, then
    those without; ties by id."""
    moment = _moment(task)
    return (moment is not None, moment or datetime.min.replace(tzinfo=None), task.id)


def _token(order: _Order) -> str:
    has, moment, task_id = order
    raw = json.dumps([moment.isoformat() if has else None, task_id]).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _read_token(token: str) -> _Order | None:
    """The cursor a :func:`_token` spelled, or ``None`` for anything else."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        return None
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], str)):
        return None
    stamp, task_id = value
    if stamp is None:
        return (False, datetime.min.replace(tzinfo=None), task_id)
    if not isinstance(stamp, str):
        return None
    try:
        return (True, datetime.fromisoformat(stamp), task_id)
    except ValueError:
        return None
