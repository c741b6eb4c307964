"""The reference gateway as a process on the seed's typed-frames wire, correct by the seed's rules
(``docs/explanation/gateway-rules.md``): ``python -m streamproof.suites.gateway.reference.server``
started as a real subprocess (a real google-adk Runner on ADK's SQLite session store) against the
fake model and the fake tool service, its command line, and real SSE read off a socket. One
reference process serves the module (conftest.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from harness.tests.suites.gateway.reference.process import (
    ALICE,
    ANSWER_CHUNKS,
    ARRIVES,
    ASKING,
    BOB,
    HANDOVER,
    HTTP_ERROR,
    MARKER,
    MAX_LLM_CALLS,
    MAX_TOKENS,
    MID_STREAM_ERROR,
    PARCEL,
    QUESTION,
    REFUND,
    REPO,
    RUNAWAY,
    SEVERAL_FINALS,
    SLOW,
    TEXT_THEN_CALL,
    TRANSFER,
    WORKED_EXAMPLE,
    Chat,
    Frame,
    Gateway,
    eventually,
    history_kinds,
    listing,
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
from streamproof.protocol.gemini import ModelTurn
from streamproof.suites.gateway.reference.mutants import BUGS

# End to end (real targets, whole runs): scheduled first under xdist (harness/tests/conftest.py).
pytestmark = pytest.mark.slow

skip_without_adk()


# --- command line ----------------------------------------------------------------------------


async def _run_cli(*args: str, env: Mapping[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "streamproof.suites.gateway.reference.server",
        *args,
        cwd=REPO,
        env=dict(env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@on_module_loop
async def test_cli_list_bugs_bad_bug_and_missing_env() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMPROOF_", "GOOGLE_"))}
    rc, out, _ = await _run_cli("--list-bugs", env=env)
    assert rc == 0 and [line.split()[0] for line in out.splitlines()] == list(BUGS)
    rc, out, err = await _run_cli("--bug", "nope", env=env)
    assert rc == 2 and out == "" and "nope" in err and all(name in err for name in BUGS)
    rc, out, err = await _run_cli(env=env)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "GOOGLE_GEMINI_BASE_URL" in err and "STREAMPROOF_TOOL_URL" in err


# --- the reference over the wire -------------------------------------------------------------


@on_module_loop
async def test_healthz_needs_no_auth(reference: Gateway) -> None:
    async with aiohttp.ClientSession() as http, http.get(f"{reference.url}/healthz") as resp:
        assert (resp.status, await resp.text()) == (200, "ok")


@on_module_loop
async def test_worked_example(reference: Gateway, model: FakeModel, tools: FakeTools) -> None:
    """The seed's worked example, frame for frame, and what the session holds afterwards."""
    load(model, tools, WORKED_EXAMPLE)
    session = new_session()
    chat = await reference.chat(session)
    assert chat.status == 200
    assert chat.headers["Content-Type"].startswith("text/event-stream")
    assert chat.headers["Cache-Control"] == "no-cache"
    answer = "".join(ANSWER_CHUNKS)
    message_id = chat.frames[5].data.get("id")
    assert isinstance(message_id, str) and message_id
    assert [(f.id, f.type, f.data) for f in chat.frames] == [
        ("1", "tool_call", {"names": ["lookupOrder"]}),
        ("2", "tool_result", {"count": 1}),
        ("3", "delta", {"author": "support", "text": ANSWER_CHUNKS[0]}),
        ("4", "delta", {"author": "support", "text": ANSWER_CHUNKS[1]}),
        ("5", "delta", {"author": "support", "text": ANSWER_CHUNKS[2]}),
        ("6", "message", {"author": "support", "id": message_id, "text": answer, "final": True}),
        ("7", "done", {}),
    ]
    assert MARKER not in chat.body
    assert [(c.tool, c.arguments) for c in tools.calls] == [("lookupOrder", {"orderId": "1042"})]
    assert [c.streaming for c in model.calls] == [True, True]

    status, history = await reference.history(session)
    assert status == 200
    events = history["events"]
    assert history_kinds(events) == ["user", "function_call", "function_response", "text"]
    assert all(e.get("partial") is not True for e in events)
    assert events[0]["content"]["parts"][0]["text"] == QUESTION
    assert events[-1]["content"]["parts"][0]["text"] == answer
    assert events[-1]["id"] == message_id


@on_module_loop
async def test_text_with_a_call_gets_a_fresh_id_per_frame(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, TEXT_THEN_CALL)
    chat = await reference.chat(new_session())
    assert types_of(chat.frames) == [
        "delta",
        "message",
        "tool_call",
        "tool_result",
        "delta",
        "message",
        "done",
    ]
    assert chat.frames[1].data == {"author": "support", "text": "Let me check.", "final": False}
    assert [f.id for f in chat.frames] == [str(n) for n in range(1, 8)]
    assert tools.count("lookupOrder") == 1


def texts(chat: Chat) -> list[tuple[str, Any, Any, Any]]:
    """Each frame as (type, author, text, final): what the seed's reducer reads."""
    return [
        (f.type, f.data.get("author"), f.data.get("text"), f.data.get("final")) for f in chat.frames
    ]


def stored(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return list(zip(history_kinds(events), [e["author"] for e in events], strict=True))


@on_module_loop
async def test_transfer_hands_over_to_a_sub_agent_under_its_own_name(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    """support streams, calls transfer_to_agent, and billing's partials follow support's
    aggregate: ADK answers the transfer itself and billing's answer is the one final."""
    load(model, tools, TRANSFER)
    session = new_session()
    chat = await reference.chat(session, "Where is my refund?")
    refund = "".join(REFUND)
    assert texts(chat) == [
        ("delta", "support", HANDOVER, None),
        ("message", "support", HANDOVER, False),
        ("tool_call", None, None, None),
        ("tool_result", None, None, None),
        ("delta", "billing", REFUND[0], None),
        ("delta", "billing", REFUND[1], None),
        ("message", "billing", refund, True),
        ("done", None, None, None),
    ]
    assert chat.frames[2].data == {"names": ["transfer_to_agent"]}
    assert [c.agent for c in model.calls] == ["support", "billing"]
    assert tools.calls == []  # ADK answers transfer_to_agent itself
    _, history = await reference.history(session)
    events = history["events"]
    assert stored(events) == [
        ("user", "user"),
        ("function_call", "support"),
        ("function_response", "support"),
        ("text", "billing"),
    ]
    assert events[2]["actions"]["transferToAgent"] == "billing"
    assert events[-1]["content"]["parts"][0]["text"] == refund
    assert events[-1]["id"] == chat.frames[6].data["id"]


@on_module_loop
async def test_a_single_turn_sub_agent_gives_a_second_final_before_done(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    """support asks its single_turn sub-agent courier: courier's answer is a final response,
    control returns, and support's answer is another one, both before done."""
    load(model, tools, SEVERAL_FINALS)
    session = new_session()
    chat = await reference.chat(session)
    parcel, arrives = "".join(PARCEL), "".join(ARRIVES)
    assert texts(chat) == [
        ("delta", "support", ASKING, None),
        ("message", "support", ASKING, False),
        ("tool_call", None, None, None),
        ("delta", "courier", PARCEL[0], None),
        ("delta", "courier", PARCEL[1], None),
        ("message", "courier", parcel, True),
        ("tool_result", None, None, None),
        ("delta", "support", ARRIVES[0], None),
        ("delta", "support", ARRIVES[1], None),
        ("message", "support", arrives, True),
        ("done", None, None, None),
    ]
    assert chat.frames[2].data == {"names": ["courier"]}
    assert [c.agent for c in model.calls] == ["support", "courier", "support"]
    assert tools.calls == []  # ADK runs the sub-agent; the tool service is never asked
    _, history = await reference.history(session)
    events = history["events"]
    assert stored(events) == [
        ("user", "user"),
        ("function_call", "support"),
        ("text", "courier"),
        ("function_response", "support"),
        ("text", "support"),
    ]
    assert events[3]["content"]["parts"][0]["functionResponse"]["response"] == {"result": parcel}
    finals = [(f.data["author"], f.data["id"]) for f in chat.frames if f.data.get("final") is True]
    assert finals == [("courier", events[2]["id"]), ("support", events[4]["id"])]


@on_module_loop
async def test_none_mode(reference: Gateway, model: FakeModel, tools: FakeTools) -> None:
    load(model, tools, WORKED_EXAMPLE)
    session = new_session()
    chat = await reference.chat(session, mode="none")
    assert types_of(chat.frames) == ["tool_call", "tool_result", "message", "done"]
    assert chat.frames[2].data["text"] == "".join(ANSWER_CHUNKS)
    assert chat.frames[2].data["final"] is True
    assert [f.id for f in chat.frames] == ["1", "2", "3", "4"]
    assert [(c.streaming, c.path.endswith(":generateContent")) for c in model.calls] == [
        (False, True),
        (False, True),
    ]
    _, history = await reference.history(session)
    assert history_kinds(history["events"]) == [
        "user",
        "function_call",
        "function_response",
        "text",
    ]


@on_module_loop
async def test_max_tokens_is_an_error_frame_then_done(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, MAX_TOKENS)
    chat = await reference.chat(new_session())
    assert [(f.type, f.data) for f in chat.frames] == [
        ("delta", {"author": "support", "text": "Order 1042 "}),
        ("delta", {"author": "support", "text": "shipped on"}),
        ("error", {"code": "MAX_TOKENS"}),
        ("done", {}),
    ]


@on_module_loop
@pytest.mark.parametrize(
    ("script", "code", "leading"),
    [(MID_STREAM_ERROR, "UNAVAILABLE", ["delta"]), (HTTP_ERROR, "INTERNAL", [])],
    ids=["mid-stream", "http-500"],
)
async def test_model_error_gives_the_error_event_then_the_run_failure(
    reference: Gateway,
    model: FakeModel,
    tools: FakeTools,
    script: list[ModelTurn],
    code: str,
    leading: list[str],
) -> None:
    """Python ADK yields an error event and then raises: two error frames, as the seed's own
    controller would send (``send`` for the event, ``onError`` for the exception)."""
    load(model, tools, script)
    session = new_session()
    chat = await reference.chat(session)
    assert types_of(chat.frames) == [*leading, "error", "error"]
    assert [f.data for f in chat.frames[-2:]] == [{"code": code}, {"retryable": True}]
    assert "Traceback" not in chat.body and "ServerError" not in chat.body
    _, history = await reference.history(session)
    assert history_kinds(history["events"]) == ["user", "error"]


@on_module_loop
async def test_unauthenticated_chat_is_401_before_any_stream(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, WORKED_EXAMPLE)
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic alice-token"}):
        chat = await reference.chat(new_session(), headers=headers)
        assert chat.status == 401
        assert chat.headers["Content-Type"].startswith("application/json")
        assert "error" in json.loads(chat.body)
    status, _ = await reference.history("anything", headers={})
    assert status == 401
    assert model.calls == []


@on_module_loop
async def test_history_is_per_user(reference: Gateway, model: FakeModel, tools: FakeTools) -> None:
    load(model, tools, turns({"chunks": ["Hello."]}))
    session = new_session()
    assert types_of((await reference.chat(session)).frames) == ["delta", "message", "done"]
    assert (await reference.history(session))[0] == 200
    assert (await reference.history(session, headers=BOB))[0] == 404
    assert (await reference.history(new_session()))[0] == 404
    # bob's own session of the same id is a different session
    load(model, tools, turns({"chunks": ["Hi bob."]}))
    await reference.chat(session, "bob here", headers=BOB)
    _, bobs = await reference.history(session, headers=BOB)
    _, alices = await reference.history(session)
    assert [e["content"]["parts"][0]["text"] for e in bobs["events"]] == ["bob here", "Hi bob."]
    assert alices["events"][0]["content"]["parts"][0]["text"] == QUESTION


@on_module_loop
async def test_runaway_loop_ends_within_the_budget(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, RUNAWAY)
    started = time.monotonic()
    chat = await reference.chat(new_session())
    assert time.monotonic() - started < 15
    assert len(model.calls) == MAX_LLM_CALLS
    assert types_of(chat.frames)[-2:] == ["error", "error"]
    assert chat.frames[-1].data == {"retryable": True}
    ids = [int(f.id) for f in chat.frames]
    assert ids == list(range(1, len(ids) + 1))


@on_module_loop
async def test_client_disconnect_cancels_the_run(
    reference: Gateway, model: FakeModel, tools: FakeTools
) -> None:
    load(model, tools, SLOW)
    session = new_session()
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{reference.url}/chat/{session}", data=QUESTION, headers=ALICE) as resp,
    ):
        assert resp.status == 200
        first = await resp.content.readuntil(b"\n\n")
        assert b"event: delta" in first
        resp.close()  # the browser tab closes mid-stream
    assert await eventually(lambda: bool(model.calls) and model.calls[0].closed_early)
    [call] = model.calls
    assert call.closed_early and not call.completed
    # the session is usable again at once: the run let go of it
    load(model, tools, turns({"chunks": ["Still here."]}))
    chat = await reference.chat(session, "hello?", limit_s=10)
    assert types_of(chat.frames) == ["delta", "message", "done"]


@on_module_loop
async def test_run_timeout_cancels_and_sigterm_cleans_up(
    model: FakeModel, tools: FakeTools, tmp_path: Path
) -> None:
    """A turn past STREAMPROOF_RUN_TIMEOUT ends with a TIMEOUT frame and a closed model stream;
    SIGTERM mid-stream ends the open stream with a terminal frame, exits 0, removes the DB."""
    gateway = await start_gateway(
        model, tools, env={"STREAMPROOF_RUN_TIMEOUT": "3", "TMPDIR": str(tmp_path)}, warm=False
    )
    try:
        assert listing(tmp_path) != []  # the temp dir of the default SQLite file
        load(model, tools, SLOW)
        chat = await gateway.chat(new_session())
        assert chat.frames[-1].type == "error"
        assert chat.frames[-1].data == {"code": "TIMEOUT", "retryable": True}
        # Under load the first delta may come after the timeout; only deltas may precede it.
        assert set(types_of(chat.frames[:-1])) <= {"delta"}
        assert await eventually(lambda: model.calls[0].closed_early)

        load(model, tools, SLOW)
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{gateway.url}/chat/{new_session()}", data=QUESTION, headers=ALICE) as resp,
        ):
            first = await resp.content.readuntil(b"\n\n")
            gateway.proc.send_signal(signal.SIGTERM)
            rest = (await resp.content.read()).decode()
        frames = parse_frames(first.decode() + rest)
        assert types_of(frames) == ["delta", "error"]
        assert frames[-1] == Frame("2", "error", {"retryable": True})
        assert await eventually(lambda: model.calls[0].closed_early)
        assert await asyncio.wait_for(gateway.proc.wait(), 5) == 0
    finally:
        await gateway.stop()
    assert listing(tmp_path) == []
    assert "Traceback" not in gateway.stderr_path.read_text()
    gateway.stderr_path.unlink()
