"""A real a2a-sdk 1.3 server that plays one of the fake A2A server's scripts.

The differential test (``harness/tests/fakes/a2a/test_differential.py``) sends the same
requests to :class:`~streamproof.fakes.a2a.FakeA2AServer` and to this server and compares what
comes back. For the comparison to mean anything both must play the same timeline, so this
module turns an :class:`~streamproof.fakes.a2a.script.A2AScript` into an a2a-sdk
``AgentExecutor``: the Task snapshot first (SUBMITTED, the user message in its history), then
each status and artifact step at its scenario time times ``time_scale``, an interrupted state's
``follow_up`` when the client answers it, or a direct Message for a ``reply`` script. Heartbeat
steps are skipped (an executor cannot write an SSE comment). Everything else is a2a-sdk's own:
``DefaultRequestHandler``, ``InMemoryTaskStore``, the Starlette card and JSON-RPC routes, uvicorn.

The card lists a 1.0 JSON-RPC interface, plus a 0.3 one with the 0.3 compatibility layer on
when ``wire`` is ``"both"`` (a2a-sdk 1.3 cannot serve 0.3 alone).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final, Literal

import uvicorn
from a2a.helpers import new_data_part, new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role
from a2a.types import TaskState as SdkState
from starlette.applications import Starlette

from streamproof.fakes.a2a.script import A2AScript, ArtifactStep, StatusStep, Step
from streamproof.protocol.a2a import TaskState

__all__ = ["ScriptedAgent", "scripted_app", "serve_scripted"]

_STATES: Final = {
    TaskState.SUBMITTED: SdkState.TASK_STATE_SUBMITTED,
    TaskState.WORKING: SdkState.TASK_STATE_WORKING,
    TaskState.INPUT_REQUIRED: SdkState.TASK_STATE_INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED: SdkState.TASK_STATE_AUTH_REQUIRED,
    TaskState.COMPLETED: SdkState.TASK_STATE_COMPLETED,
    TaskState.FAILED: SdkState.TASK_STATE_FAILED,
    TaskState.CANCELED: SdkState.TASK_STATE_CANCELED,
    TaskState.REJECTED: SdkState.TASK_STATE_REJECTED,
    TaskState.UNKNOWN: SdkState.TASK_STATE_UNSPECIFIED,
}


class ScriptedAgent(AgentExecutor):
    """Plays ``script`` for every task, on the script's clock times ``time_scale``."""

    def __init__(self, script: A2AScript, time_scale: float) -> None:
        self.script = script
        self.time_scale = time_scale
        self._next_turn: dict[str, tuple[Step, ...]] = {}
        """The follow-up each task waiting for input runs when the client answers."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("an execute() without a message")
        reply = self.script.reply
        if reply is not None:
            await asyncio.sleep(reply.at * self.time_scale)
            answer = new_text_message(
                reply.text, role=Role.ROLE_AGENT, context_id=message.context_id or None
            )
            await event_queue.enqueue_event(answer)
            return
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
            steps = self.script.task or ()
        else:
            steps = self._next_turn.pop(task.id, ())
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await self._play(steps, updater, task.id)

    async def _play(self, steps: tuple[Step, ...], updater: TaskUpdater, task_id: str) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        for step in steps:
            await asyncio.sleep(max(0.0, started + step.at * self.time_scale - loop.time()))
            if isinstance(step, StatusStep):
                if step.status is TaskState.SUBMITTED:
                    continue  # the snapshot already says so
                note = None
                if step.message is not None:
                    note = updater.new_agent_message([new_text_part(step.message)])
                if step.follow_up is not None:
                    self._next_turn[task_id] = step.follow_up
                await updater.update_status(_STATES[step.status], message=note)
            elif isinstance(step, ArtifactStep):
                chunk = step.artifact
                part = (
                    new_text_part(chunk.text)
                    if chunk.text is not None
                    else new_data_part(chunk.data or {})
                )
                await updater.add_artifact(
                    [part],
                    artifact_id=chunk.id,
                    name=chunk.name,
                    append=chunk.append,
                    last_chunk=chunk.last,
                )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def _card(
    url: str, wire: Literal["1.0", "both"], name: str, streaming: bool, rest: bool = False
) -> AgentCard:
    interfaces = [AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")]
    if rest:
        base = url.removesuffix("/")
        interfaces.insert(
            0, AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0")
        )
    if wire == "both":
        interfaces.append(
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3")
        )
    return AgentCard(
        name=name,
        description="a2a-sdk playing a streamproof script",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="script", name="script", description="plays a script", tags=["t"])],
    )


def scripted_app(
    script: A2AScript,
    url: str,
    *,
    wire: Literal["1.0", "both"],
    time_scale: float,
    rest: bool = False,
) -> Starlette:
    """a2a-sdk's card and JSON-RPC routes (at ``/``) around a :class:`ScriptedAgent`; with
    ``rest``, its HTTP+JSON routes too (``/message:send``...; the card lists that interface
    first)."""
    server = script.server
    card = _card(url, wire, server.name, server.streaming, rest)
    handler = DefaultRequestHandler(
        agent_executor=ScriptedAgent(script, time_scale),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=wire == "both"),
    ]
    if rest:
        routes += create_rest_routes(handler, enable_v0_3_compat=wire == "both")
    return Starlette(routes=routes)


@asynccontextmanager
async def serve_scripted(
    script: A2AScript,
    *,
    wire: Literal["1.0", "both"],
    time_scale: float = 1.0,
    rest: bool = False,
) -> AsyncIterator[str]:
    """Serve :func:`scripted_app` on a free loopback port for the ``with`` body; yields the
    base URL (the JSON-RPC endpoint is ``base + "/"``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        scripted_app(script, base + "/", wire=wire, time_scale=time_scale, rest=rest),
        log_level="error",
        timeout_graceful_shutdown=1,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    runner = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if runner.done():
                runner.result()
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        yield base
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(runner, 5)
        finally:
            sock.close()
