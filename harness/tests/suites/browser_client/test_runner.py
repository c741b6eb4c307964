"""Whole runs in real Chromium: the reference page and an independent one pass, each mutant is
caught by its rule, a double render that lasts one frame is seen, and fetch-event-source's
defaults are exposed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.tests.suites.browser_client.running import (
    BUNDLED,
    INDEPENDENT,
    bundled,
    failing,
    need_browser,
    run,
)
from streamproof.core.requirements import REGISTRY
from streamproof.core.verdicts import Level, Outcome
from streamproof.suites.browser_client.observation import BrowserClientObservation
from streamproof.suites.browser_client.reference.mutants import (
    AG_UI_INTENDED,
    INTENDED,
    REDUCER_INTENDED,
    SHOWCASE,
)
from streamproof.targets.errors import TargetError

pytestmark = pytest.mark.slow


def _judged(results: dict[str, object]) -> Counter[str]:
    passed: Counter[str] = Counter()
    for result in results.values():
        for verdict in result.verdicts:  # type: ignore[attr-defined]
            assert verdict.outcome is not Outcome.FAIL, verdict.message
            if verdict.outcome is Outcome.PASS:
                passed[verdict.requirement] += 1
    return passed


def _musts() -> set[str]:
    return {r.id for r in REGISTRY.values() if r.kind == "browser-client" and r.level is Level.MUST}


def test_the_reference_page_passes_every_bundled_scenario_and_each_must_is_judged() -> None:
    need_browser()
    passed = _judged(run(None, bundled()))
    assert _musts() <= set(passed), f"never judged: {_musts() - set(passed)}"
    assert passed["BR-TOOL-STATUS"] >= 1


def test_the_independent_page_passes_every_must() -> None:
    need_browser()
    passed = _judged(run(INDEPENDENT, bundled()))
    assert _musts() <= set(passed)


@pytest.mark.parametrize("bug", sorted(set(INTENDED) - {"transient-double-render"}))
def test_each_mutant_of_the_page_is_caught_by_its_rule(bug: str) -> None:
    """On its showcase scenario (``streamproof mutants`` runs every scenario); the transient
    double render has a test of its own below."""
    need_browser()
    rule, showcase = INTENDED[bug], SHOWCASE[bug]
    assert rule in next(s for s in bundled() if s.id == showcase).requirements
    (result,) = run(None, bundled(showcase.rsplit("/", 1)[-1]), bug=bug).values()
    assert rule in failing(result), f"{bug} was not caught by {rule} in {showcase}"


def test_an_answer_on_screen_twice_for_one_frame_fails_render_once() -> None:
    need_browser()
    (result,) = run(None, bundled("worked-example"), bug="transient-double-render").values()
    verdict = failing(result)["BR-RENDER-ONCE"]
    assert "2 times after frame 6" in verdict.message
    obs = result.observation
    assert isinstance(obs, BrowserClientObservation)
    last = obs.states[-1]
    # The end state is right: only a state in between showed the answer twice.
    assert [m.text for m in last.messages].count(obs.frames[5].data["text"]) == 1
    assert not last.drafts
    assert obs.screenshot is not None and obs.screenshot.startswith("data:image/png;base64,")


def test_fetch_event_source_with_its_defaults_sends_the_message_again() -> None:
    need_browser()
    names = ("tab-hidden-mid-stream", "cut-mid-draft", "chat-502")
    defaults = run(BUNDLED / "fes-defaults.yaml", bundled(*names))
    for sid, result in defaults.items():
        assert "BR-ONE-RUN" in failing(result), sid
    assert "BR-FAILED-SHOWN" in failing(defaults["browser_client/chat-502"])
    configured = run(BUNDLED / "fes-configured.yaml", bundled(*names))
    assert not any(failing(result) for result in configured.values())


def test_the_reference_reducer_passes_and_its_mutants_are_caught() -> None:
    need_browser()
    reducer = BUNDLED / "reference-reducer.yaml"
    scenarios = [s for s in bundled() if not s.needs]
    passed = _judged(run(reducer, scenarios))
    assert {"BR-RENDER-ONCE", "BR-DRAFT-BY-AUTHOR", "BR-DRAFT-CLEARED"} <= set(passed)
    for bug in REDUCER_INTENDED:
        results = run(reducer, scenarios, bug=bug)
        assert any(INTENDED[bug] in failing(r) for r in results.values()), bug


def _silent_page(tmp_path: Path, prompt: str) -> Path:
    """A page of our own that shows a prompt and a button and never calls the gateway."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text(
        '<!doctype html><input id="q"><button id="go">Send</button><ul id="log"></ul>',
        encoding="utf-8",
    )
    target = tmp_path / "silent.yaml"
    target.write_text(
        "kind: browser-client\nname: silent\n"
        'command: ["{python}", "-m", "http.server", "{port}", "--bind", "127.0.0.1"]\n'
        "cwd: site\npath: /index.html\n"
        f'screen: {{prompt: "{prompt}", send: "#go", message: "#log li", draft: ".draft"}}\n',
        encoding="utf-8",
    )
    return target


def test_a_page_that_never_sends_fails_one_run(tmp_path: Path) -> None:
    need_browser()
    (result,) = run(_silent_page(tmp_path, "#q"), bundled("worked-example")).values()
    verdict = failing(result)["BR-ONE-RUN"]
    assert "sent no chat request" in verdict.message
    assert result.observation.stream_end == "none"


def test_selectors_that_match_nothing_are_the_target_files_error(tmp_path: Path) -> None:
    need_browser()
    with pytest.raises(TargetError, match=r"screen\.prompt '#nowhere' matches nothing"):
        run(_silent_page(tmp_path, "#nowhere"), bundled("worked-example"))


def test_the_ag_ui_reference_page_passes_and_its_mutants_are_caught() -> None:
    """The same scenarios on the AG-UI wire (``profile: ag-ui``)."""
    need_browser()
    page = BUNDLED / "reference-ag-ui-page.yaml"
    passed = _judged(run(page, bundled()))
    assert _musts() <= set(passed)
    for bug, rule in AG_UI_INTENDED.items():
        (result,) = run(page, bundled(SHOWCASE[bug].rsplit("/", 1)[-1]), bug=bug).values()
        assert rule in failing(result), f"{bug} was not caught by {rule}"
