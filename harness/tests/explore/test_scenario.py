"""The scenario a search runs: its faults removed and the space drawn for its kind."""

from __future__ import annotations

from pathlib import Path

from streamproof.explore.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[3]


def test_a_browser_client_scenario_is_searched_on_the_pages_own_link() -> None:
    scenario, had_faults = load_scenario(str(ROOT / "scenarios/browser_client/cut_mid_draft.yaml"))
    assert had_faults and scenario.kind == "browser-client"
    assert "links" not in scenario.data or not scenario.data["links"].get("browser")
    space = scenario.space
    assert space.links == ("browser",) and space.events == 7
    assert space.matches[0] == {"method": "POST"} and not space.only


def test_a_push_scenario_is_searched_on_the_push_link_too() -> None:
    scenario, had_faults = load_scenario(str(ROOT / "scenarios/a2a_client/push_link_cut.yaml"))
    assert had_faults and scenario.kind == "a2a-client"
    space = scenario.space
    assert space.links == ("a2a", "push")
    assert space.link_matches["push"][0] == {}
    assert "status" in space.only["push"] and "corrupt" not in space.only["push"]
