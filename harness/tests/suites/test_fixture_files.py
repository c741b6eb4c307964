"""A scenario's ``fixture:`` paths: found from the scenario file's folder upward, read at load,
and every problem reported as ``scenario:line: field: fixture: event N (line L): problem``
(exit 2 from ``streamproof validate``, like every bad scenario)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.fixture_files import resolve_fixture
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import ScenarioError, load_scenarios

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures"

GATEWAY = """\
id: gateway/canned
title: a canned model turn
requirements: [GW-FRAME-SEQUENCE]
model:
  - fixture: {path}
request: hi
"""

CLIENT = """\
id: a2a_client/canned
title: a canned task stream
kind: a2a-client
requirements: [A2A-C-REASSEMBLY]
client: {{deadline: 90s, idle: 20s, prompt: hi}}
task: {task}
{server}"""


def _project(tmp_path: Path) -> Path:
    """A user's project: fixtures/ at the top, scenarios two folders down."""
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    folder = tmp_path / "scenarios" / "incidents"
    folder.mkdir(parents=True)
    return folder


def test_a_path_is_found_from_the_scenario_folder_upward(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    scenario = folder / "s.yaml"
    written = "fixtures/gemini/max_tokens.sse"
    assert resolve_fixture(written, scenario) == tmp_path / written
    closer = folder / "fixtures" / "gemini"
    closer.mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini" / "no_finish_reason.sse", closer / "max_tokens.sse")
    assert resolve_fixture(written, scenario) == folder / written, "the first match wins"
    scenario.write_text(GATEWAY.format(path=written))
    (loaded,) = load_scenarios(scenario)
    assert isinstance(loaded.scenario, GatewayScenario)
    assert loaded.scenario.model[0].finish_reason is None, "the closer copy was read"


def test_a_bundled_scenario_copied_elsewhere_keeps_its_shipped_streams(tmp_path: Path) -> None:
    """A team copies a bundled scenario into its own folder, with no fixtures/ above it: its
    ``fixtures/...`` paths fall back to the canned streams streamproof ships."""
    from streamproof.runtime.bundled import bundled_scenarios
    from streamproof.suites.fixture_files import FIXTURE_PACKAGE

    shipped = bundled_scenarios(FIXTURE_PACKAGE)
    assert shipped is not None
    copy = tmp_path / "team" / "worked_example.yaml"
    copy.parent.mkdir()
    shutil.copy(ROOT / "scenarios" / "gateway" / "worked_example.yaml", copy)
    (loaded,) = load_scenarios(copy)
    assert loaded.scenario.id == "gateway/one-tool-call-streamed"
    found = resolve_fixture("fixtures/gemini/max_tokens.sse", copy)
    assert found == shipped / "gemini" / "max_tokens.sse"
    with pytest.raises(ValueError, match="nor among the canned streams streamproof ships"):
        resolve_fixture("fixtures/gemini/nope.sse", copy)
    with pytest.raises(ValueError, match="not found in"):
        resolve_fixture("streams/gemini/max_tokens.sse", copy)  # only fixtures/... is shipped


def test_a_missing_fixture_names_the_scenario_line(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    scenario = folder / "s.yaml"
    scenario.write_text(GATEWAY.format(path="fixtures/gemini/nope.sse"))
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(scenario)
    assert (caught.value.file, caught.value.line, caught.value.field) == (
        str(scenario),
        5,
        "model[0]",
    )
    assert "fixture 'fixtures/gemini/nope.sse': not found in" in caught.value.problem


def test_a_malformed_gemini_fixture_fails_validate_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _project(tmp_path)
    bad = tmp_path / "fixtures" / "gemini" / "bad.sse"
    good = (FIXTURES / "gemini" / "no_finish_reason.sse").read_bytes()
    bad.write_bytes(good.replace(b'"role": "model"', b'"role": "user"', 1))
    scenario = folder / "s.yaml"
    scenario.write_text(GATEWAY.format(path="fixtures/gemini/bad.sse"))
    assert main(["validate", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert f"{scenario}:5: model[0]: " in err
    assert "bad.sse: event 1 (line 2): not a GenerateContentResponse chunk: " in err
    assert "role" in err


def test_a_malformed_a2a_fixture_names_scenario_fixture_and_event(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    bad = tmp_path / "fixtures" / "a2a" / "0.3" / "bad.sse"
    good = (FIXTURES / "a2a" / "0.3" / "artifact_append_replace.sse").read_bytes()
    # The first chunk of 'release' now appends to an artifact the task does not have yet.
    bad.write_bytes(good.replace(b'"append":false', b'"append":true', 1))
    scenario = folder / "s.yaml"
    scenario.write_text(CLIENT.format(task="{fixture: fixtures/a2a/0.3/bad.sse}", server=""))
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(scenario)
    problem = str(caught.value)
    assert problem.startswith(f"{scenario}:6: ")
    assert "bad.sse: event 3 (line 8): as a task timeline: append to artifact 'release'" in problem


def test_an_a2a_fixture_must_match_the_served_wire(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    scenario = folder / "s.yaml"
    task = "{fixture: fixtures/a2a/1.0/artifact_append_replace.sse}"
    scenario.write_text(CLIENT.format(task=task, server=""))
    with pytest.raises(ScenarioError, match=r"is a 1.0 stream but server.wire is 0.3"):
        load_scenarios(scenario)
    for wire in ("1.0", "both"):
        scenario.write_text(CLIENT.format(task=task, server=f"server: {{wire: {wire!r}}}\n"))
        (loaded,) = load_scenarios(scenario)
        assert isinstance(loaded.scenario, A2AClientScenario)
        assert loaded.scenario.task is not None and len(loaded.scenario.task) == 8


def test_a_follow_up_fixture_and_chunk_delay(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    scenario = folder / "s.yaml"
    task = (
        "{fixture: fixtures/a2a/0.3/input_required.sse, chunk_delay: 500ms,"
        " follow_up: {fixture: fixtures/a2a/0.3/input_required_follow_up.sse}}"
    )
    scenario.write_text(CLIENT.format(task=task, server=""))
    (loaded,) = load_scenarios(scenario)
    steps = loaded.scenario.task
    assert isinstance(loaded.scenario, A2AClientScenario) and steps is not None
    assert [s.at for s in steps] == [0, 0.5, 1.0, 1.5]
    follow_up = getattr(steps[-1], "follow_up", None)
    assert follow_up is not None and [s.at for s in follow_up] == [1, 2, 3]


@pytest.mark.parametrize(
    "name",
    [
        "gateway/worked_example.yaml",
        "gateway/text_with_tool_call.yaml",
        "a2a_client/summary_survives_proxy_timeout.yaml",
        "a2a_client/input_required_follow_up.yaml",
    ],
)
def test_bundled_scenarios_use_the_fixtures(name: str) -> None:
    text = (ROOT / "scenarios" / name).read_text()
    assert "fixture: fixtures/" in text
    (loaded,) = load_scenarios(ROOT / "scenarios" / name)
    assert loaded.scenario.id
