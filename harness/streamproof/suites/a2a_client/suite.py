"""The A2A client suite as the registry (:mod:`streamproof.suites`) sees it: its kind, scenario
model, target contract, reference and mutants, how to start its environment, and how a failure
reads."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamproof.core.capabilities import Binding
from streamproof.core.suite_interface import Reference
from streamproof.core.texts import compress
from streamproof.core.verdicts import Verdict, broken_summary
from streamproof.suites.a2a_client.reference.mutants import BUGS, CONCURRENT, INTENDED
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import DEFAULT_CLIENT_TARGET as DEFAULT_TARGET
from streamproof.suites.a2a_client.target import ClientTarget
from streamproof.suites.a2a_client.target import load_client_target as load_target
from streamproof.suites.a2a_client.timeline import timeline

if TYPE_CHECKING:
    from streamproof.core.suite_interface import Environment

__all__ = [
    "BUGS",
    "CONCURRENT",
    "DEFAULT_TARGET",
    "INTENDED",
    "KIND",
    "SCENARIO_FOLDER",
    "SCENARIO_MODEL",
    "TARGET_MODEL",
    "environment",
    "load_target",
    "references",
    "render_failure",
    "summarize_observation",
    "timeline",
    "variants",
]

KIND = "a2a-client"
SCENARIO_FOLDER = "a2a_client"
"""The bundled scenarios' folder under ``scenarios/``."""
SCENARIO_MODEL = A2AClientScenario
TARGET_MODEL = ClientTarget
"""What a target file of this kind holds."""


def variants(scenario: A2AClientScenario, target_file: str | Path | None) -> tuple[Any, ...]:
    """The runs of ``scenario`` on the run's target: one per A2A binding the client declares
    that can carry it (:meth:`A2AClientScenario.variants`). The target is the run's
    ``--streamproof-target`` (the bundled reference when none); a target of another kind, or
    one that cannot be loaded (its run reports why), counts as JSON-RPC only."""
    return scenario.variants(_bindings(str(target_file) if target_file is not None else None))


@lru_cache(maxsize=8)
def _bindings(target_file: str | None) -> tuple[Binding, ...]:
    from streamproof.targets.errors import TargetConfigError

    try:
        return load_target(target_file).bindings
    except (TargetConfigError, OSError, ValueError):
        return ("jsonrpc",)


def references() -> tuple[Reference, ...]:
    """The reference client and its mutants (it has one wire set and one policy). The
    reference runs on every binding it declares; its mutants on JSON-RPC only, since none is
    binding-specific (docs/explanation/performance.md#the-mutant-matrix)."""
    return (
        Reference(
            KIND, DEFAULT_TARGET, dict(INTENDED), dict(CONCURRENT), mutant_runs="not binding_rest"
        ),
    )


def environment(
    target_file: str | Path | None,
    *,
    bug: str | None,
    time_scale: float,
    engine: str | None = None,
) -> Environment:
    """The fake A2A server, its link and the client target (the reference when ``None``), not
    started yet; ``bug`` is switched on only when it names one of this suite's mutants;
    ``engine`` carries out the link's plan unless a scenario names another (default inline)."""
    from streamproof.suites.a2a_client.runner import A2AClientEnvironment

    target = load_target(target_file)
    return A2AClientEnvironment(
        target,
        bug=bug if bug in BUGS or bug in target.bugs else None,
        time_scale=time_scale,
        engine=engine,
    )


def render_failure(scenario_id: str, result: Any, failing: list[Verdict]) -> str:
    """What a failed client scenario shows: the broken rules, then the call's timeline."""
    obs = result.observation
    lines = [
        f"scenario {scenario_id} on target {obs.target}: {broken_summary(failing)}",
        *(verdict.render() for verdict in failing),
        "",
        obs.timeline(),
    ]
    return "\n".join(lines)


def summarize_observation(observation: Any) -> dict[str, Any]:
    """What ``results.json`` keeps of a client scenario that passed: the wire, each turn's
    outcome and timing, the calls the fake server received as one string (``message/stream
    tasks/get tasks/resubscribe``), the tasks created and how they ended, and what the link saw
    and fired."""
    obs = observation
    turns: list[dict[str, Any]] = []
    for turn in obs.turns:
        entry: dict[str, Any] = {"turn": turn.turn, "exit_code": turn.exit_code}
        if turn.result is not None:
            entry["status"] = turn.result.status
            entry["incomplete"] = turn.result.incomplete
            entry["artifacts"] = len(turn.result.artifacts)
        if turn.failure is not None:
            entry["failure"] = turn.failure.kind
        if turn.t_result is not None:
            entry["result_s"] = round(turn.t_result - turn.t_start, 3)
        turns.append(entry)
    requests = [r.rpc_method or f"{r.http_method} {r.path}" for r in obs.ledger.requests]
    summary: dict[str, Any] = {
        "wire": obs.wire,
        "binding": obs.binding,
        "turns": turns,
        "requests": compress(requests, limit=40),
        "tasks_created": len(obs.ledger.tasks),
        "server_tasks": [task.state for task in obs.server_tasks],
    }
    if obs.link_events is not None:
        summary["link_events"] = len(obs.link_events)
        summary["faults_fired"] = sum(1 for e in obs.link_events if e.kind == "fault")
    return summary
