"""The reference gateway: correct by the seed's rules, and each mutant visibly broken on the wire.

``docs/explanation/gateway-rules.md``. The pure frame mapping is tested on hand-built ADK events;
the
rest starts ``python -m streamproof.suites.gateway.reference.server`` as a real subprocess (a real
google-adk Runner on ADK's SQLite session store) against the fake model and the fake tool
service, and reads real SSE off a socket. One reference process serves the module; each mutant
gets its own process, started on first use and stopped (process group) at module teardown.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

try:
    from google.adk.events import Event
    from google.genai import types
except ImportError as exc:  # pragma: no cover - the reference needs google-adk
    if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
        raise
    pytest.skip(f"google-adk is not installed: {exc}", allow_module_level=True)

from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.protocol.gemini import ModelTurn
from streamproof.suites.gateway.reference.mutants import BUGS
from streamproof.suites.gateway.reference.server import (
    ConfigError,
    Settings,
    encode_frame,
    event_frames,
    parse_tokens,
)
from streamproof.suites.gateway.reference.server import Gateway as GatewayApp

# End to end (real targets, whole runs): scheduled first under xdist (see conftest).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[5]
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
MARKER = "sp-marker-7f3a"
QUESTION = "Where is order 1042?"
ANSWER_CHUNKS = ("Order 1042 shipped ", "on 30 September and ", "is due Monday.")
START_TIMEOUT_S = 30.0
MAX_LLM_CALLS = 20

# --- model scripts -----------------------------------------------------------------------------


def turns(*specs: Mapping[str, Any]) -> list[ModelTurn]:
    return [ModelTurn.model_validate(dict(spec)) for spec in specs]


CALL_1042 = {"function_call": {"name": "lookupOrder", "args": {"orderId": "1042"}}}
WORKED_EXAMPLE = turns({"chunks": [CALL_1042]}, {"chunks": list(ANSWER_CHUNKS)})
TEXT_THEN_CALL = turns({"chunks": ["Let me check.", CALL_1042]}, {"chunks": ["Shipped."]})
MAX_TOKENS = turns({"chunks": ["Order 1042 ", "shipped on"], "finish_reason": "MAX_TOKENS"})
MID_STREAM_ERROR = turns({"chunks": ["Order 1042 ", {"error": {"code": 503}}]})
HTTP_ERROR = turns({"http_error": {"code": 500, "status": "INTERNAL"}})
RUNAWAY = turns({"chunks": [CALL_1042], "times": "forever"})
SLOW = turns({"chunks": [f"chunk {i} " for i in range(40)], "chunk_delay": 0.25})
TOOL_PAYLOADS = {"lookupOrder": {"status": "shipped", "eta": "Monday", "secret": "{{marker}}"}}
TO_BILLING = {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "billing"}}}
ASK_COURIER = {"function_call": {"name": "courier", "args": {"request": "Where is parcel 1042?"}}}
HANDOVER, REFUND = "Refunds are for billing. ", ("Your refund ", "was issued yesterday.")
TRANSFER = turns({"chunks": [HANDOVER, TO_BILLING]}, {"chunks": list(REFUND)})
ASKING, PARCEL, ARRIVES = (
    "Let me ask the courier. ",
    ("Parcel 1042 ", "is out."),
    ("Due ", "today."),
)
SEVERAL_FINALS = turns(
    {"chunks": [ASKING, ASK_COURIER]}, {"chunks": list(PARCEL)}, {"chunks": list(ARRIVES)}
)


# --- SSE reading (strict: exactly the seed's id / event / data shape) ---------------------------


@dataclass(frozen=True)
class Frame:
    id: str
    type: str
    data: dict[str, Any]


def parse_frames(body: str) -> list[Frame]:
    assert body == "" or body.endswith("\n\n"), f"body does not end with a blank line: {body!r}"
    frames = []
    for block in body.split("\n\n")[:-1]:
        lines = block.split("\n")
        assert len(lines) == 3, f"frame is not id/event/data: {block!r}"
        assert lines[0].startswith("id: ") and lines[1].startswith("event: "), block
        assert lines[2].startswith("data: "), block
        frames.append(Frame(lines[0][4:], lines[1][7:], json.loads(lines[2][6:])))
    return frames


def types_of(frames: list[Frame]) -> list[str]:
    return [f.type for f in frames]


@dataclass
class Chat:
    status: int
    headers: Mapping[str, str]
    frames: list[Frame]
    body: str


@dataclass
class Gateway:
    url: str
    proc: asyncio.subprocess.Process
    stderr_path: Path

    async def chat(
        self,
        session_id: str,
        text: str = QUESTION,
        *,
        headers: Mapping[str, str] = ALICE,
        mode: str | None = None,
        limit_s: float = 20.0,
    ) -> Chat:
        url = f"{self.url}/chat/{session_id}" + (f"?mode={mode}" if mode else "")
        client_timeout = aiohttp.ClientTimeout(total=limit_s)
        async with (
            aiohttp.ClientSession(timeout=client_timeout) as http,
            http.post(url, data=text.encode(), headers={**headers}) as resp,
        ):
            body = await resp.text()
            frames = parse_frames(body) if resp.status == 200 else []
            return Chat(resp.status, dict(resp.headers), frames, body)

    async def history(self, session_id: str, headers: Mapping[str, str] = ALICE) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{self.url}/history/{session_id}", headers={**headers}) as resp,
        ):
            return resp.status, await resp.json(content_type=None)

    async def stop(self) -> int:
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                os.killpg(self.proc.pid, signal.SIGKILL)
                await self.proc.wait()
        assert self.proc.returncode is not None
        return self.proc.returncode


async def start_gateway(
    model: FakeModel,
    tools: FakeTools,
    *,
    bug: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Gateway:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMPROOF_", "ADK_"))}
    clean.update(
        PORT="0",
        GOOGLE_GEMINI_BASE_URL=model.base_url,
        GOOGLE_API_KEY="test-key",
        STREAMPROOF_TOOL_URL=tools.base_url,
        STREAMPROOF_MAX_LLM_CALLS=str(MAX_LLM_CALLS),
        PYTHONUNBUFFERED="1",
    )
    clean.update(env or {})
    fd, stderr_name = tempfile.mkstemp(prefix="gateway-stderr-", suffix=".log")
    args = [
        sys.executable,
        "-m",
        "streamproof.suites.gateway.reference.server",
        *(["--bug", bug] if bug else []),
    ]
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=REPO,
        env=clean,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=fd,
        start_new_session=True,
    )
    os.close(fd)
    gateway = Gateway("", proc, Path(stderr_name))
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)
    except TimeoutError:
        await gateway.stop()
        raise
    prefix = "streamproof-gateway listening on "
    text = line.decode()
    if not text.startswith(prefix) or not text.endswith("\n"):
        await gateway.stop()
        pytest.fail(f"bad listening line {text!r}; stderr: {gateway.stderr_path.read_text()}")
    gateway.url = text[len(prefix) :].strip()
    return gateway


# --- fixtures ----------------------------------------------------------------------------------

on_module_loop = pytest.mark.asyncio(loop_scope="module")
"""The fakes and gateway processes are module-scoped, so the tests share the module's loop."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model() -> AsyncIterator[FakeModel]:
    fake = FakeModel()
    await fake.start()
    yield fake
    await fake.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools() -> AsyncIterator[FakeTools]:
    fake = FakeTools()
    await fake.start()
    yield fake
    await fake.close()


GatewayFactory = Callable[[str | None], Awaitable[Gateway]]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateways(model: FakeModel, tools: FakeTools) -> AsyncIterator[GatewayFactory]:
    """Gateway processes by bug name (None: the reference), started once and shared."""
    started: dict[str | None, Gateway] = {}

    async def get(bug: str | None) -> Gateway:
        if bug not in started:
            started[bug] = await start_gateway(model, tools, bug=bug)
        return started[bug]

    yield get
    codes = await asyncio.gather(*(g.stop() for g in started.values()))
    for gateway in started.values():
        assert "Traceback" not in gateway.stderr_path.read_text()
        gateway.stderr_path.unlink()
    assert codes == [0] * len(codes), f"a gateway did not exit 0 on SIGTERM: {codes}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def reference(gateways: GatewayFactory) -> Gateway:
    return await gateways(None)


_sessions = iter(range(1_000_000))


def new_session() -> str:
    return f"s-{next(_sessions)}"


def load(model: FakeModel, tools: FakeTools, script: list[ModelTurn], **kw: Any) -> None:
    model.load(script, **kw)
    tools.load(TOOL_PAYLOADS, MARKER)


async def eventually(predicate: Callable[[], bool], within_s: float = 5.0) -> bool:
    """Poll ``predicate`` until it holds (True) or ``within_s`` seconds pass (False)."""
    for _ in range(int(within_s / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


def listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def history_kinds(events: list[dict[str, Any]]) -> list[str]:
    kinds = []
    for event in events:
        parts = (event.get("content") or {}).get("parts") or []
        if event.get("author") == "user" and any("text" in p for p in parts):
            kinds.append("user")
        elif any("functionCall" in p for p in parts):
            kinds.append("function_call")
        elif any("functionResponse" in p for p in parts):
            kinds.append("function_response")
        elif event.get("errorCode"):
            kinds.append("error")
        else:
            kinds.append("text")
    return kinds


# --- the pure mapping --------------------------------------------------------------------------


def _event(*parts: types.Part, **kw: Any) -> Event:
    content = types.Content(role="model", parts=list(parts)) if parts else None
    return Event(author="support", content=content, **kw)


TEXT = types.Part(text="Order 1042 shipped.")
CALL = types.Part(function_call=types.FunctionCall(name="lookupOrder", args={"orderId": "1042"}))
RESPONSE = types.Part(
    function_response=types.FunctionResponse(name="lookupOrder", response={"secret": MARKER})
)


def test_partial_text_is_a_delta() -> None:
    assert event_frames(_event(TEXT, partial=True)) == [
        ("delta", {"author": "support", "text": "Order 1042 shipped."})
    ]


def test_partial_function_call_sends_nothing() -> None:
    assert event_frames(_event(CALL, partial=True)) == []


def test_aggregate_text_is_a_final_message_with_the_event_id() -> None:
    event = _event(TEXT, partial=False)
    assert event_frames(event) == [
        (
            "message",
            {"author": "support", "id": event.id, "text": "Order 1042 shipped.", "final": True},
        )
    ]


def test_function_call_with_text_is_a_non_final_message_then_tool_call() -> None:
    assert event_frames(_event(TEXT, CALL, partial=False)) == [
        ("message", {"author": "support", "text": "Order 1042 shipped.", "final": False}),
        ("tool_call", {"names": ["lookupOrder"]}),
    ]


def test_function_responses_are_summarised_as_a_count() -> None:
    assert event_frames(_event(RESPONSE, RESPONSE)) == [("tool_result", {"count": 2})]


def test_error_code_wins_even_over_text() -> None:
    assert event_frames(_event(TEXT, error_code="MAX_TOKENS", partial=False)) == [
        ("error", {"code": "MAX_TOKENS"})
    ]


def test_empty_event_sends_nothing() -> None:
    assert event_frames(_event()) == []


def test_mutant_branches_of_the_mapping() -> None:
    aggregate = _event(TEXT, partial=False)
    assert event_frames(aggregate, "aggregate-as-delta")[0][0] == "delta"
    assert event_frames(_event(CALL, partial=True), "tool-call-from-partial") == [
        ("tool_call", {"names": ["lookupOrder"]})
    ]
    leaked = event_frames(_event(RESPONSE), "leak-tool-payload")
    assert MARKER in json.dumps(leaked)
    swallowed = event_frames(
        _event(TEXT, error_code="MAX_TOKENS", partial=False), "swallow-error-event"
    )
    assert [f[0] for f in swallowed] == ["message"]


def test_text_frames_name_the_event_author() -> None:
    """A sub-agent's text is shown under its own name; the mutant names the root instead."""
    partial = Event(
        author="billing", content=types.Content(role="model", parts=[TEXT]), partial=True
    )
    aggregate = Event(author="billing", content=types.Content(role="model", parts=[TEXT]))
    assert event_frames(partial)[0][1]["author"] == "billing"
    assert event_frames(aggregate)[0][1]["author"] == "billing"
    for event in (partial, aggregate):
        assert event_frames(event, "author-from-root")[0][1]["author"] == "support"


def test_encode_frame_is_one_sse_event() -> None:
    assert encode_frame("7", "done", {}) == b"id: 7\nevent: done\ndata: {}\n\n"
    line = encode_frame("1", "delta", {"text": "a\nb"}).split(b"\n")[2]
    assert line == b'data: {"text":"a\\nb"}'


class _StubResponse:
    """Stands in for aiohttp's StreamResponse: records writes, fails once the client is gone."""

    def __init__(self, fail_after: int) -> None:
        self.writes: list[bytes] = []
        self.fail_after = fail_after

    async def write(self, data: bytes) -> None:
        if len(self.writes) >= self.fail_after:
            raise ConnectionResetError("Cannot write to closing transport")
        self.writes.append(data)


class _StubRunner:
    """An endless ADK run that records whether the gateway closed its generator."""

    def __init__(self) -> None:
        self.closed = False

    async def run_async(self, **_: Any) -> AsyncIterator[Event]:
        try:
            while True:
                yield _event(TEXT, partial=True)
                await asyncio.sleep(0.01)
        finally:
            self.closed = True


def _stub_gateway(runner: _StubRunner, **settings: Any) -> GatewayApp:
    config = Settings(port=0, tool_url="http://127.0.0.1:9", users_by_token={}, **settings)
    return GatewayApp(config, runner, sessions=None)  # type: ignore[arg-type]


async def test_a_failed_write_stops_and_closes_the_run() -> None:
    runner, response = _StubRunner(), _StubResponse(fail_after=3)
    await _stub_gateway(runner)._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.closed and len(response.writes) == 3


async def test_the_run_timeout_closes_the_run_and_says_so() -> None:
    runner, response = _StubRunner(), _StubResponse(fail_after=1_000_000)
    await _stub_gateway(runner, run_timeout=0.2)._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.closed
    assert response.writes[-1].endswith(b'data: {"code":"TIMEOUT","retryable":true}\n\n')
    assert [int(w.split(b"\n")[0][4:]) for w in response.writes] == list(
        range(1, len(response.writes) + 1)
    )


def test_settings_from_env() -> None:
    base = {
        "PORT": "0",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1",
        "GOOGLE_API_KEY": "k",
        "STREAMPROOF_TOOL_URL": "http://127.0.0.1:2",
    }
    settings = Settings.from_env(base)
    assert settings.users_by_token == {"alice-token": "alice", "bob-token": "bob"}
    assert (settings.max_llm_calls, settings.run_timeout, settings.bug) == (20, 120.0, None)
    assert Settings.from_env({**base, "STREAMPROOF_BUG": "no-auth"}).bug == "no-auth"
    assert Settings.from_env({**base, "STREAMPROOF_BUG": "no-auth"}, bug="no-llm-budget").bug == (
        "no-llm-budget"
    )
    for bad in ({"PORT": "x"}, {"STREAMPROOF_RUN_TIMEOUT": "0"}, {"STREAMPROOF_BUG": "nope"}):
        with pytest.raises(ConfigError):
            Settings.from_env({**base, **bad})
    with pytest.raises(ConfigError, match="STREAMPROOF_TOOL_URL"):
        Settings.from_env({k: v for k, v in base.items() if k != "STREAMPROOF_TOOL_URL"})
    assert parse_tokens("a=1, b=2") == {"1": "a", "2": "b"}
    for bad_tokens in ("a", "a=", "=1", "a=1,b=1", ""):
        with pytest.raises(ConfigError):
            parse_tokens(bad_tokens)


# --- command line ------------------------------------------------------------------------------


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


# --- the reference over the wire ---------------------------------------------------------------


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
        model, tools, env={"STREAMPROOF_RUN_TIMEOUT": "3", "TMPDIR": str(tmp_path)}
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


# --- mutants: each defect is really on the wire ------------------------------------------------


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
    (the reference cuts it at 1 s, test_run_timeout_cancels_and_sigterm_cleans_up)."""
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
