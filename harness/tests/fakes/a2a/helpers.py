"""What the fake A2A server's tests share: the scripts, a real a2a-sdk client, and readers of
the events it yields (:mod:`harness.tests.fakes.a2a.test_real_client`, ``test_wire``,
``test_script``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import yaml
from a2a.client import Client, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, StreamResponse

from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.a2a.script import A2AScript
from streamproof.protocol import a2a

# the worked example: a report streamed over 78 s, a heartbeat in the middle
REPORT = """
task:
  - {at: 0s,  status: submitted}
  - {at: 2s,  status: working, message: gathering sources}
  - {at: 12s, artifact: {id: summary, name: Summary, text: "Section 1 ..."}}
  - {at: 25s, artifact: {id: summary, append: true, text: "Section 2 ..."}}
  - {at: 30s, heartbeat: true}
  - {at: 70s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
  - {at: 78s, status: completed}
"""

# progress, then 40 s of silence before the last chunk (drops, gets and cancels land there)
QUIET = """
task:
  - {at: 0s,  status: working, message: gathering sources}
  - {at: 1s,  artifact: {id: summary, text: "Section 1 ..."}}
  - {at: 5s,  artifact: {id: summary, append: true, text: "Section 2 ..."}}
  - {at: 45s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
  - {at: 46s, status: completed}
"""


def load_script(text: str, **server: Any) -> A2AScript:
    doc = yaml.safe_load(text)
    doc.setdefault("server", {}).update(server)
    return A2AScript.model_validate(doc)


@asynccontextmanager
async def sdk_client(url: str, **config: Any) -> AsyncIterator[Client]:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await create_client(url, client_config=ClientConfig(httpx_client=http, **config))
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str = "hi", **ids: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER, **ids))


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for a condition"
        await asyncio.sleep(0.01)


def kinds(events: list[StreamResponse]) -> list[str]:
    return [str(e.WhichOneof("payload")) for e in events]


def reassemble(events: list[StreamResponse], into: dict[str, str] | None = None) -> dict[str, str]:
    """The seed recipe's rule: append extends the buffer with the same id, else replaces it."""
    buffers = dict(into or {})
    for event in events:
        if event.HasField("artifact_update"):
            update = event.artifact_update
            text = "".join(p.text for p in update.artifact.parts)
            key = update.artifact.artifact_id
            buffers[key] = buffers.get(key, "") + text if update.append else text
    return buffers


def last_state(events: list[StreamResponse]) -> int:
    for event in reversed(events):
        if event.HasField("status_update"):
            return event.status_update.status.state
        if event.HasField("task"):
            return event.task.status.state
    raise AssertionError("no state in the events")


async def collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [event async for event in stream]


def server_text(fake: FakeA2AServer, task_id: str) -> str:
    """The text of the task's first artifact as the server has aggregated it so far."""
    task = fake.task(task_id)
    return a2a.text_of(task.artifacts[0].parts) if task is not None and task.artifacts else ""
