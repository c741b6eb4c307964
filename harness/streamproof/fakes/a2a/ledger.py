"""The fake A2A server's ledger: what the client asked, and what the server did, as records.

Client checks judge a client by what reached the server (docs/explanation/a2a-client-rules.md): did
it
create exactly one task, resubscribe by task id after a drop instead of resending, send
``Accept: text/event-stream`` on streams, reuse ``taskId``/``contextId`` on a follow-up, cancel
on deadline. The server itself keeps the task's own progression (``task_events``) so a check
can tell what the client *could* have seen from what each connection *did* carry (``frames``).

Times (``t``) are seconds since the fake's epoch (``load`` or ``set_epoch``), in real (scaled)
time. Everything is frozen; the server hands out a fresh :class:`A2ALedger` on every read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from streamproof.core.capabilities import Binding
from streamproof.fakes.a2a.push.records import DeliveryRecord, WebhookRecord

__all__ = [
    "A2ALedger",
    "Ending",
    "MessageRecord",
    "RequestRecord",
    "SentFrame",
    "TaskCall",
    "TaskEventRecord",
    "TaskRecord",
]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


Ending = Literal["open", "completed", "client_closed", "server_closed"]
"""How a response ended. ``completed``: the server wrote everything it meant to (a JSON body,
or a stream up to its natural end: a terminal or interrupted state, a Message, an error
frame). ``client_closed``: the client went away first (a dropped stream). ``server_closed``:
the fake cut it (``close()`` or a new ``load()``). ``open``: still in progress."""

FrameKind = Literal[
    "task", "message", "status-update", "artifact-update", "error", "heartbeat", "ping"
]


class SentFrame(_Record):
    """One SSE block written on a stream (comments included)."""

    t: float
    kind: FrameKind
    state: str | None = None
    """Task state (0.3 spelling) of a task snapshot or status update."""
    artifact_id: str | None = None
    append: bool | None = None
    last_chunk: bool | None = None
    final: bool | None = None
    text: str | None = None
    """The text parts of an artifact chunk, a status message or a Message."""
    error_code: int | None = None
    event_id: str | None = None
    """The ``id:`` line, when the server writes them."""


class RequestRecord(_Record):
    """One HTTP request (the agent card fetch included)."""

    index: int
    t: float
    t_end: float | None
    connection: int
    """Which TCP connection carried it (1, 2, ... in order of first use)."""
    http_method: str
    path: str
    rpc_method: str | None
    """The JSON-RPC ``method`` as sent (even an unknown one), if the body had one; on the REST
    binding, the 1.0 method its route stands for (``POST /message:stream``:
    ``SendStreamingMessage``), so one method vocabulary serves both bindings."""
    rpc_id: Any = None
    wire: Literal["0.3", "1.0"] | None = None
    """The grammar of ``rpc_method`` (None: not an A2A method)."""
    binding: Binding | None = None
    """Which binding carried it: ``jsonrpc`` (a POST to the JSON-RPC endpoint) or ``rest`` (a
    REST route); None for the card and for a path no binding serves."""
    params: Any = None
    """The ``params`` exactly as sent (on REST: the body, or the query as an object)."""
    body_excerpt: str | None = None
    """The start of a body that was not a JSON-RPC object (for error reports)."""
    accept: str | None = None
    a2a_version: str | None = None
    content_type: str | None = None
    status: int = 0
    response: Literal["json", "sse"] = "json"
    error_code: int | None = None
    task_id: str | None = None
    """The task this request concerned (created, continued, read, resubscribed, cancelled)."""
    frames: tuple[SentFrame, ...] = ()
    ended: Ending = "open"


class TaskRecord(_Record):
    """A task the server created."""

    task_id: str
    context_id: str
    t: float
    request: int
    """Index of the request that created it."""
    message_id: str
    text: str
    """The text of the message that created it."""


class MessageRecord(_Record):
    """A message a client sent (``message/send``, ``message/stream`` and the 1.0 names)."""

    t: float
    request: int
    message_id: str
    task_id: str | None
    """As the client sent it."""
    context_id: str | None
    text: str
    outcome: Literal["created", "continued", "reply", "rejected"]
    """Created a task, continued an interrupted one, was answered directly, or was refused."""
    error_code: int | None = None


class TaskCall(_Record):
    """A ``tasks/get``, ``tasks/resubscribe`` or ``tasks/cancel`` (or 1.0 name) call."""

    t: float
    request: int
    task_id: str
    state: str | None
    """The task's state when the call arrived (None: no such task)."""
    error_code: int | None = None
    """None when the call succeeded (for a cancel: it was honoured)."""


class TaskEventRecord(_Record):
    """One step of a task's own progression, whether or not anyone was listening."""

    task_id: str
    t: float
    kind: Literal["created", "status-update", "artifact-update", "heartbeat", "follow-up"]
    turn: int
    """0 for the first turn, 1 after the first follow-up, ..."""
    state: str | None = None
    artifact_id: str | None = None
    append: bool | None = None
    last_chunk: bool | None = None
    text: str | None = None


class A2ALedger(_Record):
    requests: tuple[RequestRecord, ...] = ()
    tasks: tuple[TaskRecord, ...] = ()
    messages: tuple[MessageRecord, ...] = ()
    gets: tuple[TaskCall, ...] = ()
    resubscribes: tuple[TaskCall, ...] = ()
    cancels: tuple[TaskCall, ...] = ()
    task_events: tuple[TaskEventRecord, ...] = ()
    webhooks: tuple[WebhookRecord, ...] = ()
    """The webhooks clients registered (push notifications)."""
    deliveries: tuple[DeliveryRecord, ...] = ()
    """Every push delivery, in the order they were sent (lost ones where they would have been)."""

    @property
    def rpc_methods(self) -> list[str]:
        """The JSON-RPC methods in arrival order (card fetches and non-RPC requests left out)."""
        return [r.rpc_method for r in self.requests if r.rpc_method is not None]

    def requests_for(self, method: str) -> list[RequestRecord]:
        return [r for r in self.requests if r.rpc_method == method]
