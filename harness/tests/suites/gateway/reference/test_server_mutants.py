"""Each mutant of the reference gateway on the seed's typed-frames wire, visibly broken on the wire:
every mutant runs as its own process (``--bug``), started on first use and stopped (process
group) at module teardown (conftest.py), against the fake model and tool service."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping

import aiohttp
import pytest

from harness.tests.suites.gateway.reference.process import (
    ALICE,
    ANSWER_CHUNKS,
    BOB,
    MARKER,
    MAX_LLM_CALLS,
    MAX_TOKENS,
    MID_STREAM_ERROR,
    QUESTION,
    REFUND,
    RUNAWAY,
    TEXT_THEN_CALL,
    TOOL_PAYLOADS,
    TRANSFER,
    WORKED_EXAMPLE,
    Chat,
    Gateway,
    GatewayFactory,
    eventually,
    history_kinds,
    load,
    new_session,
    on_module_loop,
    parse_frames,
    skip_without_adk,
    start_gateway,
    turns,
    types_of,
)
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.suites.gateway.reference.mutants import BUGS

# End to end (real targets, whole runs): scheduled first under xdist (harness/tests/conftest.py).
pytestmark = pytest.mark.slow

skip_without_adk()


def test_every_mutant_has_a_wire_test() -> None:
    tested = {name.removeprefix("test_mutant_").replace("_", "-") for name in globals()}
    assert set(BUGS) <= tested


@on_module_loop
async def test_mutant_aggregate_as_delta(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("aggregate-as-delta")).chat(new_session())
    assert "message" not in types_of(chat.frames)
    assert chat.frames[-2].type == "delta" and chat.frames[-2].data["text"] == "".join(
        ANSWER_CHUNKS
    )


@on_module_loop
async def test_mutant_delta_after_message(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("delta-after-message")).chat(new_session())
    answer = "".join(ANSWER_CHUNKS)
    assert types_of(chat.frames)[-3:] == ["message", "delta", "done"]
    assert chat.frames[-3].data["text"] == chat.frames[-2].data["text"] == answer
    ids = [int(f.id) for f in chat.frames]
    assert ids == sorted(set(ids))  # fresh ids: only the trailing delta is wrong


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@on_module_loop
async def test_mutant_ignore_proxy(model: FakeModel, tools: FakeTools) -> None:
    """Behind a proxy nothing listens on, the reference's model call goes to the proxy and
    fails; the mutant drops the proxy variables and reaches the model directly."""
    proxy = f"http://127.0.0.1:{_closed_port()}"
    env = {
        "HTTP_PROXY": proxy,
        "HTTPS_PROXY": proxy,
        "http_proxy": proxy,
        "https_proxy": proxy,
        "NO_PROXY": "",
        "no_proxy": "",
    }
    answers: dict[str | None, tuple[list[str], int]] = {}
    for bug in (None, "ignore-proxy"):
        gateway = await start_gateway(model, tools, bug=bug, env=env)
        try:
            load(model, tools, turns({"chunks": ["Hello."]}))
            chat = await gateway.chat(new_session(), limit_s=30)
            answers[bug] = (types_of(chat.frames), len(model.calls))
        finally:
            await gateway.stop()
        gateway.stderr_path.unlink()
    frames, calls = answers[None]
    assert calls == 0 and frames[-1] == "error"  # the proxy was honoured, and is not there
    assert answers["ignore-proxy"] == (["delta", "message", "done"], 1)


@on_module_loop
async def test_mutant_tool_call_from_partial(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("tool-call-from-partial")).chat(new_session())
    assert types_of(chat.frames)[:3] == ["tool_call", "tool_call", "tool_result"]
    assert tools.count("lookupOrder") == 1


@on_module_loop
async def test_mutant_act_on_partial_calls(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("act-on-partial-calls")).chat(new_session())
    assert types_of(chat.frames)[0] == "tool_call"
    assert tools.count("lookupOrder") == 2


@on_module_loop
async def test_mutant_leak_tool_payload(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("leak-tool-payload")).chat(new_session())
    [result] = [f for f in chat.frames if f.type == "tool_result"]
    assert MARKER in json.dumps(result.data)


@on_module_loop
async def test_mutant_persist_partials(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("persist-partials")
    load(model, tools, WORKED_EXAMPLE)
    session = new_session()
    chat = await gateway.chat(session)
    assert types_of(chat.frames)[-1] == "done"
    _, history = await gateway.history(session)
    partials = [e for e in history["events"] if e.get("partial") is True]
    assert len(partials) == 4  # the partial function call and the three text chunks
    assert "".join(e["content"]["parts"][0].get("text", "") for e in partials) == "".join(
        ANSWER_CHUNKS
    )


@on_module_loop
async def test_mutant_event_id_as_frame_id(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("event-id-as-frame-id")).chat(new_session())
    [message] = [f for f in chat.frames if f.type == "message"]
    assert message.id == message.data["id"]
    assert not message.id.isdigit()
    # Python ADK: partials share the aggregate's id, so deltas and message repeat one id
    assert len({f.id for f in chat.frames}) < len(chat.frames)


@on_module_loop
async def test_mutant_reused_frame_ids(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, TEXT_THEN_CALL)
    chat = await (await gateways("reused-frame-ids")).chat(new_session())
    assert types_of(chat.frames)[1:3] == ["message", "tool_call"]
    assert chat.frames[1].id == chat.frames[2].id


@on_module_loop
async def test_mutant_no_terminal_frame(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("no-terminal-frame")
    load(model, tools, WORKED_EXAMPLE)
    chat = await gateway.chat(new_session())
    assert chat.frames[-1].type == "message" and "done" not in types_of(chat.frames)
    load(model, tools, MID_STREAM_ERROR)
    chat = await gateway.chat(new_session())
    assert [f.data for f in chat.frames if f.type == "error"] == [{"code": "UNAVAILABLE"}]


@on_module_loop
async def test_mutant_no_llm_budget(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("no-llm-budget")
    load(model, tools, RUNAWAY, runaway_cap=MAX_LLM_CALLS + 10)  # the fake ends the loop itself
    chat = await gateway.chat(new_session())
    assert len(model.calls) > MAX_LLM_CALLS
    assert "error" not in types_of(chat.frames)


@on_module_loop
async def test_mutant_swallow_error_event(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, MAX_TOKENS)
    chat = await (await gateways("swallow-error-event")).chat(new_session())
    assert types_of(chat.frames) == ["delta", "delta", "message", "done"]


@on_module_loop
async def test_mutant_no_auth(gateways: GatewayFactory, model: FakeModel, tools: FakeTools) -> None:
    gateway = await gateways("no-auth")
    load(model, tools, turns({"chunks": ["Hello."]}))
    session = new_session()
    chat = await gateway.chat(session, headers={})
    assert chat.status == 200 and types_of(chat.frames)[-1] == "done"
    assert (await gateway.history(session, headers={"Authorization": "Bearer nope"}))[0] == 200


@on_module_loop
async def test_mutant_shared_history(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("shared-history")
    load(model, tools, turns({"chunks": ["Hello."]}))
    session = new_session()
    await gateway.chat(session)
    status, history = await gateway.history(session, headers=BOB)
    assert status == 200
    assert history["events"][0]["content"]["parts"][0]["text"] == QUESTION


async def _leave_after_first_delta(gateway: Gateway, session: str) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{gateway.url}/chat/{session}", data=QUESTION, headers=ALICE) as resp,
    ):
        assert resp.status == 200
        assert b"event: delta" in await resp.content.readuntil(b"\n\n")
        resp.close()  # the browser tab closes mid-stream


@on_module_loop
async def test_mutant_no_dispose(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, turns({"chunks": ["One ", "two ", "three."], "chunk_delay": 0.3}))
    await _leave_after_first_delta(await gateways("no-dispose"), new_session())
    await asyncio.sleep(0.4)
    [call] = model.calls
    assert not call.closed_early  # the orphaned run keeps reading the model
    assert await eventually(lambda: model.calls[0].completed)


@on_module_loop
async def test_mutant_dispose_on_write_only(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    # The model stalls after the first chunk: with nothing to write, the mutant never notices.
    load(model, tools, turns({"chunks": ["One ", {"text": "two.", "delay": 1.5}]}))
    await _leave_after_first_delta(await gateways("dispose-on-write-only"), new_session())
    await asyncio.sleep(0.6)
    [call] = model.calls
    assert not call.closed_early and not call.completed
    # It lets go only once the model writes again and its own write fails.
    assert await eventually(lambda: model.calls[0].t_end is not None)


@on_module_loop
async def test_mutant_persist_draft_on_error(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("persist-draft-on-error")
    load(model, tools, turns({"chunks": ["Half an ", {"error": {"code": 503}}]}))
    session = new_session()
    chat = await gateway.chat(session)
    assert types_of(chat.frames)[-1] == "error"
    status, history = await gateway.history(session)
    assert status == 200
    texts = [
        p.get("text") for e in history["events"] for p in e.get("content", {}).get("parts", [])
    ]
    assert texts[-1] == "Half an "


@on_module_loop
async def test_mutant_author_from_root(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("author-from-root")
    load(model, tools, TRANSFER)
    session = new_session()
    chat = await gateway.chat(session, "Where is my refund?")
    assert types_of(chat.frames) == [
        "delta",
        "message",
        "tool_call",
        "tool_result",
        "delta",
        "delta",
        "message",
        "done",
    ]
    assert {f.data["author"] for f in chat.frames if f.type in ("delta", "message")} == {"support"}
    assert chat.frames[6].data["text"] == "".join(REFUND)
    # billing really answered: its model call, and the stored event, say so
    assert [c.agent for c in model.calls] == ["support", "billing"]
    _, history = await gateway.history(session)
    assert history["events"][-1]["author"] == "billing"


async def _raw_chat(gateway: Gateway, session: str) -> tuple[int, Mapping[str, str], str]:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http,
        http.post(f"{gateway.url}/chat/{session}", data=QUESTION, headers=ALICE) as resp,
    ):
        return resp.status, dict(resp.headers), await resp.text()


@on_module_loop
async def test_mutant_json_not_sse(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, turns({"chunks": ["Hello."]}))
    status, headers, body = await _raw_chat(await gateways("json-not-sse"), new_session())
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert "event: done" in body


@on_module_loop
async def test_mutant_untyped_frames(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, turns({"chunks": ["Hello."]}))
    status, _, body = await _raw_chat(await gateways("untyped-frames"), new_session())
    assert status == 200 and "event:" not in body and body.count("data: ") >= 3


@on_module_loop
async def test_mutant_tool_call_after_result(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    chat = await (await gateways("tool-call-after-result")).chat(new_session())
    assert types_of(chat.frames)[:2] == ["tool_result", "tool_call"]
    ids = [int(f.id) for f in chat.frames]
    assert ids == sorted(set(ids))  # still fresh and increasing: only the order is wrong


@on_module_loop
async def test_mutant_tidy_message_text(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("tidy-message-text")
    load(model, tools, turns({"chunks": ["One\n", "two  three."]}))
    session = new_session()
    chat = await gateway.chat(session)
    [message] = [f for f in chat.frames if f.type == "message"]
    assert message.data["text"] == "One two three."
    _, history = await gateway.history(session)
    assert history["events"][-1]["content"]["parts"][0]["text"] == "One\ntwo  three."


def _two_sessions_at_once(model: FakeModel, tools: FakeTools, delay: float = 0.3) -> None:
    """Two conversations, ``key-a`` and ``key-b``, each answered from its own script by the
    keyed fake model (as ``--concurrency`` runs them)."""
    model.load_keyed(
        {
            "key-a": turns({"chunks": ["alpha one ", "alpha two."], "chunk_delay": delay}),
            "key-b": turns({"chunks": ["beta one ", "beta two."], "chunk_delay": delay}),
        }
    )
    tools.load(TOOL_PAYLOADS, MARKER)


def _messages(chat: Chat) -> list[str]:
    return [str(f.data["text"]) for f in chat.frames if f.type == "message"]


@on_module_loop
async def test_mutant_shared_draft(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("shared-draft")
    load(model, tools, turns({"chunks": ["One ", "two."]}))
    alone = await gateway.chat(new_session())
    assert _messages(alone) == ["One two."]  # one session at a time: nothing shows
    _two_sessions_at_once(model, tools)
    a, b = await asyncio.gather(
        gateway.chat(new_session(), "Hi key-a"), gateway.chat(new_session(), "Hi key-b")
    )
    mixed = [t for t in _messages(a) if "beta" in t] + [t for t in _messages(b) if "alpha" in t]
    assert mixed, (_messages(a), _messages(b))


@on_module_loop
async def test_mutant_last_session_wins(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("last-session-wins")
    load(model, tools, turns({"chunks": ["One ", "two."]}))
    alone = new_session()
    await gateway.chat(alone)
    _, history = await gateway.history(alone)
    assert history_kinds(history["events"]) == ["user", "text"]  # alone: its own session
    _two_sessions_at_once(model, tools)
    first, second = new_session(), new_session()
    await asyncio.gather(gateway.chat(first, "Hi key-a"), gateway.chat(second, "Hi key-b"))
    stored = {}
    for session in (first, second):
        status, history = await gateway.history(session)
        stored[session] = json.dumps(history) if status == 200 else ""
    # Both turns went to one session: the other holds no turn of its own.
    assert "key-a" not in stored[first] or "key-b" not in stored[second], stored


@on_module_loop
async def test_mutant_global_turn_lock(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("global-turn-lock")
    _two_sessions_at_once(model, tools, delay=0.6)
    started = time.monotonic()
    a, b = await asyncio.gather(
        gateway.chat(new_session(), "Hi key-a"), gateway.chat(new_session(), "Hi key-b")
    )
    elapsed = time.monotonic() - started
    assert [f.type for f in a.frames][-1] == [f.type for f in b.frames][-1] == "done"
    # Each turn takes at least 1.2 s of scripted model time; one after the other, 2.4 s.
    assert elapsed >= 2.4, elapsed


@on_module_loop
async def test_mutant_bare_done_on_failure(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, MID_STREAM_ERROR)
    chat = await (await gateways("bare-done-on-failure")).chat(new_session())
    assert types_of(chat.frames) == ["delta", "done"]


@on_module_loop
async def test_mutant_final_always_true(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, TEXT_THEN_CALL)
    chat = await (await gateways("final-always-true")).chat(new_session())
    messages = [f.data for f in chat.frames if f.type == "message"]
    assert messages[0] == {"author": "support", "text": "Let me check.", "final": True}


@on_module_loop
async def test_mutant_no_run_timeout(model: FakeModel, tools: FakeTools) -> None:
    """Given a 1 s bound, the mutant lets a model that thinks 2.5 s finish: no TIMEOUT frame
    (the reference cuts it at 1 s: test_server_process.py,
    test_run_timeout_cancels_and_sigterm_cleans_up)."""
    gateway = await start_gateway(
        model, tools, bug="no-run-timeout", env={"STREAMPROOF_RUN_TIMEOUT": "1"}
    )
    try:
        load(model, tools, turns({"chunks": ["Thinking ", {"text": "done.", "delay": 2.5}]}))
        chat = await gateway.chat(new_session(), limit_s=20)
        assert types_of(chat.frames) == ["delta", "delta", "message", "done"]
        assert model.calls[0].completed
    finally:
        await gateway.stop()
    assert "Traceback" not in gateway.stderr_path.read_text()
    gateway.stderr_path.unlink()


@on_module_loop
async def test_mutant_buffer_frames(
    gateways: GatewayFactory, model: FakeModel, tools: FakeTools
) -> None:
    gateway = await gateways("buffer-frames")
    load(model, tools, turns({"chunks": ["One ", "two ", "three."], "chunk_delay": 0.3}))
    t0 = time.monotonic()
    model.set_epoch(t0)
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{gateway.url}/chat/{new_session()}", data=QUESTION, headers=ALICE) as resp,
    ):
        first = await resp.content.readany()
        arrived = time.monotonic() - t0
        rest = await resp.content.read()
    frames = parse_frames((first + rest).decode())
    assert types_of(frames) == ["delta", "delta", "delta", "message", "done"]
    (call,) = model.calls
    # Nothing reached the browser before the model had sent its last chunk.
    assert arrived >= call.text_chunk_times[-1]
