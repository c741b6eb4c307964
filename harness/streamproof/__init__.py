"""streamproof: a conformance harness with fault injection for agent streaming.

The public API is re-exported here and loaded lazily, so that importing the package (which
pytest does for the plugin in every run) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamproof.core.requirements import Requirement
    from streamproof.core.verdicts import Level, Outcome, Verdict
    from streamproof.fakes.model import FakeModel
    from streamproof.fakes.tools import FakeTools
    from streamproof.suites import REGISTRY
    from streamproof.suites.a2a_client.checks import check_a2a_client
    from streamproof.suites.a2a_client.observation import A2AClientObservation
    from streamproof.suites.a2a_client.runner import A2AClientEnvironment
    from streamproof.suites.a2a_client.scenario import A2AClientScenario
    from streamproof.suites.a2a_client.target import ClientTarget, load_client_target
    from streamproof.suites.gateway.observation import (
        AuthProbe,
        ChatResponse,
        Frame,
        GatewayObservation,
        ModelCall,
        ToolCall,
    )
    from streamproof.suites.gateway.profiles.registry import check_gateway
    from streamproof.suites.gateway.runner import GatewayEnvironment
    from streamproof.suites.gateway.scenario import GatewayScenario
    from streamproof.suites.gateway.target.config import GatewayTarget, load_target
    from streamproof.suites.loading import ScenarioError, load_scenarios, parse_scenarios

__version__ = "0.1.0"

_EXPORTS = {
    "A2AClientEnvironment": "streamproof.suites.a2a_client.runner",
    "A2AClientObservation": "streamproof.suites.a2a_client.observation",
    "A2AClientScenario": "streamproof.suites.a2a_client.scenario",
    "ClientTarget": "streamproof.suites.a2a_client.target",
    "check_a2a_client": "streamproof.suites.a2a_client.checks",
    "load_client_target": "streamproof.suites.a2a_client.target",
    "AuthProbe": "streamproof.suites.gateway.observation",
    "ChatResponse": "streamproof.suites.gateway.observation",
    "FakeModel": "streamproof.fakes.model",
    "FakeTools": "streamproof.fakes.tools",
    "Frame": "streamproof.suites.gateway.observation",
    "GatewayEnvironment": "streamproof.suites.gateway.runner",
    "GatewayObservation": "streamproof.suites.gateway.observation",
    "GatewayScenario": "streamproof.suites.gateway.scenario",
    "GatewayTarget": "streamproof.suites.gateway.target.config",
    "Level": "streamproof.core.verdicts",
    "ModelCall": "streamproof.suites.gateway.observation",
    "Outcome": "streamproof.core.verdicts",
    "REGISTRY": "streamproof.suites",
    "Requirement": "streamproof.core.requirements",
    "ScenarioError": "streamproof.suites.loading",
    "ToolCall": "streamproof.suites.gateway.observation",
    "Verdict": "streamproof.core.verdicts",
    "check_gateway": "streamproof.suites.gateway.profiles.registry",
    "load_scenarios": "streamproof.suites.loading",
    "load_target": "streamproof.suites.gateway.target.config",
    "parse_scenarios": "streamproof.suites.loading",
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
