"""Issue 14's trust findings on real parts: the correct reference gateway (google-adk) under the
faults ``streamproof explore`` found it failing, and the mutant each rule is about, which must
still fail under its own requirement id with the same fault.

* the model link ends a response cleanly with no body (``end_clean`` on its headers);
* the model link holds a response's start for 50 ms (a bounded stall swallows what arrives);
* the browser link (the harness's own connection) is reset, ended or stalled mid-answer: the
  browser leaving, or a slow browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module
from harness.tests.run_pool import Plan, RunPool, streamproof_run

# End to end (real targets, whole runs): scheduled first under xdist (see conftest). The runs
# are planned ahead and run a few at a time on one worker (run_pool): each test asserts on its
# own run.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("end-to-end-link-faults")]

ROOT = Path(__file__).resolve().parents[3]

_TOOLS = """
tools:
  lookupOrder: {orderId: "1042", status: shipped, internalNote: "{{marker}}"}
request: Where is order 1042?
"""

_WORKED = (
    """
model:
  - chunks:
      - function_call: {name: lookupOrder, args: {orderId: "1042"}}
  - chunks: ["Order 1042 shipped ", "on 30 September and ", "is due Monday."]
    chunk_delay: 20ms
"""
    + _TOOLS
)

MODEL_LINK = f"""
id: trust/model-empty-first-answer
title: The first model response ends cleanly with no body
requirements: [GW-TOOL-ONCE, GW-STREAM-TERMINAL]
{_WORKED}
links:
  model:
    - when: {{on_response_headers: true, occurrence: 1}}
      do: end_clean
---
id: trust/model-empty-second-answer
title: The answer after the tool step ends cleanly with no body
requirements: [GW-TOOL-ONCE, GW-TOOL-CALL-FROM-AGGREGATE, GW-STREAM-TERMINAL]
{_WORKED}
links:
  model:
    - when: {{on_response_headers: true, occurrence: 2}}
      do: end_clean
---
id: trust/model-start-held
title: The answer's start is held for 3 s and what came meanwhile is swallowed
requirements: [GW-ANSWER-AS-MESSAGE, GW-NO-DOUBLE-RENDER, GW-STREAM-TERMINAL]
model:
  - chunks: ["Our support desk ", "is open ", "from 9 to 5, ", "Monday to Friday."]
    chunk_delay: 2s
request: When is the support desk open?
links:
  model:
    # Chunks at 2, 4, 6 and 8 s: the first falls inside the 3 s hold and is swallowed, the rest
    # pass, each a whole second (scaled) from the hold's edges, so load cannot move one across.
    - when: {{on_response_headers: true}}
      do: {{stall: {{for: 3s}}}}
---
id: trust/model-request-reset
title: The model link resets the first request before forwarding it; the model client retries
requirements: [GW-ERROR-FRAME, GW-NO-HALF-RECORD, GW-ANSWER-AS-MESSAGE]
model:
  - chunks: ["Our support desk ", "is open ", "from 9 to 5, ", "Monday to Friday."]
request: When is the support desk open?
links:
  model:
    - when: {{on_request: true, occurrence: 1}}
      do: rst
---
id: trust/model-start-held-multi-agent
title: The coordinator's start is held for 3 s; billing's answer follows untouched
needs: [multi_agent]
requirements: [GW-ANSWER-AS-MESSAGE, GW-NO-DOUBLE-RENDER]
model:
  - chunks:
      - "Refunds are handled "
      - "by our billing desk. "
      - function_call: {{name: transfer_to_agent, args: {{agent_name: billing}}}}
    chunk_delay: 2s
    agent: support
  - chunks: ["Your refund ", "for order 1042 ", "was issued yesterday."]
    chunk_delay: 10ms
    agent: billing
request: Where is the refund for order 1042?
links:
  model:
    - when: {{on_response_headers: true, occurrence: 1}}
      do: {{stall: {{for: 3s}}}}
"""

_SLOW_ANSWER = (
    """
model:
  - chunks:
      - function_call: {name: lookupOrder, args: {orderId: "1042"}}
  - chunks: ["Order 1042 ", "shipped ", "on 30 September, ", "let me check ", "the courier ",
             "for the day ", "it will ", "arrive. ",
             {function_call: {name: lookupOrder, args: {orderId: "1042-courier"}}}]
    chunk_delay: 2s
  - chunks: ["The courier says Monday."]
limits: {dispose_within: 2s}
"""
    + _TOOLS
)

BROWSER_LINK = f"""
id: trust/browser-link-rst-mid-answer
title: The browser link is reset after the second delta (the browser leaves)
requirements: [GW-DISPOSE, GW-TOOL-ONCE]
{_SLOW_ANSWER}
links:
  browser:
    - when: {{after_event: 4}}
      do: rst
---
id: trust/browser-link-rst-at-start
title: The browser link is reset as the response begins (the browser leaves at once)
requirements: [GW-DISPOSE, GW-PERSIST-AGGREGATES]
{_SLOW_ANSWER}
links:
  browser:
    - when: {{on_response_headers: true}}
      do: rst
---
id: trust/browser-link-end-mid-answer
title: The browser link ends the stream cleanly after the second delta (the browser leaves)
requirements: [GW-DISPOSE, GW-TOOL-ONCE]
{_SLOW_ANSWER}
links:
  browser:
    - when: {{after_event: 4}}
      do: end_clean
---
id: trust/browser-link-stalls
title: The browser link holds the stream for a while after the second delta (a slow browser)
requirements: [GW-TOOL-ONCE, GW-PERSIST-AGGREGATES, GW-NO-TOOL-LEAK]
{_SLOW_ANSWER}
links:
  browser:
    - when: {{after_event: 4}}
      do: {{stall: {{for: 5s}}}}
"""


@pytest.fixture(scope="module", autouse=True)
def _adk() -> None:
    require_module("google.adk")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


Outcomes = tuple[int, dict[str, dict[str, str]]]


def _only(text: str, scenario: str) -> str:
    """The one document of ``text`` (scenarios separated by ``---``) with id ``scenario``."""
    (document,) = [d for d in text.split("\n---\n") if f"\nid: {scenario}\n" in f"\n{d}"]
    return document


def _run(report_dir: Path, text: str, bug: str | None) -> Outcomes:
    """Run the scenarios in ``text`` on the reference (with ``bug``); the return code and each
    scenario's outcome per requirement."""
    scenarios = report_dir / "scenarios.yaml"
    scenarios.write_text(text, encoding="utf-8")
    args = [str(scenarios), "-q", *(["--bug", bug] if bug else [])]
    run = streamproof_run(report_dir / "report", "run", *args)
    results: dict[str, Any] = run.report
    outcomes = {
        s["id"]: {v["requirement"]: v["outcome"] for v in s.get("verdicts", [])}
        for s in results["scenarios"]
    }
    assert outcomes, run.tail(3000, 3000)
    return run.returncode, outcomes


def _broken(outcomes: dict[str, str]) -> set[str]:
    return {r for r, o in outcomes.items() if o == "fail"}


def _reference_model_link(report_dir: Path) -> Outcomes:
    return _run(report_dir, MODEL_LINK, None)


def test_the_reference_passes_faults_on_the_model_link(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    code, outcomes = runs.run_of(request)
    assert code == 0, outcomes
    assert all(not _broken(o) for o in outcomes.values()), outcomes
    empty = outcomes["trust/model-empty-first-answer"]
    assert empty["GW-TOOL-CALL-FROM-AGGREGATE"] == "not-applicable"
    assert empty["GW-TOOL-ONCE"] == "pass"
    assert outcomes["trust/model-start-held"]["GW-ANSWER-AS-MESSAGE"] == "pass"
    retried = outcomes["trust/model-request-reset"]
    assert retried["GW-ERROR-FRAME"] == "not-applicable"  # the run did not fail
    assert retried["GW-ANSWER-AS-MESSAGE"] == "pass"


def _mutant_model_link(bug: str, scenario: str, requirement: str, report_dir: Path) -> Outcomes:
    return _run(report_dir, _only(MODEL_LINK, scenario), bug)


@pytest.mark.parametrize(
    ("bug", "scenario", "requirement"),
    [
        (
            "tool-call-from-partial",
            "trust/model-empty-second-answer",
            "GW-TOOL-CALL-FROM-AGGREGATE",
        ),
        ("act-on-partial-calls", "trust/model-empty-second-answer", "GW-TOOL-ONCE"),
        ("aggregate-as-delta", "trust/model-start-held", "GW-NO-DOUBLE-RENDER"),
        ("author-from-root", "trust/model-start-held-multi-agent", "GW-ANSWER-AS-MESSAGE"),
    ],
)
def test_a_mutant_still_fails_its_rule_under_a_model_link_fault(
    bug: str, scenario: str, requirement: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """On the one scenario that shows its rule under the fault (the reference passes it: the
    test above)."""
    code, outcomes = runs.run_of(request)
    assert code == 1, outcomes
    assert list(outcomes) == [scenario]
    assert requirement in _broken(outcomes[scenario]), outcomes[scenario]


def _browser_link(bug: str | None, report_dir: Path) -> Outcomes:
    return _run(report_dir, BROWSER_LINK, bug)


def test_the_reference_survives_the_browser_leaving_or_being_slow(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    code, outcomes = runs.run_of(request)
    assert code == 0, outcomes
    for scenario in ("trust/browser-link-rst-mid-answer", "trust/browser-link-end-mid-answer"):
        assert outcomes[scenario]["GW-DISPOSE"] == "pass", outcomes[scenario]
        assert outcomes[scenario]["GW-STREAM-TERMINAL"] == "not-applicable"
    slow = outcomes["trust/browser-link-stalls"]
    assert slow["GW-STREAM-TERMINAL"] == "not-applicable"
    assert slow["GW-DISPOSE"] == "not-applicable"  # the browser stayed
    assert slow["GW-TOOL-ONCE"] == "pass" and slow["GW-PERSIST-AGGREGATES"] == "pass"


def test_no_dispose_fails_gw_dispose_when_the_browser_link_is_reset(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    code, outcomes = runs.run_of(request)
    assert code == 1, outcomes
    assert "GW-DISPOSE" in _broken(outcomes["trust/browser-link-rst-mid-answer"])
    assert "GW-DISPOSE" in _broken(outcomes["trust/browser-link-end-mid-answer"])


PLANS: dict[str, Plan] = {
    "test_the_reference_passes_faults_on_the_model_link": _reference_model_link,
    "test_the_reference_survives_the_browser_leaving_or_being_slow": partial(_browser_link, None),
    "test_no_dispose_fails_gw_dispose_when_the_browser_link_is_reset": partial(
        _browser_link, "no-dispose"
    ),
    "test_a_mutant_still_fails_its_rule_under_a_model_link_fault": _mutant_model_link,
}
"""Each test's run (run_pool)."""
