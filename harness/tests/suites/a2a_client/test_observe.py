"""The observation a call is judged on: the scenario's settings, and the tasks as the fake holds
them at the end (the server's own record, which the artifact checks compare the result with)."""

from __future__ import annotations

from harness.tests.fakes.a2a.helpers import collect, sdk_client, user_message
from streamproof.core.durations import TimeScale
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.suites.a2a_client.observe import observe, server_tasks
from streamproof.suites.a2a_client.scenario import A2AClientScenario

SCENARIO = {
    "id": "a2a_client/x",
    "title": "x",
    "kind": "a2a-client",
    "requirements": ["A2A-C-STATUS"],
    "client": {"deadline": "10s", "idle": "2s"},
    "task": [
        {"at": "0s", "status": "submitted"},
        {"at": "1s", "artifact": {"id": "summary", "text": "one "}},
        {"at": "2s", "artifact": {"id": "summary", "append": True, "text": "two", "last": True}},
        {"at": "3s", "status": "completed"},
    ],
}


async def test_the_tasks_are_read_from_the_fake_as_it_holds_them() -> None:
    scenario = A2AClientScenario.model_validate(SCENARIO).variants(("jsonrpc", "rest"))[1]
    fake = FakeA2AServer()
    await fake.start()
    try:
        fake.load(scenario.script, time_scale=0.01)
        async with sdk_client(fake.base_url) as client:
            await collect(client.send_message(user_message("hi")))
        ledger = fake.ledger
        [task] = ledger.tasks
        scale = TimeScale(0.01)
        obs = observe(
            scenario,
            fake,
            target="t",
            scale=scale,
            turns=(),
            ledger=ledger,
            tolerance_s=0.25,
            link_events=None,
            faults=(),
            reply=None,
            follow_up=None,
        )
    finally:
        await fake.close()
    [held] = obs.server_tasks
    assert (held.task_id, held.state) == (task.task_id, "completed")
    assert [(a.id, a.text) for a in held.artifacts] == [("summary", "one two")]
    # the REST run of a scenario that leaves its wire out is on 1.0, scaled as the run is
    assert (obs.binding, obs.wire, obs.deadline_s, obs.idle_s) == ("rest", "1.0", 0.1, 0.02)
    assert server_tasks(fake, ["no-such-task"]) == []
