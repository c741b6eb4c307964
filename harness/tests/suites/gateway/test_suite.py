"""What the gateway suite keeps of a passing scenario: a summary that tells the story in a few
keys, small whatever the observation's size."""

from __future__ import annotations

import json

from harness.tests.suites.gateway.observations import budget_stopped, worked_example
from streamproof.core.texts import TIMES
from streamproof.suites.gateway import suite


def test_the_worked_example_summarised() -> None:
    summary = suite.summarize_observation(worked_example())
    assert summary["frame_sequence"] == f"tool_call tool_result delta{TIMES}3 message done"
    assert summary["frames"] == 7 and summary["frames_s"] == [0.1, 0.7]
    assert summary["model_calls"] == 2 and summary["tool_calls"] == 1
    assert summary["history_events"] == 4
    assert summary["response"] == {"status": 200, "end": "clean", "elapsed_s": 0.0}
    assert "faults_fired" not in summary  # nothing fired: no key to read


def test_a_runaway_loop_stays_one_short_line() -> None:
    observation = budget_stopped(calls=20)
    summary = suite.summarize_observation(observation)
    assert summary["frame_sequence"] == f"(tool_call tool_result){TIMES}20 error"
    assert summary["model_calls"] == 20
    full = len(observation.model_dump_json())
    assert len(json.dumps(summary)) < min(600, full // 10)


def test_the_environment_names_its_target_for_the_report() -> None:
    import sys

    info = suite.environment(None, bug="no-dispose", time_scale=0.1).target_info
    assert info["kind"] == "gateway" and info["name"] == "reference-gateway"
    assert info["label"] == "reference-gateway[bug=no-dispose]"
    assert info["command"][0] == sys.executable  # {python} as run
    assert info["url"] is None and info["base_url"] is None  # not started
    assert {"multi_agent", "history", "auth", "none_mode"} <= set(info["capabilities"])
    json.dumps(info)  # plain data


def test_a_failure_names_what_broke_by_kind_never_an_expectation_as_a_requirement() -> None:
    from harness.tests.suites.gateway.observations import DONE, frames, message
    from streamproof.core.verdicts import Outcome
    from streamproof.suites.gateway.profiles.registry import check_gateway
    from streamproof.suites.gateway.runner import ScenarioResult

    obs = worked_example(frames=frames(message("Order 1042 shipped."), DONE))
    verdicts = tuple(check_gateway(obs))
    only_expectation = [v for v in verdicts if v.requirement == "expect.frames"]
    assert only_expectation[0].outcome is Outcome.FAIL
    text = suite.render_failure("gateway/x", ScenarioResult(obs, verdicts), only_expectation)
    assert text.splitlines()[0].endswith(": 1 expectation(s) not met")
