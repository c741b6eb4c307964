"""A fake A2A server that plays a scripted task timeline to real A2A clients, and keeps a ledger.

Why it exists: the A2A client path of streamproof (DESIGN.md) judges a client by how it copes
with a remote agent that streams for minutes, goes quiet, loses its connection, asks for
input, refuses to cancel. A real agent cannot be told to do those things on cue; this fake
can, and it speaks the wire of the real servers byte for byte (every object and envelope is
built by :mod:`harness.protocol.a2a`; this module is only the aiohttp shell: routing, the task
clock, open streams, and the records).

The task runs on its own clock
------------------------------
A task is created when a message arrives and its timeline (``A2AScript.task``) runs from that
moment, in scenario time times the time scale, **whether or not any connection is open**. A
client whose stream drops therefore finds real progress in ``tasks/get``, and a
``tasks/resubscribe`` carries the events that happen from then on; nothing is replayed, as on
every real server (research ``a2a.md`` §1.8, §3.4). Every open stream of a task receives its
events (1.0 §3.5.2); closing one stream changes nothing for the task or the other streams.

What a client sees
------------------
* ``message/stream`` for a new task: a Task snapshot (``submitted``, the user message in its
  history), then the updates as they happen, then the server closes the stream after a
  terminal or interrupted state (§1.5-§1.6). ``message/send`` waits for the same point
  (``blocking`` unless the client said ``blocking: false`` / ``returnImmediately: true``) and
  returns the Task.
* A message carrying the ``taskId`` (and ``contextId``) of a task waiting in input-required or
  auth-required runs the step's ``follow_up`` timeline from that moment; its stream opens with
  a ``working`` status update, never a stale input-required snapshot. A message to an unknown
  task gets -32001, to a finished one -32004 or -32602 (§1.10), with a ``contextId`` that is
  not the task's -32602 (a2a-sdk 1.3), to a task that is still working -32004.
* ``tasks/get``: the task as it stands, its artifacts included unless the script says
  ``snapshot_artifacts: false`` (then the status and history only).
* ``tasks/resubscribe``: optionally a Task snapshot first (a2a-sdk 1.x) or not (0.3.x), then
  live events; on a finished task the configured error (-32004, -32602 or -32001, §1.8). On a
  task waiting for input the stream stays open for the next turn's events.
* ``tasks/cancel``: honoured (the task goes ``canceled`` at once, a final update on its
  streams) or refused with -32002; a finished task always gets -32002.
* Errors of streaming calls that arise while handling them come as a one-frame SSE stream
  (a2a-sdk) or as ``application/json`` (a2a-js, a2a-sdk 1.0 path), per the script (§1.7);
  request-level errors (bad JSON, bad request, unknown method, bad params, version) are always
  ``application/json``, HTTP 200. Nothing a client sends makes the fake answer with a
  traceback: an unexpected failure is a -32603 whose message names the exception type only.
* Heartbeat steps write an SSE comment on every open stream of the task; ``ping_every`` adds
  sse-starlette's periodic ``: ping`` comment.

The agent card's ``url`` is the address the client used to reach the card (its ``Host``
header), so a client that goes through a fault proxy keeps going through it; ``public_url``
overrides that.

Connections are watched while the fake waits (``handler_cancellation`` plus a 20 ms poll of the
transport), so a client that drops a stream is recorded ``client_closed`` promptly even when
nothing is being written.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from aiohttp import web

from harness import sse
from harness.durations import TimeScale
from harness.fakes.a2a.ledger import (
    A2ALedger,
    Ending,
    FrameKind,
    MessageRecord,
    RequestRecord,
    SentFrame,
    TaskCall,
    TaskEventRecord,
    TaskRecord,
)
from harness.fakes.a2a.script import (
    A2AScript,
    ArtifactStep,
    HeartbeatStep,
    ServerBehaviour,
    StatusStep,
    Step,
)
from harness.fakes.serving import serve
from harness.protocol import a2a

__all__ = ["RPC_PATH", "FakeA2AServer"]

logger = logging.getLogger(__name__)

_POLL: Final = 0.02
"""Seconds between checks of a client's connection while the fake waits."""
_EXCERPT: Final = 500
RPC_PATH: Final = "/"
"""The JSON-RPC endpoint (a2a-sdk's default ``rpc_url``)."""

_SSE_HEADERS: Final = {
    # what a2a-sdk servers (sse-starlette) send (§1.5)
    "Content-Type": a2a.SSE_CONTENT_TYPE,
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
}


@dataclass(frozen=True, slots=True)
class _Comment:
    text: str
    kind: Literal["heartbeat", "ping"]


_Item = a2a.Task | a2a.Message | a2a.StatusUpdate | a2a.ArtifactUpdate | _Comment
_Event = a2a.Task | a2a.Message | a2a.StatusUpdate | a2a.ArtifactUpdate


class _Gone:
    """The client went away."""


class _Cut:
    """The fake is closing, or a new scenario was loaded."""


_GONE: Final = _Gone()
_CUT: Final = _Cut()


class _Subscriber:
    """One open stream's inbox."""

    __slots__ = ("items", "wakeup")

    def __init__(self) -> None:
        self.items: deque[_Item] = deque()
        self.wakeup = asyncio.Event()

    def push(self, item: _Item) -> None:
        self.items.append(item)
        self.wakeup.set()


@dataclass
class _RequestState:
    """The mutable record of one request; :meth:`snapshot` freezes it."""

    index: int
    t: float
    connection: int
    http_method: str
    path: str
    accept: str | None
    a2a_version: str | None
    content_type: str | None
    t_end: float | None = None
    rpc_method: str | None = None
    rpc_id: Any = None
    wire: Literal["0.3", "1.0"] | None = None
    params: Any = None
    body_excerpt: str | None = None
    status: int = 0
    response: Literal["json", "sse"] = "json"
    error_code: int | None = None
    task_id: str | None = None
    frames: list[SentFrame] = field(default_factory=list)
    ended: Ending = "open"

    def snapshot(self) -> RequestRecord:
        return RequestRecord(
            index=self.index,
            t=self.t,
            t_end=self.t_end,
            connection=self.connection,
            http_method=self.http_method,
            path=self.path,
            rpc_method=self.rpc_method,
            rpc_id=self.rpc_id,
            wire=self.wire,
            params=self.params,
            body_excerpt=self.body_excerpt,
            accept=self.accept,
            a2a_version=self.a2a_version,
            content_type=self.content_type,
            status=self.status,
            response=self.response,
            error_code=self.error_code,
            task_id=self.task_id,
            frames=tuple(self.frames),
            ended=self.ended,
        )


class _LiveTask:
    """A task the fake is running."""

    __slots__ = (
        "context_id",
        "driver",
        "follow_up",
        "id",
        "phase",
        "subscribers",
        "task",
        "turn",
        "turn_over",
    )

    def __init__(self, task: a2a.Task) -> None:
        self.id = task.id
        self.context_id = task.context_id
        self.task = task
        self.phase: Literal["running", "interrupted", "terminal"] = "running"
        self.follow_up: tuple[Step, ...] | None = None
        self.turn = 0
        self.subscribers: list[_Subscriber] = []
        self.driver: asyncio.Task[None] | None = None
        self.turn_over = asyncio.Event()


class _Run:
    """Everything that belongs to one ``load()``: the script, the tasks, the records."""

    def __init__(self, script: A2AScript | None, scale: TimeScale, public_url: str | None) -> None:
        self.script = script
        self.scale = scale
        self.public_url = public_url
        self.epoch = time.monotonic()
        self.closed = False
        self.active = 0
        self.requests: list[_RequestState] = []
        self.tasks: dict[str, _LiveTask] = {}
        self.task_records: list[TaskRecord] = []
        self.messages: list[MessageRecord] = []
        self.gets: list[TaskCall] = []
        self.resubscribes: list[TaskCall] = []
        self.cancels: list[TaskCall] = []
        self.task_events: list[TaskEventRecord] = []
        self.connections: weakref.WeakKeyDictionary[asyncio.BaseTransport, int] = (
            weakref.WeakKeyDictionary()
        )
        self.connection_count = 0

    def now(self) -> float:
        return time.monotonic() - self.epoch

    def connection_of(self, request: web.Request) -> int:
        transport = request.transport
        if transport is None:
            return 0
        found = self.connections.get(transport)
        if found is None:
            self.connection_count += 1
            found = self.connections[transport] = self.connection_count
        return found


class FakeA2AServer:
    """The fake A2A agent. Not a test class (``__test__ = False``) despite its use in tests.

    Usage::

        fake = FakeA2AServer()
        base_url = await fake.start()          # the agent's base URL (card at /.well-known/...)
        fake.load(scenario_script, time_scale=0.1)
        ...                                    # run the client against base_url
        await fake.wait_quiet(5.0)
        ledger = fake.ledger
        await fake.close()
    """

    __test__ = False

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._base_url: str | None = None
        self._stopping = False
        self._run = _Run(None, TimeScale(1.0), None)
        self._drivers: set[asyncio.Task[None]] = set()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on ``host:port`` (port 0: any free port); returns the base URL."""
        if self._runner is not None:
            raise RuntimeError("the fake A2A server is already running")
        runner, self._base_url = await serve(self._handle, host, port)
        self._stopping = False
        self._runner = runner
        return self._base_url

    async def close(self) -> None:
        """Stop serving. Open streams are cut (recorded ``server_closed``), tasks stop."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._stopping = True
        self._retire(self._run)
        await runner.cleanup()
        drivers = list(self._drivers)
        for driver in drivers:
            driver.cancel()
        if drivers:
            await asyncio.gather(*drivers, return_exceptions=True)
        self._base_url = None

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the fake A2A server is not running; await start() first")
        return self._base_url

    @property
    def card_url(self) -> str:
        return self.base_url + a2a.AGENT_CARD_PATH

    def load(
        self,
        script: A2AScript,
        *,
        time_scale: float | TimeScale = 1.0,
        public_url: str | None = None,
    ) -> None:
        """Set the script and forget everything else: tasks stop, open streams are cut, the
        ledger empties and the epoch becomes now. ``public_url`` is the JSON-RPC URL the card
        advertises (default: the address the client used to fetch the card)."""
        scale = time_scale if isinstance(time_scale, TimeScale) else TimeScale(time_scale)
        self._retire(self._run)
        self._run = _Run(script, scale, public_url)

    def set_epoch(self, t0: float) -> None:
        """Record times relative to ``t0`` (a ``time.monotonic()`` value)."""
        self._run.epoch = t0

    @property
    def script(self) -> A2AScript | None:
        return self._run.script

    @property
    def ledger(self) -> A2ALedger:
        """Everything recorded since the last :meth:`load`, requests in progress included."""
        run = self._run
        return A2ALedger(
            requests=tuple(s.snapshot() for s in run.requests),
            tasks=tuple(run.task_records),
            messages=tuple(run.messages),
            gets=tuple(run.gets),
            resubscribes=tuple(run.resubscribes),
            cancels=tuple(run.cancels),
            task_events=tuple(run.task_events),
        )

    def task(self, task_id: str) -> a2a.Task | None:
        """The current snapshot of a task, as ``tasks/get`` would return it."""
        live = self._run.tasks.get(task_id)
        return live.task if live is not None else None

    @property
    def busy(self) -> bool:
        """Whether a request (an open stream included) is in progress."""
        return self._run.active > 0

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no request is in progress (True) or ``timeout`` seconds pass (False).
        Tasks keep running on their clock either way."""
        deadline = time.monotonic() + timeout
        while self._run.active:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(_POLL, remaining))
        return True

    def _retire(self, run: _Run) -> None:
        run.closed = True
        for live in run.tasks.values():
            if live.driver is not None:
                live.driver.cancel()
            for sub in live.subscribers:
                sub.wakeup.set()

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        run = self._run
        run.active += 1
        state = _RequestState(
            index=len(run.requests),
            t=run.now(),
            connection=run.connection_of(request),
            http_method=request.method,
            path=request.path,
            accept=request.headers.get("Accept"),
            a2a_version=request.headers.get(a2a.VERSION_HEADER),
            content_type=request.headers.get("Content-Type"),
        )
        run.requests.append(state)
        try:
            return await self._route(run, request, state)
        except asyncio.CancelledError:
            if state.ended == "open":
                state.ended = self._cut_reason(run)
            raise
        except Exception as exc:  # never a traceback on the wire
            logger.exception("fake A2A server: unexpected failure")
            if state.ended != "open" or state.response == "sse":
                if state.ended == "open":
                    state.ended = "server_closed"
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            error = a2a.rpc_error(
                a2a.INTERNAL_ERROR,
                f"Internal error ({type(exc).__name__})",
                id=state.rpc_id if isinstance(state.rpc_id, str | int) else None,
            )
            return await self._error_json(run, request, state, error, state.wire)
        finally:
            run.active -= 1
            if state.t_end is None:
                state.t_end = run.now()

    def _cut_reason(self, run: _Run) -> Ending:
        return "server_closed" if self._stopping or run.closed else "client_closed"

    async def _route(
        self, run: _Run, request: web.Request, state: _RequestState
    ) -> web.StreamResponse:
        if request.path == a2a.AGENT_CARD_PATH and request.method in ("GET", "HEAD"):
            return await self._card(run, request, state)
        if request.path == RPC_PATH and request.method == "POST":
            return await self._rpc(run, request, state)
        status = 405 if request.path in (a2a.AGENT_CARD_PATH, RPC_PATH) else 404
        body = {"error": f"{request.method} {request.path} is not served by this agent"}
        return await self._send_json(run, request, state, body, status=status)

    async def _card(
        self, run: _Run, request: web.Request, state: _RequestState
    ) -> web.StreamResponse:
        if run.script is None:
            body = {"error": "no scenario is loaded"}
            return await self._send_json(run, request, state, body, status=503)
        server = run.script.server
        url = run.public_url or f"{request.scheme}://{request.host}{RPC_PATH}"
        card = a2a.agent_card(url, server.wire, name=server.name, streaming=server.streaming)
        return await self._send_json(run, request, state, card)

    async def _rpc(
        self, run: _Run, request: web.Request, state: _RequestState
    ) -> web.StreamResponse:
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            error = a2a.rpc_error(a2a.INVALID_REQUEST, "Payload too large")
            return await self._error_json(run, request, state, error, None)
        try:
            value = a2a.loads(body)
        except ValueError as exc:
            state.body_excerpt = body[:_EXCERPT].decode("utf-8", errors="replace")
            error = a2a.rpc_error(a2a.PARSE_ERROR, f"Invalid JSON payload: {exc}")
            return await self._error_json(run, request, state, error, None)
        if isinstance(value, dict):
            method = value.get("method")
            state.rpc_method = method if isinstance(method, str) else None
            state.rpc_id = value.get("id")
            state.params = value.get("params")
            state.wire = a2a.version_of(state.rpc_method) if state.rpc_method else None
        else:
            state.body_excerpt = body[:_EXCERPT].decode("utf-8", errors="replace")
        if run.script is None:
            error = a2a.rpc_error(a2a.INTERNAL_ERROR, "no scenario is loaded")
            return await self._error_json(run, request, state, error, None)
        server = run.script.server
        decoded = a2a.decode_request_object(value, server.wire)
        if isinstance(decoded, a2a.RpcError):
            served_grammar = state.wire if server.wire == "both" else server.wire
            return await self._error_json(run, request, state, decoded, served_grammar)
        version: a2a.WireVersion = decoded.version if server.wire == "both" else server.wire
        refused = a2a.check_version(decoded, state.a2a_version, server.wire)
        if refused is not None:
            return await self._error_json(run, request, state, refused, version)
        if decoded.streaming and not server.streaming:
            error = a2a.rpc_error(
                a2a.UNSUPPORTED_OPERATION,
                "Streaming is not supported by the agent",
                id=decoded.id,
                method=decoded.method,
            )
            return await self._error_json(run, request, state, error, version)
        call = _Call(self, run, request, state, decoded, version, server)
        return await call.answer()

    # --- answers -------------------------------------------------------------------------------

    async def _send_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        payload: Any,
        *,
        status: int = 200,
    ) -> web.StreamResponse:
        """Write a whole JSON body; recorded ``completed`` once it is out."""
        state.status = status
        state.response = "json"
        response = web.Response(
            status=status,
            body=a2a.dumps(payload).encode("utf-8"),
            headers={"Content-Type": a2a.JSON_CONTENT_TYPE},
        )
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            state.ended = self._cut_reason(run)
            return response
        state.ended = "completed"
        state.t_end = run.now()
        return response

    async def _error_json(
        self,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        error: a2a.RpcError,
        version: a2a.WireVersion | None,
    ) -> web.StreamResponse:
        state.error_code = error.code
        return await self._send_json(run, request, state, a2a.encode_error(error, version))

    # --- the task clock ------------------------------------------------------------------------

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
        for sub in live.subscribers:
            sub.push(event)
        if a2a.ends_turn(event):
            live.subscribers = []  # each stream ends after writing this event
            live.turn_over.set()

    def _create_task(
        self, run: _Run, state: _RequestState, message: a2a.Message, sub: _Subscriber | None
    ) -> _LiveTask:
        assert run.script is not None and run.script.task is not None
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
        initial = run.script.initial_message
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
        steps = run.script.task
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


class _Call:
    """One decoded JSON-RPC call being answered."""

    def __init__(
        self,
        fake: FakeA2AServer,
        run: _Run,
        request: web.Request,
        state: _RequestState,
        rpc: a2a.RpcRequest,
        version: a2a.WireVersion,
        server: ServerBehaviour,
    ) -> None:
        self.fake = fake
        self.run = run
        self.request = request
        self.state = state
        self.rpc = rpc
        self.version = version
        self.server = server
        self.event_id = 0
        self.next_ping: float | None = None

    async def answer(self) -> web.StreamResponse:
        params = self.rpc.params
        if isinstance(params, a2a.SendParams):
            return await self._message(params)
        if isinstance(params, a2a.TaskQueryParams):
            return await self._get(params)
        if self.rpc.op == "cancel":
            return await self._cancel(params)
        return await self._resubscribe(params)

    # --- errors and plain results --------------------------------------------------------------

    def _error(self, code: int, message: str | None = None) -> a2a.RpcError:
        return a2a.rpc_error(code, message, id=self.rpc.id, method=self.rpc.method)

    async def _json_error(self, error: a2a.RpcError) -> web.StreamResponse:
        return await self.fake._error_json(self.run, self.request, self.state, error, self.version)

    async def _fail(self, error: a2a.RpcError) -> web.StreamResponse:
        """An error found while handling the call: for a streaming call, as a one-frame SSE
        stream or as JSON (``server.stream_errors``); otherwise JSON."""
        if not self.rpc.streaming or self.server.stream_errors == "json":
            return await self._json_error(error)
        self.state.error_code = error.code
        response = self._sse_response()
        try:
            await response.prepare(self.request)
            await self._write(response, error)
            await response.write_eof()
        except ConnectionError:
            self.state.ended = self.fake._cut_reason(self.run)
            return response
        self.state.ended = "completed"
        return response

    async def _result(self, result: Any) -> web.StreamResponse:
        payload = a2a.encode_result(self.rpc.id, result, self.version)
        return await self.fake._send_json(self.run, self.request, self.state, payload)

    def _terminal_text(self, live: _LiveTask, code: int) -> str:
        state = live.task.status.state
        spelled = a2a.state_name(state, "0.3" if code == a2a.INVALID_PARAMS else "1.0")
        return f"Task {live.id} is in terminal state: {spelled}"

    # --- message/send, message/stream ----------------------------------------------------------

    async def _message(self, params: a2a.SendParams) -> web.StreamResponse:
        run, fake, message = self.run, self.fake, params.message
        script = run.script
        assert script is not None
        text = a2a.text_of(message.parts)
        streaming = self.rpc.op == "stream"

        def note(
            outcome: Literal["created", "continued", "reply", "rejected"], code: int | None = None
        ) -> None:
            run.messages.append(
                MessageRecord(
                    t=self.state.t,
                    request=self.state.index,
                    message_id=message.message_id,
                    task_id=message.task_id,
                    context_id=message.context_id,
                    text=text,
                    outcome=outcome,
                    error_code=code,
                )
            )

        if message.task_id is not None:
            self.state.task_id = message.task_id
            live = run.tasks.get(message.task_id)
            error: a2a.RpcError | None = None
            if live is None:
                error = self._error(a2a.TASK_NOT_FOUND, f"Task {message.task_id} not found")
            elif message.context_id is not None and message.context_id != live.context_id:
                error = self._error(
                    a2a.INVALID_PARAMS,
                    f"Context {message.context_id} does not match context "
                    f"{live.context_id} of task {live.id}",
                )
            elif live.phase == "terminal":
                code = self.server.terminal_message_error
                error = self._error(code, self._terminal_text(live, code))
            elif live.phase == "running":
                error = self._error(
                    a2a.UNSUPPORTED_OPERATION,
                    f"Task {live.id} is {live.task.status.state.value}, not waiting for input; "
                    "this agent does not queue messages",
                )
            elif live.follow_up is None:
                error = self._error(
                    a2a.UNSUPPORTED_OPERATION,
                    f"Task {live.id} is waiting for input, but the scenario scripts no "
                    "follow-up for it",
                )
            if error is not None or live is None:
                assert error is not None
                note("rejected", error.code)
                return await self._fail(error)
            note("continued")
            sub = _Subscriber() if streaming else None
            fake._continue_task(run, live, message, sub)
            if sub is not None:
                return await self._stream(sub, (), live)
            return await self._settle(live, params)

        if script.reply is not None:
            note("reply")
            reply = a2a.Message(
                message_id=a2a.new_id(),
                role="agent",
                parts=(a2a.TextPart(text=script.reply.text),),
                context_id=message.context_id or a2a.new_id(),
            )
            delay = run.scale(script.reply.at)
            if streaming:
                sub = _Subscriber()
                asyncio.get_running_loop().call_later(delay, sub.push, reply)
                return await self._stream(sub, (), None)
            outcome = await self._wait(delay, None)
            if outcome is not None:
                return self._abandon(outcome)
            return await self._result(a2a.encode_send_result(reply, self.version))

        sub = _Subscriber() if streaming else None
        live = fake._create_task(run, self.state, message, sub)
        self.state.task_id = live.id
        note("created")
        if sub is not None:
            return await self._stream(sub, (live.task,), live, params.history_length)
        return await self._settle(live, params)

    async def _settle(self, live: _LiveTask, params: a2a.SendParams) -> web.StreamResponse:
        """``message/send``: wait for the end of the turn unless the client asked not to."""
        if params.blocking is not False:
            outcome = await self._wait(None, live.turn_over)
            if outcome is not None:
                return self._abandon(outcome)
        result = a2a.encode_send_result(
            live.task, self.version, history_length=params.history_length
        )
        return await self._result(result)

    # --- tasks/get, tasks/cancel, tasks/resubscribe --------------------------------------------

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

    # --- streams -------------------------------------------------------------------------------

    def _sse_response(self) -> web.StreamResponse:
        self.state.status = 200
        self.state.response = "sse"
        return web.StreamResponse(status=200, headers=_SSE_HEADERS)

    async def _stream(
        self,
        sub: _Subscriber,
        first: Sequence[a2a.Task],
        live: _LiveTask | None,
        history_length: int | None = None,
    ) -> web.StreamResponse:
        """Write ``first``, then what the subscriber receives, until an event that ends the
        turn; watch the client meanwhile."""
        response = self._sse_response()
        try:
            await response.prepare(self.request)
            for snapshot in first:
                await self._write(response, snapshot, history_length)
            while True:
                item = await self._next(sub)
                if item is _GONE:
                    self.state.ended = "client_closed"
                    return response
                if isinstance(item, _Cut):
                    self.state.ended = "server_closed"
                    return self._abandon(item)
                assert not isinstance(item, _Gone)
                await self._write(response, item)
                if not isinstance(item, _Comment) and a2a.ends_turn(item):
                    break
            await response.write_eof()
        except ConnectionError:
            self.state.ended = self.fake._cut_reason(self.run)
            return response
        finally:
            if live is not None and sub in live.subscribers:
                live.subscribers.remove(sub)
        self.state.ended = "completed"
        return response

    async def _next(self, sub: _Subscriber) -> _Item | _Gone | _Cut:
        """The next thing to write: an item, a due ping, or why the stream must end."""
        while True:
            if sub.items:
                return sub.items.popleft()
            if self.fake._stopping or self.run.closed:
                return _CUT
            transport = self.request.transport
            if transport is None or transport.is_closing():
                return _GONE
            timeout = _POLL
            ping_every = self.server.ping_every
            if ping_every is not None:
                # on a fixed cadence from the stream's start, data or not (sse-starlette)
                if self.next_ping is None:
                    self.next_ping = time.monotonic() + self.run.scale(ping_every)
                until = self.next_ping - time.monotonic()
                if until <= 0:
                    self.next_ping += self.run.scale(ping_every)
                    return _Comment(_ping_text(), "ping")
                timeout = min(timeout, until)
            sub.wakeup.clear()
            try:
                await asyncio.wait_for(sub.wakeup.wait(), timeout)
            except TimeoutError:
                pass

    async def _wait(
        self, seconds: float | None, until: asyncio.Event | None
    ) -> _Gone | _Cut | None:
        """Wait ``seconds`` (or until ``until`` is set) watching the client; ``None`` when the
        wait ran its course."""
        deadline = time.monotonic() + seconds if seconds is not None else None
        while True:
            if until is not None and until.is_set():
                return None
            if self.fake._stopping or self.run.closed:
                return _CUT
            transport = self.request.transport
            if transport is None or transport.is_closing():
                return _GONE
            timeout = _POLL
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                timeout = min(timeout, remaining)
            if until is not None:
                try:
                    await asyncio.wait_for(until.wait(), timeout)
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(timeout)

    def _abandon(self, why: _Gone | _Cut) -> web.StreamResponse:
        """End an answer cut short. When the fake cut it, the connection is aborted so the
        client sees a broken stream rather than a clean (and misleading) end of body."""
        if isinstance(why, _Gone):
            self.state.ended = "client_closed"
            return web.Response(status=499)
        self.state.ended = "server_closed"
        transport = self.request.transport
        if transport is not None:
            transport.abort()
        return web.Response(status=499)

    async def _write(
        self,
        response: web.StreamResponse,
        item: _Item | a2a.RpcError,
        history_length: int | None = None,
    ) -> None:
        """Write one SSE block (one ``write`` call) and record it."""
        line_end = self.server.line_end_chars
        now = self.run.now()
        if isinstance(item, _Comment):
            await response.write(sse.encode_comment(item.text, line_end) + line_end.encode("ascii"))
            self.state.frames.append(SentFrame(t=now, kind=item.kind, text=item.text))
            return
        event_id: str | None = None
        if self.server.event_ids:
            event_id = str(self.event_id)
            self.event_id += 1
        if isinstance(item, a2a.RpcError):
            payload = a2a.encode_error(item, self.version)
            event = "error" if self.server.error_event else None
            await response.write(
                sse.encode(a2a.dumps(payload), event=event, id=event_id, line_end=line_end)
            )
            self.state.frames.append(
                SentFrame(t=now, kind="error", error_code=item.code, event_id=event_id)
            )
            return
        result = a2a.encode_stream_event(item, self.version, history_length=history_length)
        payload = a2a.encode_result(self.rpc.id, result, self.version)
        await response.write(sse.encode(a2a.dumps(payload), id=event_id, line_end=line_end))
        self.state.frames.append(_frame_record(now, item, event_id, self.version))


def _frame_record(
    t: float, event: _Event, event_id: str | None, version: a2a.WireVersion
) -> SentFrame:
    kind: FrameKind = event.kind
    if isinstance(event, a2a.Task):
        return SentFrame(t=t, kind=kind, state=event.status.state.value, event_id=event_id)
    if isinstance(event, a2a.Message):
        return SentFrame(t=t, kind=kind, text=a2a.text_of(event.parts), event_id=event_id)
    if isinstance(event, a2a.StatusUpdate):
        message = event.status.message
        return SentFrame(
            t=t,
            kind=kind,
            state=event.status.state.value,
            final=event.final if version == "0.3" else None,  # 1.0 has no "final"
            text=a2a.text_of(message.parts) if message is not None else None,
            event_id=event_id,
        )
    return SentFrame(
        t=t,
        kind=kind,
        artifact_id=event.artifact.artifact_id,
        append=event.append,
        last_chunk=event.last_chunk,
        text=a2a.text_of(event.artifact.parts),
        event_id=event_id,
    )


def _agent_message(text: str, live: _LiveTask) -> a2a.Message:
    return a2a.Message(
        message_id=a2a.new_id(),
        role="agent",
        parts=(a2a.TextPart(text=text),),
        task_id=live.id,
        context_id=live.context_id,
    )


def _ping_text() -> str:
    """sse-starlette's ping comment: ``: ping - 2026-11-29 19:39:03.359482+00:00``."""
    return f" ping - {datetime.now(UTC)}"
