"""What the reference's wires share (stream.py): the data-only SSE writer, its encoding, the
tool-call ids and the typed frames behind the common interface."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")

from harness.tests.suites.gateway.reference.events import ids
from streamproof.suites.gateway.reference.frames import ClientGoneError, FrameWriter
from streamproof.suites.gateway.reference.stream import (
    DataWriter,
    Ending,
    ToolCallIds,
    TypedFrameStream,
    encode_data,
)


class Response:
    """Records writes; fails every write after ``fail_after`` of them."""

    def __init__(self, fail_after: int = 1_000) -> None:
        self.writes: list[bytes] = []
        self.fail_after = fail_after

    async def write(self, data: bytes) -> None:
        if len(self.writes) >= self.fail_after:
            raise ConnectionResetError("Cannot write to closing transport")
        self.writes.append(data)


def test_encode_data_is_one_data_only_event() -> None:
    assert encode_data({"type": "x", "delta": "a\nb"}) == b'data: {"type":"x","delta":"a\\nb"}\n\n'
    assert encode_data("[DONE]") == b"data: [DONE]\n\n"


async def test_each_write_is_one_write_and_a_closed_client_stops_the_run() -> None:
    response = Response(fail_after=1)
    writer = DataWriter(response)  # type: ignore[arg-type]
    await writer.write([{"type": "a"}, {"type": "b"}])
    assert response.writes == [b'data: {"type":"a"}\n\ndata: {"type":"b"}\n\n']
    with pytest.raises(ClientGoneError):
        await writer.write([{"type": "c"}])


async def test_mutant_buffer_frames_holds_everything_until_the_last_write() -> None:
    response = Response()
    writer = DataWriter(response, "buffer-frames")  # type: ignore[arg-type]
    await writer.write([{"type": "a"}])
    assert response.writes == []
    await writer.write(["[DONE]"], last=True)
    assert response.writes == [b'data: {"type":"a"}\n\ndata: [DONE]\n\n']


async def test_mutant_no_dispose_ignores_a_failed_write() -> None:
    writer = DataWriter(Response(fail_after=0), "no-dispose")  # type: ignore[arg-type]
    await writer.write([{"type": "a"}])


def test_tool_call_ids_pair_results_with_their_calls() -> None:
    calls = ToolCallIds(ids())
    assert calls.shown("adk-1", "lookupOrder") == "adk-1"
    assert calls.shown(None, "lookupOrder") == "m1"
    assert calls.answered(None, "lookupOrder") == "adk-1"  # the oldest unanswered
    assert calls.answered("adk-9", "lookupOrder") == "adk-9"  # its own id wins
    assert calls.answered(None, "other") == "m2"


@pytest.mark.parametrize(
    ("ending", "frame"),
    [
        (Ending.DONE, b"id: 1\nevent: done\ndata: {}\n\n"),
        (Ending.FAILED, b'id: 1\nevent: error\ndata: {"retryable":true}\n\n'),
        (Ending.TIMED_OUT, b'id: 1\nevent: error\ndata: {"code":"TIMEOUT","retryable":true}\n\n'),
    ],
)
async def test_typed_frames_end_as_the_seed_says(ending: Ending, frame: bytes) -> None:
    response = Response()
    stream = TypedFrameStream(FrameWriter(response))  # type: ignore[arg-type]
    await stream.begin()
    await stream.end(ending)
    assert response.writes == [frame] and not stream.ended
