"""The Java reference A2A client (``references/java-client``, a2a-java 0.3.3.Final) as a target:
it builds through its target file's ``build`` key, passes every MUST of the bundled A2A client
scenarios it can speak (the 0.3 wire; 1.0-only scenarios are skipped with the reason), and each
of its mutants is caught by the requirement meant for it.

Needs ``mvn`` and ``java`` (skipped without them, failed under ``STREAMPROOF_REQUIRE_ALL=1``).
The suite and the mutants run through the CLI in a subprocess, as a user runs them; each mutant
runs only the scenario that catches it, to keep the time low (the suite: about 95 s, each
mutant about 10 s, on two shared cores).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_executable
from harness.tests.run_pool import Plan, Run, RunPool, streamproof_run
from streamproof.mutants.matrix import failed_requirements
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import load_client_target
from streamproof.suites.loading import load_scenarios
from streamproof.targets.build import ensure_built

# Slow: builds and runs the Java client through the a2a-client suite. The suite's and the
# mutants' runs are planned ahead and run a few at a time on one worker (run_pool): each test
# asserts on its own run, the same run it made alone before.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("java-client")]

ROOT = Path(__file__).resolve().parents[3]
TARGET = ROOT / "targets" / "java-client.yaml"
SCENARIOS = ROOT / "scenarios" / "a2a_client"

MUTANTS: dict[str, tuple[str, str]] = {
    "no-watchdog": ("a2a_client/summary-survives-proxy-timeout", "A2A-C-RECOVERY"),
    "resend-on-drop": ("a2a_client/reset-mid-stream", "A2A-C-NO-RESEND"),
    "stream-end-as-completed": ("a2a_client/silent-cut-mid-stream", "A2A-C-STATUS"),
}
"""Java mutant -> (the scenario that catches it, the requirement meant to)."""


@pytest.fixture(scope="module")
def built() -> Path:
    """The Java client, built (or found up to date) through its target file's build key."""
    require_executable("mvn")
    require_executable("java")
    target = load_client_target(TARGET)
    assert target.build is not None
    asyncio.run(ensure_built(target.name, target.build))
    return TARGET


@pytest.fixture(scope="module")
def runs(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _run(run: Run) -> tuple[Run, dict[str, Any]]:
    results = run.report_dir / "results.json"
    assert results.exists(), run.tail()
    return run, run.report


def _only_1_0(scenario: A2AClientScenario) -> bool:
    return scenario.server.wire == "1.0"


def test_the_target_file_declares_what_the_client_does() -> None:
    target = load_client_target(TARGET)
    assert target.wires == ("0.3",)  # a2a-java 0.3.x refuses a 1.0-only card
    assert set(target.capabilities) == {"follow_up", "proxy_env"}
    assert target.startup_grace >= 3.0  # a JVM boots and loads classes first
    assert target.bug_env == "STREAMPROOF_BUG"
    assert set(target.bugs) == set(MUTANTS)  # every Java mutant has its catching scenario here
    assert target.build is not None and "target/streamproof-java-client.jar" in (
        target.build.outputs
    )


def _suite_run(report_dir: Path) -> Run:
    return streamproof_run(report_dir, "run", str(SCENARIOS), "--target", str(TARGET))


def test_the_java_client_passes_every_must_of_the_0_3_scenarios(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    run, report = _run(runs.run_of(request))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert report["summary"]["ok"] is True
    assert report["summary"]["must_failures"] == 0
    bundled = {
        s.id: s
        for f in sorted(SCENARIOS.glob("*.yaml"))
        for s in (entry.scenario for entry in load_scenarios(f))
        if isinstance(s, A2AClientScenario)
    }
    outcomes = {s["id"]: s for s in report["scenarios"]}
    assert set(outcomes) == set(bundled)
    for sid, scenario in bundled.items():
        got = outcomes[sid]
        if _only_1_0(scenario):
            assert got["outcome"] == "skipped", sid
            assert "wire 1.0 (the A2A 1.0 wire" in json.dumps(got), sid  # maybe after push
        else:
            assert got["outcome"] == "passed", (sid, got)
    # the scenarios written for a2a-java's traps ran and were judged, not skipped
    for sid in ("a2a_client/silent-cut-mid-stream", "a2a_client/resubscribe-refused-as-json"):
        assert outcomes[sid]["outcome"] == "passed"


def _mutant_run(bug: str, report_dir: Path) -> Run:
    args = [str(SCENARIOS), "--target", str(TARGET), "--bug", bug, "-k", MUTANTS[bug][0]]
    return streamproof_run(report_dir, "run", *args)


@pytest.mark.parametrize("bug", sorted(MUTANTS))
def test_each_java_mutant_is_caught_by_its_requirement(
    runs: RunPool, request: pytest.FixtureRequest, bug: str
) -> None:
    scenario, requirement = MUTANTS[bug]
    run, report = _run(runs.run_of(request))
    assert run.returncode == 1, run.stdout[-4000:] + run.stderr[-2000:]
    assert [s["id"] for s in report["scenarios"]] == [scenario]
    assert requirement in failed_requirements(report), (bug, failed_requirements(report))


REFUSED_AFTER_A_CLEAN_END = (
    ROOT / "harness/tests/suites/a2a_client/reference/refused_after_a_clean_end.yaml"
)


def _refused_run(report_dir: Path) -> Run:
    return streamproof_run(
        report_dir, "run", str(REFUSED_AFTER_A_CLEAN_END), "--target", str(TARGET)
    )


def test_a_refused_resubscribe_then_a_final_snapshot_is_the_end(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """The race a loaded machine once gave ``silent-cut-mid-stream``, made certain: the final
    snapshot ends the call, with no second tasks/get (the scenario file says why)."""
    run, report = _run(runs.run_of(request))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    (scenario,) = report["scenarios"]
    assert scenario["outcome"] == "passed"
    assert scenario["observation"]["requests"] == (
        "GET /.well-known/agent-card.json message/stream tasks/get tasks/resubscribe tasks/get"
    )
    refused = [
        item
        for item in scenario["timeline"]["items"]
        if str(item.get("label", "")).startswith("tasks/resubscribe")
    ]
    assert ["error -32004" in item["detail"] for item in refused] == [True]  # the race, planned


PLANS: dict[str, Plan] = {
    # the whole suite first
    "test_the_java_client_passes_every_must_of_the_0_3_scenarios": _suite_run,
    "test_each_java_mutant_is_caught_by_its_requirement": _mutant_run,
    "test_a_refused_resubscribe_then_a_final_snapshot_is_the_end": _refused_run,
}
"""Each pooled test's run (run_pool)."""
