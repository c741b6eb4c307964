"""A push call's records by hand: its deliveries, its SendMessage and GetTask requests and its
result (for the push checks' tests and the timeline's)."""

from __future__ import annotations

from typing import Any

from harness.tests.suites.a2a_client.observations import TASK, Story, result
from streamproof.fakes.a2a.ledger import MessageRecord
from streamproof.fakes.a2a.push.records import DeliveryRecord
from streamproof.fakes.a2a.push.script import FORGED_TEXT
from streamproof.suites.a2a_client.observation import A2AClientObservation


def delivery(seq: int, t: float, kind: str = "status-update", **kw: Any) -> DeliveryRecord:
    values: dict[str, Any] = {
        "seq": seq,
        "delivery": seq + 1,
        "task_id": TASK,
        "url": "http://127.0.0.1:9/a2a/webhook",
        "t": t,
        "t_end": t + 0.01,
        "kind": kind,
        "receiver_status": 200,
        "status": 200,
        "ended": "acknowledged",
    }
    values.update(kw)
    return DeliveryRecord(**values)


def push_call(
    deliveries: list[DeliveryRecord],
    res: Any,
    *,
    t_result: float,
    gets: tuple[float, ...] = (),
    sends: tuple[float, ...] = (0.1,),
) -> A2AClientObservation:
    """A push call: the card, SendMessage (not blocking) at each of ``sends``, GetTask at each
    of ``gets``, the deliveries, the result at ``t_result`` (deadline 30 s, idle 10 s)."""
    story = Story(wire="1.0", deadline=30, idle=10, link=False)
    story.created(0.1)
    story.card(0.0)
    for t in sends:
        index = story.rpc(t, "message/send")
        story.messages.append(
            MessageRecord(
                t=t,
                request=index,
                message_id=f"m{index}",
                task_id=None,
                context_id=None,
                text="p",
                outcome="created",
            )
        )
    for t in gets:
        story.get(t, "working")
    story.chunk(2.0, "s", "one ")
    story.chunk(3.0, "s", "two", append=True, last=True)
    story.state(4.0, "completed")
    story.run(res, t_result=t_result)
    obs = story.build(push=True)
    ledger = obs.ledger.model_copy(update={"deliveries": tuple(deliveries)})
    return obs.model_copy(update={"ledger": ledger})


def finished(*extra: DeliveryRecord) -> list[DeliveryRecord]:
    return [
        delivery(0, 0.2, "task", state="submitted"),
        delivery(1, 1.0, state="working"),
        delivery(2, 2.0, "artifact-update", artifact_id="s", text="one ", append=False),
        delivery(
            3, 3.0, "artifact-update", artifact_id="s", text="two", append=True, last_chunk=True
        ),
        *extra,
        delivery(4, 4.0, state="completed"),
    ]


OK = result("completed", {"s": "one two"})


FORGED = delivery(
    9,
    2.5,
    delivery=None,
    state="failed",
    text=FORGED_TEXT,
    authentic=False,
    genuine=False,
    fault="wrong_token",
    receiver_status=401,
    status=401,
    ended="refused",
)
