"""validate tells target files from scenario files by their keys, and names every problem of
a target file at its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamproof.suites.input_files import (
    check_file,
    is_target_document,
    scenario_only_keys,
    target_only_keys,
)
from streamproof.suites.loading import ScenarioIds

ROOT = Path(__file__).resolve().parents[3]
REFERENCE_TARGETS = {
    ROOT / "harness" / "streamproof" / "suites" / "gateway" / "reference-gateway.yaml": "gateway",
    ROOT
    / "harness"
    / "streamproof"
    / "suites"
    / "a2a_client"
    / "reference-client.yaml": "a2a-client",
    ROOT
    / "harness"
    / "streamproof"
    / "suites"
    / "browser_client"
    / "reference-page.yaml": "browser-client",
}


def test_the_key_sets_come_from_the_models() -> None:
    assert {"command", "url", "port", "endpoints", "startup_grace", "wires"} <= target_only_keys()
    assert {"id", "title", "requirements", "model", "request", "expect", "client", "task"} <= (
        scenario_only_keys()
    )
    assert "kind" not in target_only_keys() | scenario_only_keys()


@pytest.mark.parametrize(
    ("doc", "target"),
    [
        ({"kind": "gateway", "command": ["x"]}, True),
        ({"url": "http://127.0.0.1:1"}, True),  # kind is optional, as for scenarios
        ({"kind": "a2a-client", "comand": ["x"], "startup_grace": "1s"}, True),
        ({"kind": "gateway"}, False),  # nothing only a target has
        ({"kind": "gateway", "comand": ["x"]}, False),
        ({"id": "gateway/x", "command": ["x"]}, False),  # a scenario key: read as a scenario
        (["command"], False),
        (None, False),
    ],
)
def test_a_target_document_has_a_target_key_and_no_scenario_key(doc: Any, target: bool) -> None:
    assert is_target_document(doc) is target


@pytest.mark.parametrize(("path", "kind"), list(REFERENCE_TARGETS.items()), ids=lambda x: str(x))
def test_the_reference_targets_are_valid_target_files(path: Path, kind: str) -> None:
    checked = check_file(path, ScenarioIds())
    assert (checked.target_kind, checked.problems, checked.scenarios) == (kind, (), ())


def _check(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return [str(p).removeprefix(f"{tmp_path}/") for p in check_file(path, ScenarioIds()).problems]


def test_every_problem_of_a_target_file_at_its_line(tmp_path: Path) -> None:
    text = "kind: gateway\ncomand: [x]\nurl: http://127.0.0.1:1\nport: any\nready: {timout: 1s}\n"
    assert _check(tmp_path, text) == [
        "t.yaml:2: comand: unknown key; did you mean 'command'?",
        "t.yaml:4: port: Input should be a valid integer, unable to parse string as an integer",
        "t.yaml:5: ready.timout: unknown key; did you mean 'timeout'?",
    ]
    assert _check(tmp_path, "kind: a2a-client\nname: c\nwires: ['0.2']\n") == [
        "t.yaml:1: command: Field required",
        "t.yaml:3: wires[0]: Input should be '0.3' or '1.0'",
    ]
    assert _check(tmp_path, "kind: a2a-server\ncommand: [x]\n") == [
        "t.yaml:1: kind: unknown target kind 'a2a-server'; kinds are gateway, a2a-client, "
        "browser-client"
    ]


def test_a_scenario_file_is_still_read_as_scenarios(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "gateway" / "auth.yaml"
    checked = check_file(scenario, ScenarioIds())
    assert checked.target_kind is None and checked.scenarios and not checked.problems
    # Two documents are never a target file, even if the first one looks like one.
    text = "kind: gateway\ncommand: [x]\n---\n" + scenario.read_text()
    problems = _check(tmp_path, text)
    assert "t.yaml:1: id: Field required" in problems
    assert (
        "t.yaml:2: command: unknown key; keys here are id, title, kind, requirements, needs, "
        "model, tools, request, expect, limits, links, model_path"
    ) in problems
