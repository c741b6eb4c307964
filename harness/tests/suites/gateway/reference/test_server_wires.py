"""End to end: the reference gateway started with ``--wire ag-ui`` and ``--wire ai-sdk-ui`` (a
real google-adk Runner) against the fake model and tool service, one streamed answer per wire,
bad requests, and the two disconnect policies on AG-UI (dispose: the model stream closes;
detach: the run finishes unseen and its answer is stored once, or twice by the mutant)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

pytest.importorskip("google.adk")

from harness.tests.suites.gateway.reference.events import ANSWER, MARKER
from harness.tests.suites.gateway.reference.process import GatewayProcess, spawn
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.protocol.gemini import ModelTurn

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

REPO = Path(__file__).resolve().parents[5]
ALICE = {"Authorization": "Bearer alice-token"}
QUESTION = "Where is order 1042?"
CALL_1042 = {"function_call": {"name": "lookupOrder", "args": {"orderId": "1042"}}}
WORKED_EXAMPLE = [{"chunks": [CALL_1042]}, {"chunks": list(ANSWER)}]
SLOW_CHUNKS = [f"chunk {i} " for i in range(8)]
SLOW = [{"chunks": SLOW_CHUNKS, "chunk_delay": 0.25}]
PAYLOADS = {"lookupOrder": {"status": "shipped", "eta": "Monday", "secret": "{{marker}}"}}


class Gateway:
    def __init__(self, url: str, proc: GatewayProcess, wire: str, stderr: Path) -> None:
        self.url, self.proc, self.wire, self.stderr = url, proc, wire, stderr

    def request(self, session: str, text: str = QUESTION) -> tuple[str, dict[str, Any]]:
        if self.wire == "ag-ui":
            message = {"id": "u1", "role": "user", "content": text}
            return "/ag-ui", {
                "threadId": session,
                "runId": f"run-{session}",
                "messages": [message],
                "tools": [],
                "context": [],
                "state": {},
                "forwardedProps": {},
            }
        parts = [{"type": "text", "text": text}]
        message = {"id": "u1", "role": "user", "parts": parts}
        return "/api/chat", {"id": session, "messages": [message], "trigger": "submit-message"}

    async def chat(
        self, session: str, *, mode: str = "", body: Any = None, headers: Any = None
    ) -> tuple[int, dict[str, str], str]:
        path, default = self.request(session)
        query = f"?mode={mode}" if mode else ""
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http,
            http.post(
                self.url + path + query,
                json=default if body is None else body,
                headers=ALICE if headers is None else headers,
            ) as resp,
        ):
            return resp.status, dict(resp.headers), await resp.text()

    async def history(self, session: str) -> list[dict[str, Any]]:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{self.url}/history/{session}", headers=ALICE) as resp,
        ):
            assert resp.status == 200
            events: list[dict[str, Any]] = (await resp.json())["events"]
            return events

    async def stop(self) -> int:
        if self.proc.returncode is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                os.killpg(self.proc.pid, signal.SIGKILL)
        return await self.proc.wait()  # a warm child's stderr is then in its file, whole


def data_events(body: str) -> list[Any]:
    """A data-only SSE body, strictly: every event one ``data:`` line and a blank line."""
    assert body.endswith("\n\n"), body[-200:]
    out = []
    for block in body.split("\n\n")[:-1]:
        assert block.startswith("data: ") and "\n" not in block, block
        data = block[len("data: ") :]
        out.append(data if data == "[DONE]" else json.loads(data))
    return out


def types_of(events: list[Any]) -> list[str]:
    return [e if isinstance(e, str) else e["type"] for e in events]


def kinds(history: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in history:
        parts = (event.get("content") or {}).get("parts") or [{}]
        if event.get("author") == "user":
            out.append("user")
        elif "functionCall" in parts[0]:
            out.append("function_call")
        elif "functionResponse" in parts[0]:
            out.append("function_response")
        else:
            out.append("text")
    return out


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fakes() -> AsyncIterator[tuple[FakeModel, FakeTools]]:
    model, tools = FakeModel(), FakeTools()
    await model.start()
    await tools.start()
    yield model, tools
    await model.close()
    await tools.close()


Factory = Callable[..., Awaitable[Gateway]]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateways(
    fakes: tuple[FakeModel, FakeTools], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Factory]:
    model, tools = fakes
    logs = tmp_path_factory.mktemp("gateway-logs")
    started: dict[tuple[str, ...], Gateway] = {}

    async def get(wire: str, *extra: str, tag: str = "") -> Gateway:
        """The gateway started with these arguments (``tag``: one of its own)."""
        key = (wire, *extra, *([tag] if tag else []))
        if key not in started:
            env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMPROOF_")}
            env.update(
                PORT="0",
                GOOGLE_GEMINI_BASE_URL=model.base_url,
                GOOGLE_API_KEY="test-key",
                STREAMPROOF_TOOL_URL=tools.base_url,
                PYTHONUNBUFFERED="1",
            )
            argv = [sys.executable, "-m", "streamproof.suites.gateway.reference.server"]
            stderr = logs / f"{'-'.join(key)}.log"
            proc = await spawn([*argv, "--wire", wire, *extra], env, stderr)
            assert proc.stdout is not None
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            assert "listening on " in line, line
            started[key] = Gateway(line.split("listening on ")[1].strip(), proc, wire, stderr)
        return started[key]

    yield get
    codes = await asyncio.gather(*(g.stop() for g in started.values()))
    assert codes == [0] * len(codes), f"a gateway did not exit 0 on SIGTERM: {codes}"
    for gateway in started.values():
        assert "Traceback" not in gateway.stderr.read_text()


def load(fakes: tuple[FakeModel, FakeTools], script: list[dict[str, Any]]) -> None:
    model, tools = fakes
    model.load([ModelTurn.model_validate(turn) for turn in script])
    tools.load(PAYLOADS, MARKER)


async def eventually(predicate: Callable[[], Awaitable[bool]], within_s: float = 10.0) -> bool:
    for _ in range(int(within_s / 0.1)):
        if await predicate():
            return True
        await asyncio.sleep(0.1)
    return await predicate()


async def test_ag_ui_streams_the_worked_example(
    gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    gateway = await gateways("ag-ui")
    load(fakes, WORKED_EXAMPLE)
    status, headers, body = await gateway.chat("agui-1")
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = data_events(body)
    assert types_of(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        *["TEXT_MESSAGE_CONTENT"] * 3,
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[0]["threadId"] == events[-1]["threadId"] == "agui-1"
    assert [e["delta"] for e in events[6:9]] == list(ANSWER)
    assert events[1]["toolCallId"] == events[4]["toolCallId"] and MARKER not in body
    assert fakes[1].calls and len(fakes[1].calls) == 1  # the tool ran once
    assert kinds(await gateway.history("agui-1")) == [
        "user",
        "function_call",
        "function_response",
        "text",
    ]


async def test_ai_sdk_streams_the_worked_example(
    gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    gateway = await gateways("ai-sdk-ui")
    load(fakes, WORKED_EXAMPLE)
    status, headers, body = await gateway.chat("aisdk-1")
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    assert headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert (headers["Cache-Control"], headers["X-Accel-Buffering"]) == ("no-cache", "no")
    events = data_events(body)
    assert types_of(events) == [
        "start",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "text-start",
        *["text-delta"] * 3,
        "text-end",
        "finish",
        "[DONE]",
    ]
    assert MARKER not in body
    assert kinds(await gateway.history("aisdk-1"))[-1] == "text"


@pytest.mark.parametrize("wire", ["ag-ui", "ai-sdk-ui"])
async def test_none_mode_and_bad_requests(
    wire: str, gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    gateway = await gateways(wire)
    load(fakes, [{"chunks": list(ANSWER)}])
    status, _, body = await gateway.chat(f"{wire}-none", mode="none")
    deltas = [e["delta"] for e in data_events(body) if isinstance(e, dict) and "delta" in e]
    assert status == 200 and deltas == ["".join(ANSWER)]
    status, _, body = await gateway.chat("x", headers={})
    assert status == 401
    status, _, body = await gateway.chat("x", body={"messages": []})
    assert status == 400 and "Traceback" not in body
    assert json.loads(body)["error"].split(":")[0] in ("threadId", "id")


async def test_ag_ui_dispose_closes_the_model_stream_when_the_browser_leaves(
    gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    gateway = await gateways("ag-ui")
    await _leave_mid_answer(gateway, fakes, "agui-dispose")
    model = fakes[0]

    async def closed() -> bool:
        return bool(model.calls) and model.calls[0].closed_early

    assert await eventually(closed)
    assert kinds(await gateway.history("agui-dispose")) == ["user"]


@pytest.mark.parametrize(("bug", "stored"), [(None, 1), ("detach-persist-twice", 2)])
async def test_ag_ui_detach_finishes_the_run_and_stores_its_answer(
    bug: str | None, stored: int, gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    extra = ["--on-disconnect", "detach", *(["--bug", bug] if bug else [])]
    gateway = await gateways("ag-ui", *extra)
    session = f"agui-detach-{bug}"
    await _leave_mid_answer(gateway, fakes, session)
    model = fakes[0]

    expected = ["user", *["text"] * stored]

    async def answered() -> bool:
        return kinds(await gateway.history(session)) == expected

    assert await eventually(answered)
    await asyncio.sleep(0.5)  # nothing more is stored after the run ended
    history = await gateway.history(session)
    assert model.calls[0].completed
    assert not model.calls[0].closed_early
    assert kinds(history) == expected
    assert history[-1]["content"]["parts"][0]["text"] == "".join(SLOW_CHUNKS)


async def _leave_mid_answer(
    gateway: Gateway, fakes: tuple[FakeModel, FakeTools], session: str
) -> None:
    """Ask a slow question, read up to the first text delta, and close the connection."""
    load(fakes, SLOW)
    path, body = gateway.request(session)
    async with (
        aiohttp.ClientSession() as http,
        http.post(gateway.url + path, json=body, headers=ALICE) as resp,
    ):
        assert resp.status == 200
        seen = b""
        while b"TEXT_MESSAGE_CONTENT" not in seen:
            seen += await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 10)
        resp.close()  # the browser tab closes mid-answer


async def test_sigterm_ends_a_detached_run_and_the_process(
    gateways: Factory, fakes: tuple[FakeModel, FakeTools]
) -> None:
    """The run bound of a detached run is expired on SIGTERM: the process exits 0, promptly."""
    gateway = await gateways("ag-ui", "--on-disconnect", "detach", tag="sigterm")
    load(fakes, [{"chunks": SLOW_CHUNKS, "chunk_delay": 2.0}])
    path, body = gateway.request("agui-sigterm")
    async with (
        aiohttp.ClientSession() as http,
        http.post(gateway.url + path, json=body, headers=ALICE) as resp,
    ):
        await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 10)  # RUN_STARTED
        resp.close()
    model = fakes[0]

    async def calling() -> bool:
        return bool(model.calls)

    assert await eventually(calling)  # the detached run goes on: its model call is under way
    gateway.proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(gateway.proc.wait(), 10) == 0
    assert not model.calls[0].completed
