"""Issue 23's mutants on a team's own scenarios, which set no ``expect:`` at all: a gateway that
re-sends the answer as a trailing delta, and one that ignores the corporate proxy, must each be
caught by its own requirement alone (a bundled ``expect.frames`` must not be what catches them),
and the reference must pass the same scenarios, under ``--strict``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module
from harness.tests.run_pool import Plan, RunPool, streamproof_run

# End to end (real targets, whole runs): scheduled first under xdist (see conftest). The three
# runs are planned ahead and run at once on one worker (run_pool), each test on its own.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("end-to-end-without-expectations")]


_ANSWER = """
model:
  - chunks: ["Our support desk ", "is open ", "from 9 to 5."]
    chunk_delay: 20ms
request: When is the support desk open?
"""

SCENARIOS = f"""
id: own/answer-without-expectations
title: A streamed answer, and nothing expected of it but the requirements
requirements: [GW-NO-DOUBLE-RENDER]
{_ANSWER}
---
id: own/proxy-without-expectations
title: The same answer through a corporate proxy, nothing expected
requirements: [GW-PROXY-HONOURED]
model_path: forward-proxy
{_ANSWER}
"""


@pytest.fixture(scope="module", autouse=True)
def _parts() -> None:
    require_module("google.adk")
    require_module("mitmproxy")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _run(report_dir: Path, bug: str | None) -> tuple[int, dict[str, dict[str, list[str]]]]:
    """The scenarios on the reference (with ``bug``) under --strict: the exit status and each
    scenario's outcomes per requirement."""
    scenarios = report_dir / "own.yaml"
    scenarios.write_text(SCENARIOS, encoding="utf-8")
    args = [str(scenarios), "--strict", "-q", *(["--bug", bug] if bug else [])]
    run = streamproof_run(report_dir / "report", "run", *args)
    results: dict[str, Any] = run.report
    outcomes: dict[str, dict[str, list[str]]] = {}
    for s in results["scenarios"]:
        assert "expect." not in json.dumps(s.get("verdicts", [])), s["id"]
        per = outcomes.setdefault(s["id"], {})
        for v in s.get("verdicts", []):
            per.setdefault(v["requirement"], []).append(v["outcome"])
    assert len(outcomes) == 2, run.stdout[-3000:] + run.stderr[-3000:]
    return run.returncode, outcomes


def _broken(outcomes: dict[str, dict[str, list[str]]]) -> dict[str, set[str]]:
    return {
        sid: {r for r, os_ in per.items() if {"fail", "non-strict"} & set(os_)}
        for sid, per in outcomes.items()
    }


def test_the_reference_passes_scenarios_without_expectations(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    code, outcomes = runs.run_of(request)
    assert code == 0, outcomes
    assert _broken(outcomes) == {sid: set() for sid in outcomes}
    assert outcomes["own/answer-without-expectations"]["GW-NO-DOUBLE-RENDER"] == ["pass"]
    assert outcomes["own/proxy-without-expectations"]["GW-PROXY-HONOURED"] == ["pass"]


@pytest.mark.parametrize(
    ("bug", "broken"),
    [
        (
            "delta-after-message",
            {
                "own/answer-without-expectations": {"GW-NO-DOUBLE-RENDER"},
                "own/proxy-without-expectations": {"GW-NO-DOUBLE-RENDER"},
            },
        ),
        (
            "ignore-proxy",
            {
                "own/answer-without-expectations": set(),  # no proxy to ignore
                "own/proxy-without-expectations": {"GW-PROXY-HONOURED"},
            },
        ),
    ],
)
def test_each_mutant_is_caught_by_its_own_requirement_alone(
    bug: str, broken: dict[str, set[str]], runs: RunPool, request: pytest.FixtureRequest
) -> None:
    code, outcomes = runs.run_of(request)
    assert code == 1, outcomes
    assert _broken(outcomes) == broken, outcomes


PLANS: dict[str, Plan] = {
    "test_the_reference_passes_scenarios_without_expectations": partial(_run, bug=None),
    "test_each_mutant_is_caught_by_its_own_requirement_alone": (
        lambda bug, broken, report_dir: _run(report_dir, bug)
    ),
}
"""Each test's run (run_pool)."""
