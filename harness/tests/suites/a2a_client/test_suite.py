"""What the A2A client suite keeps of a passing scenario: the turns, the calls the server saw
in order, the tasks, the faults fired."""

from __future__ import annotations

import json

from harness.tests.suites.a2a_client.observations import worked_example
from streamproof.suites.a2a_client import suite


def test_the_worked_example_summarised() -> None:
    observation = worked_example()
    summary = suite.summarize_observation(observation)
    assert summary["wire"] == "0.3"
    assert summary["requests"] == (
        "GET /.well-known/agent-card.json message/stream tasks/get tasks/resubscribe"
    )
    (turn,) = summary["turns"]
    assert turn["status"] == "completed" and turn["incomplete"] is False
    assert turn["result_s"] == 78.5
    assert summary["tasks_created"] == 1
    assert summary["faults_fired"] == 1 and summary["link_events"] > 1
    assert len(json.dumps(summary)) < len(observation.model_dump_json()) // 10


def test_without_a_link_there_are_no_link_counts() -> None:
    summary = suite.summarize_observation(worked_example(link=False))
    assert "link_events" not in summary and "faults_fired" not in summary


def test_the_environment_names_its_target_for_the_report() -> None:
    import sys

    info = suite.environment(None, bug=None, time_scale=0.1).target_info
    assert info["kind"] == "a2a-client" and info["label"] == "reference-client"
    assert info["command"][0] == sys.executable
    assert info["wires"] == ["0.3", "1.0"] and info["capabilities"] == [
        "follow_up",
        "proxy_env",
        "push",
    ]
    json.dumps(info)
