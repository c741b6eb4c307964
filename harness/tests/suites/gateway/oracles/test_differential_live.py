"""The differential holds on streams captured live: the bundled scenarios run against the AG-UI
and AI SDK reference gateways (a real google-adk Runner behind the fake model) and against each
of their wire mutants, and every stream is read by the libraries beside our verdicts.

Each mutant runs only the scenarios that show its defect (:data:`SHOWN_BY`); a mutant this table
does not name yet (one added to a target file later) runs :data:`DEFAULT`, so the test takes any
mutant list. One gateway start per mutant: a few seconds each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest

pytest.importorskip("google.adk")

from harness.tests.conftest import require_oracle
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.oracles.ag_ui_validate import installed_version
from streamproof.suites.gateway.oracles.differential import differential
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.node_script import require_installed
from streamproof.suites.gateway.oracles.table import differential_table
from streamproof.suites.gateway.reference.mutants import WIRE_BUGS
from streamproof.suites.gateway.runner import GatewayEnvironment
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.config import load_target
from streamproof.suites.loading import load_scenarios

pytestmark = pytest.mark.slow

ROOT: Final = Path(__file__).resolve().parents[5]
TARGET: Final = {
    "ag-ui": ROOT / "harness" / "streamproof" / "suites" / "gateway" / "reference-ag-ui.yaml",
    "ai-sdk-ui": ROOT
    / "harness"
    / "streamproof"
    / "suites"
    / "gateway"
    / "reference-ai-sdk-ui.yaml",
}
RUN_LIMIT_S: Final = 120.0
"""The bound on one gateway's start, its scenarios and its stop."""

WORKED = "gateway/one-tool-call-streamed"
PLAIN = "gateway/plain-streamed-answer"
MODEL_ERROR = "gateway/model-error-mid-stream"
BROWSER_GONE = "gateway/browser-gone-mid-stream"

REFERENCE: Final = (WORKED, MODEL_ERROR, BROWSER_GONE)
"""A tool step, a failed run, and a stream the browser leaves."""
SHOWN_BY: Final[Mapping[str, tuple[str, ...]]] = {
    "agui-tool-call-from-partial": (WORKED,),
    "agui-resend-text": (PLAIN,),
    "agui-open-at-finish": (PLAIN,),
    "agui-finished-on-error": (MODEL_ERROR,),
    "agui-leak-tool-result": (WORKED,),
    "aisdk-tool-call-from-partial": (WORKED,),
    "aisdk-resend-text": (PLAIN,),
    "aisdk-open-at-finish": (PLAIN,),
    "aisdk-finish-on-error": (MODEL_ERROR,),
    "aisdk-no-done": (PLAIN,),
    "aisdk-delta-before-start": (PLAIN,),
    "no-terminal-frame": (PLAIN,),
}
"""Mutant -> the scenarios where its defect shows in the stream."""
DEFAULT: Final = (WORKED, MODEL_ERROR)
STRUCTURAL_SHARED: Final = ("no-terminal-frame",)
"""The mutants every wire shares whose defect is in the stream's structure: a stream with no
terminal event (ag-ui #2300)."""


def _scenarios() -> dict[str, GatewayScenario]:
    found: dict[str, GatewayScenario] = {}
    for file in sorted((ROOT / "scenarios" / "gateway").glob("*.yaml")):
        for loaded in load_scenarios(file):
            if isinstance(loaded.scenario, GatewayScenario):
                found[loaded.scenario.id] = loaded.scenario
    return found


SCENARIOS: Final = _scenarios()


def wire_mutants(profile: str) -> list[str]:
    """The target file's mutants of its own wire, and the shared structural ones."""
    bugs = load_target(TARGET[profile]).bugs
    return [b for b in bugs if b in WIRE_BUGS or b in STRUCTURAL_SHARED]


CASES = [(p, None) for p in TARGET] + [(p, b) for p in TARGET for b in wire_mutants(p)]


@pytest.fixture(autouse=True)
def _installed() -> None:
    require_oracle(VALIDATE, installed_version)
    for package in (CLIENT, AI):
        require_oracle(package, lambda p=package: require_installed(p))


async def _run(
    profile: str, bug: str | None, ids: Sequence[str]
) -> list[tuple[str, GatewayObservation, tuple[Verdict, ...]]]:
    env = GatewayEnvironment(load_target(TARGET[profile]), bug=bug, time_scale=DEFAULT_TIME_SCALE)
    out = []
    try:
        async with asyncio.timeout(RUN_LIMIT_S):
            await env.start()
            for scenario_id in ids:
                result = await env.run(SCENARIOS[scenario_id])
                out.append((scenario_id, result.observation, result.verdicts))
    finally:
        await env.close()
    return out


def test_the_scenarios_named_exist() -> None:
    named = {*REFERENCE, *DEFAULT, *(s for ids in SHOWN_BY.values() for s in ids)}
    assert named <= set(SCENARIOS)


@pytest.mark.parametrize(
    ("profile", "bug"), CASES, ids=[f"{p}:{b or 'reference'}" for p, b in CASES]
)
def test_the_differential_holds_on_a_live_stream(profile: str, bug: str | None) -> None:
    ids = REFERENCE if bug is None else SHOWN_BY.get(bug, DEFAULT)
    runs = asyncio.run(_run(profile, bug, ids))
    diffs = [
        differential(obs, verdicts, name=f"{scenario} ({bug or 'reference'})")
        for scenario, obs, verdicts in runs
    ]
    assert all(d.events for d in diffs), differential_table(diffs)
    assert all(d.holds for d in diffs), differential_table(diffs)
