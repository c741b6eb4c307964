"""A2A fixtures: a canned task stream on either wire becomes the fake's task timeline, one
step per event at its recorded time; what the A2A codecs or the timeline rules reject names
the event."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.fakes.a2a.fixture import fixture_timeline, fixture_wire
from streamproof.fakes.a2a.script import A2AScript
from streamproof.protocol.fixture import FixtureProblem, parse_fixture

ROOT = Path(__file__).resolve().parents[4]
A2A = ROOT / "fixtures" / "a2a"

SUBMITTED = (
    b'data: {"id":"r","jsonrpc":"2.0","result":{"contextId":"c","id":"t","kind":"task",'
    b'"status":{"state":"submitted"}}}'
)
WORKING = (
    b'data: {"id":"r","jsonrpc":"2.0","result":{"contextId":"c","final":false,'
    b'"kind":"status-update","status":{"state":"working"},"taskId":"t"}}'
)
COMPLETED = (
    b'data: {"id":"r","jsonrpc":"2.0","result":{"contextId":"c","final":true,'
    b'"kind":"status-update","status":{"state":"completed"},"taskId":"t"}}'
)


def artifact(text: str, *, append: bool = False, last: bool = False, task: str = "t") -> bytes:
    return (
        b'data: {"id":"r","jsonrpc":"2.0","result":{"append":%s,"artifact":{"artifactId":"a",'
        b'"parts":[{"kind":"text","text":"%s"}]},"contextId":"c","kind":"artifact-update",'
        b'"lastChunk":%s,"taskId":"%s"}}'
        % (
            b"true" if append else b"false",
            text.encode(),
            b"true" if last else b"false",
            task.encode(),
        )
    )


def stream(*events: bytes) -> bytes:
    return b"".join(b": at %ds\r\n" % i + e + b"\r\n\r\n" for i, e in enumerate(events))


def timeline(body: bytes, chunk_delay: float | None = None) -> list[dict[str, object]]:
    return fixture_timeline(parse_fixture(body, "f.sse"), "f.sse", chunk_delay=chunk_delay).steps


def test_each_event_becomes_one_step_at_its_time() -> None:
    body = stream(SUBMITTED, WORKING, artifact("one "), artifact("two", append=True, last=True))
    body += b": ping\r\n\r\n: at 9s\r\n" + COMPLETED + b"\r\n\r\n"
    assert timeline(body) == [
        {"at": 0.0, "status": "submitted"},
        {"at": 1.0, "status": "working"},
        {"at": 2.0, "artifact": {"id": "a", "text": "one "}},
        {"at": 3.0, "artifact": {"id": "a", "text": "two", "append": True, "last": True}},
        {"at": 3.0, "heartbeat": True, "comment": "ping"},
        {"at": 9.0, "status": "completed"},
    ]
    steps = timeline(body, chunk_delay=0.5)
    assert [s["at"] for s in steps] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


@pytest.mark.parametrize("name", sorted(p.name for p in (A2A / "0.3").glob("*.sse")))
def test_both_wires_tell_the_same_story(name: str) -> None:
    files = {w: A2A / w / name for w in ("0.3", "1.0")}
    read = {
        w: fixture_timeline(parse_fixture(p.read_bytes(), str(p)), str(p)) for w, p in files.items()
    }
    assert read["0.3"].wire == "0.3" and read["1.0"].wire == "1.0"
    assert read["0.3"].steps == read["1.0"].steps
    assert len(read["0.3"].steps) >= 3


def test_the_bundled_stories_play_as_scripts() -> None:
    proxy = timeline((A2A / "0.3" / "summary_survives_proxy_timeout.sse").read_bytes())
    script = A2AScript.model_validate({"task": proxy})
    assert script.task is not None and [s.at for s in script.task] == [0, 2, 8, 12, 25, 39, 70, 78]
    first = timeline((A2A / "1.0" / "input_required.sse").read_bytes())
    assert first[-1] == {
        "at": 3.0,
        "status": "input-required",
        "message": "Which region should the report cover?",
    }


@pytest.mark.parametrize(
    ("body", "event", "words"),
    [
        (stream(SUBMITTED, b"data: {oops"), 2, "not JSON"),
        (stream(SUBMITTED, WORKING.replace(b'"working"', b'"busy"')), 2, "not an A2A 0.3"),
        (stream(SUBMITTED, artifact("x", task="other")), 2, "belongs to task 'other'"),
        (stream(SUBMITTED, SUBMITTED), 2, "Task snapshot after"),
        (
            stream(
                SUBMITTED, b'data: {"id":"r","jsonrpc":"2.0","error":{"code":-1,"message":"x"}}'
            ),
            2,
            "an error response",
        ),
        (stream(SUBMITTED, WORKING + b"\r\ndata: {}"), 2, "one 'data:' line"),
        (stream(b"data: [1]"), 1, "neither a JSON-RPC response"),
    ],
)
def test_a_malformed_a2a_fixture_names_the_event(body: bytes, event: int, words: str) -> None:
    with pytest.raises(FixtureProblem) as caught:
        timeline(body)
    assert caught.value.event == event, str(caught.value)
    assert words in str(caught.value)


def test_the_wire_is_read_from_the_first_data_event() -> None:
    events = parse_fixture(b": hello\n\n" + SUBMITTED + b"\n\n", "f")
    assert fixture_wire(events, "f") == "0.3"
    with pytest.raises(FixtureProblem, match="no data event"):
        fixture_wire(parse_fixture(b": only a comment\n\n", "f"), "f")


def test_a_rest_stream_is_a_1_0_fixture() -> None:
    """A REST stream (``POST /message:stream``) carries bare ``StreamResponse`` events, no
    JSON-RPC envelope: the same 1.0 timeline as the JSON-RPC stream that wraps them."""
    rest = stream(
        b'data: {"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}',
        b'data: {"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a",'
        b'"parts":[{"text":"one"}]},"lastChunk":true}}',
        b'data: {"statusUpdate":{"taskId":"t","contextId":"c",'
        b'"status":{"state":"TASK_STATE_COMPLETED"}}}',
    )
    assert fixture_wire(parse_fixture(rest, "f.sse"), "f.sse") == "1.0"
    assert timeline(rest) == [
        {"at": 0.0, "status": "submitted"},
        {"at": 1.0, "artifact": {"id": "a", "text": "one", "last": True}},
        {"at": 2.0, "status": "completed"},
    ]
    with pytest.raises(FixtureProblem, match="nor a REST stream event"):
        timeline(stream(b'data: {"task":{},"message":{}}'))
