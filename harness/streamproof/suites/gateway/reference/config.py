"""The reference gateway's configuration: the environment contract, read and checked once.

:class:`Settings` is what the gateway is started with; everything wrong with the environment or
the command line is a :class:`ConfigError`, reported in one line before anything listens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from streamproof.mutants.catalog import UnknownBugError
from streamproof.suites.gateway.reference.mutants import OnDisconnect, Wire, applies, check_bug

DEFAULT_TOKENS: Final = "alice=alice-token,bob=bob-token"
DEFAULT_MAX_LLM_CALLS: Final = 20
DEFAULT_RUN_TIMEOUT_S: Final = 120.0


class ConfigError(ValueError):
    """The environment or the command line is unusable; reported in one line, exit status 2."""


@dataclass(frozen=True)
class Settings:
    """The gateway's environment contract (docs/reference/gateway-contract.md).

    Required: ``PORT`` (0: an ephemeral port), ``GOOGLE_GEMINI_BASE_URL`` (the fake model, read
    by google-genai itself), ``GOOGLE_API_KEY`` (any value) and ``STREAMPROOF_TOOL_URL``.
    Optional: ``STREAMPROOF_BUG``, ``STREAMPROOF_GATEWAY_TOKENS`` (``user=token`` pairs, comma
    separated), ``STREAMPROOF_GATEWAY_DB`` (SQLite path; default a temporary file removed at
    exit), ``STREAMPROOF_MAX_LLM_CALLS`` (the seed's ``setMaxLlmCalls(20)``) and
    ``STREAMPROOF_RUN_TIMEOUT`` (seconds; the seed's ``new SseEmitter(120_000L)``).
    From the command line: ``wire`` (``--wire``: the seed's typed frames, AG-UI or the AI SDK
    UI message stream) and ``on_disconnect`` (``--on-disconnect``: dispose the run when the
    browser goes away, the seed's rule, or let it finish within its bound: ``detach``).
    """

    port: int
    tool_url: str
    users_by_token: Mapping[str, str]
    db_path: str | None = None
    max_llm_calls: int = DEFAULT_MAX_LLM_CALLS
    run_timeout: float = DEFAULT_RUN_TIMEOUT_S
    bug: str | None = None
    wire: Wire = "typed-frames"
    on_disconnect: OnDisconnect = "dispose"

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        bug: str | None = None,
        wire: Wire = "typed-frames",
        on_disconnect: OnDisconnect = "dispose",
    ) -> Settings:
        """Read the environment; ``bug`` (from ``--bug``) overrides ``STREAMPROOF_BUG``."""
        try:
            chosen = check_bug(bug if bug is not None else env.get("STREAMPROOF_BUG"))
        except UnknownBugError as exc:
            raise ConfigError(str(exc)) from None
        why_not = applies(chosen, wire, on_disconnect) if chosen is not None else None
        if why_not is not None:
            raise ConfigError(why_not)
        required = ["PORT", "GOOGLE_GEMINI_BASE_URL", "STREAMPROOF_TOOL_URL"]
        missing = [name for name in required if not env.get(name)]
        if not (env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")):
            missing.append("GOOGLE_API_KEY")
        if missing:
            raise ConfigError(f"missing required environment variable(s): {', '.join(missing)}")
        port = _parse_int(env, "PORT", lo=0, hi=65535)
        return cls(
            port=port,
            tool_url=env["STREAMPROOF_TOOL_URL"],
            users_by_token=parse_tokens(env.get("STREAMPROOF_GATEWAY_TOKENS") or DEFAULT_TOKENS),
            db_path=env.get("STREAMPROOF_GATEWAY_DB") or None,
            max_llm_calls=_parse_int(
                env, "STREAMPROOF_MAX_LLM_CALLS", lo=1, default=DEFAULT_MAX_LLM_CALLS
            ),
            run_timeout=_parse_seconds(env, "STREAMPROOF_RUN_TIMEOUT", DEFAULT_RUN_TIMEOUT_S),
            bug=chosen,
            wire=wire,
            on_disconnect=on_disconnect,
        )


def parse_tokens(spec: str) -> dict[str, str]:
    """``alice=alice-token,bob=bob-token`` -> ``{"alice-token": "alice", "bob-token": "bob"}``."""
    users_by_token: dict[str, str] = {}
    for item in spec.split(","):
        user, sep, token = (s.strip() for s in item.partition("="))
        if not item.strip():
            continue
        if not sep or not user or not token:
            raise ConfigError(f"STREAMPROOF_GATEWAY_TOKENS: expected user=token, got {item!r}")
        if token in users_by_token:
            raise ConfigError(f"STREAMPROOF_GATEWAY_TOKENS: token for {user!r} is not unique")
        users_by_token[token] = user
    if not users_by_token:
        raise ConfigError("STREAMPROOF_GATEWAY_TOKENS: no user=token pair")
    return users_by_token


def _parse_int(
    env: Mapping[str, str], name: str, *, lo: int, hi: int | None = None, default: int = 0
) -> int:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}: expected an integer, got {raw!r}") from None
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise ConfigError(f"{name}: must be {bound}, got {value}")
    return value


def _parse_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}: expected a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ConfigError(f"{name}: must be positive, got {raw}")
    return value
