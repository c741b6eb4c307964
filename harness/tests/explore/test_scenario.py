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
    scenario, had_faults = load_scenario("a2a_client/wire-1-0-reset-mid-stream[rest]")
    assert had_faults and scenario.id == "a2a_client/wire-1-0-reset-mid-stream[rest]"
    assert scenario.data["binding"] == "rest"
    assert scenario.model.model_validate(scenario.data).run_binding == "rest"
    plain, _ = load_scenario("a2a_client/wire-1-0-reset-mid-stream")
    assert "binding" not in plain.data
    # a scenario that leaves its wire out has a REST run too, on the 1.0 wire
    lifted, _ = load_scenario("a2a_client/reset-mid-stream[rest]")
    model = lifted.model.model_validate(lifted.data)
    assert model.run_binding == "rest" and model.server.wire == "1.0"
    with pytest.raises(ExploreError, match="no-such-scenario"):
        load_scenario("a2a_client/no-such-scenario[rest]")


def test_a_push_scenario_is_searched_on_the_push_link_too() -> None:
    scenario, had_faults = load_scenario(str(ROOT / "scenarios/a2a_client/push_link_cut.yaml"))
    assert had_faults and scenario.kind == "a2a-client"
    space = scenario.space
    assert space.links == ("a2a", "push")
    assert space.link_matches["push"][0] == {}
    assert "status" in space.only["push"] and "corrupt" not in space.only["push"]
