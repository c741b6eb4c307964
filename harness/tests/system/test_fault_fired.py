"""No bundled scenario passes with a required fault that did not fire (issue 23).

Every bundled scenario that plans a fault runs against the bundled reference wired so that it
bypasses every link: the gateway is given the fake model's own address (and no proxy), the
browser talks to the gateway directly, the A2A client is given the fake agent's own address.
The links are there and loaded with the scenario's plan, but nothing crosses them, so no fault
can fire: each such scenario must end with ``fault.fired`` failing, never with a pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module
from streamproof.core.capabilities import ScenarioSkipped
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.faults.fired import FAULT_FIRED
from streamproof.runtime.loop import BackgroundLoop
from streamproof.suites.a2a_client.runner import A2AClientEnvironment
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import load_client_target
from streamproof.suites.gateway.drivers.turn import TurnDriver
from streamproof.suites.gateway.runner import GatewayEnvironment
from streamproof.suites.gateway.scenario import GatewayScenario, ModelPath
from streamproof.suites.gateway.target.config import GatewayTarget, load_target
from streamproof.suites.gateway.target.gateways import Gateways
from streamproof.suites.loading import load_scenarios

# End to end (real targets, every bundled fault scenario): scheduled first under xdist.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"
BUDGET_S = 240.0


class _GatewaysPastTheLinks(Gateways):
    """The reference gateway started with the fake model's own address and no proxy, the
    browser link's address being the gateway's own: the links exist, but nothing crosses them."""

    async def _model_link(self, engine_name: str, model_path: ModelPath) -> dict[str, str]:
        await self.links.start_model(engine_name, "direct", self.model, self.model_url)
        return {"GOOGLE_GEMINI_BASE_URL": self.model_url}

    async def _browser_link(self, engine_name: str) -> None:
        await super()._browser_link(engine_name)
        assert self.gateway is not None
        self.links.browser_url = self.gateway.base_url


class GatewayPastTheLinks(GatewayEnvironment):
    """The gateway environment with :class:`_GatewaysPastTheLinks` for its gateways."""

    def __init__(self, target: GatewayTarget, *, time_scale: float) -> None:
        super().__init__(target, time_scale=time_scale)
        self.gateways = _GatewaysPastTheLinks(
            target, model=self.model, pool=self.engines, scale=self.scale, bug=self.bug
        )
        self.driver = TurnDriver(target, self.gateways, self.waits)


class ClientPastTheLink(A2AClientEnvironment):
    """The reference client given the fake agent's own address: the link is loaded, unused."""

    async def _use_engine(self, name: str) -> None:
        await super()._use_engine(name)
        self._url = self._fake_url


def _planned(scenario: Any) -> bool:
    """Whether the scenario plans a fault on any of its links."""
    if isinstance(scenario, GatewayScenario):
        return any(scenario.links.plans().values())
    return isinstance(scenario, A2AClientScenario) and bool(scenario.links.a2a)


def _fault_scenarios(folder: str) -> list[Any]:
    return [
        loaded.scenario
        for file in sorted((SCENARIOS / folder).glob("*.yaml"))
        for loaded in load_scenarios(file)
        if _planned(loaded.scenario)
    ]


@pytest.fixture(scope="module")
def loop() -> Iterator[BackgroundLoop]:
    background = BackgroundLoop()
    yield background
    background.close()


def _judged(verdicts: tuple[Verdict, ...]) -> tuple[list[Verdict], bool]:
    faults = [v for v in verdicts if v.kind is Kind.FAULT]
    return faults, any(v.outcome is Outcome.FAIL for v in verdicts)


def _assert_never_a_pass(results: dict[str, tuple[Verdict, ...]]) -> None:
    wrong: list[str] = []
    for scenario_id, verdicts in results.items():
        faults, failed = _judged(verdicts)
        if not faults or not all(
            v.requirement == FAULT_FIRED and v.outcome is Outcome.FAIL
            for v in faults
            if "is optional" not in v.message
        ):
            wrong.append(f"{scenario_id}: {[v.render() for v in faults]}")
        if not failed:
            wrong.append(f"{scenario_id}: passed")
    assert not wrong, "\n".join(wrong)


JOBS = 3
"""Environments at once, each running its share of the scenarios one after another."""


def _run_all(
    loop: BackgroundLoop,
    make: Callable[[], GatewayEnvironment | A2AClientEnvironment],
    scenarios: list[Any],
) -> dict[str, tuple[Verdict, ...]]:
    """Every scenario's verdicts (a skipped one left out), run on :data:`JOBS` environments at
    once, each started fresh and given every JOBS-th scenario."""

    async def share(part: list[Any]) -> dict[str, tuple[Verdict, ...]]:
        env = make()
        await env.start()
        found: dict[str, tuple[Verdict, ...]] = {}
        try:
            for scenario in part:
                try:
                    result = await env.run(scenario)
                except ScenarioSkipped:
                    continue
                found[scenario.id] = result.verdicts
        finally:
            await asyncio.wait_for(env.close(), 60)
        return found

    async def everything() -> dict[str, tuple[Verdict, ...]]:
        parts = await asyncio.gather(*(share(scenarios[i::JOBS]) for i in range(JOBS)))
        return {sid: verdicts for part in parts for sid, verdicts in part.items()}

    return loop.run(everything(), timeout=BUDGET_S * len(scenarios))


def test_no_gateway_fault_scenario_passes_when_its_faults_never_fire(
    loop: BackgroundLoop,
) -> None:
    require_module("google.adk")
    require_module("mitmproxy")
    scenarios = _fault_scenarios("gateway")
    assert len(scenarios) >= 7
    target = load_target(None)
    results = _run_all(
        loop, lambda: GatewayPastTheLinks(target, time_scale=DEFAULT_TIME_SCALE), scenarios
    )
    assert len(results) >= 7, sorted(results)
    _assert_never_a_pass(results)
    # what the scenario was built for is not a pass either
    black_hole = {v.requirement: v for v in results["gateway/corporate-proxy-black-hole"]}
    assert black_hole["GW-RUN-BOUND"].outcome is Outcome.NOT_APPLICABLE


def test_no_a2a_fault_scenario_passes_when_its_fault_never_fires(loop: BackgroundLoop) -> None:
    scenarios = [
        # a client given no proxy goes to the agent directly, as one that ignores it would
        s.model_copy(update={"links": s.links.model_copy(update={"forward": ()})})
        for s in _fault_scenarios("a2a_client")
    ]
    assert len(scenarios) >= 12
    target = load_client_target(None)
    results = _run_all(
        loop, lambda: ClientPastTheLink(target, time_scale=DEFAULT_TIME_SCALE), scenarios
    )
    assert len(results) >= 12, sorted(results)
    _assert_never_a_pass(results)
