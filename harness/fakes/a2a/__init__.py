"""The fake A2A server: a scripted remote agent for A2A clients, and its ledger.

What lives where:

* :mod:`~harness.fakes.a2a.script`: the scenario's script (:class:`A2AScript`), a task
  timeline in scenario time and how the server behaves where real servers differ.
* :mod:`~harness.fakes.a2a.ledger`: what the client asked and what the server did, as frozen
  records (:class:`A2ALedger`), for the client checks.
* :mod:`~harness.fakes.a2a.server`: :class:`FakeA2AServer`, the aiohttp server that plays the
  script.

The script and the ledger are plain pydantic models; the server (and aiohttp with it) is
imported only when :class:`FakeA2AServer` or :data:`RPC_PATH` is first asked for, so the
checks and the scenario loader, which need only the models, stay cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    ArtifactChunk,
    ArtifactStep,
    HeartbeatStep,
    Reply,
    ServerBehaviour,
    StatusStep,
    Step,
)

if TYPE_CHECKING:
    from harness.fakes.a2a.server import RPC_PATH, FakeA2AServer

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
    value = getattr(importlib.import_module("harness.fakes.a2a.server"), name)
    globals()[name] = value
    return value
