"""The conformance suites, one package each: everything a kind of conformance is (its scenario
model, requirements, runner, checks, target contract, reference system and mutants).

- :mod:`harness.suites.gateway`: an SSE gateway in front of ADK (seed 000).
- :mod:`harness.suites.a2a_client`: an A2A client consuming ``message/stream`` (seed 001).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import yaml

# Importing a suite's requirements registers its rules: whoever imports any suite (a scenario
# model, a check, the CLI) finds every requirement in the registry.
from harness.requirements import REGISTRY
from harness.suite_interface import Environment, Suite
from harness.suites.a2a_client.requirements import A2A_CLIENT
from harness.suites.gateway.requirements import GATEWAY

__all__ = [
    "A2A_CLIENT",
    "GATEWAY",
    "REGISTRY",
    "SUITES",
    "Environment",
    "Suite",
    "kinds",
    "known_bugs",
    "suite",
]

# Reports and the README list the gateway's rules first, whichever suite was imported first.
_ordered = {rule.id: rule for rule in [*GATEWAY, *A2A_CLIENT, *REGISTRY.values()]}
REGISTRY.clear()
REGISTRY.update(_ordered)


SUITES: Mapping[str, str] = {
    "gateway": "harness.suites.gateway.suite",
    "a2a-client": "harness.suites.a2a_client.suite",
}
"""Scenario kind -> the module that describes its suite. Adding a suite is adding its package
and one line here; the CLI, the pytest plugin, the mutant matrix and the reports find it
through :func:`suite`, and a suite is imported only when it is used."""


def kinds() -> tuple[str, ...]:
    """Every scenario kind, in a fixed order."""
    return tuple(SUITES)


def suite(kind: str) -> Suite:
    """The suite of ``kind`` (``KeyError`` naming the known kinds when there is none)."""
    try:
        module = SUITES[kind]
    except KeyError:
        raise KeyError(f"unknown scenario kind {kind!r}; kinds are {', '.join(SUITES)}") from None
    return cast(Suite, importlib.import_module(module))


def known_bugs(target_file: str | Path | None = None) -> list[str]:
    """The names ``--bug`` accepts for a run: the ``bugs`` a target file lists (a reference of
    its own, such as the Java client, takes only its own mutants), else every bundled
    reference's. A target file that cannot be loaded lists none (its loading reports why)."""
    if target_file is not None:
        from harness.targets.errors import TargetConfigError

        try:
            data = yaml.safe_load(Path(target_file).read_text(encoding="utf-8"))
            kind = data.get("kind", "gateway") if isinstance(data, dict) else None
            target = suite(kind).load_target(target_file) if isinstance(kind, str) else None
        except (OSError, yaml.YAMLError, KeyError, TargetConfigError):
            target = None
        own: tuple[str, ...] = tuple(getattr(target, "bugs", ()))
        if own:
            return list(own)
    return [name for kind in kinds() for name in suite(kind).BUGS]
