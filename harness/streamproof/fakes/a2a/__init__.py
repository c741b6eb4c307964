"""A fake A2A server that plays a scripted task timeline to real A2A clients, and keeps a ledger.

Why it exists: the A2A client path of streamproof (docs/explanation/a2a-client-rules.md) judges a
client by how it copes
with a remote agent that streams for minutes, goes quiet, loses its connection, asks for
input, refuses to cancel. A real agent cannot be told to do those things on cue; this fake
can, and it speaks the wire of the real servers byte for byte (every object and envelope is
built by :mod:`streamproof.protocol.a2a`; this package is only the aiohttp shell: routing, the task
clock, open streams, and the records).

The task runs on its own clock
------------------------------
A task is created when a message arrives and its timeline (``A2AScript.task``) runs from that
moment, in scenario time times the time scale, **whether or not any connection is open**. A
client whose stream drops therefore finds real progress in ``tasks/get``, and a
``tasks/resubscribe`` carries the events that happen from then on; nothing is replayed, as on
every real server (``docs/explanation/wire-facts/a2a.md`` §1.8, §3.4). Every open stream of a task
receives its
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
* ``ListTasks`` (1.0 only; 0.3 has no ``tasks/list`` on JSON-RPC): the run's tasks, most
  recently updated first, filtered and paged as a2a-sdk 1.3 does.
* A message without parts gets -32602 (``a2a.proto`` marks them REQUIRED). A 1.0 call without
  an ``A2A-Version: 1.x`` header gets -32009 before any field of its params is read, as on
  a2a-sdk 1.3; the extended card and push notifications are not offered (-32004, -32003).
* Errors of streaming calls that arise while handling them come as a one-frame SSE stream
  (a2a-sdk's 0.3 path) or as ``application/json`` (a2a-js, a2a-sdk's 1.0 path), per the
  script, by default as a2a-sdk 1.3 does on the call's wire (§1.7);
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

What lives where
----------------
* :mod:`~streamproof.fakes.a2a.script`: the scenario's script (:class:`A2AScript`), a task
  timeline in scenario time and how the server behaves where real servers differ.
* :mod:`~streamproof.fakes.a2a.ledger`: what the client asked and what the server did, as frozen
  records (:class:`A2ALedger`), for the client checks.
* :mod:`~streamproof.fakes.a2a.server`: :class:`FakeA2AServer` and :data:`RPC_PATH`: the aiohttp
  app, its lifecycle (``start``, ``load``, ``close``), routing, the agent card, the decoding
  and request-level errors of JSON-RPC calls, and the ledger snapshot.
* :mod:`~streamproof.fakes.a2a.rest`: the A2A 1.0 HTTP+JSON (REST) routes, served beside
  JSON-RPC on a 1.0 or both wire: a route decoded into the same call, answered by the same
  method families, written the REST way (bare results, errors as HTTP statuses); each request
  record says which binding carried it (docs/reference/a2a-client-contract.md#bindings).
* :mod:`~streamproof.fakes.a2a.dispatch`: one decoded call handed to its method family.
* :mod:`~streamproof.fakes.a2a.messages`: ``message/send`` and ``message/stream``.
* :mod:`~streamproof.fakes.a2a.tasks`: ``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe``.
* :mod:`~streamproof.fakes.a2a.call`: what both method families build on: one call's errors,
  results, SSE streams and client-watching waits, and the frames it records.
* :mod:`~streamproof.fakes.a2a.clock`: the task clock: creating, continuing and cancelling tasks,
  and driving each turn's steps to the task's open streams.
* :mod:`~streamproof.fakes.a2a.state`: the mutable state of one ``load()``: its requests, its live
  tasks and their streams' inboxes, and the records the ledger is made from.

The script and the ledger are plain pydantic models; the server (and aiohttp with it) is
imported only when :class:`FakeA2AServer` or :data:`RPC_PATH` is first asked for, so the
checks and the scenario loader, which need only the models, stay cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from streamproof.fakes.a2a.ledger import (
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
from streamproof.fakes.a2a.script import (
    A2AScript,
    ArtifactChunk,
    ArtifactStep,
    HeartbeatStep,
    Reply,
    ServerBehaviour,
    StatusStep,
    Step,
)

if TYPE_CHECKING:
    from streamproof.fakes.a2a.server import RPC_PATH, FakeA2AServer

__all__ = [
    "RPC_PATH",
    "A2ALedger",
    "A2AScript",
    "ArtifactChunk",
    "ArtifactStep",
    "Ending",
    "FakeA2AServer",
    "FrameKind",
    "HeartbeatStep",
    "MessageRecord",
    "Reply",
    "RequestRecord",
    "SentFrame",
    "ServerBehaviour",
    "StatusStep",
    "Step",
    "TaskCall",
    "TaskEventRecord",
    "TaskRecord",
]

_SERVER_NAMES = ("RPC_PATH", "FakeA2AServer")


def __getattr__(name: str) -> Any:
    if name not in _SERVER_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("streamproof.fakes.a2a.server"), name)
    globals()[name] = value
    return value
