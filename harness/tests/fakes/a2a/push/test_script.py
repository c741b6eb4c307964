"""The ``push:`` script: what loads, and what is refused at load with which message."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.tests.fakes.a2a.push.helpers import PUSHED, push_script
from streamproof.fakes.a2a.push.script import DeliveryFault, PushScript
from streamproof.fakes.a2a.script import A2AScript, delivery_count


def test_a_push_script_loads_with_its_faults() -> None:
    script = push_script([{"delivery": 2, "do": "delay", "by": "3s"}], timeout="2s")
    assert script.push is not None and script.push.timeout == 2.0
    assert script.push.faults[0].by == 3.0
    assert script.push.faults[0].describe() == "delivery 2: delay by 3s"


def test_deliveries_are_counted_across_turns() -> None:
    script = push_script()
    assert script.task is not None and delivery_count(script.task) == 5
    turns = A2AScript.model_validate(
        {
            "task": [
                {"at": 0, "status": "working"},
                {
                    "at": 1,
                    "status": "input-required",
                    "follow_up": [{"at": 1, "heartbeat": True}, {"at": 2, "status": "completed"}],
                },
            ],
            "server": {"wire": "1.0"},
        }
    )
    assert turns.task is not None
    # Task, working, input-required; then the follow-up's working and completed
    assert delivery_count(turns.task) == 5


@pytest.mark.parametrize(
    ("fault", "fragment"),
    [
        ({"delivery": 2, "do": "delay"}, "'by'"),
        ({"delivery": 2, "do": "lose", "by": "1s"}, "'by'"),
        ({"delivery": 2, "do": "replay"}, "'before'"),
        ({"delivery": 3, "do": "replay", "before": 2}, "must come after"),
        ({"delivery": 1, "do": "stale"}, "Task snapshot"),
        ({"delivery": 2, "do": "lose", "state": "failed"}, "forged"),
        ({"delivery": 0, "do": "lose"}, "greater than or equal to 1"),
        ({"delivery": 2, "do": "explode"}, "lose"),
    ],
)
def test_a_bad_fault_is_refused_with_a_reason(fault: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        DeliveryFault.model_validate(fault)


def test_one_delivery_is_sent_at_one_time() -> None:
    with pytest.raises(ValidationError, match=r"faults\[1\]: delivery 2 is already lose"):
        PushScript.model_validate(
            {"faults": [{"delivery": 2, "do": "lose"}, {"delivery": 2, "do": "stale"}]}
        )


def test_a_fault_beyond_the_timeline_names_it() -> None:
    with pytest.raises(ValidationError, match=r"push.faults\[0\] \(delivery 9: lose\).*makes 5"):
        push_script([{"delivery": 9, "do": "lose"}])


def test_push_needs_the_1_0_wire_and_a_task() -> None:
    with pytest.raises(ValidationError, match=r'push needs server\.wire: "1\.0"'):
        push_script(text=PUSHED.replace('wire: "1.0"', 'wire: "0.3"'))
    with pytest.raises(ValidationError, match="direct reply"):
        A2AScript.model_validate({"reply": "hi", "server": {"wire": "1.0"}, "push": {}})
