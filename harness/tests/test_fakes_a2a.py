"""The fake A2A server, driven by the REAL a2a-sdk 1.3 client in both wire versions.

If the real client (``a2a.client.create_client``, which picks its 0.3 or 1.0 transport from
our agent card) runs these scenarios to the end, so will the clients streamproof tests. Raw
HTTP tests cover what no SDK client would send (malformed JSON-RPC) and the bytes on the wire
(framing variants). Time scales are small (a scenario minute takes well under a second); every
wait polls a condition with a generous deadline, and where the client must act between two
events the script leaves it hundreds of milliseconds, so the tests are quick and do not flake.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import httpx
import pytest
import yaml
from a2a.client import A2AClientError, Client, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a.types import TaskState as PbState
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from pydantic import ValidationError

from harness import sse
from harness.fakes.a2a import FakeA2AServer
from harness.fakes.a2a.script import A2AScript
from harness.protocol import a2a

WIRES = ("0.3", "1.0")
STREAM_METHOD = {"0.3": "message/stream", "1.0": "SendStreamingMessage"}
RESUBSCRIBE_METHOD = {"0.3": "tasks/resubscribe", "1.0": "SubscribeToTask"}

REPORT = """
task:
  - {at: 0s,  status: submitted}
  - {at: 2s,  status: working, message: gathering sources}
  - {at: 12s, artifact: {id: summary, name: Summary, text: "Section 1 ..."}}
  - {at: 25s, artifact: {id: summary, append: true, text: "Section 2 ..."}}
  - {at: 30s, heartbeat: true}
  - {at: 70s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
  - {at: 78s, status: completed}
"""


def load_script(text: str, **server: Any) -> A2AScript:
    doc = yaml.safe_load(text)
    doc.setdefault("server", {}).update(server)
    return A2AScript.model_validate(doc)


@pytest.fixture
async def fake() -> AsyncIterator[FakeA2AServer]:
    server = FakeA2AServer()
    await server.start()
    yield server
    await server.close()


@asynccontextmanager
async def sdk_client(url: str, **config: Any) -> AsyncIterator[Client]:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await create_client(url, client_config=ClientConfig(httpx_client=http, **config))
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str = "hi", **ids: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER, **ids))


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for a condition"
        await asyncio.sleep(0.01)


def kinds(events: list[StreamResponse]) -> list[str]:
    return [str(e.WhichOneof("payload")) for e in events]


def reassemble(events: list[StreamResponse], into: dict[str, str] | None = None) -> dict[str, str]:
    """The seed recipe's rule: append extends the buffer with the same id, else replaces it."""
    buffers = dict(into or {})
    for event in events:
        if event.HasField("artifact_update"):
            update = event.artifact_update
            text = "".join(p.text for p in update.artifact.parts)
            key = update.artifact.artifact_id
            buffers[key] = buffers.get(key, "") + text if update.append else text
    return buffers


def last_state(events: list[StreamResponse]) -> int:
    for event in reversed(events):
        if event.HasField("status_update"):
            return event.status_update.status.state
        if event.HasField("task"):
            return event.task.status.state
    raise AssertionError("no state in the events")


async def collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [event async for event in stream]


def server_text(fake: FakeA2AServer, task_id: str) -> str:
    """The text of the task's first artifact as the server has aggregated it so far."""
    task = fake.task(task_id)
    return a2a.text_of(task.artifacts[0].parts) if task is not None and task.artifacts else ""


# --- the script --------------------------------------------------------------------------------


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


# --- happy paths with the real client ----------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_a_streamed_task_with_artifact_chunks(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.0005)
    async with sdk_client(fake.base_url) as client:
        events = await collect(client.send_message(user_message("market summary")))
    assert kinds(events) == [
        "task",
        "status_update",
        "artifact_update",
        "artifact_update",
        "artifact_update",
        "status_update",
    ]
    assert events[0].task.status.state == PbState.TASK_STATE_SUBMITTED
    assert last_state(events) == PbState.TASK_STATE_COMPLETED
    assert reassemble(events) == {"summary": "Section 1 ...Section 2 ...Section 3 ..."}
    assert events[-2].artifact_update.last_chunk
    task_id = events[0].task.id
    server_view = fake.task(task_id)
    assert server_view is not None
    assert a2a.text_of(server_view.artifacts[0].parts) == "Section 1 ...Section 2 ...Section 3 ..."

    assert await fake.wait_quiet(2.0)
    ledger = fake.ledger
    assert ledger.rpc_methods == [STREAM_METHOD[wire]]
    card, stream = ledger.requests
    assert (card.http_method, card.path, card.ended) == ("GET", a2a.AGENT_CARD_PATH, "completed")
    assert stream.accept == "text/event-stream"
    assert stream.a2a_version == wire  # the 1.3 client's compat transport says 0.3
    assert stream.content_type == "application/json"
    assert (stream.response, stream.ended, stream.task_id) == ("sse", "completed", task_id)
    assert [f.kind for f in stream.frames] == [
        "task",
        "status-update",
        "artifact-update",
        "artifact-update",
        "heartbeat",
        "artifact-update",
        "status-update",
    ]
    assert [t.task_id for t in ledger.tasks] == [task_id]
    assert ledger.tasks[0].text == "market summary"
    assert ledger.tasks[0].message_id == stream.params["message"]["messageId"]
    assert [m.outcome for m in ledger.messages] == ["created"]


async def test_artifact_replace_and_data_parts(fake: FakeA2AServer) -> None:
    fake.load(
        load_script(
            """
task:
  - {at: 0s, artifact: {id: a, text: "draft "}}
  - {at: 0s, artifact: {id: a, append: true, text: "one"}}
  - {at: 0s, artifact: {id: a, text: "final"}}
  - {at: 0s, artifact: {id: b, data: {rows: 3}, last: true}}
  - {at: 0s, status: completed}
"""
        ),
        time_scale=0.01,
    )
    async with sdk_client(fake.base_url) as client:
        events = await collect(client.send_message(user_message()))
    assert reassemble(events)["a"] == "final"
    data = events[-2].artifact_update.artifact.parts[0]
    assert data.WhichOneof("content") == "data"
    assert dict(data.data.struct_value)["rows"] == 3


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("streaming", [True, False])
async def test_a_direct_message_reply(fake: FakeA2AServer, wire: str, streaming: bool) -> None:
    fake.load(load_script("reply: {at: 1s, text: Hello there}", wire=wire), time_scale=0.02)
    async with sdk_client(fake.base_url, streaming=streaming) as client:
        events = await collect(client.send_message(user_message()))
    assert kinds(events) == ["message"]
    assert events[0].message.parts[0].text == "Hello there"
    assert events[0].message.role == Role.ROLE_AGENT
    await fake.wait_quiet(2.0)
    ledger = fake.ledger
    assert ledger.tasks == ()
    assert [m.outcome for m in ledger.messages] == ["reply"]
    assert ledger.requests[-1].ended == "completed"


@pytest.mark.parametrize("wire", WIRES)
async def test_message_send_blocks_until_the_turn_ends(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.0005)
    async with sdk_client(fake.base_url, streaming=False) as client:
        (event,) = await collect(client.send_message(user_message()))
    task = event.task
    assert task.status.state == PbState.TASK_STATE_COMPLETED
    assert "".join(p.text for p in task.artifacts[0].parts).startswith("Section 1")
    assert [m.role for m in task.history][:1] == [Role.ROLE_USER]


@pytest.mark.parametrize("wire", WIRES)
async def test_message_send_returns_at_once_when_asked(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.01)
    async with sdk_client(fake.base_url, streaming=False, polling=True) as client:
        (event,) = await collect(client.send_message(user_message()))
    assert event.task.status.state == PbState.TASK_STATE_SUBMITTED


# --- progress without a connection -------------------------------------------------------------

QUIET = """
task:
  - {at: 0s,  status: working, message: gathering sources}
  - {at: 1s,  artifact: {id: summary, text: "Section 1 ..."}}
  - {at: 5s,  artifact: {id: summary, append: true, text: "Section 2 ..."}}
  - {at: 45s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
  - {at: 46s, status: completed}
"""


@pytest.mark.parametrize("wire", WIRES)
async def test_get_during_a_quiet_period_shows_progress(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(QUIET, wire=wire), time_scale=0.008)
    async with sdk_client(fake.base_url) as client:
        events: list[StreamResponse] = []
        snapshot = None
        async for event in client.send_message(user_message()):
            events.append(event)
            if snapshot is None and len(reassemble(events).get("summary", "")) > 20:
                # after chunk 2, in the 40 s of silence before chunk 3
                snapshot = await client.get_task(GetTaskRequest(id=event.artifact_update.task_id))
    assert snapshot is not None
    assert snapshot.status.state == PbState.TASK_STATE_WORKING
    assert "".join(p.text for p in snapshot.artifacts[0].parts) == "Section 1 ...Section 2 ..."
    assert [m.role for m in snapshot.history] == [Role.ROLE_USER]
    assert last_state(events) == PbState.TASK_STATE_COMPLETED
    ledger = fake.ledger
    assert ledger.gets[0].state == "working" and ledger.gets[0].error_code is None


@pytest.mark.parametrize("wire", WIRES)
async def test_a_snapshot_without_artifacts(fake: FakeA2AServer, wire: str) -> None:
    """``snapshot_artifacts: false``: tasks/get shows the status and history but no artifacts
    (the seed's "else if buffers non-empty -> incomplete" case); the task itself still has
    them, and a resubscribe's opening Task (``resubscribe_snapshot``) is unchanged."""
    fake.load(load_script(QUIET, wire=wire, snapshot_artifacts=False), time_scale=0.008)
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message())
        first: list[StreamResponse] = []
        async for event in stream:
            first.append(event)
            if len(reassemble(first).get("summary", "")) > 20:
                break  # after chunk 2, in the 40 s of silence before chunk 3
        await stream.aclose()  # type: ignore[attr-defined]
        task_id = first[0].task.id
        snap = await client.get_task(GetTaskRequest(id=task_id))
        rest = await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))
    assert snap.status.state == PbState.TASK_STATE_WORKING
    assert list(snap.artifacts) == []
    assert [m.role for m in snap.history] == [Role.ROLE_USER]
    assert kinds(rest)[0] == "task"
    assert "".join(p.text for p in rest[0].task.artifacts[0].parts) == (
        "Section 1 ...Section 2 ..."
    )
    assert last_state(rest) == PbState.TASK_STATE_COMPLETED
    assert server_text(fake, task_id) == "Section 1 ...Section 2 ...Section 3 ..."
    await fake.wait_quiet(2.0)
    assert [(g.state, g.error_code) for g in fake.ledger.gets] == [("working", None)]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("snapshot", [True, False], ids=["snapshot", "no-snapshot"])
async def test_a_dropped_stream_then_resubscribe_continues(
    fake: FakeA2AServer, wire: str, snapshot: bool
) -> None:
    fake.load(load_script(QUIET, wire=wire, resubscribe_snapshot=snapshot), time_scale=0.008)
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message("summarise"))
        first: list[StreamResponse] = []
        async for event in stream:
            first.append(event)
            if event.HasField("artifact_update"):
                break  # the proxy cuts the stream after chunk 1
        await stream.aclose()  # type: ignore[attr-defined]
        task_id = first[0].task.id
        await until(lambda: fake.ledger.requests[1].ended == "client_closed")
        # the task keeps going: chunk 2 is produced while nobody listens
        await until(lambda: server_text(fake, task_id) == "Section 1 ...Section 2 ...")
        snap = await client.get_task(GetTaskRequest(id=task_id))
        assert "".join(p.text for p in snap.artifacts[0].parts) == "Section 1 ...Section 2 ..."
        rest = await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))

    if snapshot:
        assert kinds(rest)[0] == "task"
        assert rest[0].task.status.state == PbState.TASK_STATE_WORKING
        assert "".join(p.text for p in rest[0].task.artifacts[0].parts).endswith("Section 2 ...")
    assert kinds(rest)[-2:] == ["artifact_update", "status_update"]
    assert "task" not in kinds(rest)[1:]
    assert last_state(rest) == PbState.TASK_STATE_COMPLETED
    # nothing replayed: the gap chunk reaches the client only through the snapshot
    assert reassemble(rest, into={"summary": "Section 1 ...Section 2 ..."}) == {
        "summary": "Section 1 ...Section 2 ...Section 3 ..."
    }
    await fake.wait_quiet(2.0)
    ledger = fake.ledger
    assert len(ledger.tasks) == 1  # the task was not restarted
    assert ledger.rpc_methods == [
        STREAM_METHOD[wire],
        "GetTask" if wire == "1.0" else "tasks/get",
        RESUBSCRIBE_METHOD[wire],
    ]
    stream_req, _get, resub_req = ledger.requests[1:]
    assert stream_req.ended == "client_closed"
    assert resub_req.ended == "completed" and resub_req.accept == "text/event-stream"
    assert resub_req.frames[0].kind == ("task" if snapshot else "artifact-update")
    assert [(r.task_id, r.state, r.error_code) for r in ledger.resubscribes] == [
        (ledger.tasks[0].task_id, "working", None)
    ]
    texts = [e.text for e in ledger.task_events if e.kind == "artifact-update"]
    assert texts == ["Section 1 ...", "Section 2 ...", "Section 3 ..."]


# --- terminal tasks, errors --------------------------------------------------------------------

ERROR_CLASS = {
    -32004: UnsupportedOperationError,
    -32602: InvalidParamsError,
    -32001: TaskNotFoundError,
}


@pytest.mark.parametrize("code", [-32004, -32602, -32001])
@pytest.mark.parametrize("delivery", ["sse", "json"])
async def test_resubscribe_to_a_finished_task(
    fake: FakeA2AServer, code: int, delivery: str
) -> None:
    fake.load(
        load_script(REPORT, terminal_resubscribe_error=code, stream_errors=delivery),
        time_scale=0.0005,
    )
    async with sdk_client(fake.base_url) as client:
        events = await collect(client.send_message(user_message()))
        with pytest.raises(ERROR_CLASS[code]):
            await collect(client.subscribe(SubscribeToTaskRequest(id=events[0].task.id)))
    request = fake.ledger.requests[-1]
    assert request.error_code == code
    assert request.response == delivery
    if delivery == "sse":
        assert [f.kind for f in request.frames] == ["error"]
    assert fake.ledger.resubscribes[0].state == "completed"


async def test_an_error_event_frame_loses_its_code_in_the_compat_client(
    fake: FakeA2AServer,
) -> None:
    """a2a.md §1.7: the 1.3 client's 0.3 transport turns ``event: error`` into a generic
    A2AClientError; the fake reproduces the framing that causes it."""
    fake.load(load_script(REPORT, error_event=True), time_scale=0.001)
    async with sdk_client(fake.base_url) as client:
        with pytest.raises(A2AClientError, match="SSE stream error event"):
            await collect(client.subscribe(SubscribeToTaskRequest(id="no-such-task")))


@pytest.mark.parametrize("wire", WIRES)
async def test_unknown_tasks(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(REPORT, wire=wire), time_scale=0.01)
    async with sdk_client(fake.base_url) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="nope"))
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task(CancelTaskRequest(id="nope"))
        with pytest.raises(TaskNotFoundError):
            await collect(client.subscribe(SubscribeToTaskRequest(id="nope")))
        with pytest.raises(TaskNotFoundError):
            await collect(client.send_message(user_message(task_id="nope")))
    ledger = fake.ledger
    assert ledger.tasks == ()
    assert [m.outcome for m in ledger.messages] == ["rejected"]
    assert ledger.gets[0].state is None and ledger.gets[0].error_code == -32001


# --- cancel ------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_cancel_honoured(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(QUIET, wire=wire), time_scale=0.02)
    async with sdk_client(fake.base_url) as client:
        events: list[StreamResponse] = []
        async for event in client.send_message(user_message()):
            events.append(event)
            if event.HasField("artifact_update"):
                task = await client.cancel_task(CancelTaskRequest(id=event.artifact_update.task_id))
                assert task.status.state == PbState.TASK_STATE_CANCELED
        # the open stream sees the cancellation and ends
        assert last_state(events) == PbState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):  # a finished task cannot be cancelled
            await client.cancel_task(CancelTaskRequest(id=events[0].task.id))
    ledger = fake.ledger
    assert [(c.state, c.error_code) for c in ledger.cancels] == [
        ("working", None),
        ("canceled", -32002),
    ]
    assert ledger.requests[1].ended == "completed"
    await asyncio.sleep(0.1)  # the timeline has stopped
    assert [e.state for e in fake.ledger.task_events if e.kind == "status-update"] == [
        "working",
        "canceled",
    ]


async def test_cancel_refused(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET, cancel="refuse"), time_scale=0.002)
    async with sdk_client(fake.base_url) as client:
        events: list[StreamResponse] = []
        async for event in client.send_message(user_message()):
            events.append(event)
            if event.HasField("artifact_update") and not fake.ledger.cancels:
                with pytest.raises(TaskNotCancelableError):
                    await client.cancel_task(CancelTaskRequest(id=event.artifact_update.task_id))
    assert last_state(events) == PbState.TASK_STATE_COMPLETED  # the task went on
    assert [(c.state, c.error_code) for c in fake.ledger.cancels] == [("working", -32002)]


# --- input-required and the follow-up turn -----------------------------------------------------

ASKS = """
task:
  - {at: 0s, status: working}
  - {at: 1s, artifact: {id: plan, text: "Draft"}}
  - {at: 2s, status: input-required, message: "Which region?",
     follow_up: [{at: 1s, artifact: {id: plan, append: true, text: " for EMEA", last: true}},
                 {at: 2s, status: completed, message: done}]}
"""


@pytest.mark.parametrize("wire", WIRES)
async def test_input_required_then_a_follow_up(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(ASKS, wire=wire), time_scale=0.005)
    async with sdk_client(fake.base_url) as client:
        turn1 = await collect(client.send_message(user_message("plan a launch")))
        assert last_state(turn1) == PbState.TASK_STATE_INPUT_REQUIRED
        asked = turn1[-1].status_update.status.message.parts[0].text
        assert asked == "Which region?"
        task_id, context_id = turn1[0].task.id, turn1[0].task.context_id
        turn2 = await collect(
            client.send_message(user_message("EMEA", task_id=task_id, context_id=context_id))
        )
        final = await client.get_task(GetTaskRequest(id=task_id))
    # the follow-up stream opens with "working", never a stale input-required snapshot
    assert kinds(turn2) == ["status_update", "artifact_update", "status_update"]
    assert turn2[0].status_update.status.state == PbState.TASK_STATE_WORKING
    assert last_state(turn2) == PbState.TASK_STATE_COMPLETED
    assert reassemble(turn1 + turn2) == {"plan": "Draft for EMEA"}
    history = [(m.role, "".join(p.text for p in m.parts)) for m in final.history]
    assert history == [
        (Role.ROLE_USER, "plan a launch"),
        (Role.ROLE_AGENT, "Which region?"),
        (Role.ROLE_USER, "EMEA"),
    ]
    ledger = fake.ledger
    assert len(ledger.tasks) == 1
    assert [(m.outcome, m.task_id) for m in ledger.messages] == [
        ("created", None),
        ("continued", task_id),
    ]
    first_stream = ledger.requests[1]
    if wire == "0.3":
        assert first_stream.frames[-1].final is True  # interrupted_final (spec "typically")
    assert [e.turn for e in ledger.task_events if e.kind == "follow-up"] == [1]


async def test_follow_up_mistakes_are_refused(fake: FakeA2AServer) -> None:
    fake.load(load_script(ASKS, interrupted_final=False), time_scale=0.01)
    async with sdk_client(fake.base_url) as client:
        turn1 = await collect(client.send_message(user_message()))
        task_id, context_id = turn1[0].task.id, turn1[0].task.context_id
        with pytest.raises(InvalidParamsError, match="does not match"):
            await collect(client.send_message(user_message(task_id=task_id, context_id="other")))
        await collect(client.send_message(user_message(task_id=task_id, context_id=context_id)))
        with pytest.raises(UnsupportedOperationError, match="terminal state"):
            await collect(client.send_message(user_message(task_id=task_id, context_id=context_id)))
    assert fake.ledger.requests[1].frames[-1].final is False
    outcomes = [(m.outcome, m.error_code) for m in fake.ledger.messages]
    assert outcomes == [
        ("created", None),
        ("rejected", -32602),
        ("continued", None),
        ("rejected", -32004),
    ]


async def test_a_message_to_a_working_task_is_refused(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET), time_scale=0.05)
    async with sdk_client(fake.base_url) as client:
        async for event in client.send_message(user_message()):
            with pytest.raises(UnsupportedOperationError, match="not waiting for input"):
                await collect(client.send_message(user_message(task_id=event.task.id)))
            break


async def test_resubscribe_while_waiting_for_input_carries_the_next_turn(
    fake: FakeA2AServer,
) -> None:
    fake.load(load_script(ASKS), time_scale=0.005)
    async with sdk_client(fake.base_url) as client:
        turn1 = await collect(client.send_message(user_message()))
        task_id, context_id = turn1[0].task.id, turn1[0].task.context_id
        watcher: list[StreamResponse] = []

        async def watch() -> None:
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                watcher.append(event)

        watching = asyncio.create_task(watch())
        await until(lambda: len(fake.ledger.resubscribes) == 1 and len(watcher) == 1)
        await collect(client.send_message(user_message(task_id=task_id, context_id=context_id)))
        await asyncio.wait_for(watching, 5)
    assert kinds(watcher) == ["task", "status_update", "artifact_update", "status_update"]
    assert watcher[0].task.status.state == PbState.TASK_STATE_INPUT_REQUIRED
    assert last_state(watcher) == PbState.TASK_STATE_COMPLETED


# --- raw HTTP: malformed JSON-RPC, versions, framing --------------------------------------------


async def post(
    fake: FakeA2AServer, body: bytes | dict[str, Any], **headers: str
) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as session:
        async with session.post(
            fake.base_url + "/", data=data, headers={"Content-Type": "application/json", **headers}
        ) as response:
            return response.status, dict(response.headers), await response.read()


def rpc(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


MSG = {
    "kind": "message",
    "messageId": "m1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"this is not json", -32700),
        (b"", -32700),
        (b"[1, 2]", -32600),
        (b'"a string"', -32600),
        (b'{"jsonrpc": "2.0", "id": 5}', -32600),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tasks/launch", "params": {}}', -32601),
        (json.dumps(rpc("tasks/get", {"historyLength": 2})).encode(), -32602),
        (json.dumps(rpc("message/stream", {"message": {"parts": []}})).encode(), -32602),
        (json.dumps(rpc("message/send", [MSG])).encode(), -32602),
        (json.dumps(rpc("SendStreamingMessage", {"message": MSG})).encode(), -32601),
        (json.dumps(rpc("tasks/pushNotificationConfig/get", {"id": "t"})).encode(), -32003),
    ],
)
async def test_malformed_json_rpc_gets_the_right_error(
    fake: FakeA2AServer, body: bytes, code: int
) -> None:
    fake.load(load_script(REPORT), time_scale=0.01)
    status, headers, raw = await post(fake, body)
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert b"Traceback" not in raw
    reply = json.loads(raw)
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code
    assert "result" not in reply
    record = fake.ledger.requests[-1]
    assert (record.error_code, record.ended, record.response) == (code, "completed", "json")
    if code == -32700:
        assert record.body_excerpt == body.decode()
    assert fake.ledger.tasks == ()


async def test_a_1_0_server_wants_the_version_header(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="1.0"), time_scale=0.01)
    body = rpc("GetTask", {"id": "t"}, "q")
    _, _, raw = await post(fake, body)
    reply = json.loads(raw)
    assert reply["error"]["code"] == -32009 and reply["id"] == "q"
    assert reply["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    _, _, raw = await post(fake, body, **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32001  # past the version check: no such task
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}), **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32601  # a 1.0-only server has no tasks/get


async def test_both_grammars_on_one_endpoint(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, wire="both"), time_scale=0.0005)
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.card_url) as response:
            card = await response.json()
    assert [i["protocolVersion"] for i in card["supportedInterfaces"]] == ["1.0", "0.3"]
    assert card["url"] == fake.base_url + "/"
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}))
    assert json.loads(raw)["error"] == {"code": -32001, "message": "Task not found"}
    _, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}), **{"A2A-Version": "1.0"})
    assert json.loads(raw)["error"]["code"] == -32603  # as a2a-sdk 1.3 answers (§2.1)
    async with sdk_client(fake.base_url) as client:  # the 1.3 client prefers 1.0
        events = await collect(client.send_message(user_message()))
    assert last_state(events) == PbState.TASK_STATE_COMPLETED
    assert fake.ledger.rpc_methods[-1] == "SendStreamingMessage"


async def test_streaming_off_on_the_card(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT, streaming=False), time_scale=0.0005)
    _, _, raw = await post(fake, rpc("message/stream", {"message": MSG}))
    assert json.loads(raw)["error"]["code"] == -32004
    async with sdk_client(fake.base_url) as client:  # falls back to message/send
        (event,) = await collect(client.send_message(user_message()))
    assert event.task.status.state == PbState.TASK_STATE_COMPLETED
    assert fake.ledger.rpc_methods[-1] == "message/send"


async def test_other_paths_and_methods(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT), time_scale=0.01)
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.base_url + "/") as response:
            assert response.status == 405
        async with session.get(fake.base_url + "/.well-known/agent.json") as response:
            assert response.status == 404  # 0.2's path is not served (§1.1)
        async with session.get(fake.card_url, headers={"Host": "proxy.test:9999"}) as response:
            card = await response.json()
    assert card["url"] == "http://proxy.test:9999/"  # the card follows the address used
    assert card["protocolVersion"] == "0.3.0" and "supportedInterfaces" not in card
    fake.load(load_script(REPORT), time_scale=0.01, public_url="http://elsewhere:1/rpc")
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.card_url) as response:
            assert (await response.json())["url"] == "http://elsewhere:1/rpc"


async def read_stream(
    fake: FakeA2AServer, body: dict[str, Any], **headers: str
) -> tuple[dict[str, str], bytes]:
    status, response_headers, raw = await post(fake, body, Accept="text/event-stream", **headers)
    assert status == 200
    return response_headers, raw


@pytest.mark.parametrize(("line_end", "chars"), [("crlf", b"\r\n"), ("lf", b"\n")])
@pytest.mark.parametrize("event_ids", [False, True])
async def test_framing_variants(
    fake: FakeA2AServer, line_end: str, chars: bytes, event_ids: bool
) -> None:
    fake.load(load_script(REPORT, line_end=line_end, event_ids=event_ids), time_scale=0.0005)
    headers, raw = await read_stream(fake, rpc("message/stream", {"message": MSG}, "req-1"))
    assert headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert headers["Cache-Control"] == "no-store"
    assert headers["X-Accel-Buffering"] == "no"
    lines = raw.split(chars)
    if line_end == "lf":
        assert b"\r" not in raw
    else:
        assert raw.count(b"\n") == raw.count(b"\r\n")
    assert any(line.startswith(b": ping - ") for line in lines)  # the heartbeat step
    events = sse.decode(raw)
    assert len(events) == 6
    assert all(e.type == "message" for e in events)
    assert [e.id_line for e in events] == [event_ids] * 6
    if event_ids:
        assert [e.id for e in events] == [str(i) for i in range(6)]
    payloads = [json.loads(e.data) for e in events]
    assert all(p["id"] == "req-1" and p["jsonrpc"] == "2.0" for p in payloads)
    assert [p["result"]["kind"] for p in payloads] == [
        "task",
        "status-update",
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    data_lines = [line for line in lines if line.startswith(b"data:")]
    assert len(data_lines) == 6  # each JSON document on one data: line (§1.5)
    first = payloads[0]["result"]
    assert first["status"] == {"state": "submitted"}
    assert first["history"][0]["taskId"] == first["id"]
    assert payloads[-1]["result"]["final"] is True


async def test_ping_every_and_1_0_frames(fake: FakeA2AServer) -> None:
    fake.load(
        load_script(
            "task: [{at: 0s, status: working}, {at: 10s, status: failed}]",
            wire="1.0",
            ping_every="2s",
        ),
        time_scale=0.005,
    )
    _, raw = await read_stream(
        fake,
        rpc(
            "SendStreamingMessage",
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
        ),
        **{"A2A-Version": "1.0"},
    )
    decoder = sse.Decoder()
    events = decoder.feed(raw) + decoder.close()
    assert decoder.comments >= 3
    payloads = [json.loads(e.data)["result"] for e in events]
    assert [next(iter(p)) for p in payloads] == ["task", "statusUpdate", "statusUpdate"]
    assert payloads[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    assert "final" not in payloads[-1]["statusUpdate"]
    frames = fake.ledger.requests[-1].frames
    assert [f.kind for f in frames].count("ping") == decoder.comments


@pytest.mark.parametrize("delivery", ["sse", "json"])
async def test_stream_errors_as_sse_or_json(fake: FakeA2AServer, delivery: str) -> None:
    fake.load(load_script(REPORT, stream_errors=delivery), time_scale=0.01)
    headers, raw = await read_stream(fake, rpc("tasks/resubscribe", {"id": "gone"}, "r9"))
    if delivery == "json":
        assert headers["Content-Type"] == "application/json"
        reply = json.loads(raw)
    else:
        assert headers["Content-Type"].startswith("text/event-stream")
        (event,) = sse.decode(raw)
        reply = json.loads(event.data)
    assert reply == {
        "error": {"code": -32001, "message": "Task not found"},
        "id": "r9",
        "jsonrpc": "2.0",
    }


# --- ledger, lifecycle -------------------------------------------------------------------------


async def test_the_ledger_tracks_connections_and_params(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT), time_scale=0.001)
    async with aiohttp.ClientSession() as session:  # one keep-alive connection
        for request_id in (1, 2):
            body = rpc("tasks/get", {"id": "t", "historyLength": 0}, request_id)
            async with session.post(fake.base_url + "/", json=body) as response:
                await response.read()
    await post(fake, rpc("tasks/get", {"id": "t"}, 3))  # a new connection
    requests = fake.ledger.requests
    assert [r.connection for r in requests] == [1, 1, 2]
    assert [r.rpc_id for r in requests] == [1, 2, 3]
    assert requests[0].params == {"id": "t", "historyLength": 0}
    assert requests[0].wire == "0.3" and requests[0].a2a_version is None
    assert all(r.t_end is not None and r.t_end >= r.t for r in requests)
    assert requests[0].t <= requests[1].t <= requests[2].t


async def test_load_resets_everything_and_cuts_open_streams(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET), time_scale=1.0)  # a minute-long task
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message())
        first = await anext(stream)  # type: ignore[call-overload]
        assert not await fake.wait_quiet(0.05)  # the stream is open
        old = fake.ledger
        fake.load(load_script(REPORT), time_scale=0.01)
        assert fake.ledger.requests == () and fake.task(first.task.id) is None
        with pytest.raises(A2AClientError, match="incomplete chunked read"):
            await collect(stream)  # cut: the client sees a broken body, not a clean end
        assert old.requests[1].ended == "open"  # a snapshot taken before the cut
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=first.task.id))
    assert await fake.wait_quiet(2.0)


async def test_close_cuts_open_streams(fake: FakeA2AServer) -> None:
    fake.load(load_script(QUIET), time_scale=1.0)
    async with sdk_client(fake.base_url) as client:
        stream = client.send_message(user_message())
        await anext(stream)  # type: ignore[call-overload]
        await fake.close()
        with pytest.raises(A2AClientError):
            await collect(stream)
    assert fake.ledger.requests[1].ended == "server_closed"


async def test_a_streamed_task_runs_twice_when_the_client_resends(fake: FakeA2AServer) -> None:
    """The duplicate-task case the checks look for: a resend creates a second task."""
    fake.load(load_script(REPORT), time_scale=0.0005)
    async with sdk_client(fake.base_url) as client:
        await collect(client.send_message(user_message("same")))
        await collect(client.send_message(user_message("same")))
    tasks = fake.ledger.tasks
    assert len(tasks) == 2 and tasks[0].task_id != tasks[1].task_id
    assert tasks[0].message_id != tasks[1].message_id


async def test_an_internal_failure_is_a_json_rpc_error_not_a_traceback(
    fake: FakeA2AServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: Any) -> Any:
        raise RuntimeError("secret detail")

    fake.load(load_script(REPORT), time_scale=0.01)
    monkeypatch.setattr(a2a, "decode_request_object", explode)
    status, _, raw = await post(fake, rpc("tasks/get", {"id": "t"}, 4))
    assert status == 200
    assert json.loads(raw) == {
        "error": {"code": -32603, "message": "Internal error (RuntimeError)"},
        "id": 4,
        "jsonrpc": "2.0",
    }
    assert b"secret" not in raw and b"Traceback" not in raw
    assert fake.ledger.requests[-1].error_code == -32603
