"""The A2A client suite as the registry (:mod:`harness.suites`) sees it: its kind, scenario
model, target contract, reference and mutants, how to start its environment, and how a failure
reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.suites.a2a_client.reference.mutants import BUGS, INTENDED
from harness.suites.a2a_client.scenario import A2AClientScenario
from harness.suites.a2a_client.target import DEFAULT_CLIENT_TARGET as DEFAULT_TARGET
from harness.suites.a2a_client.target import ClientTarget
from harness.suites.a2a_client.target import load_client_target as load_target
from harness.verdicts import Verdict

if TYPE_CHECKING:
    from harness.suite_interface import Environment

__all__ = [
    "BUGS",
    "DEFAULT_TARGET",
    "INTENDED",
    "KIND",
    "SCENARIO_FOLDER",
    "SCENARIO_MODEL",
    "TARGET_MODEL",
    "environment",
    "load_target",
    "render_failure",
]

KIND = "a2a-client"
SCENARIO_FOLDER = "a2a_client"
"""The bundled scenarios' folder under ``scenarios/``."""
SCENARIO_MODEL = A2AClientScenario
TARGET_MODEL = ClientTarget
"""What a target file of this kind holds."""


def environment(
    target_file: str | Path | None, *, bug: str | None, time_scale: float
) -> Environment:
    """The fake A2A server, its link and the client target (the reference when ``None``), not
    started yet; ``bug`` is switched on only when it names one of this suite's mutants."""
    from harness.suites.a2a_client.runner import A2AClientEnvironment

    return A2AClientEnvironment(
        load_target(target_file), bug=bug if bug in BUGS else None, time_scale=time_scale
    )


def render_failure(scenario_id: str, result: Any, failing: list[Verdict]) -> str:
    """What a failed client scenario shows: the broken rules, then the call's timeline."""
    obs = result.observation
    lines = [
        f"scenario {scenario_id} on target {obs.target}: {len(failing)} requirement(s) broken",
        *(verdict.render() for verdict in failing),
        "",
        obs.timeline(),
    ]
    return "\n".join(lines)
