"""The whole path on real parts: the CLI, the plugin, the fakes and the reference gateway on
google-adk. Each mutant of the reference must fail the suite with its requirement id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.tests.conftest import require_module
from harness.tests.run_pool import Plan, Run, RunPool, streamproof_command, streamproof_run
from streamproof.core.verdicts import Level
from streamproof.suites import REGISTRY
from streamproof.suites.gateway.reference.mutants import (
    BUGS,
    CONCURRENT,
    INTENDED,
    WIRE_BUGS,
    WIRE_INTENDED,
)
from streamproof.suites.gateway.suite import WIRE_REFERENCES
from streamproof.suites.gateway.target.config import load_target
from streamproof.suites.loading import load_scenarios

# Slow: every test runs streamproof (and the reference gateway on google-adk) in a subprocess.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
GATEWAY_SCENARIOS = ROOT / "scenarios" / "gateway"


def streamproof(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return streamproof_command(*args, timeout=timeout)


@pytest.fixture(scope="module", autouse=True)
def _adk() -> None:
    require_module("google.adk")


# The whole-suite and mutant runs below are planned ahead and run a few at a time (run_pool):
# each test asserts on its own run, exactly the run it made alone before. Two groups, so the
# typed reference's runs and the wire references' can go to the two workers.
TYPED = pytest.mark.xdist_group("end-to-end-typed")
WIRES = pytest.mark.xdist_group("end-to-end-wires")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _reference_run(report_dir: Path) -> Run:
    return streamproof_run(report_dir, "run", str(GATEWAY_SCENARIOS))


@TYPED
def test_reference_passes_every_gateway_scenario(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    run = runs.run_of(request)
    assert run.returncode == 0, run.tail(6000, 3000)
    report = run.report
    assert report["summary"]["failed"] == 0
    assert report["summary"]["passed"] == report["summary"]["scenarios"] >= 10
    scenario = next(s for s in report["scenarios"] if s["id"] == "gateway/one-tool-call-streamed")
    assert scenario["observation_detail"] == "summary"  # it passed: the suite's summary
    frames = scenario["observation"]["frame_sequence"].split()
    assert frames[:2] == ["tool_call", "tool_result"] and frames[-2:] == ["message", "done"]
    assert all(v["outcome"] in ("pass", "not-applicable") for v in scenario["verdicts"])
    junit = (run.report_dir / "junit.xml").read_text()
    assert junit.count("<testcase") == report["summary"]["scenarios"]
    assert_declared_requirements_judged(report)
    counts = report["summary"]["verdicts"]["requirement"]
    assert counts["pass"] > 0 and counts["not-applicable"] > 0 and counts["fail"] == 0
    print(f"streamproof run scenarios/gateway: {run.elapsed:.1f}s wall")


POLICY_RULES = {"GW-DETACH-PERSIST-ONCE": "detach", "GW-DISPOSE": "dispose"}
"""Rules that a scenario where the browser leaves declares for either disconnect policy; a
target judges only its own policy's (the bundled references dispose)."""


def assert_declared_requirements_judged(report: dict[str, object], policy: str = "dispose") -> None:
    """Every requirement a scenario declares in ``requirements:`` was judged there (a pass or
    a failure, never only not applicable): a scenario exercises what it says it tests (of the
    disconnect rules, those of the target's ``policy``)."""
    other = {rid for rid, p in POLICY_RULES.items() if p != policy}
    unjudged = []
    for scenario in report["scenarios"]:  # type: ignore[attr-defined]
        judged = {
            v["requirement"]
            for v in scenario.get("verdicts", [])
            if v["outcome"] in ("pass", "fail", "non-strict")
        }
        unjudged += [
            f"{scenario['id']}: {r}"
            for r in scenario["requirements"]
            if r not in judged and r not in other
        ]
    assert not unjudged, "declared but never judged: " + ", ".join(unjudged)


# Mutants whose rule the scenarios that declare it cannot show, and the scenarios that do
# (measured against the whole suite): plain-streamed-answer declares GW-FRAME-ID-FRESH, but its
# events carry one frame each, so a counter that advances per event is never seen reusing one.
SHOWN_ALSO_BY = {
    "reused-frame-ids": ("gateway/text-then-tool-call", "gateway/one-tool-call-streamed"),
}


CONCURRENT_SHOWN_BY = {
    "global-turn-lock": ("gateway/answer-streams-while-the-model-pauses",),
    "last-session-wins": ("gateway/plain-streamed-answer", "gateway/one-tool-call-streamed"),
    "shared-draft": ("gateway/plain-streamed-answer", "gateway/one-tool-call-streamed"),
}
"""The scenarios where each mutant of state shared between sessions fails its rule with
sessions at once (measured against the whole suite with ``--concurrency``: global-turn-lock's
streams outlast the pause there only; the other two fail in most scenarios, these two among
them). No scenario declares a concurrency rule: they are judged on every scenario run that way.
``streamproof mutants`` runs them against the whole suite."""


def scenarios_showing(bug: str, requirement: str) -> tuple[list[str], list[str]]:
    """The bundled gateway scenarios built to test ``requirement`` (its id in their
    ``requirements:``), and any :data:`SHOWN_ALSO_BY` names for ``bug``: files and ids."""
    files: list[str] = []
    ids: list[str] = []
    also = SHOWN_ALSO_BY.get(bug, ())
    for file in sorted(GATEWAY_SCENARIOS.glob("*.yaml")):
        chosen = [
            s.scenario.id
            for s in load_scenarios(file)
            if requirement in s.scenario.requirements or s.scenario.id in also
        ]
        if chosen:
            files.append(str(file))
            ids += chosen
    return files, ids


def _mutant_run(bug: str, report_dir: Path) -> Run:
    requirement = REGISTRY[INTENDED[bug]]
    # A SHOULD does not fail a run unless --strict; its mutant is proven under --strict.
    strict = ["--strict"] if requirement.level is Level.SHOULD else []
    if bug in CONCURRENT:
        # A defect in state shared between sessions shows only with sessions at once: the
        # scenarios where it shows, run that way.
        ids = list(CONCURRENT_SHOWN_BY[bug])
        selection = [
            str(GATEWAY_SCENARIOS),
            "-k",
            " or ".join(ids),
            "--concurrency",
            str(CONCURRENT[bug]),
        ]
    else:
        files, ids = scenarios_showing(bug, requirement.id)
        selection = [*files, "-k", " or ".join(ids)]
    return streamproof_run(report_dir, "run", *selection, "--bug", bug, "-q", *strict)


def _assert_mutant_caught(bug: str, run: Run) -> None:
    requirement = REGISTRY[INTENDED[bug]]
    ids = scenarios_showing(bug, requirement.id)[1]
    assert ids or bug in CONCURRENT, f"no bundled gateway scenario declares {requirement.id}"
    if bug in CONCURRENT:
        ids = list(CONCURRENT_SHOWN_BY[bug])
    assert run.returncode == 1, run.tail()
    assert f"[{requirement.id} {requirement.level.value}]" in run.stdout
    report = run.report
    assert sorted(s["id"] for s in report["scenarios"]) == sorted(ids)  # exactly those ran
    caught = report["requirements"][requirement.id]
    assert caught["fail"] + caught["non-strict"] >= 1, caught


@TYPED
@pytest.mark.parametrize("bug", sorted(set(BUGS) - set(CONCURRENT)))
def test_every_mutant_fails_with_its_requirement_id(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """Each mutant fails the run under the requirement meant for it, on the scenarios that
    can show that rule: those that declare it (test_reference_passes_every_gateway_scenario
    proves the reference passes each and judges what it declares) plus SHOWN_ALSO_BY's, not
    the whole suite (a ninth of the scenario runs). A failure there is the mutant's, since the
    reference passes the same scenarios. ``streamproof mutants`` still runs every mutant
    against the whole suite and also reports what else each one breaks."""
    _assert_mutant_caught(bug, runs.run_of(request))


@TYPED
@pytest.mark.parametrize("bug", sorted(CONCURRENT))
def test_every_concurrency_mutant_fails_with_its_requirement_id(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """The mutants of state shared between sessions, as above, with sessions at once
    (``--concurrency``) on the scenarios where each shows (:data:`CONCURRENT_SHOWN_BY`)."""
    _assert_mutant_caught(bug, runs.run_of(request))


# A wire's own rule (AGUI-..., AISDK-...) is judged on every scenario run against a target of
# that profile, so no scenario declares it: the plainest streamed answer shows each of them.
PLAIN = "gateway/plain-streamed-answer"


def wire_reference(bug: str) -> Path:
    """The one target file of the reference gateway whose ``bugs`` list ``bug``: its wire's
    (for the detach policy's mutant, the detach reference's)."""
    owners = [file for file in WIRE_REFERENCES.values() if bug in load_target(file).bugs]
    assert len(owners) == 1, (bug, owners)
    return owners[0]


def wire_scenarios(bug: str) -> tuple[list[str], list[str]]:
    """The bundled scenarios that can show wire mutant ``bug``'s rule: those that declare it,
    or :data:`PLAIN` for a rule of the wire itself."""
    requirement = REGISTRY[WIRE_INTENDED[bug]]
    if requirement.everywhere() is not None:
        return [str(GATEWAY_SCENARIOS / "plain_streamed_answer.yaml")], [PLAIN]
    return scenarios_showing(bug, requirement.id)


def _wire_reference_selection(reference: str) -> tuple[list[str], list[str]]:
    """What the mutants of ``reference``'s target run: files and scenario ids."""
    target = WIRE_REFERENCES[reference]
    files: set[str] = set()
    ids: set[str] = set()
    for bug in WIRE_BUGS:
        if wire_reference(bug) == target:
            chosen = wire_scenarios(bug)
            files.update(chosen[0])
            ids.update(chosen[1])
    return sorted(files), sorted(ids)


def _wire_reference_run(reference: str, report_dir: Path) -> Run:
    files, ids = _wire_reference_selection(reference)
    target = str(WIRE_REFERENCES[reference])
    return streamproof_run(
        report_dir, "run", *files, "-k", " or ".join(ids), "--target", target, "--strict", "-q"
    )


@WIRES
@pytest.mark.parametrize("reference", sorted(WIRE_REFERENCES))
def test_each_wire_reference_passes_what_its_mutants_run(
    reference: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """The AG-UI, AI SDK and detach references pass every scenario their mutants' tests below
    run, under --strict: a failure there is the mutant's. (``streamproof mutants`` runs each
    of them against the whole suite.)"""
    ids = _wire_reference_selection(reference)[1]
    run = runs.run_of(request)
    assert run.returncode == 0, run.tail()
    report = run.report
    assert sorted(s["id"] for s in report["scenarios"]) == sorted(ids)
    assert report["summary"]["passed"] == len(ids)


def _wire_mutant_run(bug: str, report_dir: Path) -> Run:
    requirement = REGISTRY[WIRE_INTENDED[bug]]
    files, ids = wire_scenarios(bug)
    strict = ["--strict"] if requirement.level is Level.SHOULD else []
    target = str(wire_reference(bug))
    return streamproof_run(
        report_dir,
        "run",
        *files,
        "-k",
        " or ".join(ids),
        "--target",
        target,
        "--bug",
        bug,
        "-q",
        *strict,
    )


@WIRES
@pytest.mark.parametrize("bug", sorted(WIRE_BUGS))
def test_every_wire_mutant_fails_with_its_requirement_id(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """Each mutant of the AG-UI and AI SDK references (and of the detach policy) fails the run
    against its own target file under the requirement meant for it, on the scenarios that can
    show that rule (:func:`wire_scenarios`), as the typed-frames mutants do above."""
    requirement = REGISTRY[WIRE_INTENDED[bug]]
    ids = wire_scenarios(bug)[1]
    assert ids, f"no bundled gateway scenario declares {requirement.id}"
    run = runs.run_of(request)
    assert run.returncode == 1, run.tail()
    assert f"[{requirement.id} {requirement.level.value}]" in run.stdout
    report = run.report
    assert sorted(s["id"] for s in report["scenarios"]) == sorted(ids)  # exactly those ran
    caught = report["requirements"][requirement.id]
    assert caught["fail"] + caught["non-strict"] >= 1, caught


def test_malformed_scenario_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "scenarios" / "broken.yaml"
    bad.parent.mkdir()
    bad.write_text(
        "id: gateway/broken\ntitle: t\nrequirements: [GW-AUTH]\nmodel:\n  - chunk: [a]\n"
    )
    run = streamproof("run", str(bad.parent), "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 2
    assert f"{bad}:5: model[0].chunk: unknown key" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def _target(tmp_path: Path, command: list[str], timeout: str = "2s") -> Path:
    target = tmp_path / "target.yaml"
    target.write_text(
        "kind: gateway\nname: never-ready\n"
        f"command: {json.dumps(command)}\n"
        f"ready: {{path: /healthz, timeout: {timeout}}}\n"
    )
    return target


def _alive(token: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", token], capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if "pgrep" not in line]


def test_gateway_that_never_becomes_ready_fails_in_bound_and_leaves_nothing(tmp_path: Path) -> None:
    token = f"streamproof-never-ready-{os.getpid()}"
    script = f"echo booting {token} >&2; echo still starting >&2; exec sleep 300 # {token}"
    target = _target(tmp_path, ["sh", "-c", script])
    started = time.monotonic()
    run = streamproof(
        "run",
        str(GATEWAY_SCENARIOS / "plain_streamed_answer.yaml"),
        "--target",
        str(target),
        "--report-dir",
        str(tmp_path / "r"),
        timeout=60,
    )
    elapsed = time.monotonic() - started
    assert run.returncode == 3  # the target could not be started
    assert "printed no line matching" in run.stdout and "within 2s" in run.stdout
    assert f"booting {token}" in run.stdout  # its stderr is shown
    assert elapsed < 30
    assert _alive(token) == []


def test_gateway_that_exits_at_once_shows_its_stderr(tmp_path: Path) -> None:
    target = _target(tmp_path, ["sh", "-c", "echo 'fatal: no config' >&2; exit 3"])
    run = streamproof(
        "run",
        str(GATEWAY_SCENARIOS / "plain_streamed_answer.yaml"),
        "--target",
        str(target),
        "--report-dir",
        str(tmp_path / "r"),
        timeout=60,
    )
    assert run.returncode == 3  # the target could not be started
    assert "exited with code 3" in run.stdout and "fatal: no config" in run.stdout


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def test_attach_to_a_running_gateway_by_url(tmp_path: Path) -> None:
    model_port, tools_port, gateway_port = _free_ports(3)
    env = {
        **os.environ,
        "PORT": str(gateway_port),
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{model_port}",
        "GOOGLE_API_KEY": "x",
        "STREAMPROOF_TOOL_URL": f"http://127.0.0.1:{tools_port}",
    }
    gateway = subprocess.Popen(
        [sys.executable, "-m", "streamproof.suites.gateway.reference.server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        target = tmp_path / "attached.yaml"
        target.write_text(
            "kind: gateway\nname: attached\n"
            f"url: http://127.0.0.1:{gateway_port}\n"
            f"fakes: {{model: {model_port}, tools: {tools_port}}}\n"
            "ready: {path: /healthz, timeout: 60s}\n"
            "auth: {users: {alice: 'Bearer alice-token', bob: 'Bearer bob-token'}}\n"
        )
        run = streamproof(
            "run",
            str(GATEWAY_SCENARIOS / "worked_example.yaml"),
            "--target",
            str(target),
            "--report-dir",
            str(tmp_path / "r"),
        )
        assert run.returncode == 0, run.stdout[-4000:]
        report = json.loads((tmp_path / "r" / "results.json").read_text())
        assert report["scenarios"][0]["target"] == "attached"
    finally:
        gateway.terminate()
        gateway.wait(10)


def _disposal_runs(bug: str | None, report_dir: Path) -> list[Run]:
    """``browser_gone.yaml`` under --strict, STREAMPROOF_FLAKE_RUNS times in a row (2 by
    default), on the reference or the mutant ``bug``."""
    runs = int(os.environ.get("STREAMPROOF_FLAKE_RUNS", "2"))
    scenarios = str(GATEWAY_SCENARIOS / "browser_gone.yaml")
    mutant = ["--bug", bug] if bug else []
    return [
        streamproof_run(report_dir / str(i), "run", scenarios, "-q", "--strict", *mutant)
        for i in range(runs)
    ]


@TYPED
@pytest.mark.parametrize("bug", [None, "no-dispose", "dispose-on-write-only"])
def test_disposal_verdict_is_stable(
    bug: str | None, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """The disposal checks pass on the reference; the orphaned run fails GW-DISPOSE (MUST)
    while the answer streams on, and the gateway that notices a closed tab only at its next
    send fails GW-DISPOSE-IDLE (SHOULD, so --strict) while the model stalls, and nothing else;
    run after run (STREAMPROOF_FLAKE_RUNS=20 for the issue's flake budget; 2 by default)."""
    for i, run in enumerate(runs.run_of(request)):
        report = run.report
        outcomes = {
            (s["id"].removeprefix("gateway/browser-gone-"), v["requirement"]): v["outcome"]
            for s in report["scenarios"]
            for v in s["verdicts"]
            if v["requirement"] in ("GW-DISPOSE", "GW-DISPOSE-IDLE")
        }
        if bug is None:
            assert run.returncode == 0, (i, run.stdout[-3000:])
            assert set(outcomes.values()) <= {"pass", "not-applicable"}, (i, outcomes)
            assert outcomes[("while-model-stalls", "GW-DISPOSE-IDLE")] == "pass", outcomes
        elif bug == "no-dispose":
            assert run.returncode == 1, (i, outcomes)
            assert outcomes[("mid-stream", "GW-DISPOSE")] == "fail", (i, outcomes)
            assert "[GW-DISPOSE MUST]" in run.stdout
        else:
            assert run.returncode == 1, (i, outcomes)
            assert outcomes[("while-model-stalls", "GW-DISPOSE-IDLE")] == "non-strict", outcomes
            # It lets go when the model next writes: a pass if that came while the harness
            # watched, else nothing the MUST can judge.
            stalled_must = outcomes[("while-model-stalls", "GW-DISPOSE")]
            assert stalled_must in ("pass", "not-applicable"), (i, outcomes)
            assert outcomes[("mid-stream", "GW-DISPOSE")] in ("pass", "not-applicable"), outcomes


PLANS: dict[str, Plan] = {
    # the longest first: whole suites, then the runs of two scenario files, then the rest
    "test_reference_passes_every_gateway_scenario": _reference_run,
    "test_every_concurrency_mutant_fails_with_its_requirement_id": _mutant_run,
    "test_disposal_verdict_is_stable": _disposal_runs,
    "test_each_wire_reference_passes_what_its_mutants_run": _wire_reference_run,
    "test_every_mutant_fails_with_its_requirement_id": _mutant_run,
    "test_every_wire_mutant_fails_with_its_requirement_id": _wire_mutant_run,
}
"""Each pooled test's run, from its parameters (run_pool)."""
