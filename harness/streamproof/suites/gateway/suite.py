"""The gateway suite as the registry (:mod:`streamproof.suites`) sees it: its kind, scenario model,
target contract, reference and mutants, how to start its environment, and how a failure reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from streamproof.core.suite_interface import Reference
from streamproof.core.texts import compress
from streamproof.core.verdicts import Verdict, broken_summary
from streamproof.suites.gateway.reference.mutants import BUGS, CATALOG, CONCURRENT, INTENDED
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.config import DEFAULT_TARGET, GatewayTarget, load_target
from streamproof.suites.gateway.timeline import timeline

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
    "WIRE_REFERENCES",
    "environment",
    "load_target",
    "references",
    "render_failure",
    "summarize_observation",
    "timeline",
]

KIND = "gateway"
SCENARIO_FOLDER = "gateway"
"""The bundled scenarios' folder under ``scenarios/``."""
SCENARIO_MODEL = GatewayScenario
TARGET_MODEL = GatewayTarget
"""What a target file of this kind holds."""

WIRE_REFERENCES: Final[Mapping[str, Path]] = {
    "gateway-ag-ui": DEFAULT_TARGET.with_name("reference-ag-ui.yaml"),
    "gateway-ai-sdk-ui": DEFAULT_TARGET.with_name("reference-ai-sdk-ui.yaml"),
    "gateway-ag-ui-detach": DEFAULT_TARGET.with_name("reference-ag-ui-detach.yaml"),
}
"""The reference gateway on its other wires and under the detach policy: the mutant matrix's
name for each -> its target file, whose ``bugs`` are the mutants proven against it."""


def references() -> tuple[Reference, ...]:
    """The typed-frames reference with :data:`INTENDED`, then each of :data:`WIRE_REFERENCES`
    with the mutants its target file lists (its wire's own and those of every wire)."""
    out = [Reference(KIND, DEFAULT_TARGET, dict(INTENDED), dict(CONCURRENT))]
    for name, file in WIRE_REFERENCES.items():
        bugs = load_target(file).bugs
        intended = {bug: CATALOG.intended[bug] for bug in bugs}
        concurrent = {bug: CONCURRENT[bug] for bug in bugs if bug in CONCURRENT}
        out.append(Reference(name, file, intended, concurrent))
    return tuple(out)


def environment(
    target_file: str | Path | None,
    *,
    bug: str | None,
    time_scale: float,
    engine: str | None = None,
) -> Environment:
    """The fakes, the links and the gateway for ``target_file`` (the reference when ``None``),
    not started yet; ``bug`` is switched on only when it names one of this suite's mutants;
    ``engine`` carries out the links' plans unless a scenario names another (default inline)."""
    from streamproof.suites.gateway.runner import GatewayEnvironment

    target = load_target(target_file)
    return GatewayEnvironment(
        target,
        bug=bug if bug in BUGS or bug in target.bugs else None,
        time_scale=time_scale,
        engine=engine,
    )


def render_failure(scenario_id: str, result: Any, failing: list[Verdict]) -> str:
    """What a failed gateway scenario shows: the broken rules, the response, the frame log, the
    model and tool calls, the stored history and the tail of the gateway's output."""
    from streamproof.suites.gateway.checks.diagnosis import diagnose

    obs = result.observation
    diagnosis = diagnose(obs)
    if diagnosis is not None:
        # Say what was seen first, in one line; the broken rules follow from it, so they are
        # named on one line too, each as ``[ID LEVEL]`` as everywhere else (each verdict in
        # full is in results.json).
        lines = [
            f"scenario {scenario_id} on target {obs.target}: {diagnosis}",
            f"{broken_summary(failing)} as a result: "
            + ", ".join(f"[{v.requirement} {v.level.value}]" for v in failing),
        ]
    else:
        lines = [f"scenario {scenario_id} on target {obs.target}: {broken_summary(failing)}"]
        lines += [verdict.render() for verdict in failing]
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


def summarize_observation(observation: Any) -> dict[str, Any]:
    """What ``results.json`` keeps of a gateway scenario that passed: how the response ended,
    the frame sequence as one string (``tool_call tool_result delta×3 message done``), when the
    first and last frame came, how many model and tool calls and link events there were, which
    faults fired, and the stored history's length."""  # noqa: RUF002
    obs = observation
    response = obs.response
    summary: dict[str, Any] = {
        "response": {
            "status": response.status,
            "end": response.end,
            "elapsed_s": round(response.elapsed, 3),
        },
        "frames": len(obs.frames),
        "frame_sequence": compress([f.event for f in obs.frames], limit=40),
    }
    if obs.frames:
        summary["frames_s"] = [round(obs.frames[0].t, 3), round(obs.frames[-1].t, 3)]
    summary["model_calls"] = len(obs.model_calls)
    summary["tool_calls"] = len(obs.tool_calls)
    summary["link_events"] = {name: len(events) for name, events in obs.link_events.items()}
    faults = {
        name: n
        for name, events in obs.link_events.items()
        if (n := sum(1 for e in events if e.kind == "fault"))
    }
    if faults:
        summary["faults_fired"] = faults
    summary["history_events"] = None if obs.history is None else len(obs.history)
    if obs.history_error:
        summary["history_error"] = obs.history_error
    if obs.disconnected_at is not None:
        summary["disconnected_at_s"] = obs.disconnected_at
    if obs.auth_probes:
        summary["auth_probes"] = len(obs.auth_probes)
    return summary
