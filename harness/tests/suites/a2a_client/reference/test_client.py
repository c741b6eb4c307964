"""The reference A2A client against every bundled ``a2a_client`` scenario, its mutants against
the scenarios that must catch them, and a real a2a-sdk client with no watchdog caught hanging.

All of it runs through :class:`~streamproof.suites.a2a_client.runner.A2AClientEnvironment`: a real
fake A2A server, the real fault proxy, the client as a real subprocess. Time scale 0.1: the seed's
90-second worked example takes nine seconds.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from harness.tests.cores import BUSY_LIMIT
from streamproof.core.verdicts import Kind, Level, Outcome
from streamproof.runtime.cpu import Admission, CpuGauge
from streamproof.suites import REGISTRY
from streamproof.suites.a2a_client.reference.mutants import BUGS, CONCURRENT, INTENDED, SHOWCASE
from streamproof.suites.a2a_client.runner import A2AClientEnvironment, A2AClientScenarioResult
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import ClientTarget, load_client_target
from streamproof.suites.loading import load_scenarios

# End to end (real targets, whole runs): scheduled first under xdist (see conftest). The
# tests share the module's event loop, where the runs of the parametrized tests below are
# started ahead, a few at a time (PlannedRuns), all on one worker (one xdist group).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("reference-client"),
    pytest.mark.asyncio(loop_scope="module"),
]

SCALE = 0.1
FOLDER = Path(__file__).resolve().parents[5] / "scenarios" / "a2a_client"
NO_WATCHDOG = Path(__file__).resolve().parents[3] / "data" / "a2a_client_no_watchdog.py"

ALSO_FAILS: dict[str, frozenset[str]] = {
    # After a snapshot in input-required, the mutant resubscribes: it breaks that rule too.
    "ignores-input-required": frozenset({"A2A-C-NO-RESUBSCRIBE-DONE"}),
}
"""What else a mutant genuinely breaks in its SHOWCASE scenario, exactly (the scenario's own
``expect`` entries are expectation verdicts, not counted here). A mutant not named here
breaks its intended requirement and no other requirement there."""


def _scenarios() -> dict[str, A2AClientScenario]:
    found: dict[str, A2AClientScenario] = {}
    for file in sorted(FOLDER.glob("*.yaml")):
        # Through the loader: a scenario's fixture paths resolve from its file's folder.
        for loaded in load_scenarios(file):
            assert isinstance(loaded.scenario, A2AClientScenario), file
            # one run per binding the reference declares (JSON-RPC, and REST on a 1.0 wire)
            for scenario in loaded.scenario.variants(load_client_target(None).bindings):
                assert scenario.id not in found, f"duplicate scenario id {scenario.id}"
                found[scenario.id] = scenario
    return found


SCENARIOS = _scenarios()


async def _run(
    scenario: A2AClientScenario,
    *,
    bug: str | None = None,
    target: ClientTarget | None = None,
    scale: float = SCALE,
) -> A2AClientScenarioResult:
    env = A2AClientEnvironment(target or load_client_target(None), bug=bug, time_scale=scale)
    await env.start()
    try:
        return await env.run(scenario)
    finally:
        await env.close()


JOBS = 3
"""Scenario runs at once in the module's loop (each its own environment: fake server, fault
link and client process). The module computes little (about 5 CPU-seconds; it waits on its
scripts), but its fake servers share this one loop: at twelve at once, under ``make test``'s
load, the seed's proxy-timeout story saw its resubscribed stream go quiet 2.17 s against the
client's 2 s idle limit, a second drop its exact ledger does not expect. Three it stays."""


ADMISSION_TICK_S = 0.25
"""How often a run held for the cores asks again."""


class PlannedRuns:
    """The runs of this module's parametrized tests on this worker, started as soon as the
    first test asks and run :data:`JOBS` at a time; each test awaits its own run, exactly the
    run it made alone before."""

    def __init__(self, items: list[pytest.Item]) -> None:
        self._limit = asyncio.Semaphore(JOBS)
        self._admission = Admission(JOBS, cores=1, busy_limit=BUSY_LIMIT)
        self._gauge = CpuGauge()
        self._running = 0
        self._last_start = -math.inf
        self._runs: dict[str, asyncio.Task[A2AClientScenarioResult]] = {}
        for item in items:
            plan = _plan(item)
            if plan is not None:
                self._runs[item.nodeid] = asyncio.create_task(self._limited(plan))

    async def _limited(
        self, plan: Callable[[], Awaitable[A2AClientScenarioResult]]
    ) -> A2AClientScenarioResult:
        async with self._limit:
            # Past the first run at once, one more starts only while the cores have time for it,
            # as the pooled runs do (harness/tests/run_pool.py): its fake server shares this
            # loop with the others.
            while True:  # the gauge is read, not awaited: ask again every tick
                since = time.monotonic() - self._last_start
                if self._admission.may_start(self._running, self._gauge.busy(), since):
                    break
                await asyncio.sleep(ADMISSION_TICK_S)
            self._running += 1
            self._last_start = time.monotonic()
            try:
                return await plan()
            finally:
                self._running -= 1

    async def result(self, request: pytest.FixtureRequest) -> A2AClientScenarioResult:
        item = request.node
        if item.nodeid not in self._runs:  # not planned (collected after?): run it now
            plan = _plan(item)
            assert plan is not None, item.nodeid
            self._runs[item.nodeid] = asyncio.create_task(self._limited(plan))
        return await self._runs[item.nodeid]

    async def close(self) -> None:
        for task in self._runs.values():
            task.cancel()
        await asyncio.gather(*self._runs.values(), return_exceptions=True)


def _plan(item: pytest.Item) -> Callable[[], Awaitable[A2AClientScenarioResult]] | None:
    """How the test ``item`` makes its run, or None for a test that is not planned."""
    name = getattr(item, "originalname", item.name)
    callspec = getattr(item, "callspec", None)
    params = dict(callspec.params) if callspec is not None else {}
    if name == "test_the_reference_passes_every_scenario":
        scenario = SCENARIOS[params["scenario_id"]]
        return lambda: _run(scenario)
    if name == "test_each_mutant_fails_its_intended_requirement":
        bug = params["bug"]
        return lambda: _run(SCENARIOS[SHOWCASE[bug]], bug=bug)
    if name == "test_a_real_sdk_client_without_a_watchdog_is_caught_hanging":
        return _naive_sdk_client_run
    if name == "test_a_card_fetch_without_a_deadline_is_caught_hanging":
        scenario = SCENARIOS["a2a_client/agent-card-stalls-past-the-deadline"]
        return lambda: _run(scenario, bug="ignores-deadline")
    return None


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def planned(request: pytest.FixtureRequest) -> AsyncIterator[PlannedRuns]:
    mine = [item for item in request.session.items if item.module is request.module]
    runs = PlannedRuns(mine)
    yield runs
    await runs.close()


def _report(result: A2AClientScenarioResult) -> str:
    turns = "\n".join(
        f"turn {t.turn}: {t.result or t.failure}\n{t.stderr_tail}" for t in result.observation.turns
    )
    verdicts = "\n".join(v.render() for v in result.verdicts if v.outcome is not Outcome.PASS)
    return f"{verdicts}\n{turns}"


async def test_the_folder_holds_the_brief_scenarios() -> None:
    # async only because the module's tests all run on its one loop (pytestmark)
    names = {s.removeprefix("a2a_client/") for s in SCENARIOS}
    assert {
        "summary-survives-proxy-timeout",
        "reset-mid-stream",
        "drop-before-first-event",
        "stream-502",
        "direct-message-reply",
        "input-required-follow-up",
        "auth-required",
        "rejected",
        "unknown",
        "failed",
        "deadline-and-cancel",
        "artifact-replace-vs-append",
        "structured-output",
        "happy-path-1-0-wire",
        "result-is-one-last-line",
        "stall-before-first-event",
        "deadline-inside-a-quiet-cut",
    } <= names
    assert set(SHOWCASE.values()) <= set(SCENARIOS)
    # the bundled suite on REST: every 1.0 scenario again as <id>[rest]
    on_rest = {s for s, scenario in SCENARIOS.items() if scenario.run_binding == "rest"}
    assert "a2a_client/happy-path-1-0-wire[rest]" in on_rest and len(on_rest) >= 5
    assert set(BUGS) == set(INTENDED) == set(SHOWCASE)
    assert set(INTENDED.values()) <= set(REGISTRY)
    assert set(ALSO_FAILS) <= set(BUGS)


BROKEN = (Outcome.FAIL, Outcome.NON_STRICT)
"""Outcomes that say a rule was broken (not applicable, info and skip say nothing of it)."""


@pytest.mark.parametrize("scenario_id", sorted(SCENARIOS))
async def test_the_reference_passes_every_scenario(
    scenario_id: str, planned: PlannedRuns, request: pytest.FixtureRequest
) -> None:
    result = await planned.result(request)
    holds = (Outcome.PASS, Outcome.NOT_APPLICABLE)
    assert [v for v in result.verdicts if v.outcome not in holds] == [], _report(result)
    judged = {v.requirement for v in result.verdicts if v.outcome is Outcome.PASS}
    unjudged = set(SCENARIOS[scenario_id].requirements) - judged
    assert not unjudged, f"declared but never judged: {sorted(unjudged)}\n{_report(result)}"
    assert len(result.observation.turns) == (2 if SCENARIOS[scenario_id].client.follow_up else 1)
    if scenario_id == "a2a_client/summary-survives-proxy-timeout":
        _as_the_seed_tells_it(result)


def _as_the_seed_tells_it(result: A2AClientScenarioResult) -> None:
    """The worked example's own times: the watchdog's snapshot about 60 s in (20 s after the
    last event, at 39 s), the full artifact at about 78 s."""
    obs = result.observation
    # Measured from the first JSON-RPC request (message/stream): the card fetch before it is
    # the client's start-up, which a loaded machine stretches (0.3 s real: 3 s of scenario time).
    first = min(r.t for r in obs.ledger.requests if r.rpc_method is not None)
    (turn,) = obs.turns
    assert turn.t_result is not None
    assert 76 <= (turn.t_result - first) / SCALE <= 84, _report(result)
    (get,) = obs.ledger.gets
    assert get.state == "working"
    assert 57 <= (get.t - first) / SCALE <= 65, _report(result)


@pytest.mark.parametrize("bug", sorted(set(BUGS) - set(CONCURRENT)))
async def test_each_mutant_fails_its_intended_requirement(
    bug: str, planned: PlannedRuns, request: pytest.FixtureRequest
) -> None:
    """One call at a time; the mutants of CONCURRENT show only with calls at once
    (suites/a2a_client/test_concurrency.py proves those)."""
    result = await planned.result(request)
    intended = INTENDED[bug]
    expected = Outcome.FAIL if REGISTRY[intended].level is Level.MUST else Outcome.NON_STRICT
    hits = [v for v in result.verdicts if v.requirement == intended and v.outcome is expected]
    assert hits, f"{bug} was not caught by {intended}:\n{_report(result)}"
    assert hits[0].message.startswith(f"{intended}: ")
    others = {
        v.requirement
        for v in result.verdicts
        if v.outcome in BROKEN and v.kind is Kind.REQUIREMENT and v.requirement != intended
    }
    known = ALSO_FAILS.get(bug, frozenset())
    assert others == known, f"{bug} also breaks {sorted(others)}, not {sorted(known)}:\n" + _report(
        result
    )


async def test_a_resend_after_an_early_drop_fails_early_drop_too() -> None:
    result = await _run(SCENARIOS["a2a_client/drop-before-first-event"], bug="resend-on-drop")
    failed = {v.requirement: v for v in result.verdicts if v.outcome is Outcome.FAIL}
    assert {"A2A-C-EARLY-DROP", "A2A-C-NO-RESEND"} <= set(failed), _report(result)
    assert "sent its message again after the early drop" in failed["A2A-C-EARLY-DROP"].message
    assert len(result.observation.ledger.tasks) > 1  # every resend started a task


async def test_a_rest_stream_without_sse_accept_is_caught_on_rest() -> None:
    """A2A-C-HEADERS reads a REST stream (``POST /message:stream``) as it reads a JSON-RPC one:
    the reference passes it (above), the no-sse-accept mutant fails it."""
    scenario = SCENARIOS["a2a_client/happy-path-1-0-wire[rest]"]
    result = await _run(scenario, bug="no-sse-accept")
    failed = {v.requirement: v for v in result.verdicts if v.outcome is Outcome.FAIL}
    assert set(failed) == {"A2A-C-HEADERS"}, _report(result)
    assert "SendStreamingMessage sent Accept: 'application/json'" in failed["A2A-C-HEADERS"].message
    streams = [r for r in result.observation.ledger.requests if r.rpc_method is not None]
    assert [(r.path, r.binding) for r in streams] == [("/message:stream", "rest")]


async def test_the_recipe_to_the_letter_fails_no_must() -> None:
    """gap-loss is the seed's recipe without what the reference adds: only the SHOULD says no."""
    result = await _run(
        SCENARIOS["a2a_client/gap-between-snapshot-and-resubscribe"], bug="gap-loss"
    )
    assert [v.requirement for v in result.verdicts if v.outcome in BROKEN] == ["A2A-C-GAP"], (
        _report(result)
    )


async def _naive_sdk_client_run() -> A2AClientScenarioResult:
    # startup_grace: killed well after the stall and the limits, however slow its imports
    # (a client killed before its idle limit ran out is judged by A2A-C-RESULT alone).
    naive = ClientTarget(
        name="naive-sdk-client", command=(sys.executable, str(NO_WATCHDOG)), startup_grace=5.0
    )
    scale = 0.05  # the worked example: a 4.5 s deadline, the stall 2 s in
    return await _run(
        SCENARIOS["a2a_client/summary-survives-proxy-timeout"], target=naive, scale=scale
    )


async def test_a_real_sdk_client_without_a_watchdog_is_caught_hanging(
    planned: PlannedRuns, request: pytest.FixtureRequest
) -> None:
    result = await planned.result(request)
    failed = {v.requirement: v for v in result.verdicts if v.outcome is Outcome.FAIL}
    assert {"A2A-C-RESULT", "A2A-C-RECOVERY", "A2A-C-DEADLINE"} <= set(failed), _report(result)
    recovery = failed["A2A-C-RECOVERY"].message
    assert recovery.startswith("A2A-C-RECOVERY: the call: message/stream went quiet (stall)")
    assert (
        "never recovered: it waited" in recovery
        and "scenario time) until it was stopped" in recovery
    )
    assert failed["A2A-C-RESULT"].message.count("was killed") == 1
    (turn,) = result.observation.turns
    assert turn.failure is not None and turn.failure.kind == "hang"
    assert not result.observation.ledger.gets  # it never asked for a snapshot


@pytest_asyncio.fixture(loop_scope="module")
async def env() -> AsyncIterator[A2AClientEnvironment]:
    environment = A2AClientEnvironment(load_client_target(None), time_scale=SCALE)
    await environment.start()
    yield environment
    await environment.close()


async def test_one_environment_runs_scenarios_back_to_back(env: A2AClientEnvironment) -> None:
    for scenario_id in ("a2a_client/rejected", "a2a_client/direct-message-reply"):
        result = await env.run(SCENARIOS[scenario_id])
        assert all(v.outcome not in BROKEN for v in result.verdicts), _report(result)
        assert result.observation.target == "reference-client"
        obs = result.observation
        assert type(obs).model_validate(obs.model_dump(mode="json")) == obs
    assert env.target_label == "reference-client"


# --- corrupted events and a stalled agent card (issue 14's trust findings) -------------------

_CORRUPTED = """\
id: a2a_client/corrupt-{name}
title: The link corrupts an event of the stream
kind: a2a-client
requirements: [{requirements}]
client: {{deadline: 40s, idle: 10s, prompt: Draft the onboarding checklist}}
task:
  - {{at: 0s, status: submitted}}
  - {{at: 1s, status: working}}
  - {{at: 2s, artifact: {{id: checklist, name: Checklist, text: "1. Accounts. "}}}}
  - {{at: 3s, artifact: {{id: checklist, text: "2. Laptop. ", append: true}}}}
  - {{at: 4s, artifact: {{id: checklist, text: "3. Badge.", append: true, last: true}}}}
  - {{at: 6s, status: completed}}
links:
  a2a:
    - {{when: {{rpc: message/stream, after_event: {after}}}, do: {{corrupt: truncate_json}}}}
"""


def _corrupted(tmp_path: Path, name: str, after: int, requirements: str) -> A2AClientScenario:
    file = tmp_path / f"{name}.yaml"
    file.write_text(_CORRUPTED.format(name=name, after=after, requirements=requirements))
    (loaded,) = load_scenarios(file)
    assert isinstance(loaded.scenario, A2AClientScenario)
    return loaded.scenario


async def test_a_corrupted_first_event_fails_the_call_without_blame(tmp_path: Path) -> None:
    """The task snapshot is cut mid-JSON: a2a-sdk cannot parse it, the client never learns the
    task id and fails at once (no cancel: it knows no task; no resend). Every check holds."""
    scenario = _corrupted(tmp_path, "before-task-id", 0, "A2A-C-NO-RESEND")
    result = await _run(scenario)
    assert [v for v in result.verdicts if v.outcome in BROKEN] == [], _report(result)
    damaged = [e for e in result.observation.link_events or () if e.damage]
    assert [(e.event_index, (e.damage or "").split(" ")[0]) for e in damaged] == [(1, "altered")]
    (turn,) = result.observation.turns
    assert turn.result is not None and turn.result.status == "error"
    assert not result.observation.ledger.cancels


async def test_a_corrupted_artifact_chunk_is_recovered_from_the_snapshot(tmp_path: Path) -> None:
    """Chunk 2 is cut mid-JSON: the malformed event is a loud failure, the recipe recovers
    (tasks/get, resubscribe) and the result has the whole artifact."""
    scenario = _corrupted(tmp_path, "mid-artifact", 3, "A2A-C-ARTIFACTS-COMPLETE, A2A-C-RECOVERY")
    result = await _run(scenario)
    assert [v for v in result.verdicts if v.outcome in BROKEN] == [], _report(result)
    (turn,) = result.observation.turns
    assert turn.result is not None and turn.result.status == "completed"
    assert turn.result.artifact("checklist") is not None
    assert "tasks/get" in result.observation.ledger.rpc_methods


REFUSED_AFTER_A_CLEAN_END = Path(__file__).with_name("refused_after_a_clean_end.yaml")


async def test_a_refused_resubscribe_then_a_final_snapshot_is_the_end() -> None:
    """The snapshot shows WORKING, the task finishes before the resubscribe arrives, the
    server refuses it; the next snapshot ends the call, with no second look (the file says
    why)."""
    (loaded,) = load_scenarios(REFUSED_AFTER_A_CLEAN_END)
    assert isinstance(loaded.scenario, A2AClientScenario)
    result = await _run(loaded.scenario)
    assert [v for v in result.verdicts if v.outcome in BROKEN] == [], _report(result)
    resubscribes = result.observation.ledger.resubscribes
    assert [r.error_code for r in resubscribes] == [-32004]  # the race happened, as planned


async def test_a_card_fetch_without_a_deadline_is_caught_hanging(
    planned: PlannedRuns, request: pytest.FixtureRequest
) -> None:
    result = await planned.result(request)
    failed = {v.requirement for v in result.verdicts if v.outcome is Outcome.FAIL}
    assert {"A2A-C-RESULT", "A2A-C-DEADLINE"} <= failed, _report(result)
