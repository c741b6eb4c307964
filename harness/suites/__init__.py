"""The conformance suites, one package each: everything a kind of conformance is (its scenario
model, requirements, runner, checks, target contract, reference system and mutants).

- :mod:`harness.suites.gateway`: an SSE gateway in front of ADK (seed 000).
- :mod:`harness.suites.a2a_client`: an A2A client consuming ``message/stream`` (seed 001).
"""

from __future__ import annotations

# Importing a suite's requirements registers its rules: whoever imports any suite (a scenario
# model, a check, the CLI) finds every requirement in the registry.
from harness.requirements import REGISTRY
from harness.suites.a2a_client.requirements import A2A_CLIENT
from harness.suites.gateway.requirements import GATEWAY

__all__ = ["A2A_CLIENT", "GATEWAY", "REGISTRY"]

# Reports and the README list the gateway's rules first, whichever suite was imported first.
_ordered = {rule.id: rule for rule in [*GATEWAY, *A2A_CLIENT, *REGISTRY.values()]}
REGISTRY.clear()
REGISTRY.update(_ordered)
