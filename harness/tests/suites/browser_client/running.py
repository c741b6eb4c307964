"""Running browser-client scenarios for a test: a target (by file) with an optional mutant over
bundled scenarios, in real Chromium (skipped, or failed under STREAMPROOF_REQUIRE_ALL=1, without
Chromium, Playwright or Node)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from harness.tests.conftest import require_executable, require_module
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites import suite
from streamproof.suites.browser_client.runner import BrowserClientScenarioResult
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.loading import load_scenarios

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS = ROOT / "scenarios" / "browser_client"
HERE = Path(__file__).resolve().parent
INDEPENDENT = HERE / "independent" / "independent-page.yaml"
BUNDLED = Path(suite("browser-client").DEFAULT_TARGET).parent


def bundled(*names: str) -> list[BrowserClientScenario]:
    """The bundled scenarios (those whose id ends with one of ``names``, when given)."""
    found = []
    for path in sorted(SCENARIOS.glob("*.yaml")):
        for loaded in load_scenarios(path):
            scenario = loaded.scenario
            assert isinstance(scenario, BrowserClientScenario)
            if not names or scenario.id.rsplit("/", 1)[-1] in names:
                found.append(scenario)
    return found


def need_browser() -> None:
    require_executable("chromium")
    require_module("playwright.async_api")
    require_executable("node")


def run(
    target: Path | None,
    scenarios: Iterable[BrowserClientScenario],
    *,
    bug: str | None = None,
    time_scale: float = 0.1,
) -> dict[str, BrowserClientScenarioResult]:
    """Each scenario's result, run one after the other against one environment."""
    env = suite("browser-client").environment(target, bug=bug, time_scale=time_scale)

    async def go() -> dict[str, BrowserClientScenarioResult]:
        await env.start()
        try:
            return {s.id: await env.run(s) for s in scenarios}
        finally:
            await env.close()

    return asyncio.run(go())


def failing(result: BrowserClientScenarioResult) -> dict[str, Verdict]:
    """The rules the run broke: a MUST failed, or a SHOULD unmet."""
    broken = (Outcome.FAIL, Outcome.NON_STRICT)
    return {v.requirement: v for v in result.verdicts if v.outcome in broken}
