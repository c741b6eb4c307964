"""The conformance suites, one package each: everything a kind of conformance is (its scenario
model, requirements, runner, checks, target contract, reference system and mutants).

- :mod:`streamproof.suites.gateway`: an SSE gateway in front of ADK (seed 000).
- :mod:`streamproof.suites.a2a_client`: an A2A client consuming ``message/stream`` (seed 001).
- :mod:`streamproof.suites.browser_client`: the page (or reducer) rendering a gateway's stream
  (seed 000's client rules).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from streamproof.core.requirements import REGISTRY

if TYPE_CHECKING:
    from streamproof.core.requirements import Requirement
    from streamproof.core.suite_interface import Environment, Suite
    from streamproof.suites.a2a_client.requirements import A2A_CLIENT
    from streamproof.suites.browser_client.requirements import BROWSER_CLIENT
    from streamproof.suites.gateway.requirements import GATEWAY

__all__ = [
    "A2A_CLIENT",
    "BROWSER_CLIENT",
    "GATEWAY",
    "REGISTRY",
    "SUITES",
    "Environment",
    "Suite",
    "kinds",
    "known_bugs",
    "suite",
]

_RULES = {
    "GATEWAY": "streamproof.suites.gateway.requirements",
    "A2A_CLIENT": "streamproof.suites.a2a_client.requirements",
    "BROWSER_CLIENT": "streamproof.suites.browser_client.requirements",
}
"""Each suite's rules: the list's name and the module that registers it on import."""


def _rules(name: str) -> list[Requirement]:
    return cast("list[Requirement]", getattr(importlib.import_module(_RULES[name]), name))


def _load_rules() -> None:
    """Import every suite's requirements (each registers its rules); reports and the docs
    list the gateway's seed rules first, then the A2A client's, the browser client's, then the
    wire profiles'."""
    REGISTRY.put_first([*_rules("GATEWAY"), *_rules("A2A_CLIENT"), *_rules("BROWSER_CLIENT")])


# Whoever looks a requirement up (a scenario model, a check, the CLI, a report) finds every
# suite's rules in the registry; a process that never looks one up (the reference A2A client
# started per turn) never imports them.
REGISTRY.add_loader(_load_rules)


def __getattr__(name: str) -> Any:
    """``GATEWAY``, ``A2A_CLIENT`` and ``BROWSER_CLIENT`` (the suites' rule lists) and the
    suite protocols, imported on first use."""
    if name in _RULES:
        return _rules(name)
    if name in ("Environment", "Suite"):
        return getattr(importlib.import_module("streamproof.core.suite_interface"), name)
    raise AttributeError(f"module 'streamproof.suites' has no attribute {name!r}")


SUITES: Mapping[str, str] = {
    "gateway": "streamproof.suites.gateway.suite",
    "a2a-client": "streamproof.suites.a2a_client.suite",
    "browser-client": "streamproof.suites.browser_client.suite",
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
    return cast("Suite", importlib.import_module(module))


def known_bugs(target_file: str | Path | None = None) -> list[str]:
    """The names ``--bug`` accepts for a run: the ``bugs`` a target file lists (a reference of
    its own, such as the Java client, takes only its own mutants), else every bundled
    reference's. A target file that cannot be loaded lists none (its loading reports why)."""
    if target_file is not None:
        import yaml

        from streamproof.targets.errors import TargetConfigError

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
