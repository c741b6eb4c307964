"""streamproof: a conformance harness with fault injection for agent streaming.

The public API is re-exported here and loaded lazily, so that importing the package (which
pytest does for the plugin in every run) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.fakes.model import FakeModel
    from harness.fakes.tools import FakeTools
    from harness.observation import (
        AuthProbe,
        ChatResponse,
        Frame,
        GatewayObservation,
        ModelCall,
        ToolCall,
    )
    from harness.observation_a2a import A2AClientObservation
    from harness.requirements import Requirement
    from harness.runner import GatewayEnvironment
    from harness.runner_a2a import A2AClientEnvironment
    from harness.scenario import GatewayScenario, ScenarioError, load_scenarios, parse_scenarios
    from harness.scenario_a2a import A2AClientScenario
    from harness.suites import REGISTRY
    from harness.suites.a2a_client.checks import check_a2a_client
    from harness.suites.gateway.checks import check_gateway
    from harness.targets.client import ClientTarget, load_client_target
    from harness.targets.gateway import GatewayTarget, load_target
    from harness.verdicts import Level, Outcome, Verdict

__version__ = "0.1.0"

_EXPORTS = {
    "A2AClientEnvironment": "harness.runner_a2a",
    "A2AClientObservation": "harness.observation_a2a",
    "A2AClientScenario": "harness.scenario_a2a",
    "ClientTarget": "harness.targets.client",
    "check_a2a_client": "harness.suites.a2a_client.checks",
    "load_client_target": "harness.targets.client",
    "AuthProbe": "harness.observation",
    "ChatResponse": "harness.observation",
    "FakeModel": "harness.fakes.model",
    "FakeTools": "harness.fakes.tools",
    "Frame": "harness.observation",
    "GatewayEnvironment": "harness.runner",
    "GatewayObservation": "harness.observation",
    "GatewayScenario": "harness.scenario",
    "GatewayTarget": "harness.targets.gateway",
    "Level": "harness.verdicts",
    "ModelCall": "harness.observation",
    "Outcome": "harness.verdicts",
    "REGISTRY": "harness.suites",
    "Requirement": "harness.requirements",
    "ScenarioError": "harness.scenario",
    "ToolCall": "harness.observation",
    "Verdict": "harness.verdicts",
    "check_gateway": "harness.checks",
    "load_scenarios": "harness.scenario",
    "load_target": "harness.targets.gateway",
    "parse_scenarios": "harness.scenario",
}

__all__ = [
    "REGISTRY",
    "A2AClientEnvironment",
    "A2AClientObservation",
    "A2AClientScenario",
    "AuthProbe",
    "ChatResponse",
    "ClientTarget",
    "FakeModel",
    "FakeTools",
    "Frame",
    "GatewayEnvironment",
    "GatewayObservation",
    "GatewayScenario",
    "GatewayTarget",
    "Level",
    "ModelCall",
    "Outcome",
    "Requirement",
    "ScenarioError",
    "ToolCall",
    "Verdict",
    "check_a2a_client",
    "check_gateway",
    "load_client_target",
    "load_scenarios",
    "load_target",
    "parse_scenarios",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
