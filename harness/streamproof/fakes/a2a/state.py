"""The fake A2A server's mutable state: one ``load()``'s run, its requests, its live tasks.

:class:`_Run` holds everything a :meth:`~streamproof.fakes.a2a.server.FakeA2AServer.load` starts
afresh: the script, the tasks it is running (:class:`_LiveTask`), the request being answered
(:class:`_RequestState`) and the records the ledger is built from. An open stream reads its
task's events from a :class:`_Subscriber` inbox, SSE comments (:class:`_Comment`) included.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from aiohttp import web

from streamproof.core.durations import TimeScale
from streamproof.fakes.a2a.ledger import (
    Ending,
    MessageRecord,
    RequestRecord,
    SentFrame,
    TaskCall,
    TaskEventRecord,
    TaskRecord,
)
from streamproof.fakes.a2a.script import A2AScript, Step
from streamproof.protocol import a2a


@dataclass(frozen=True, slots=True)
class _Comment:
    text: str
    kind: Literal["heartbeat", "ping"]


_Item = a2a.Task | a2a.Message | a2a.StatusUpdate | a2a.ArtifactUpdate | _Comment
_Event = a2a.Task | a2a.Message | a2a.StatusUpdate | a2a.ArtifactUpdate


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
    binding: Literal["jsonrpc", "rest"] | None = None
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
            binding=self.binding,
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

    def __init__(
        self,
        script: A2AScript | None,
        scale: TimeScale,
        public_url: str | None,
        keyed: Mapping[str, A2AScript] | None = None,
        binding: Literal["jsonrpc", "rest"] = "jsonrpc",
    ) -> None:
        self.script = script
        self.binding: Literal["jsonrpc", "rest"] = binding
        """The binding the card advertises (both are served when the wire has 1.0)."""
        self.keyed: Mapping[str, A2AScript] = dict(keyed or {})
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

    def prefix_of(self, path: str) -> str | None:
        """Keyed (``--concurrency``): the ``/<marker>`` a request's path starts with, when it
        starts with one (each call is given the agent's URL under its own marker, so every
        request it sends names its call); None otherwise."""
        for marker in self.keyed:
            prefix = "/" + marker
            if path == prefix or path.startswith(prefix + "/"):
                return prefix
        return None

    def script_for(self, text: str) -> A2AScript | None:
        """The script a new task (or a direct reply) of a message with ``text`` runs: the
        loaded one, or, when keyed (``--concurrency``), the script of the one marker the text
        holds; None when keyed and it holds no marker or several."""
        if not self.keyed:
            return self.script
        held = [marker for marker in self.keyed if marker in text]
        return self.keyed[held[0]] if len(held) == 1 else None

    def connection_of(self, request: web.Request) -> int:
        transport = request.transport
        if transport is None:
            return 0
        found = self.connections.get(transport)
        if found is None:
            self.connection_count += 1
            found = self.connections[transport] = self.connection_count
        return found


def _ping_text() -> str:
    """sse-starlette's ping comment: ``: ping - 2026-11-29 19:39:03.359482+00:00``."""
    return f" ping - {datetime.now(UTC)}"
