"""The scenario model: frames, history, the tab, and what a reducer module cannot serve."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from streamproof.suites.browser_client.scenario import BrowserClientScenario


def _scenario(**extra: Any) -> BrowserClientScenario:
    data: dict[str, Any] = {
        "id": "browser_client/t",
        "title": "t",
        "kind": "browser-client",
        "requirements": ["BR-RENDER-ONCE"],
        "frames": [{"delta": {"author": "a", "text": "Hi "}}, {"done": {}}],
    }
    return BrowserClientScenario.model_validate({**data, **extra})


@pytest.mark.parametrize(
    ("frames", "problem"),
    [
        ([{"delta": {"author": "a", "text": "x"}, "done": {}}], "exactly one of"),
        ([{"gap": "1s"}], "exactly one of"),
        ([{"delta": {"text": "x"}}], "'author'"),
        ([{"message": {"author": "a", "text": "x", "final": "yes"}}], "'final'"),
        ([{"tool_call": {"names": []}}], "'names'"),
        ([{"typing": {}}], "typing"),
    ],
)
def test_a_bad_frame_is_refused_at_load(frames: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        _scenario(frames=frames)


def test_the_default_history_is_the_run_as_stored() -> None:
    scenario = _scenario(
        frames=[
            {"tool_call": {"names": ["lookupOrder"]}},
            {"tool_result": {"count": 1}},
            {"delta": {"author": "support", "text": "Sh"}},
            {"message": {"author": "support", "text": "Shipped.", "final": True}},
            {"done": {}},
        ]
    )
    stored = [(i.author, i.text, i.tool_call) for i in scenario.stored_history()]
    assert stored[0] == ("user", "Where is order 1042?", None)
    assert stored[1][2] == ("lookupOrder",)
    assert stored[-1] == ("support", "Shipped.", None)
    assert all(i.text != "Sh" for i in scenario.stored_history())


def test_transport_is_needed_only_for_what_a_reducer_cannot_serve() -> None:
    assert _scenario().needs == ()
    assert _scenario(frames=[{"delta": {"author": "a", "text": "x"}}]).needs == ("transport",)
    assert _scenario(tab=[{"after_frame": 1, "do": "hide", "for": "1s"}]).needs == ("transport",)
    cut = {"browser": [{"when": {"after_event": 1}, "do": "rst"}]}
    assert _scenario(links=cut).needs == ("transport",)


def test_a_tab_action_after_the_last_frame_is_refused() -> None:
    with pytest.raises(ValidationError, match="past the last frame"):
        _scenario(tab=[{"after_frame": 3, "do": "hide", "for": "1s"}])


def test_the_horizon_counts_gaps_hidden_spells_and_the_reconnect_wait() -> None:
    scenario = _scenario(
        frames=[{"delta": {"author": "a", "text": "x"}, "gap": "2s"}, {"done": {}}],
        tab=[{"after_frame": 1, "do": "hide", "for": "3s"}],
    )
    assert scenario.horizon == pytest.approx(2 + 3 + 5 + 0.5)
