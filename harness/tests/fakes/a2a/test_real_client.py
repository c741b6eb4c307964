"""The fake A2A server, driven by the REAL a2a-sdk 1.3 client in both wire versions.

If the real client (``a2a.client.create_client``, which picks its 0.3 or 1.0 transport from
our agent card) runs these scenarios to the end, so will the clients streamproof tests. What no
SDK client would send and the bytes on the wire are tested by raw HTTP in
``test_wire.py``; the script's validation is in ``test_script.py``. Time
scales are small (a scenario minute takes well under a second); every wait polls a condition
with a generous deadline, and where the client must act between two events the script leaves
it a margin a loaded machine's stalls do not eat (:data:`SILENCE_SCALE`).
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from a2a.client import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
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

from harness.tests.fakes.a2a.helpers import (
    QUIET,
    REPORT,
    collect,
    kinds,
    last_state,
    load_script,
    reassemble,
    sdk_client,
    server_text,
    until,
    user_message,
)
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.protocol import a2a

WIRES = ("0.3", "1.0")
STREAM_METHOD = {"0.3": "message/stream", "1.0": "SendStreamingMessage"}
RESUBSCRIBE_METHOD = {"0.3": "tasks/resubscribe", "1.0": "SubscribeToTask"}
SILENCE_SCALE = 0.035
"""For the tests whose client drops, reads or resubscribes in QUIET's 40 s of silence: 1.4 s
real. At 0.008 (0.32 s) a test process stalled that long on a loaded machine let chunk 3 and
the completion be written before the client had closed its stream."""


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


@pytest.mark.slow
@pytest.mark.parametrize("wire", WIRES)
async def test_get_during_a_quiet_period_shows_progress(fake: FakeA2AServer, wire: str) -> None:
    fake.load(load_script(QUIET, wire=wire), time_scale=SILENCE_SCALE)
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


@pytest.mark.slow
@pytest.mark.parametrize("wire", WIRES)
async def test_a_snapshot_without_artifacts(fake: FakeA2AServer, wire: str) -> None:
    """``snapshot_artifacts: false``: tasks/get shows the status and history but no artifacts
    (the seed's "else if buffers non-empty -> incomplete" case); the task itself still has
    them, and a resubscribe's opening Task (``resubscribe_snapshot``) is unchanged."""
    fake.load(load_script(QUIET, wire=wire, snapshot_artifacts=False), time_scale=SILENCE_SCALE)
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


@pytest.mark.slow
@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("snapshot", [True, False], ids=["snapshot", "no-snapshot"])
async def test_a_dropped_stream_then_resubscribe_continues(
    fake: FakeA2AServer, wire: str, snapshot: bool
) -> None:
    fake.load(
        load_script(QUIET, wire=wire, resubscribe_snapshot=snapshot), time_scale=SILENCE_SCALE
    )
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
    """docs/explanation/wire-facts/a2a.md §1.7: the 1.3 client's 0.3 transport turns ``event:
    error`` into a generic
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
    # The cancel goes out on the first chunk (1 s in), the task would finish 45 s in: at 0.1,
    # 4.4 s real between them (at 0.02 a loaded machine once answered after the task ended).
    fake.load(load_script(QUIET, wire=wire), time_scale=0.1)
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


# --- unloading -----------------------------------------------------------------------------------


async def test_load_none_unloads_the_script_and_forgets_the_ledger(fake: FakeA2AServer) -> None:
    fake.load(load_script(REPORT), time_scale=0.0005)
    async with aiohttp.ClientSession() as session:
        async with session.get(fake.card_url) as response:
            assert response.status == 200
        fake.load(None)
        assert fake.script is None and fake.ledger.requests == ()
        async with session.get(fake.card_url) as response:
            assert response.status == 503
        call = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}
        async with session.post(fake.base_url + "/", json=call) as response:
            answer = await response.json()
    assert answer["error"]["code"] == a2a.INTERNAL_ERROR
    assert "no scenario is loaded" in answer["error"]["message"]
    assert [r.rpc_method for r in fake.ledger.requests] == [None, "tasks/get"]
