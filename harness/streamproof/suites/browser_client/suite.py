"""The browser-client suite as the registry (:mod:`streamproof.suites`) sees it: its kind,
scenario model, target contract, references and mutants, how to start its environment, and how
a failure reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamproof.core.suite_interface import Reference
from streamproof.core.texts import compress
from streamproof.core.verdicts import Verdict, broken_summary
from streamproof.suites.browser_client.observation import render_state
from streamproof.suites.browser_client.reference.mutants import (
    AG_UI_INTENDED,
    BUGS,
    INTENDED,
    REDUCER_INTENDED,
)
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.browser_client.target import AG_UI_TARGET, REDUCER_TARGET, BrowserTarget
from streamproof.suites.browser_client.target import DEFAULT_PAGE_TARGET as DEFAULT_TARGET
from streamproof.suites.browser_client.target import load_browser_target as load_target
from streamproof.suites.browser_client.timeline import timeline

if TYPE_CHECKING:
    from streamproof.core.suite_interface import Environment

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
    "references",
    "render_failure",
    "summarize_observation",
    "timeline",
]

KIND = "browser-client"
SCENARIO_FOLDER = "browser_client"
SCENARIO_MODEL = BrowserClientScenario
TARGET_MODEL = BrowserTarget


def references() -> tuple[Reference, ...]:
    """The reference page (every mutant), the reference reducer module (the reducer's) and
    the AG-UI reference page (its own three)."""
    return (
        Reference(KIND, DEFAULT_TARGET, dict(INTENDED)),
        Reference(f"{KIND}-reducer", REDUCER_TARGET, dict(REDUCER_INTENDED)),
        Reference(f"{KIND}-ag-ui", AG_UI_TARGET, dict(AG_UI_INTENDED)),
    )


def environment(
    target_file: str | Path | None,
    *,
    bug: str | None,
    time_scale: float,
    engine: str | None = None,
) -> Environment:
    """The fake gateway, its link, the page's server and Chromium (or, for a reducer module,
    Node per scenario), not started yet; ``bug`` is switched on only when it names one of this
    suite's mutants or the target's own."""
    from streamproof.suites.browser_client.runner import BrowserClientEnvironment

    target = load_target(target_file)
    return BrowserClientEnvironment(
        target,
        bug=bug if bug in BUGS or bug in target.bugs else None,
        time_scale=time_scale,
        engine=engine,
    )


def render_failure(scenario_id: str, result: Any, failing: list[Verdict]) -> str:
    obs = result.observation
    lines = [
        f"scenario {scenario_id} on target {obs.target}: {broken_summary(failing)}",
        *(verdict.render() for verdict in failing),
        "",
        obs.timeline(),
    ]
    if obs.console_errors:
        lines += ["", "the page's console errors:", *obs.console_errors[:10]]
    return "\n".join(lines)


def summarize_observation(observation: Any) -> dict[str, Any]:
    """What ``results.json`` keeps of a browser-client scenario that passed: the frames as one
    string, how many reached the page, the page's requests, how the stream ended, and the
    last screen."""
    obs = observation
    summary: dict[str, Any] = {
        "mode": obs.mode,
        "frames": compress([f.type for f in obs.frames], limit=40),
        "frames_reached": sum(1 for f in obs.frames if f.reached_page),
        "requests": compress(
            [f"{r.method} {r.role}" for r in obs.requests if r.role != "preflight"], limit=20
        ),
        "stream_end": obs.stream_end,
        "screen_states": len(obs.states),
    }
    if obs.states:
        summary["last_screen"] = render_state(obs.states[-1])
    return summary
