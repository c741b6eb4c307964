"""The smallest app a team writes around ag-ui-adk: the contract's agent behind ag-ui-adk's own
FastAPI endpoint, plus a history endpoint that reads the ADK session ag-ui-adk keeps for a thread.

Run by ``targets/ag-ui-adk.yaml`` with the target's own virtualenv (``requirements.txt`` beside
this file; ag-ui-adk is not installed in the harness's environment). Configuration only:
ag-ui-adk is used as published, nothing in it is patched or subclassed.

* ``POST /``: ag-ui-adk's endpoint (``add_adk_fastapi_endpoint``): an AG-UI ``RunAgentInput``
  in, AG-UI events out as ``text/event-stream`` (``data: <json>`` lines). ag-ui-adk adds
  ``GET /capabilities`` (the readiness probe) and ``POST /agents/state`` to it.
* ``GET /history/{threadId}``: the thread's ADK session as ADK's own event JSON,
  ``{"events": [...]}``, as the reference gateway's ``/history`` returns it.

The environment is the gateway contract's (docs/reference/gateway-contract.md): PORT,
STREAMPROOF_TOOL_URL, GOOGLE_GEMINI_BASE_URL and GOOGLE_API_KEY (read by google-genai itself),
and STREAMPROOF_RUN_TIMEOUT, which becomes ag-ui-adk's ``execution_timeout_seconds``.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

# The contract's agent is the reference gateway's, imported from the repository (not copied):
# streamproof is not installed in this target's virtualenv; its source is harness/streamproof/.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness"))

import uvicorn  # noqa: E402
from ag_ui.core import RunAgentInput  # noqa: E402
from ag_ui_adk import ADKAgent, SessionManager, add_adk_fastapi_endpoint  # noqa: E402
from fastapi import FastAPI, HTTPException  # noqa: E402
from google.adk.agents.run_config import RunConfig, StreamingMode  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402

from streamproof.suites.gateway.reference.agent import AGENT_NAME, build_agent  # noqa: E402

APP_NAME = AGENT_NAME
"""ADK's app name: ag-ui-adk's default is the root agent's name, said here once for both
endpoints."""
USER_ID = "streamproof"
"""Every thread's ADK user (ag-ui-adk's default would be ``thread_user_<threadId>``)."""
MAX_LLM_CALLS = 20
"""The seed's LLM-call budget for an interactive request (ADK's default is 500)."""


def run_config(_input: RunAgentInput) -> RunConfig:
    """Every run streams (SSE, as ag-ui-adk's default factory) under the LLM-call budget."""
    return RunConfig(streaming_mode=StreamingMode.SSE, max_llm_calls=MAX_LLM_CALLS)


def execution_timeout(env: dict[str, str]) -> int:
    """STREAMPROOF_RUN_TIMEOUT (seconds) as ag-ui-adk's whole seconds, rounded up; its own
    default (600) when unset."""
    raw = env.get("STREAMPROOF_RUN_TIMEOUT")
    if raw is None:
        return 600
    try:
        seconds = float(raw)
    except ValueError:
        sys.exit(f"ag-ui-adk app: STREAMPROOF_RUN_TIMEOUT={raw!r} is not a number of seconds")
    return max(1, math.ceil(seconds))


def make_app(env: dict[str, str]) -> FastAPI:
    tool_url = env.get("STREAMPROOF_TOOL_URL")
    if not tool_url:
        sys.exit("ag-ui-adk app: STREAMPROOF_TOOL_URL is not set (the fake tool service's URL)")
    # use_thread_id_as_session_id: the ADK session id is the thread id (ag-ui-adk recommends it
    # for the in-memory service); the manager is built here so /history can ask it for the
    # thread's session the way the endpoint finds it (SessionManager.resolve_existing_session).
    sessions = SessionManager(
        session_service=InMemorySessionService(), use_thread_id_as_session_id=True
    )
    agent = ADKAgent(
        adk_agent=build_agent(tool_url),
        app_name=APP_NAME,
        user_id=USER_ID,
        session_manager=sessions,
        run_config_factory=run_config,
        execution_timeout_seconds=execution_timeout(env),
    )
    app = FastAPI(title="streamproof support agent on ag-ui-adk")
    add_adk_fastapi_endpoint(app, agent, path="/")

    @app.get("/history/{thread_id}")
    async def history(thread_id: str) -> dict[str, Any]:
        session = await sessions.resolve_existing_session(thread_id, APP_NAME, USER_ID)
        if session is None:
            raise HTTPException(status_code=404, detail=f"no session for thread {thread_id!r}")
        return {
            "events": [
                e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in session.events
            ]
        }

    return app


def main() -> None:
    env = dict(os.environ)
    try:
        port = int(env.get("PORT", ""))
    except ValueError:
        sys.exit(f"ag-ui-adk app: PORT={env.get('PORT')!r} is not a port number")
    uvicorn.run(make_app(env), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
