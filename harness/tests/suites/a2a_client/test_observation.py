"""The A2A client observation (observation.py): plain data that survives JSON, with a readable
timeline."""

from __future__ import annotations

from harness.tests.suites.a2a_client.observations import (
    worked_example,
)


def test_the_observation_is_plain_data_with_a_readable_timeline() -> None:
    obs = worked_example()
    again = type(obs).model_validate(obs.model_dump(mode="json"))
    assert again == obs
    timeline = obs.timeline()
    assert "link fault: stall" in timeline
    assert "tasks/resubscribe [working, summary, completed]" in timeline
    assert "call result: completed taskId=t-81" in timeline
