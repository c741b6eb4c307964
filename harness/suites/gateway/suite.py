"""The gateway suite as the registry (:mod:`harness.suites`) sees it: its kind, scenario model,
target contract, reference and mutants, how to start its environment, and how a failure reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.suites.gateway.reference.mutants import BUGS, INTENDED
from harness.suites.gateway.scenario import GatewayScenario
from harness.suites.gateway.target import DEFAULT_TARGET, GatewayTarget, load_target
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

KIND = "gateway"
SCENARIO_FOLDER = "gateway"
"""The bundled scenarios' folder under ``scenarios/``."""
SCENARIO_MODEL = GatewayScenario
TARGET_MODEL = GatewayTarget
"""What a target file of this kind holds."""


def environment(
    target_file: str | Path | None, *, bug: str | None, time_scale: float
) -> Environment:
    """The fakes, the links and the gateway for ``target_file`` (the reference when ``None``),
    not started yet; ``bug`` is switched on only when it names one of this suite's mutants."""
    from harness.suites.gateway.runner import GatewayEnvironment

    return GatewayEnvironment(
        load_target(target_file), bug=bug if bug in BUGS else None, time_scale=time_scale
    )


def render_failure(scenario_id: str, result: Any, failing: list[Verdict]) -> str:
    """What a failed gateway scenario shows: the broken rules, the response, the frame log, the
    model and tool calls, the stored history and the tail of the gateway's output."""
    obs = result.observation
    lines = [f"scenario {scenario_id} on target {obs.target}: {len(failing)} requirement(s) broken"]
    for verdict in failing:
        lines.append(verdict.render())
    lines.append("")
    lines.append(
        f"response: status={obs.response.status} content-type={obs.response.content_type} "
        f"end={obs.response.end}" + (f" ({obs.response.error})" if obs.response.error else "")
    )
    lines.append("frames:")
    lines.append(obs.frame_log(limit=30))
    lines.append(f"model calls: {len(obs.model_calls)}")
    for call in obs.model_calls[:8]:
        what = call.error_sent or call.function_calls_sent or repr(call.text_sent[:60])
        lines.append(
            f"  #{call.index} t={call.t:.3f}s status={call.status} completed={call.completed} "
            f"closed_early={call.closed_early} sent={what}"
        )
    if obs.tool_calls:
        lines.append("tool calls: " + ", ".join(f"{c.tool}@{c.t:.3f}s" for c in obs.tool_calls))
    if obs.history is not None:
        lines.append(f"stored history: {len(obs.history)} event(s)")
    elif obs.history_error:
        lines.append(f"history: {obs.history_error}")
    if obs.target_log:
        tail = "\n".join(obs.target_log.splitlines()[-15:])
        lines.append("target output (tail):\n" + tail)
    return "\n".join(lines)
