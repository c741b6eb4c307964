"""A small real A2A agent on a2a-sdk 1.3's own server, on the 0.3 JSON-RPC wire.

``streamproof proxy`` exists so a team can put a fault between *their* client and *their*
server; its end-to-end test needs a server that streams the way real ones do rather than
streamproof's scripted fake, so this one is nothing but a2a-sdk: an ``AgentExecutor``, the
SDK's ``DefaultRequestHandler`` and in-memory task store, and the SDK's Starlette routes (the
agent card, and JSON-RPC with the 0.3 compatibility layer on) served by uvicorn.

The agent plays the seed's worked example ("a summary that survives a proxy timeout") on the
seed's clock, multiplied by ``--time-scale``: the task snapshot (SUBMITTED), WORKING with
progress messages, the ``summary`` artifact in three chunks (the second and third appended,
the third the last), and COMPLETED at 78 s::

    0 s submitted, 2 s working, 12 s section 1, 25 s section 2 (append),
    39 s working "waiting on a slow search", 49 s and 59 s "still searching",
    70 s section 3 (append, last), 78 s completed

While it waits on the search it says so every 10 s, so no gap between events is longer than
14 s: a client with the seed's 20 s idle watchdog needs no recovery on a direct connection,
and when it recovers through a proxy, the proxy is why.

Its card lists only a 0.3 JSON-RPC interface, so an a2a-sdk 1.3 client picks its 0.3 compatibility
transport (the wire the reference client is tested on). The card's URL is where A2A clients
send their calls, so ``--card-url`` sets it to a proxy in front of the server; by default it
is the server's own URL.

Run it with ``python -m harness.tests.independent.a2a_sdk_server [--port 0] [--time-scale F]
[--card-url URL]``; it prints ``a2a-sdk server: listening on http://127.0.0.1:PORT`` once it
accepts connections, and stops on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import Sequence
from typing import Final

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role, TaskState
from starlette.applications import Starlette

ARTIFACT_ID: Final = "summary"
SECTIONS: Final = (
    "Section 1: demand grew 4%. ",
    "Section 2: prices held steady. ",
    "Section 3: the outlook is mixed.",
)
SUMMARY: Final = "".join(SECTIONS)
"""The whole artifact a client must end up with."""

TIMELINE: Final = (
    (2.0, "working", "gathering sources"),
    (12.0, "chunk", 0),
    (25.0, "chunk", 1),
    (39.0, "working", "waiting on a slow search"),
    (49.0, "working", "still searching"),
    (59.0, "working", "still searching"),
    (70.0, "chunk", 2),
    (78.0, "completed", None),
)
"""The seed's worked example after the SUBMITTED snapshot at 0 s: (seconds, what, argument)."""


class SummaryAgent(AgentExecutor):
    """Streams the three-section summary on the seed's clock, scaled by ``time_scale``."""

    def __init__(self, time_scale: float) -> None:
        self.time_scale = time_scale

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None:
            raise ValueError("message/stream without a message")
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        loop = asyncio.get_running_loop()
        started = loop.time()
        for at, what, arg in TIMELINE:
            await asyncio.sleep(max(0.0, started + at * self.time_scale - loop.time()))
            if what == "working":
                note = new_text_message(
                    str(arg), role=Role.ROLE_AGENT, task_id=task.id, context_id=task.context_id
                )
                await updater.update_status(TaskState.TASK_STATE_WORKING, message=note)
            elif what == "chunk":
                index = int(str(arg))
                await updater.add_artifact(
                    [new_text_part(SECTIONS[index])],
                    artifact_id=ARTIFACT_ID,
                    name="Market summary",
                    append=index > 0,
                    last_chunk=index == len(SECTIONS) - 1,
                )
            else:
                await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(url: str) -> AgentCard:
    """A card with a single 0.3 JSON-RPC interface at ``url``."""
    return AgentCard(
        name="summary-agent",
        description="Writes a three-section market summary, slowly (a2a-sdk test server)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="summary",
                name="Market summary",
                description="A three-section market summary",
                tags=["summary"],
            )
        ],
    )


def app(card_url: str, time_scale: float) -> Starlette:
    """The SDK's card and JSON-RPC (0.3 compatible) routes around :class:`SummaryAgent`."""
    card = agent_card(card_url)
    handler = DefaultRequestHandler(
        agent_executor=SummaryAgent(time_scale), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    return Starlette(routes=routes)


class _Server(uvicorn.Server):
    """uvicorn's server, saying where it listens once it accepts connections."""

    url = ""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            print(f"a2a-sdk server: listening on {self.url}", flush=True)


async def serve(port: int, time_scale: float, card_url: str | None) -> None:
    # Bind first, so the URL printed (and put in the card) is the port really held.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        app(card_url or url + "/", time_scale), log_level="warning", timeout_graceful_shutdown=1
    )
    server = _Server(config)
    server.url = url
    await server.serve(sockets=[sock])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.tests.independent.a2a_sdk_server", description=__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="F")
    parser.add_argument("--card-url", metavar="URL", help="the URL the agent card advertises")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.port, args.time_scale, args.card_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
