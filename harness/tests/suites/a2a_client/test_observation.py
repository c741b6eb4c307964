"""The A2A client observation (observation.py): plain data that survives JSON, with a readable
timeline."""

from __future__ import annotations

from harness.tests.suites.a2a_client.observations import (
    Story,
    result,
    status,
    task_frame,
    worked_example,
)
from streamproof.suites.a2a_client.suite import timeline


def test_the_observation_is_plain_data_with_a_readable_timeline() -> None:
    obs = worked_example()
    again = type(obs).model_validate(obs.model_dump(mode="json"))
    assert again == obs
    timeline = obs.timeline()
    assert "link fault: stall" in timeline
    assert "tasks/resubscribe [working, summary, completed]" in timeline
    assert "call result: completed taskId=t-81" in timeline


def test_a_rest_call_names_its_route_in_both_timelines() -> None:
    """On REST the method name alone hides the route the client used: the failure text adds
    it, the report's picture marks the request [rest]."""
    story = Story(wire="1.0", binding="rest")
    story.card(0.0)
    story.created(0.1)
    story.message(0.1, (task_frame(0.1), status(1.0, "completed")))
    story.get(1.2, "completed")
    story.run(result(artifacts={}), t_result=1.3)
    obs = story.build()
    text = obs.timeline()
    assert "SendStreamingMessage via POST /message:stream [submitted, completed]" in text
    assert "GetTask via GET /tasks/t-81" in text
    labels = [i.label for i in timeline(obs, []).items if i.kind == "arrow"]
    assert any(label.startswith("message/stream [rest]") for label in labels), labels
