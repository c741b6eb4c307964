"""The official AG-UI client (``@ag-ui/client``, npm) run over a captured AG-UI stream.

``node/ag-ui-client.mjs`` hands the stream to ``HttpAgent.runAgent`` (through a fetch that
answers with the capture), so the client's SSE parsing, event schema, verify middleware and
reducer all apply as they would to a live endpoint. The client stops at the first error (a
finding of kind ``error``: ``AGUIError`` from verify, ``ZodError`` from the schema,
``SyntaxError`` for data that is not JSON) and logs deviations it tolerates (kind ``warning``:
an unknown event dropped, an unknown key stripped). ``messages`` is what the client holds at the
end: what an application would render.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

from streamproof.suites.gateway.oracles.finding import OracleReport
from streamproof.suites.gateway.oracles.node_script import run_script

__all__ = ["AgUiClientReport", "AgUiMessage", "AgUiToolCall", "run_ag_ui_client"]

PACKAGE: Final = "@ag-ui/client"
SCRIPT: Final = "ag-ui-client.mjs"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgUiToolCall(_Record):
    id: str
    name: str | None = None
    arguments: str | None = None


class AgUiMessage(_Record):
    """One message of ``agent.messages``."""

    id: str
    role: str
    content: str | None = None
    tool_calls: tuple[AgUiToolCall, ...] = ()
    tool_call_id: str | None = None


class AgUiClientReport(OracleReport):
    messages: tuple[AgUiMessage, ...]


def run_ag_ui_client(payloads: Sequence[str], *, timeout: float = 30.0) -> AgUiClientReport:
    """The client's reading of the stream whose events carry ``payloads`` (in order).

    Raises :class:`~streamproof.suites.gateway.oracles.errors.OracleUnavailable` without Node or the
    installed package, :class:`~streamproof.suites.gateway.oracles.errors.OracleFailed` when the run
    gives no result within ``timeout`` seconds.
    """
    return run_script(SCRIPT, PACKAGE, payloads, timeout, AgUiClientReport)
