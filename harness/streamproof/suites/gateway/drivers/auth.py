"""The auth probes: the chat and history endpoints asked with no token, a wrong one, and
(for the history) another user's, each answer recorded for
GW-AUTH and GW-HISTORY-ISOLATION to judge.
"""

from __future__ import annotations

import aiohttp

from streamproof.suites.gateway.drivers.chat import chat_request
from streamproof.suites.gateway.observation import AuthProbe
from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.suites.gateway.target.running import RunningGateway

__all__ = ["auth_probes"]


async def auth_probes(
    http: aiohttp.ClientSession,
    gateway: RunningGateway,
    session_id: str,
    target: GatewayTarget,
) -> tuple[AuthProbe, ...]:
    header = target.auth.header
    other = list(target.auth.users.values())[1]
    wrong = "Bearer streamproof-wrong-token"
    probes: list[tuple[str, str, dict[str, str], str]] = [
        ("chat-no-token", "chat", {}, "401"),
        ("chat-wrong-token", "chat", {header: wrong}, "401"),
    ]
    if target.endpoints.history is not None:
        probes += [
            ("history-no-token", "history", {}, "401"),
            ("history-wrong-token", "history", {header: wrong}, "401"),
            ("history-other-user", "history", {header: other}, "401, 403 or 404"),
        ]
    out: list[AuthProbe] = []
    probe = chat_request(target, "streamproof auth probe", session_id, streaming=True)
    for name, which, headers, expected in probes:
        endpoint = gateway.endpoint(which, session_id)
        assert endpoint is not None
        method, url = endpoint
        status: int | None = None
        error: str | None = None
        try:
            async with http.request(
                method,
                url,
                data=probe.data if method != "GET" else None,
                headers={**headers, "Content-Type": probe.content_type}
                if method != "GET"
                else headers,
                timeout=aiohttp.ClientTimeout(total=10),
            ) as resp:
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        out.append(
            AuthProbe(
                name=name, method=method, url=url, status=status, expected=expected, error=error
            )
        )
    return tuple(out)
