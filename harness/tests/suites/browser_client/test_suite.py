"""The suite as the registry sees it: references, a failure's text, a passing run's summary, the
timeline, and a reducer module skipping what needs a transport."""

from __future__ import annotations

import asyncio

import pytest

from harness.tests.conftest import require_executable
from harness.tests.suites.browser_client.observations import ANSWER, observe, screen
from streamproof.core.capabilities import ScenarioSkipped
from streamproof.suites import suite
from streamproof.suites.browser_client.checks import check_browser_client
from streamproof.suites.browser_client.drivers.chromium import chromium_path
from streamproof.suites.browser_client.drivers.page import with_query
from streamproof.suites.browser_client.reference.mutants import (
    AG_UI_INTENDED,
    BUGS,
    INTENDED,
    REDUCER_INTENDED,
    SHOWCASE,
)
from streamproof.suites.browser_client.runner import BrowserClientScenarioResult
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.browser_client.target import REDUCER_TARGET
from streamproof.targets.errors import TargetError

BROWSER = suite("browser-client")


def test_the_references_and_their_mutants() -> None:
    page, reducer, ag_ui = BROWSER.references()
    assert page.name == "browser-client" and set(page.intended) == set(BUGS) == set(INTENDED)
    assert reducer.target == REDUCER_TARGET and dict(reducer.intended) == dict(REDUCER_INTENDED)
    assert ag_ui.name == "browser-client-ag-ui" and dict(ag_ui.intended) == dict(AG_UI_INTENDED)
    assert set(SHOWCASE) == set(BUGS)


def test_a_failure_reads_as_the_rules_broken_then_the_run() -> None:
    states = [screen(0), screen(7, [("support", ANSWER)], [("support", ANSWER)])]
    obs = observe(states=states)
    verdicts = check_browser_client(obs)
    failing = [v for v in verdicts if v.outcome.value == "fail"]
    text = BROWSER.render_failure("browser_client/t", BrowserClientScenarioResult(obs, ()), failing)
    assert text.startswith("scenario browser_client/t on target test-page")
    assert "BR-RENDER-ONCE" in text and "frame 6 message" in text


def test_a_passing_run_is_summarised_and_drawn() -> None:
    obs = observe()
    summary = BROWSER.summarize_observation(obs)
    assert summary["frames_reached"] == 7 and summary["stream_end"] == "terminal"
    assert summary["requests"] == "POST chat" and "last_screen" in summary
    timeline = BROWSER.timeline(obs, check_browser_client(obs))
    assert [lane.id for lane in timeline.lanes] == ["page", "gateway"]
    assert sum(1 for i in timeline.items if i.kind == "mark") == 7


def test_page_urls_keep_their_own_query() -> None:
    url = with_query("http://127.0.0.1:8000/p.html?theme=dark", {"gateway": "http://x:1"})
    assert url == "http://127.0.0.1:8000/p.html?theme=dark&gateway=http%3A%2F%2Fx%3A1"


def test_no_chromium_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMPROOF_CHROMIUM", "/nowhere/chromium")
    with pytest.raises(TargetError, match="needs Chromium"):
        chromium_path()


def test_a_reducer_module_skips_a_scenario_that_needs_a_transport() -> None:
    require_executable("node")
    scenario = BrowserClientScenario.model_validate(
        {
            "id": "browser_client/t",
            "title": "t",
            "kind": "browser-client",
            "requirements": ["BR-TRUNCATED-NOT-FINAL"],
            "frames": [{"delta": {"author": "a", "text": "Hi"}}],
        }
    )
    env = BROWSER.environment(REDUCER_TARGET, bug=None, time_scale=0.1)

    async def go() -> None:
        await env.start()
        try:
            await env.run(scenario)
        finally:
            await env.close()

    with pytest.raises(ScenarioSkipped, match="no transport"):
        asyncio.run(go())


def test_after_event_counts_frames_on_a_wire_with_several_events_per_frame() -> None:
    from streamproof.faults.plan import Fault
    from streamproof.suites.browser_client.runner import on_the_wire

    plan = (
        Fault.model_validate({"when": {"after_event": 2}, "do": "rst"}),
        Fault.model_validate({"do": {"status": 502}}),
    )
    typed = ["id: 1\nevent: delta\ndata: {}\n\n", "id: 2\nevent: done\ndata: {}\n\n"]
    assert on_the_wire(plan, typed) == plan
    ag_ui = ["data: {}\n\ndata: {}\n\n", "data: {}\n\ndata: {}\n\ndata: {}\n\n"]
    moved = on_the_wire(plan, ag_ui)
    assert moved[0].when.after_event == 5 and moved[1] == plan[1]
