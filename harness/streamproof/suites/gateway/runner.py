"""Scenario + target -> observation -> verdicts.

:class:`GatewayEnvironment` owns what lives for a whole test process: the fake model, the fake
tool service and the gateways (:mod:`.target.gateways`, behind their links: :mod:`.links`).
:meth:`GatewayEnvironment.run` plans one scenario (can the target run it, on which engines),
puts the gateway it needs in place, resets the fakes and the links, has the driver take the
chat turn (:mod:`.drivers.turn`), and hands the observation to the checks. The pytest plugin
and the CLI both go through here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import secrets
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

import aiohttp

from streamproof.core.capabilities import GATEWAY_CAPABILITIES, ScenarioSkipped, missing_reason
from streamproof.core.concurrency import MAX_CONCURRENCY
from streamproof.core.durations import TimeScale
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.model import FakeModel
from streamproof.fakes.records import MARKER_PLACEHOLDER, ModelCall, TlsRefusal, ToolCall
from streamproof.fakes.tools import FakeTools
from streamproof.faults.engines import FaultLink
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.fired import judge_fault_plan
from streamproof.suites.gateway.checks.concurrency import Session, concurrency_verdicts
from streamproof.suites.gateway.checks.proxy import proxy_honoured_across
from streamproof.suites.gateway.concurrency import (
    ConcurrentResult,
    load_figures,
    merge_verdicts,
    own_link_events,
    session_marker,
    tag_turns,
    tool_calls_of,
    untaggable,
)
from streamproof.suites.gateway.drivers.turn import Turn, TurnDriver
from streamproof.suites.gateway.links import choose_engines
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.profiles.registry import check_gateway
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.suites.gateway.target.gateways import Gateways, GatewaySettings
from streamproof.suites.gateway.target.running import RunningGateway
from streamproof.suites.gateway.target.waits import Waits
from streamproof.targets.errors import TargetConfigError, TargetError

CONTRACT_TOOL = "lookupOrder"
"""The tool every conformance gateway's agent has (docs/reference/gateway-contract.md)."""


@dataclass(frozen=True)
class ScenarioResult:
    observation: GatewayObservation
    verdicts: tuple[Verdict, ...]


class GatewayEnvironment:
    """The fakes and the gateway, started once, reset per scenario."""

    def __init__(
        self,
        target: GatewayTarget,
        *,
        bug: str | None = None,
        time_scale: float = 1.0,
        engine: str | None = None,
    ) -> None:
        self.target = target
        self.bug = bug
        self.scale = TimeScale(time_scale)
        self.model = FakeModel()
        self.tools = FakeTools()
        self.engines = EnginePool(engine)
        self.gateways = Gateways(
            target, model=self.model, pool=self.engines, scale=self.scale, bug=bug
        )
        self.waits = Waits(self.model, self.tools, self.scale)
        self.driver = TurnDriver(target, self.gateways, self.waits)

    @property
    def gateway(self) -> RunningGateway | None:
        """The gateway in use."""
        return self.gateways.gateway

    @property
    def links(self) -> dict[str, FaultLink]:
        """The links of the gateway in use, by name (``model``, ``browser``)."""
        return self.gateways.links.by_name

    @property
    def link_engines(self) -> dict[str, str]:
        return dict(self.gateways.links.engines)

    @property
    def starts(self) -> int:
        """How many times a gateway process was started (for the benchmarks)."""
        return self.gateways.starts

    @property
    def target_label(self) -> str:
        return f"{self.target.name}[bug={self.bug}]" if self.bug else self.target.name

    @property
    def target_info(self) -> dict[str, Any]:
        """The target as a report names it: the command as run (``{python}`` resolved) or the
        URL it was attached by, the address it answered on once started, its capabilities."""
        target = self.target
        command = target.command
        return {
            "kind": target.kind,
            "name": target.name,
            "label": self.target_label,
            "profile": target.profile,
            "command": None
            if command is None
            else [sys.executable if part == "{python}" else part for part in command],
            # ``{port}`` stays a placeholder here: the port is per start; base_url names it.
            "url": target.url,
            "base_url": self.gateway.base_url if self.gateway is not None else None,
            "capabilities": sorted(target.declared),
        }

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
            "GOOGLE_API_KEY": "streamproof-fake-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "STREAMPROOF_TOOL_URL": tools_url,
        }
        await self.gateways.start(model_url, contract_env)

    async def close(self) -> None:
        await self.gateways.close()
        await self.engines.close()
        await self.model.close()
        await self.tools.close()

    async def prepare(self, scenario: GatewayScenario) -> RunningGateway:
        """Check the target can run ``scenario`` (skip if not) and put the gateway of its
        settings in use, its links on the engines that carry out its plan."""
        if self.gateway is None:
            raise RuntimeError("GatewayEnvironment.run before start")
        crashed = self.gateway.crashed()
        if crashed is not None:
            raise TargetError(crashed)
        missing = missing_reason(
            self.target.name, scenario.all_needs, self.target.declared, GATEWAY_CAPABILITIES
        )
        if missing is not None:
            raise ScenarioSkipped(missing)
        chosen = await choose_engines(self.engines, scenario)
        run_bound = self.scale(scenario.limits.gateway_run_timeout)
        wanted: GatewaySettings = (chosen["model"], scenario.model_path, run_bound)
        return await self.gateways.use(wanted, chosen["browser"])

    def user_headers(self, index: int = 0) -> dict[str, str]:
        """The auth header of the target's ``index``-th user (wrapping round), or none."""
        users = list(self.target.auth.users.values())
        return {self.target.auth.header: users[index % len(users)]} if users else {}

    def set_epoch(self, t0: float) -> None:
        self.model.set_epoch(t0)
        self.tools.set_epoch(t0)
        self.gateways.links.set_epoch(t0)

    async def run(self, scenario: GatewayScenario) -> ScenarioResult:
        gateway = await self.prepare(scenario)
        marker = f"SP-SECRET-{secrets.token_hex(8)}"
        self.model.load(
            scenario.model, time_scale=self.scale.factor, runaway_cap=scenario.limits.runaway_cap
        )
        self.tools.load(scenario.tools, marker)
        self.gateways.links.load(scenario)
        session_id = new_session_id()
        headers = self.user_headers()
        async with aiohttp.ClientSession() as http:
            session_error = await self.driver.set_up_session(http, session_id, headers)
        t0 = time.monotonic()
        self.set_epoch(t0)
        turn = await self.driver.drive(
            scenario,
            session_id,
            headers,
            scenario.request.text,
            t0,
            lambda: (tuple(self.model.calls), tuple(self.tools.calls), self.model.tls_refusals),
        )
        if turn.disconnected_at is not None or turn.response.end != "clean":
            await self.waits.orphans(scenario, t0)
        observation = self.observe(scenario, gateway, turn, session_error, marker)
        verdicts = judge_fault_plan(
            check_gateway(observation),
            scenario.links.plans(),
            observation.link_events,
            scenario.requirements,
        )
        return ScenarioResult(observation, tuple(verdicts))

    async def run_concurrent(self, scenario: GatewayScenario, k: int) -> ConcurrentResult:
        """``scenario`` as ``k`` sessions at once against this one gateway (``--concurrency``;
        how the copies are told apart: :mod:`streamproof.suites.gateway.concurrency`)."""
        if not 2 <= k <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be 2 to {MAX_CONCURRENCY}, not {k}")
        gateway = await self.prepare(scenario)
        why = untaggable(scenario)
        if why is not None:
            raise ScenarioSkipped(f"not run with --concurrency {k}: {why}", cause="concurrency")
        token = secrets.token_hex(4)
        markers = [session_marker(i, token) for i in range(k)]
        secret = f"SP-SECRET-{secrets.token_hex(8)}"
        self.model.load_keyed(
            {m: tag_turns(scenario.model, m) for m in markers},
            time_scale=self.scale.factor,
            runaway_cap=scenario.limits.runaway_cap,
        )
        self.tools.load(scenario.tools, secret)
        self.gateways.links.load(scenario)
        # A scenario that probes auth reads another user's view of the session: every copy is
        # the first user's then. Otherwise the copies take the target's users in turn.
        headers = [self.user_headers(0 if scenario.expect.auth else i) for i in range(k)]
        session_ids = [new_session_id() for _ in range(k)]
        texts = [f"{scenario.request.text} [{m}]" for m in markers]
        async with aiohttp.ClientSession() as http:
            session_errors = await asyncio.gather(
                *(
                    self.driver.set_up_session(http, sid, h)
                    for sid, h in zip(session_ids, headers, strict=True)
                )
            )
        t0 = time.monotonic()
        self.set_epoch(t0)

        def snapshot_for(
            marker: str,
        ) -> tuple[tuple[ModelCall, ...], tuple[ToolCall, ...], tuple[TlsRefusal, ...]]:
            return (
                tuple(self.model.calls_for(marker)),
                tool_calls_of(self.tools.calls, marker),
                (),
            )

        turns = await asyncio.gather(
            *(
                self.driver.drive(
                    scenario,
                    session_ids[i],
                    headers[i],
                    texts[i],
                    t0,
                    functools.partial(snapshot_for, markers[i]),
                )
                for i in range(k)
            )
        )
        if any(t.disconnected_at is not None or t.response.end != "clean" for t in turns):
            await self.waits.orphans(scenario, t0)
        sessions = tuple(
            Session(m, self.observe(scenario, gateway, own, error, secret, shared_model_link=True))
            for m, own, error in zip(
                markers,
                (
                    dataclasses.replace(t, link_events=own_link_events(t.link_events, sid))
                    for t, sid in zip(turns, session_ids, strict=True)
                ),
                session_errors,
                strict=True,
            )
        )
        unkeyed = tuple(self.model.calls)
        per_session = [check_gateway(s.observation) for s in sessions]
        # The proxy's records name no session: its rule is judged over them all, on what the
        # model link holds now that every session has taken its own snapshot (one turn's
        # snapshot, taken early, may miss a later session's calls).
        links = self.gateways.links
        (across,) = proxy_honoured_across(
            [s.observation for s in sessions],
            links.events().get("model", ()),
            self.model.tls_refusals,
            links.proxy_upstream(),
        )
        merged = [
            across if v.requirement == across.requirement else v
            for v in merge_verdicts(per_session)
        ]
        verdicts = [*concurrency_verdicts(sessions, unkeyed), *merged]
        shown = next(
            (
                s.observation
                for s, vs in zip(sessions, per_session, strict=True)
                if any(v.outcome is Outcome.FAIL for v in vs)
            ),
            sessions[0].observation,
        )
        return ConcurrentResult(shown, tuple(verdicts), sessions, unkeyed, load_figures(sessions))

    def observe(
        self,
        scenario: GatewayScenario,
        gateway: RunningGateway,
        turn: Turn,
        session_error: str | None,
        marker: str,
        *,
        shared_model_link: bool = False,
    ) -> GatewayObservation:
        """What one turn gives the checks (``shared_model_link``: one of ``--concurrency``'s
        sessions, whose model link is every session's)."""
        return GatewayObservation(
            scenario=scenario.id,
            target=self.target_label,
            profile=self.target.profile,
            frame_mapping=self.target.frames,
            on_disconnect=self.target.on_disconnect,
            request_body=turn.request_body,
            session_error=session_error,
            # A leak can only be judged where a tool payload carried the marker.
            marker=marker if MARKER_PLACEHOLDER in json.dumps(scenario.tools) else "",
            request_text=turn.request_text,
            streaming=scenario.request.streaming,
            response=turn.response,
            frames=turn.frames,
            model_calls=turn.model_calls,
            tool_calls=turn.tool_calls,
            service_tools=service_tools(scenario),
            history=turn.history,
            history_error=turn.history_error,
            history_read_at=round(turn.history_read_at, 4),
            disconnected_at=turn.disconnected_at,
            history_after_run=turn.after_run.events if turn.after_run else None,
            history_after_run_error=turn.after_run.error if turn.after_run else None,
            history_after_run_at=turn.after_run.at if turn.after_run else None,
            link_events=turn.link_events,
            model_tls_refusals=turn.model_tls_refusals,
            proxy_upstream=turn.proxy_upstream,
            auth_probes=turn.probes,
            auth_declared=self.target.auth_declared,
            scripted_calls=scenario.scripted_calls,
            scripted_agents=scenario.scripted_agents,
            expect=scenario.expect,
            limits=scenario.limits,
            time_scale=self.scale.factor,
            stream_wait_s=turn.stream_wait,
            target_log=gateway.log(),
            run_bound_s=self.gateways.declared_run_bound,
            model_path=scenario.model_path,
            model_link_shared=shared_model_link,
        )


def new_session_id() -> str:
    return f"sp-{uuid.uuid4().hex[:16]}"


def service_tools(scenario: GatewayScenario) -> tuple[str, ...]:
    """The tools the fake tool service serves in ``scenario`` (the contract's one included)."""
    return tuple(sorted({*scenario.tools, CONTRACT_TOOL}))
