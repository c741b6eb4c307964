"""The fake gateway's AG-UI wire: every bundled scenario's frames become an AG-UI stream that
the community validator (ag-ui-validate) accepts, and the text a page builds from it is the
text of the seed's messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tests.conftest import require_module
from streamproof.fakes.gateway import GatewayFrame
from streamproof.fakes.gateway.ag_ui import ag_ui_blocks, ag_ui_events
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.loading import load_scenarios

SCENARIOS = sorted(
    (Path(__file__).resolve().parents[4] / "scenarios/browser_client").glob("*.yaml")
)


def _frames(path: Path) -> list[GatewayFrame]:
    (loaded,) = load_scenarios(path)
    scenario = loaded.scenario
    assert isinstance(scenario, BrowserClientScenario)
    return [GatewayFrame(f.type, f.payload) for f in scenario.frames]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_bundled_scenario_is_a_valid_ag_ui_stream(path: Path) -> None:
    validate = require_module("ag_ui_validate")
    frames = _frames(path)
    if frames[-1].type not in ("done", "error"):
        # Cut short on purpose: what was sent must be the start of a valid run.
        frames.append(GatewayFrame("done", {}))
    validator = validate.create_validator()
    for events in ag_ui_events(frames):
        for event in events:
            validator.feed(json.dumps(event))
    validator.finalize()
    report = validator.report()
    assert not report.internal_errors
    errors = [f"{d.rule}: {d.message}" for d in report.diagnostics if d.severity == "error"]
    assert not errors, errors


def test_the_messages_a_page_builds_are_the_seeds_messages() -> None:
    frames = _frames(SCENARIOS[0].parent / "sub_agent_partials.yaml")
    text: dict[str, str] = {}
    finished: list[str] = []
    for events in ag_ui_events(frames):
        for event in events:
            if event["type"] == "TEXT_MESSAGE_CONTENT":
                text[event["messageId"]] = text.get(event["messageId"], "") + event["delta"]
            elif event["type"] == "TEXT_MESSAGE_END":
                finished.append(text[event["messageId"]])
    said = [f.data["text"] for f in frames if f.type == "message"]
    assert finished == said


def test_each_frame_is_one_block_of_data_lines() -> None:
    frames = [GatewayFrame("delta", {"author": "a", "text": "Hi"}), GatewayFrame("done", {})]
    first, last = ag_ui_blocks(frames)
    assert first.startswith('data: {"type":"RUN_STARTED"') and first.count("\n\n") == 3
    assert "id:" not in first + last and "event:" not in first + last
    assert last.endswith('"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1"}\n\n')


def test_the_validator_would_refuse_a_message_left_open() -> None:
    """The oracle can fail: a run finished with a message still open is an error to it."""
    validate = require_module("ag_ui_validate")
    events = ag_ui_events([GatewayFrame("delta", {"author": "a", "text": "Hi"})])[0]
    events.append({"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"})
    validator = validate.create_validator()
    for event in events:
        validator.feed(json.dumps(event))
    validator.finalize()
    assert "AGUI103" in [d.rule for d in validator.report().diagnostics if d.severity == "error"]
