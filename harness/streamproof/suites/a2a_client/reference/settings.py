"""The reference client's settings: the client contract's environment, read and checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from streamproof.mutants.catalog import UnknownBugError
from streamproof.suites.a2a_client.reference.mutants import check_bug

__all__ = ["ConfigError", "Settings"]


PROTOCOL_BINDINGS: Final = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
"""``STREAMPROOF_A2A_BINDING`` -> the ``protocolBinding`` a2a-sdk's client factory is told to
use (the reference speaks JSON-RPC and REST; not gRPC)."""


class ConfigError(Exception):
    """The environment does not fit the contract."""


@dataclass(frozen=True)
class Settings:
    url: str
    prompt: str
    deadline: float
    idle: float
    task_id: str | None = None
    context_id: str | None = None
    bug: str | None = None
    binding: str = "jsonrpc"
    """``STREAMPROOF_A2A_BINDING``: a key of :data:`PROTOCOL_BINDINGS`."""

    @property
    def protocol_binding(self) -> str:
        return PROTOCOL_BINDINGS[self.binding]

    push: bool = False
    """``STREAMPROOF_A2A_PUSH=1``: take the task's updates from a webhook of its own."""

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, bug: str | None = None) -> Settings:
        """Read the contract; ``bug`` (from ``--bug``) overrides ``STREAMPROOF_BUG``."""
        try:
            chosen = check_bug(bug if bug is not None else env.get("STREAMPROOF_BUG"))
        except UnknownBugError as exc:
            raise ConfigError(str(exc)) from None
        url = env.get("STREAMPROOF_A2A_URL", "").strip()
        if not url:
            raise ConfigError("STREAMPROOF_A2A_URL is not set (the agent's base URL)")
        durations: dict[str, float] = {}
        for name in ("STREAMPROOF_DEADLINE_S", "STREAMPROOF_IDLE_S"):
            raw = env.get(name, "")
            try:
                durations[name] = float(raw)
            except ValueError:
                raise ConfigError(f"{name} must be a number of seconds, not {raw!r}") from None
            if not durations[name] > 0:
                raise ConfigError(f"{name} must be positive, not {raw!r}")
        binding = env.get("STREAMPROOF_A2A_BINDING", "").strip() or "jsonrpc"
        if binding not in PROTOCOL_BINDINGS:
            raise ConfigError(
                f"STREAMPROOF_A2A_BINDING is {binding!r}; this client speaks "
                f"{' and '.join(PROTOCOL_BINDINGS)}"
            )
        return cls(
            url=url,
            binding=binding,
            prompt=env.get("STREAMPROOF_PROMPT", ""),
            deadline=durations["STREAMPROOF_DEADLINE_S"],
            idle=durations["STREAMPROOF_IDLE_S"],
            task_id=env.get("STREAMPROOF_TASK_ID") or None,
            context_id=env.get("STREAMPROOF_CONTEXT_ID") or None,
            bug=chosen,
            push=env.get("STREAMPROOF_A2A_PUSH", "").strip() == "1",
        )
