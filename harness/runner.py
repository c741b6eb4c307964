"""Scenario + target -> observation -> verdicts.

:class:`GatewayEnvironment` owns what lives for a whole test process: the fake model, the fake
tool service and the gateway. :meth:`GatewayEnvironment.run` resets the fakes for one scenario,
drives one chat turn, and records everything into a :class:`GatewayObservation`. The pytest
plugin and the CLI both go through here.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

import aiohttp

from harness.checks import check_gateway
from harness.durations import TimeScale
from harness.fakes.model import FakeModel
from harness.fakes.tools import FakeTools
from harness.observation import AuthProbe, ChatResponse, Frame, GatewayObservation
from harness.scenario import GatewayScenario
from harness.sse import Decoder
from harness.targets.errors import TargetConfigError, TargetError
from harness.targets.gateway import GatewayTarget, RunningGateway, start_gateway
from harness.verdicts import Verdict

SETTLE_SECONDS = 2.0
"""How long (scaled, at least 1 s) the harness waits after a stream ends for the model calls the
gateway still has open to finish, before it reads the history."""


class ScenarioSkipped(Exception):
    """The target does not declare a capability the scenario needs."""


@dataclass(frozen=True)
class ScenarioResult:
    observation: GatewayObservation
    verdicts: tuple[Verdict, ...]


class GatewayEnvironment:
    """The fakes and the gateway, started once, reset per scenario."""

    def __init__(
        self, target: GatewayTarget, *, bug: str | None = None, time_scale: float = 1.0
    ) -> None:
        self.target = target
        self.bug = bug
        self.scale = TimeScale(time_scale)
        self.model = FakeModel()
        self.tools = FakeTools()
        self.gateway: RunningGateway | None = None

    @property
    def target_label(self) -> str:
        return f"{self.target.name}[bug={self.bug}]" if self.bug else self.target.name

    async def start(self) -> None:
        try:
            model_url = await self.model.start(port=self.target.fakes.model)
            tools_url = await self.tools.start(port=self.target.fakes.tools)
        except OSError as exc:
            raise TargetConfigError(
                f"target {self.target.name!r}: cannot bind the fakes to the ports in "
                f"'fakes' ({self.target.fakes.model}, {self.target.fakes.tools}): "
                f"{exc.strerror or exc}"
            ) from None
        contract_env = {
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GOOGLE_API_KEY": "streamproof-fake-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "STREAMPROOF_TOOL_URL": tools_url,
        }
        self.gateway = await start_gateway(
            self.target, contract_env, bug=self.bug, ready_scale=self.scale.factor
        )

    async def close(self) -> None:
        if self.gateway is not None:
            await self.gateway.close()
        await self.model.close()
        await self.tools.close()

    async def run(self, scenario: GatewayScenario) -> ScenarioResult:
        gateway = self.gateway
        if gateway is None:
            raise RuntimeError("GatewayEnvironment.run before start")
        crashed = gateway.crashed()
        if crashed is not None:
            raise TargetError(crashed)
        which = "chat" if scenario.request.streaming else "chat_none"
        session_id = f"sp-{uuid.uuid4().hex[:16]}"
        endpoint = gateway.endpoint(which, session_id)
        if endpoint is None:
            raise ScenarioSkipped(
                f"target {self.target.name!r} declares no '{which}' endpoint "
                "(needed for a non-streaming turn)"
            )
        marker = f"SP-SECRET-{secrets.token_hex(8)}"
        self.model.load(scenario.model, time_scale=self.scale.factor)
        self.tools.load(scenario.tools, marker)
        users = list(self.target.auth.users.items())
        headers = {self.target.auth.header: users[0][1]} if users else {}

        t0 = time.monotonic()
        self.model.set_epoch(t0)
        self.tools.set_epoch(t0)
        async with aiohttp.ClientSession() as http:
            response, frames = await _stream_chat(
                http,
                endpoint,
                scenario.request.text,
                headers,
                timeout=self.scale(scenario.limits.run_timeout),
                t0=t0,
            )
            await self.model.wait_idle(max(self.scale(SETTLE_SECONDS), 1.0))
            history, history_error = await _read_history(
                http, gateway.endpoint("history", session_id), headers
            )
            # Snapshot before the auth probes: a gateway that wrongly accepts a probe would
            # start another run, and its model calls are not part of this turn.
            model_calls, tool_calls = tuple(self.model.calls), tuple(self.tools.calls)
            probes = None
            if scenario.expect.auth and self.target.auth_declared:
                probes = await _auth_probes(http, gateway, session_id, self.target)
            elif scenario.expect.auth:
                probes = ()
        observation = GatewayObservation(
            scenario=scenario.id,
            target=self.target_label,
            marker=marker,
            request_text=scenario.request.text,
            streaming=scenario.request.streaming,
            response=response,
            frames=tuple(frames),
            model_calls=model_calls,
            tool_calls=tool_calls,
            history=history,
            history_error=history_error,
            auth_probes=probes,
            auth_declared=self.target.auth_declared,
            expect=scenario.expect,
            limits=scenario.limits,
            time_scale=self.scale.factor,
            target_log=gateway.log(),
        )
        return ScenarioResult(observation, tuple(check_gateway(observation)))


async def _stream_chat(
    http: aiohttp.ClientSession,
    endpoint: tuple[str, str],
    text: str,
    headers: dict[str, str],
    *,
    timeout: float,
    t0: float,
) -> tuple[ChatResponse, list[Frame]]:
    method, url = endpoint
    frames: list[Frame] = []
    decoder = Decoder()
    status: int | None = None
    content_type: str | None = None
    deadline = t0 + timeout

    def add(events: list[Any]) -> None:
        now = time.monotonic() - t0
        for ev in events:
            frames.append(
                Frame(
                    index=len(frames),
                    t=round(now, 4),
                    event=ev.type,
                    id=ev.id,
                    id_line=ev.id_line,
                    data=ev.data,
                )
            )

    def result(end: str, error: str | None = None, body: str = "") -> ChatResponse:
        return ChatResponse(
            status=status,
            content_type=content_type,
            end=end,
            error=error,
            elapsed=round(time.monotonic() - t0, 4),
            body_excerpt=body[:500],
        )

    try:
        async with asyncio.timeout_at(_loop_time_for(deadline)):
            async with http.request(
                method,
                url,
                data=text.encode("utf-8"),
                headers={
                    **headers,
                    "Accept": "text/event-stream",
                    "Content-Type": "text/plain; charset=utf-8",
                },
            ) as resp:
                status = resp.status
                content_type = resp.headers.get("Content-Type")
                if status != 200 or not (content_type or "").startswith("text/event-stream"):
                    body = (await resp.content.read(4096)).decode("utf-8", "replace")
                    return result("not-sse", body=body), frames
                try:
                    async for chunk in resp.content.iter_any():
                        add(decoder.feed(chunk))
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
                    add(decoder.close())
                    return result("error", f"{type(exc).__name__}: {exc}"), frames
                add(decoder.close())
                return result("clean"), frames
    except TimeoutError:
        return result("timeout", f"no end of stream within {timeout:g}s"), frames
    except aiohttp.ClientConnectorError as exc:
        return result("refused", f"{type(exc).__name__}: {exc}"), frames
    except aiohttp.ClientError as exc:
        return result("error", f"{type(exc).__name__}: {exc}"), frames


def _loop_time_for(monotonic_deadline: float) -> float:
    loop = asyncio.get_running_loop()
    return loop.time() + (monotonic_deadline - time.monotonic())


async def _read_history(
    http: aiohttp.ClientSession, endpoint: tuple[str, str] | None, headers: dict[str, str]
) -> tuple[tuple[dict[str, Any], ...] | None, str | None]:
    if endpoint is None:
        return None, None
    method, url = endpoint
    try:
        async with http.request(
            method, url, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as resp:
            body = await resp.read()
            if resp.status != 200:
                excerpt = body[:300].decode("utf-8", "replace")
                return None, f"{method} {url} answered {resp.status}: {excerpt}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        return None, f"{method} {url} failed: {type(exc).__name__}: {exc}"
    try:
        data = json.loads(body)
    except ValueError as exc:
        return None, f"{method} {url} did not answer JSON: {exc}"
    events = data.get("events") if isinstance(data, dict) else data
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        return None, (
            f"{method} {url} answered JSON that is neither a list of events nor an object "
            "with an 'events' list"
        )
    return tuple(events), None


async def _auth_probes(
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
                data=b"streamproof auth probe" if method != "GET" else None,
                headers=headers,
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
