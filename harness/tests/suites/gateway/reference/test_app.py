"""The run loop of the reference gateway (app.py) on its three wires, with stand-ins for the ADK
runner and the response: an error event ends the stream and stops the run, a closed client stops
it under dispose, under detach the run goes on unseen to its end, and the run timeout closes the
run with a TIMEOUT frame."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.events import Event

from harness.tests.suites.gateway.reference.events import event, text
from streamproof.suites.gateway.reference.app import Gateway
from streamproof.suites.gateway.reference.config import Settings


class Response:
    """Records writes; fails every write after ``fail_after`` of them."""

    def __init__(self, fail_after: int = 1_000) -> None:
        self.writes: list[bytes] = []
        self.fail_after = fail_after

    async def write(self, data: bytes) -> None:
        if len(self.writes) >= self.fail_after:
            raise ConnectionResetError("Cannot write to closing transport")
        self.writes.append(data)

    def types(self) -> list[str]:
        out = []
        for block in b"".join(self.writes).decode().split("\n\n")[:-1]:
            data = block.removeprefix("data: ")
            out.append(data if data == "[DONE]" else json.loads(data)["type"])
        return out


class Runner:
    """An ADK run of the given events (then, optionally, an exception), recording how far it
    got and whether the gateway closed it."""

    def __init__(self, events: list[Event], *, then_raise: bool = False) -> None:
        self.events = events
        self.then_raise = then_raise
        self.yielded = 0
        self.closed = False

    async def run_async(self, **_: Any) -> AsyncIterator[Event]:
        try:
            for e in self.events:
                self.yielded += 1
                yield e
                await asyncio.sleep(0)
            if self.then_raise:
                raise RuntimeError("model failed")
        finally:
            self.closed = True


class Endless:
    """An ADK run that never ends (a partial text event every 10 ms), recording whether the
    gateway closed it."""

    def __init__(self) -> None:
        self.closed = False

    async def run_async(self, **_: Any) -> AsyncIterator[Event]:
        try:
            while True:
                yield event(text("Order 1042 shipped."), partial=True)
                await asyncio.sleep(0.01)
        finally:
            self.closed = True


def gateway(runner: Runner | Endless, wire: str, **settings: Any) -> Gateway:
    config = Settings(
        port=0, tool_url="http://127.0.0.1:9", users_by_token={}, wire=wire, **settings
    )
    return Gateway(config, runner, sessions=None)  # type: ignore[arg-type]


ANSWER = [event(text(c), partial=True) for c in ("a", "b", "c")] + [event(text("abc"))]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("ag-ui", ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR"]),
        ("ai-sdk-ui", ["start", "text-start", "text-delta", "error", "[DONE]"]),
    ],
)
async def test_an_error_event_ends_the_stream_and_stops_the_run(
    wire: str, expected: list[str]
) -> None:
    runner = Runner(
        [event(text("a"), partial=True), event(error_code="UNAVAILABLE"), *ANSWER],
        then_raise=True,
    )
    response = Response()
    await gateway(runner, wire)._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert response.types() == expected
    assert runner.closed and runner.yielded == 2  # nothing was read after the error event


@pytest.mark.parametrize(
    ("wire", "last"), [("ag-ui", ["RUN_ERROR"]), ("ai-sdk-ui", ["error", "[DONE]"])]
)
async def test_a_run_that_raises_ends_with_the_wires_error(wire: str, last: list[str]) -> None:
    runner = Runner([event(text("a"), partial=True)], then_raise=True)
    response = Response()
    await gateway(runner, wire)._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert response.types()[-len(last) :] == last


@pytest.mark.parametrize("wire", ["ag-ui", "ai-sdk-ui"])
async def test_dispose_stops_the_run_when_a_write_fails(wire: str) -> None:
    runner = Runner(ANSWER)
    response = Response(fail_after=2)
    await gateway(runner, wire)._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.closed and runner.yielded < len(ANSWER)


@pytest.mark.parametrize("wire", ["typed-frames", "ag-ui", "ai-sdk-ui"])
async def test_detach_runs_on_unseen_when_a_write_fails(wire: str) -> None:
    runner = Runner(ANSWER)
    response = Response(fail_after=2)
    app = gateway(runner, wire, on_disconnect="detach")
    await app._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.yielded == len(ANSWER) and runner.closed
    assert len(response.writes) == 2  # nothing more was written once the client had gone


@pytest.mark.parametrize(
    ("wire", "last"), [("ag-ui", "TEXT_MESSAGE_END"), ("ai-sdk-ui", "text-end")]
)
async def test_mutant_no_terminal_frame_on_every_wire(wire: str, last: str) -> None:
    response = Response()
    app = gateway(Runner(ANSWER), wire, bug="no-terminal-frame")
    await app._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert response.types()[-1] == last


def test_the_response_headers_of_each_wire() -> None:
    ai_sdk = gateway(Runner([]), "ai-sdk-ui")._response_headers()
    assert ai_sdk == {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
        "x-vercel-ai-ui-message-stream": "v1",
    }
    assert "x-vercel-ai-ui-message-stream" not in gateway(Runner([]), "ag-ui")._response_headers()
    mutant = gateway(Runner([]), "ag-ui", bug="json-not-sse")._response_headers()
    assert mutant["Content-Type"] == "application/json"
    unannounced = gateway(Runner([]), "ai-sdk-ui", bug="aisdk-no-stream-header")
    assert unannounced._response_headers() == {
        key: value for key, value in ai_sdk.items() if key != "x-vercel-ai-ui-message-stream"
    }


# On the seed's typed frames; in the slow tier with the end-to-end tests of the reference they
# were split from (test_server_process.py).


@pytest.mark.slow
async def test_a_failed_write_stops_and_closes_the_run() -> None:
    runner, response = Endless(), Response(fail_after=3)
    await gateway(runner, "typed-frames")._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.closed and len(response.writes) == 3


@pytest.mark.slow
async def test_the_run_timeout_closes_the_run_and_says_so() -> None:
    runner, response = Endless(), Response(fail_after=1_000_000)
    app = gateway(runner, "typed-frames", run_timeout=0.2)
    await app._stream_turn(response, "alice", "s", "hi", True)  # type: ignore[arg-type]
    assert runner.closed
    assert response.writes[-1].endswith(b'data: {"code":"TIMEOUT","retryable":true}\n\n')
    assert [int(w.split(b"\n")[0][4:]) for w in response.writes] == list(
        range(1, len(response.writes) + 1)
    )
