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
    from harness.requirements import Requirement
    from harness.suites import REGISTRY
    from harness.suites.a2a_client.checks import check_a2a_client
    from harness.suites.a2a_client.observation import A2AClientObservation
    from harness.suites.a2a_client.runner import A2AClientEnvironment
    from harness.suites.a2a_client.scenario import A2AClientScenario
    from harness.suites.a2a_client.target import ClientTarget, load_client_target
    from harness.suites.gateway.observation import (
        AuthProbe,
        ChatResponse,
        Frame,
        GatewayObservation,
        ModelCall,
        ToolCall,
    )
    from harness.suites.gateway.profiles.registry import check_gateway
    from harness.suites.gateway.runner import GatewayEnvironment
    from harness.suites.gateway.scenario import GatewayScenario
    from harness.suites.gateway.target import GatewayTarget, load_target
    from harness.suites.loading import ScenarioError, load_scenarios, parse_scenarios
    from harness.verdicts import Level, Outcome, Verdict

__version__ = "0.1.0"

_EXPORTS = {
    "A2AClientEnvironment": "harness.suites.a2a_client.runner",
    "A2AClientObservation": "harness.suites.a2a_client.observation",
    "A2AClientScenario": "harness.suites.a2a_client.scenario",
    "ClientTarget": "harness.suites.a2a_client.target",
    "check_a2a_client": "harness.suites.a2a_client.checks",
    "load_client_target": "harness.suites.a2a_client.target",
    "AuthProbe": "harness.suites.gateway.observation",
    "ChatResponse": "harness.suites.gateway.observation",
    "FakeModel": "harness.fakes.model",
    "FakeTools": "harness.fakes.tools",
    "Frame": "harness.suites.gateway.observation",
    "GatewayEnvironment": "harness.suites.gateway.runner",
    "GatewayObservation": "harness.suites.gateway.observation",
    "GatewayScenario": "harness.suites.gateway.scenario",
    "GatewayTarget": "harness.suites.gateway.target",
    "Level": "harness.verdicts",
    "ModelCall": "harness.suites.gateway.observation",
    "Outcome": "harness.verdicts",
    "REGISTRY": "harness.suites",
    "Requirement": "harness.requirements",
    "ScenarioError": "harness.suites.loading",
    "ToolCall": "harness.suites.gateway.observation",
    "Verdict": "harness.verdicts",
    "check_gateway": "harness.suites.gateway.profiles.registry",
    "load_scenarios": "harness.suites.loading",
    "load_target": "harness.suites.gateway.target",
    "parse_scenarios": "harness.suites.loading",
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
