"""Capabilities: what a target declares it serves beyond its contract's minimum.

A scenario names what it **needs**; a need the target does not declare skips the scenario with
that reason, so a correct system is never failed for lacking an optional feature
(docs/reference/gateway-contract.md#capabilities). Core vocabulary: no suite, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

__all__ = [
    "BINDINGS",
    "CLIENT_CAPABILITIES",
    "GATEWAY_CAPABILITIES",
    "INSTALL_SKIPS",
    "Binding",
    "ClientCapability",
    "GatewayCapability",
    "ScenarioSkipped",
    "SkipCause",
    "Wire",
    "missing_reason",
]


SkipCause = Literal["capability", "engine", "target-kind", "concurrency"]
"""Why a scenario was skipped: the target does not declare a capability it needs; a fault
engine is missing or cannot carry out its plan; the run's target is of another kind; it cannot
run as several sessions at once. A report warns about the ``engine`` ones even when other
scenarios ran: another install or engine would have judged them."""

INSTALL_SKIPS: frozenset[SkipCause] = frozenset({"engine"})
"""The skip causes that are this install's, not the target's statement: a report warns about
them even when other scenarios ran, and ``--require-all`` fails them."""


class ScenarioSkipped(Exception):
    """The scenario cannot run here; the message says why, ``cause`` what kind of reason."""

    def __init__(self, reason: str, *, cause: SkipCause = "capability") -> None:
        super().__init__(reason)
        self.cause: SkipCause = cause


GatewayCapability = Literal["multi_agent", "none_mode", "history", "auth", "run_timeout"]
ClientCapability = Literal["follow_up", "proxy_env", "push"]
Wire = Literal["0.3", "1.0"]
Binding = Literal["jsonrpc", "rest", "grpc"]
"""An A2A protocol binding a client speaks (docs/reference/a2a-client-contract.md#bindings):
JSON-RPC, HTTP+JSON (REST) or gRPC."""
BINDINGS: tuple[Binding, ...] = ("jsonrpc", "rest", "grpc")

GATEWAY_CAPABILITIES: Mapping[str, str] = {
    "multi_agent": "the sub-agents billing (reached by transfer_to_agent) and courier (a "
    "single-turn sub-agent used as a tool)",
    "none_mode": "a non-streaming (NONE mode) chat endpoint, endpoints.chat_none",
    "history": "a history endpoint that reads the session, endpoints.history",
    "auth": "bearer-token users, auth.users (two of them)",
    "run_timeout": "a run bound: a run still going after STREAMPROOF_RUN_TIMEOUT seconds is "
    "stopped, run_timeout: true",
}
CLIENT_CAPABILITIES: Mapping[str, str] = {
    "follow_up": "a follow-up turn that replies to input-required with STREAMPROOF_TASK_ID and "
    "STREAMPROOF_CONTEXT_ID",
    "proxy_env": "its HTTP calls honour HTTP_PROXY (a forward proxy between it and the agent)",
    "push": "push notifications: with STREAMPROOF_A2A_PUSH=1 it listens on 127.0.0.1, registers "
    "that webhook with a token in its send's configuration and takes the task's updates from it "
    "(docs/reference/a2a-client-contract.md#push-notifications)",
    "wire 0.3": 'the A2A 0.3 wire, wires: ["0.3"]',
    "wire 1.0": 'the A2A 1.0 wire, wires: ["1.0"]',
    "binding jsonrpc": "the JSON-RPC binding, bindings: [jsonrpc]",
    "binding rest": "the HTTP+JSON (REST) binding, bindings: [rest]",
    "binding grpc": "the gRPC binding, bindings: [grpc]",
}


def missing_reason(
    target: str, needs: Iterable[str], declared: Iterable[str], meanings: Mapping[str, str]
) -> str | None:
    """Why a scenario needing ``needs`` cannot run on ``target`` (``None``: it can)."""
    have = set(declared)
    missing = [n for n in needs if n not in have]
    if not missing:
        return None
    what = "; ".join(f"{n} ({meanings.get(n, n)})" for n in missing)
    return f"target {target!r} does not declare {what}"
