"""The Java reference gateway (``references/java-gateway``: the seed's ChatStreamController on
ADK Java 1.8.0 and Spring Boot) through the CLI, as a user runs it: ``streamproof run
scenarios/gateway --target targets/java-gateway.yaml``. The target file's ``build`` key has
Maven build the jar first (once; skipped while its sources are unchanged).

Proven both ways: the correct gateway passes every MUST it serves (and every SHOULD but those
in :data:`SHOULD_UNMET`, each with the reason), and each Java mutant,
switched by ``STREAMPROOF_BUG``, fails the requirement meant for it. Needs ``mvn`` and
``java``: without them the tests skip, and fail under ``STREAMPROOF_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_executable
from harness.tests.run_pool import Plan, Run, RunPool, streamproof_run
from streamproof.suites.gateway.reference.mutants import INTENDED
from streamproof.suites.gateway.target.config import load_target
from streamproof.targets.build import ensure_built

# Slow: builds and runs the Java gateway, then the gateway suite against it. The suite's and
# the mutants' runs are planned ahead and run a few at a time on one worker (run_pool): each
# test asserts on its own run, the same run it made alone before.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("java-gateway")]

ROOT = Path(__file__).resolve().parents[3]
TARGET = ROOT / "targets" / "java-gateway.yaml"
SCENARIOS = ROOT / "scenarios" / "gateway"

SHOULD_UNMET = {("gateway/browser-gone-while-model-stalls", "GW-DISPOSE-IDLE")}
"""The SHOULDs the correct Java gateway does not meet, each for a reason of its stack: Spring's
SseEmitter on Tomcat notices a closed tab only when its next send fails, so while the model
stalls the model call stays open until the model writes again (the seed's wiring, disposal on
completion, timeout and send failure, holds: GW-DISPOSE passes)."""

MUTANTS: dict[str, tuple[str, str]] = {
    "aggregate-as-delta": ("plain_streamed_answer.yaml", "gateway/plain-streamed-answer"),
    "event-id-as-frame-id": ("plain_streamed_answer.yaml", "gateway/plain-streamed-answer"),
    "leak-tool-payload": ("worked_example.yaml", "gateway/one-tool-call-streamed"),
    "no-dispose": ("browser_gone.yaml", "gateway/browser-gone-mid-stream"),
    "no-llm-budget": ("runaway_tool_loop.yaml", "gateway/runaway-tool-loop"),
    "swallow-error-event": ("max_tokens.yaml", "gateway/max-tokens-error-event"),
}
"""Java mutant -> the scenario that catches it (file, id). Each reuses the Python reference's
name for the same defect, so its intended requirement is the Python one's (INTENDED)."""


@pytest.fixture(scope="module", autouse=True)
def _jdk_and_maven() -> None:
    require_executable("java")
    require_executable("mvn")


def streamproof(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _with(report: dict[str, Any], outcome: str) -> set[tuple[str, str]]:
    """(scenario id, requirement or expectation id) of every verdict with ``outcome``."""
    return {
        (scenario["id"], v["requirement"])
        for scenario in report["scenarios"]
        for v in scenario.get("verdicts", [])
        if v["outcome"] == outcome
    }


def _failed(report: dict[str, Any]) -> dict[str, set[str]]:
    """Scenario id -> the requirement and expectation ids with a failing verdict there."""
    failed: dict[str, set[str]] = {}
    for sid, rid in _with(report, "fail"):
        failed.setdefault(sid, set()).add(rid)
    return failed


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    """The pool, once the gateway is built (or found up to date) through its target file's
    build key: the runs it starts together then find the jar there."""
    target = load_target(TARGET)
    assert target.build is not None
    asyncio.run(ensure_built(target.name, target.build))
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _suite_run(report_dir: Path) -> Run:
    return streamproof_run(report_dir, "run", str(SCENARIOS), "--target", str(TARGET), timeout=1500)


def test_java_gateway_passes_every_must_it_serves(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    run = runs.run_of(request)
    report = run.report
    assert report["summary"]["target_errors"] == 0, run.stdout[-6000:]
    assert run.returncode == 0, run.stdout[-8000:]
    assert not _failed(report), run.stdout[-8000:]
    assert _with(report, "non-strict") == SHOULD_UNMET, run.stdout[-8000:]
    by_id = {s["id"]: s for s in report["scenarios"]}
    worked = by_id["gateway/one-tool-call-streamed"]
    assert worked["outcome"] == "passed"
    # Every scenario the gateway can serve ran: only multi_agent ones are skipped.
    skipped = [s for s in report["scenarios"] if s["outcome"] == "skipped"]
    assert all(s["id"].startswith("gateway/multi-agent") for s in skipped), skipped
    assert report["summary"]["passed"] == report["summary"]["scenarios"] - len(skipped)
    print(f"streamproof run scenarios/gateway on the Java gateway: {run.elapsed:.1f}s wall")


def _mutant_run(bug: str, report_dir: Path) -> Run:
    file, scenario = MUTANTS[bug]
    return streamproof_run(
        report_dir,
        "run",
        str(SCENARIOS / file),
        "-k",
        scenario,
        "--target",
        str(TARGET),
        "--bug",
        bug,
        "-q",
    )


@pytest.mark.parametrize("bug", sorted(MUTANTS))
def test_java_mutant_fails_its_requirement(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    scenario = MUTANTS[bug][1]
    requirement = INTENDED[bug]
    run = runs.run_of(request)
    assert run.returncode == 1, run.tail()
    report = run.report
    assert report["environment"]["bug"] == bug
    assert requirement in _failed(report).get(scenario, set()), run.stdout[-4000:]


PLANS: dict[str, Plan] = {
    # the whole suite first
    "test_java_gateway_passes_every_must_it_serves": _suite_run,
    "test_java_mutant_fails_its_requirement": _mutant_run,
}
"""Each pooled test's run (run_pool)."""


def test_a_bug_the_java_gateway_lacks_is_refused_by_name(tmp_path: Path) -> None:
    """A Python reference mutant the Java gateway does not have: its target file lists its own
    ``bugs``, so the run refuses the name as bad input before building or starting anything,
    naming the ones it has."""
    run = streamproof(
        "run",
        str(SCENARIOS / "plain_streamed_answer.yaml"),
        "--target",
        str(TARGET),
        "--bug",
        "tidy-message-text",
        "--report-dir",
        str(tmp_path),
        timeout=120,
    )
    assert run.returncode == 2, run.stdout[-4000:] + run.stderr[-2000:]
    said = run.stdout + run.stderr
    assert "--bug tidy-message-text: unknown; choose one of aggregate-as-delta" in said
    assert "Traceback" not in run.stdout + run.stderr
