"""The reference gateway's ADK side: the ``support`` agent, its ``lookupOrder`` tool, its
sub-agents, the runner.

The seed's worked example (``docs/explanation/gateway-rules.md``, "Worked example: one tool call,
streamed")
is a support agent with one tool, ``lookupOrder``, asked "Where is order 1042?". The gateway
contract (docs/reference/gateway-contract.md) fixes the rest: the agent is named
``support``, the tool POSTs its arguments as JSON to ``$STREAMPROOF_TOOL_URL/lookupOrder`` and
returns the JSON answer, and the model is Gemini reached through ``GOOGLE_GEMINI_BASE_URL``
(google-genai reads that variable itself, so ``Gemini(model=...)`` needs no base URL here).

Everything is real google-adk 2.13: ``LlmAgent``, ``Runner`` and ADK's own SQLite session store,
so what the gateway streams and what ``/history`` returns is ADK's behaviour, not a model of it.
The only non-ADK behaviour is the ``persist-partials`` mutant's session service below.

Multi-agent (the seed: "A multi-agent run can produce several final responses, from different
authors, before the Flowable completes"). ``support`` stays the root and the agent a
single-agent turn talks to; it has two sub-agents on the same model, one per way ADK 2.13 hands
work to another agent (measured against the fake model, see :func:`build_agent`):

* ``billing`` is reached by **agent transfer**: the model calls ``transfer_to_agent``, ADK
  answers the call itself (a function-response event by ``support`` whose
  ``actions.transfer_to_agent`` is ``billing``), ``support``'s flow ends and ``billing`` runs
  in the same invocation, its partials and aggregate authored ``billing``. A transfer is a
  hand-off, not a call: the run ends with the last agent's answer, so a transfer chain yields
  exactly one final response.
* ``courier`` is a ``single_turn`` sub-agent, which ADK exposes to ``support`` as a tool named
  ``courier``: it runs inline, its answer is a **final response authored** ``courier``, its
  text goes back to ``support`` as the function response, and ``support`` then answers with a
  final response of its own. That is the smallest ADK 2.13 structure found that gives several
  final responses from different authors in one run (a ``SequentialAgent`` transfer target also
  does, but ``SequentialAgent`` is deprecated in 2.13; a ``task``-mode sub-agent ends with a
  ``finish_task`` call, which is not a final response).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Final, override

import aiohttp
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models import Gemini
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from streamproof.runtime.imports import import_early

FIRST_TURN_IMPORTS: Final = (
    "google.adk.agents._agent_router",
    "google.adk.workflow._workflow",
    "google.adk.agents.remote_a2a_agent",
    "google.adk.flows.llm_flows.auto_flow",
    "httpcore",
)
"""What google-adk 2.13 imports lazily during a gateway's first turn: about 700 modules, 0.45
CPU-seconds in every gateway process, imported once in a warm start's zygote instead."""
import_early(FIRST_TURN_IMPORTS)

APP_NAME = "streamproof"
AGENT_NAME = "support"
MODEL_NAME = "gemini-2.5-flash"
TOOL_NAME = "lookupOrder"
TOOL_TIMEOUT_S = 10.0
"""Bound on one tool-service request; a hung tool must not hold a turn forever."""

BILLING_NAME = "billing"
COURIER_NAME = "courier"

INSTRUCTION = (
    "You are a customer-support agent for an online shop. When the user asks about an order, "
    "call lookupOrder with the order id and answer from its result. Be brief and factual."
)
BILLING_DESCRIPTION = "Handles refunds, invoices and payments."
BILLING_INSTRUCTION = (
    "You are the billing desk of an online shop. Answer questions about refunds, invoices and "
    "payments. Be brief and factual."
)
COURIER_DESCRIPTION = "Asks the courier about a parcel in transit and reports what it says."
COURIER_INSTRUCTION = (
    # ADK gives a single_turn agent no identity line (flows/llm_flows/prompt/_identity.py skips
    # it), so the agent names itself, in the words ADK uses for every other agent.
    f'Your internal name is "{COURIER_NAME}". You relay the courier\'s tracking desk: given a '
    "parcel question, answer with the delivery status in one sentence."
)


async def post_tool(tool_url: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """POST ``args`` as JSON to ``{tool_url}/{name}`` and return the JSON answer.

    A failure is returned to the model as ``{"error": ...}`` rather than raised: the agent can
    then tell the user, and a flaky tool service does not abort the whole run.
    """
    url = f"{tool_url.rstrip('/')}/{name}"
    timeout = aiohttp.ClientTimeout(total=TOOL_TIMEOUT_S)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.post(url, json=args) as resp,
        ):
            body = await resp.text()
            if resp.status >= 400:
                return {"error": f"tool service answered HTTP {resp.status}"}
    except (aiohttp.ClientError, TimeoutError) as exc:
        return {"error": f"tool service unreachable: {type(exc).__name__}"}
    try:
        answer = json.loads(body)
    except json.JSONDecodeError:
        return {"error": "tool service answered with invalid JSON"}
    # ADK wraps a non-dict tool result as {"result": ...}; do the same so the type is honest.
    return answer if isinstance(answer, dict) else {"result": answer}


def make_lookup_order(tool_url: str) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """Build the ``lookupOrder`` tool bound to the fake tool service at ``tool_url``.

    ADK derives the declared function name and parameter schema from the Python function, so
    the inner function must be called ``lookupOrder`` and take ``orderId: str``.
    """

    async def lookupOrder(orderId: str) -> dict[str, Any]:
        """Look up an order by its id and return its status and delivery estimate.

        Args:
          orderId: The order number, e.g. "1042".
        """
        return await post_tool(tool_url, TOOL_NAME, {"orderId": orderId})

    return lookupOrder


def build_agent(tool_url: str) -> LlmAgent:
    """The root ``support`` agent with its ``lookupOrder`` tool and two sub-agents.

    What ADK 2.13 does with them, as measured against the fake model (SSE mode):

    * ``transfer_to_agent(agent_name="billing")``: ``support``'s partials, then its aggregate
      (text and the call; not final), then ADK's own function response (author ``support``,
      ``actions.transfer_to_agent == "billing"``, not final), then ``billing``'s partials and
      its aggregate, the one final response of the run. The tool service is never called.
    * a call of the ``courier`` tool: ``support``'s aggregate (not final), then ``courier``'s
      partials and aggregate (final, author ``courier``), then the function response by
      ``support`` carrying ``courier``'s text (not final), then ``support``'s partials and
      aggregate (final): two final responses, from two authors, before the run ends.

    Sub-agents take no ``model``: ADK gives them the root's.
    """
    billing = LlmAgent(
        name=BILLING_NAME,
        description=BILLING_DESCRIPTION,
        instruction=BILLING_INSTRUCTION,
    )
    courier = LlmAgent(
        name=COURIER_NAME,
        mode="single_turn",
        description=COURIER_DESCRIPTION,
        instruction=COURIER_INSTRUCTION,
        # A delegate answers its caller; without these ADK would also offer it
        # transfer_to_agent (to support and billing).
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
    return LlmAgent(
        name=AGENT_NAME,
        model=Gemini(model=MODEL_NAME),
        instruction=INSTRUCTION,
        tools=[make_lookup_order(tool_url)],
        sub_agents=[billing, courier],
    )


class SerialWriteSessionService(SqliteSessionService):
    """ADK's SQLite session store with one writer at a time in this process.

    ADK opens a connection per operation, and ``append_event`` reads the session before it
    writes in one transaction. With several sessions appending at once SQLite refuses some of
    them ("database is locked": a shared lock that asks to write is not retried by the busy
    timeout, and a writer that waits past it on a loaded machine gives up too), and the turn
    fails with HTTP 500. Seen with ``streamproof run scenarios/gateway --concurrency 8``: in 4
    of the 20 scenarios run, 2 to 8 of the 8 sessions answered 500 (``OperationalError:
    database is locked``). The writes are serialised here (reads still run side by side);
    sessions stay independent: the lock holds no session's data.
    """

    def __init__(self, *, db_path: str) -> None:
        super().__init__(db_path=db_path)
        self._write_lock = asyncio.Lock()

    @override
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        async with self._write_lock:
            return await super().create_session(
                app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        async with self._write_lock:
            await super().delete_session(app_name=app_name, user_id=user_id, session_id=session_id)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        async with self._write_lock:
            return await super().append_event(session, event)


class PartialStoringSessionService(SerialWriteSessionService):
    """``persist-partials`` mutant only: a SQLite store that keeps partial events too.

    ADK skips partials twice: the Runner never passes them to ``append_event`` and
    ``append_event`` returns early on them. The mutant gateway therefore hands partials to this
    ``append_event`` itself. A Python partial shares its id with the aggregate that follows
    (docs/explanation/wire-facts/adk-gemini.md, key fact 3), and events are keyed by id, so the
    stored copy gets a fresh id. The
    session's ``update_time`` is left alone, or the Runner's next append would be refused as
    stale.
    """

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        if not event.partial:
            return await super().append_event(session, event)
        stored = event.model_copy(update={"id": Event.new_id()})
        async with self._write_lock, self._get_db_connection() as db:
            await db.execute(
                "INSERT INTO events"
                " (id, app_name, user_id, session_id, invocation_id, timestamp, event_data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    stored.id,
                    session.app_name,
                    session.user_id,
                    session.id,
                    stored.invocation_id,
                    stored.timestamp,
                    stored.model_dump_json(exclude_none=True),
                ),
            )
            await db.commit()
        return event


def build_runner(
    *, tool_url: str, db_path: str, store_partials: bool = False
) -> tuple[Runner, SqliteSessionService]:
    """The Runner the gateway drives, on ADK's SQLite session store at ``db_path``."""
    service_cls = PartialStoringSessionService if store_partials else SerialWriteSessionService
    sessions = service_cls(db_path=db_path)
    runner = Runner(app_name=APP_NAME, agent=build_agent(tool_url), session_service=sessions)
    return runner, sessions
