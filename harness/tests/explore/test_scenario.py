"""The scenario a search runs: its faults removed and the space drawn for its kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.explore.options import ExploreError
from streamproof.explore.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[3]


def test_a_browser_client_scenario_is_searched_on_the_pages_own_link() -> None:
    scenario, had_faults = load_scenario(str(ROOT / "scenarios/browser_client/cut_mid_draft.yaml"))
    assert had_faults and scenario.kind == "browser-client"
    assert "links" not in scenario.data or not scenario.data["links"].get("browser")
    space = scenario.space
    assert space.links == ("browser",) and space.events == 7
    assert space.matches[0] == {"method": "POST"} and not space.only


def test_an_a2a_scenarios_rest_run_is_searched_by_its_id() -> None:
    """``a2a_client/x[rest]`` is the bundled scenario pinned to REST, as the run names it."""
    scenario, had_faults = load_scenario("a2a_client/reset-mid-stream-on-the-1-0-wire[rest]")
    assert had_faults and scenario.id == "a2a_client/reset-mid-stream-on-the-1-0-wire[rest]"
    assert scenario.data["binding"] == "rest"
    assert scenario.model.model_validate(scenario.data).run_binding == "rest"
    plain, _ = load_scenario("a2a_client/reset-mid-stream-on-the-1-0-wire")
    assert "binding" not in plain.data
    with pytest.raises(ExploreError, match=r"binding rest is an A2A 1\.0 binding"):
        load_scenario("a2a_client/reset-mid-stream[rest]")  # a 0.3 scenario has no REST run
