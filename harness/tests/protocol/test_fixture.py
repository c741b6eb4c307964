"""Canned streams: the fixture framing (timing comments, events, the errors that name the
event and line) and what a Gemini fixture must hold to be replayed as a model turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.protocol import gemini
from streamproof.protocol.fixture import (
    FIXTURE_CONTEXT_KEY,
    FixtureProblem,
    event_delays,
    parse_fixture,
    timing_comment,
)
from streamproof.protocol.gemini import ModelTurn

ROOT = Path(__file__).resolve().parents[3]
GEMINI = ROOT / "fixtures" / "gemini"

CHUNK = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"index": 0}]}'
)
LAST = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "!"}],"role": "model"},'
    b'"finishReason": "STOP","index": 0}]}'
)


# --- framing -----------------------------------------------------------------------------------


def test_events_keep_their_bytes_and_lose_only_the_timing_comments() -> None:
    body = b": at 0s\r\n" + CHUNK + b"\r\n\r\n: ping\r\n: at 1.5s\r\n" + LAST + b"\r\n\r\n"
    events = parse_fixture(body, "f.sse")
    assert [e.raw for e in events] == [CHUNK + b"\r\n\r\n", b": ping\r\n" + LAST + b"\r\n\r\n"]
    assert [(e.number, e.line, e.at) for e in events] == [(1, 2, 0.0), (2, 4, 1.5)]
    assert events[1].comments == (" ping",)
    assert event_delays(events) == [0.0, 1.5]


def test_a_stamp_inside_an_event_and_unstamped_events() -> None:
    body = CHUNK + b"\n: at 250ms\n\n" + CHUNK + b"\n\n: at 1s\n" + LAST + b"\n\n"
    events = parse_fixture(body, "f.sse")
    assert [e.at for e in events] == [0.25, None, 1.0]
    assert event_delays(events) == [0.25, 0.0, 0.75]
    assert events[0].raw == CHUNK + b"\n\n", "a stamp inside the event is not sent either"


def test_timing_comment_round_trips() -> None:
    assert timing_comment(12.5) == b": at 12.5s\n"
    assert parse_fixture(timing_comment(0.02, "\r\n") + CHUNK + b"\r\n\r\n", "f")[0].at == 0.02


@pytest.mark.parametrize(
    ("body", "event", "line", "words"),
    [
        (CHUNK + b"\n", 1, 1, "ends inside an event"),
        (CHUNK + b"\n\n" + CHUNK, 2, 3, "ends inside an event"),
        (CHUNK + b"\n\n\n" + CHUNK + b"\n\n", 1, 3, "two blank lines"),
        (b"\n" + CHUNK + b"\n\n", None, 1, "starts with a blank line"),
        (b": at 2s\n" + CHUNK + b"\n\n: at 1s\n" + CHUNK + b"\n\n", 2, 4, "goes back"),
        (b": at 2 s\n" + CHUNK + b"\n\n", 1, 1, "looks like a timing comment"),
        (b": at 1s\n: at 2s\n" + CHUNK + b"\n\n", 1, 2, "two timing comments"),
        (b"", None, None, "holds no event"),
        (b"data: \xff\n\n", 1, 1, "not UTF-8"),
        (CHUNK + b"\n\n: at 3s\n", None, 3, "stamps nothing"),
    ],
)
def test_framing_errors_name_the_event_and_line(
    body: bytes, event: int | None, line: int | None, words: str
) -> None:
    with pytest.raises(FixtureProblem) as caught:
        parse_fixture(body, "fixtures/x.sse")
    problem = caught.value
    assert (problem.event, problem.line) == (event, line), str(problem)
    assert words in problem.problem
    assert str(problem).startswith("fixtures/x.sse")


# --- Gemini fixtures ---------------------------------------------------------------------------


def _turn(body: bytes, **extra: object) -> ModelTurn:
    def source(path: str) -> tuple[str, bytes]:
        return path, body

    return ModelTurn.model_validate(
        {"fixture": "fixtures/gemini/t.sse", **extra}, context={FIXTURE_CONTEXT_KEY: source}
    )


def test_a_gemini_fixture_becomes_the_turn_it_records() -> None:
    call = (
        b'data: {"candidates": [{"content": {"parts": [{"text": "Let me look. "},'
        b'{"functionCall": {"name": "lookupOrder","args": {"orderId": "7"}}}],"role": "model"},'
        b'"index": 0}]}'
    )
    body = b": at 100ms\r\n" + call + b"\r\n\r\n: at 300ms\r\n" + LAST + b"\r\n\r\n"
    turn = _turn(body)
    assert turn.text == "Let me look. !"
    assert [c.name for c in turn.function_calls] == ["lookupOrder"]
    assert turn.finish_reason == "STOP"
    assert [c.delay for c in turn.chunks] == [0.1, 0.0, 0.2]
    assert turn.replay is not None
    assert [e.raw for e in turn.replay] == [call + b"\r\n\r\n", LAST + b"\r\n\r\n"]
    assert [e.delay for e in turn.replay] == [0.1, 0.2]
    assert turn.replay[0].function_calls == ({"name": "lookupOrder", "args": {"orderId": "7"}},)
    assert ModelTurn.model_validate({"chunks": ["x"]}).replay is None


def test_a_given_chunk_delay_replaces_the_recorded_timing() -> None:
    turn = _turn(b": at 5s\n" + CHUNK + b"\n\n: at 9s\n" + LAST + b"\n\n", chunk_delay="200ms")
    assert turn.replay is not None
    assert [e.delay for e in turn.replay] == [0.2, 0.2]
    assert gemini.total_delay(turn) == pytest.approx(0.4)


def test_every_bundled_gemini_fixture_is_a_valid_turn() -> None:
    files = sorted(GEMINI.glob("*.sse"))
    assert len(files) >= 7
    for path in files:
        turn = _turn(path.read_bytes())
        assert turn.replay is not None and len(turn.replay) >= 1, path
    long = _turn((GEMINI / "long_answer.sse").read_bytes())
    assert long.replay is not None and len(long.replay) > 50
    error = _turn((GEMINI / "mid_stream_error.sse").read_bytes())
    assert error.mid_stream_error is not None and error.mid_stream_error.code == 503
    assert _turn((GEMINI / "no_finish_reason.sse").read_bytes()).finish_reason is None
    assert _turn((GEMINI / "max_tokens.sse").read_bytes()).finish_reason == "MAX_TOKENS"


@pytest.mark.parametrize(
    ("body", "event", "words"),
    [
        (b"data: {not json}\n\n", 1, "not JSON"),
        (b"data:" + CHUNK[6:] + b"\n\n", 1, "one space"),
        (b"event: x\n" + CHUNK + b"\n\n", 1, "one 'data: ' line"),
        (b": just a comment\n\n", 1, "comment-only"),
        (b'data: {"candidates": []}\n\n', 1, "candidates"),
        (
            b'data: {"candidates": [{"content": {"parts": [{"text": "a"}],"role": "user"}}]}\n\n',
            1,
            "role",
        ),
        (
            b'data: {"candidates": [{"content": {"parts": [{"inlineData": {}}],'
            b'"role": "model"}}]}\n\n',
            1,
            "exactly one of 'text' and 'functionCall'",
        ),
        (b'data: {"candidates": [{"finishReason": "STOP"}]}\n\n', 1, "content"),
        (LAST + b"\n\n" + CHUNK + b"\n\n", 1, "only on the last chunk"),
        (b'data: {"error": {"code": 503}}\n\n', 1, "not a Google error body"),
        (
            b'data: {"error": {"code": 503,"message": "m","status": "UNAVAILABLE"}}\n\n'
            + CHUNK
            + b"\n\n",
            1,
            "must be the last",
        ),
        (
            b'data: {"candidates": [{"content": {"parts": [{"text": "a"}],"role": "model"},'
            b'"finishReason": "BLOCKED_FOREVER"}]}\n\n',
            1,
            "finishReason",
        ),
    ],
)
def test_a_malformed_gemini_fixture_names_the_event(body: bytes, event: int, words: str) -> None:
    with pytest.raises(ValueError, match=r"fixtures/gemini/t\.sse") as caught:
        _turn(body)
    text = str(caught.value)
    assert f"event {event} (line " in text, text
    assert words in text, text


def test_a_fixture_turn_writes_no_chunks_of_its_own() -> None:
    with pytest.raises(ValueError, match="remove chunks, finish_reason"):
        _turn(CHUNK + b"\n\n", chunks=["x"], finish_reason="STOP")


def test_without_a_source_the_fixture_cannot_be_read() -> None:
    with pytest.raises(ValueError, match="scenario loader"):
        ModelTurn.model_validate({"fixture": "fixtures/gemini/worked_example_call.sse"})
