"""The fake A2A server's script: what loads, and what is refused at load with which message."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.tests.fakes.a2a.helpers import REPORT, load_script


def test_the_brief_timeline_loads() -> None:
    script = load_script(REPORT)
    assert script.task is not None and len(script.task) == 7
    assert script.server.wire == "0.3" and script.server.resubscribe_snapshot
    assert script.server.snapshot_artifacts
    assert load_script("reply: hello").reply is not None
    assert load_script(REPORT, wire=1.0).server.wire == "1.0"  # YAML's float 1.0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("task: [{at: 2s, status: working}, {at: 1s, status: completed}]", "backwards"),
        ("task: [{at: 1s, artifact: {id: a, append: true, text: x}}]", "does not have yet"),
        ("task: [{at: 1s, status: failed}, {at: 2s, status: working}]", "nothing can follow"),
        ("task: [{at: 1s, status: auth-required}, {at: 2s, status: working}]", "follow_up"),
        ("task: [{at: 3s, status: submitted}]", "only be the first step"),
        ("task: [{at: 1s, status: working, follow_up: []}]", "follow_up belongs"),
        ("task: [{at: 1s, status: working, artifact: {id: a, text: x}}]", "exactly one of"),
        (
            "task: [{at: 1s, artifact: {id: a, text: x, last: true}}, "
            "{at: 2s, artifact: {id: a, append: true, text: y}}]",
            "after its last chunk",
        ),
        (
            "task: [{at: 1s, status: input-required, follow_up: [{at: 0s, status: submitted}]}]",
            "only be the first step",
        ),
        ("reply: hi\ntask: []", "exactly one of 'task'"),
        ("server: {wire: '0.2'}\ntask: []", "wire"),
    ],
)
def test_bad_scripts_are_rejected_at_load(text: str, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        load_script(text)
