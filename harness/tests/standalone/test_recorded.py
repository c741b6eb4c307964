"""What ``streamproof record`` writes (:mod:`streamproof.standalone.recorded`): the redaction rules,
fixtures cut from timed writes, and scenarios that the normal loader accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from streamproof.protocol.fixture import parse_fixture
from streamproof.standalone.recorded import (
    REDACTED,
    Captured,
    fixture_from_chunks,
    guess_kind,
    plan_files,
    redact_headers,
    redact_target,
    redact_text,
)
from streamproof.suites.loading import load_scenarios

GOOGLE_KEY = "AIzaSyA1234567890abcdefghijABCDEFGHIJKL"
BEARER = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.c2ln"
COOKIE = "session=8f2b9c1d77"
SECRETS = (GOOGLE_KEY, BEARER, "8f2b9c1d77", "hunter2", "s3cr3t-value", "ya29.a0AfH6SM")


# --- redaction -----------------------------------------------------------------------------


def test_a_key_query_parameter_is_redacted_and_the_rest_kept() -> None:
    target = f"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={GOOGLE_KEY}"
    assert redact_target(target) == (
        f"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={REDACTED}"
    )
    assert redact_target("/x?access_token=abc&sig=def&page=2") == (
        f"/x?access_token={REDACTED}&sig={REDACTED}&page=2"
    )
    assert redact_target("/plain/path") == "/plain/path"


def test_headers_lose_their_secrets_but_keep_the_auth_scheme() -> None:
    headers = [
        ("Authorization", f"Bearer {BEARER}"),
        ("x-goog-api-key", GOOGLE_KEY),
        ("Cookie", COOKIE),
        ("Set-Cookie", f"{COOKIE}; HttpOnly"),
        ("X-Session-Token", "s3cr3t-value"),
        ("Content-Type", "application/json"),
        ("User-Agent", "google-genai-sdk/1.0"),
    ]
    assert redact_headers(headers) == [
        ("Authorization", f"Bearer {REDACTED}"),
        ("x-goog-api-key", REDACTED),
        ("Cookie", REDACTED),
        ("Set-Cookie", REDACTED),
        ("X-Session-Token", REDACTED),
        ("Content-Type", "application/json"),
        ("User-Agent", "google-genai-sdk/1.0"),
    ]


def test_json_members_named_like_keys_and_key_shaped_strings_are_redacted_in_place() -> None:
    text = (
        '{"apiKey": "hunter2","nested":{"access_token":"ya29.a0AfH6SM-x","password":"p"},'
        f'"note":"use {GOOGLE_KEY} now","auth":"Bearer {BEARER}","keyboard":"qwerty",'
        '"count": 3}'
    )
    out = redact_text(text)
    for secret in ("hunter2", "ya29.a0AfH6SM", GOOGLE_KEY, BEARER):
        assert secret not in out
    data = json.loads(out)
    assert data["apiKey"] == REDACTED
    assert data["nested"] == {"access_token": REDACTED, "password": REDACTED}
    assert data["note"] == f"use {REDACTED} now"
    assert data["auth"] == f"Bearer {REDACTED}"
    assert data["keyboard"] == "qwerty"  # a name that merely starts like one is not a key
    # The layout around the values is the recording's own (no re-serialising).
    assert out.startswith('{"apiKey": "REDACTED","nested":{"access_token":"REDACTED"')
    assert redact_text('{"text": "nothing secret"}') == '{"text": "nothing secret"}'


# --- fixtures from timed writes ------------------------------------------------------------


def test_each_event_is_stamped_with_the_write_that_carried_its_first_byte() -> None:
    chunks = [
        (0.0021, b'data: {"a":1}\r\n\r\ndata: {"b"'),
        (0.5004, b":2}\r\n\r\n"),
        (1.25, b": ping\r\n\r\n"),
        (2.0, b'data: {"c":3}\r\n\r\ndata: {"cut'),
    ]
    data, events, left_out = fixture_from_chunks(chunks)
    assert (events, left_out) == (4, len(b'data: {"cut'))
    assert data == (
        b': at 0.002s\r\ndata: {"a":1}\r\n\r\n'
        b': at 0.002s\r\ndata: {"b":2}\r\n\r\n'  # its first byte came with the first write
        b": at 1.25s\r\n: ping\r\n\r\n"
        b': at 2s\r\ndata: {"c":3}\r\n\r\n'
    )
    parsed = parse_fixture(data, "recorded.sse")
    assert [e.at for e in parsed] == [0.002, 0.002, 1.25, 2.0]
    assert parsed[0].raw == b'data: {"a":1}\r\n\r\n'


def test_an_a2a_stream_opens_at_zero_and_lf_line_ends_are_kept() -> None:
    chunks = [(0.004, b'data: {"x":1}\n\n'), (0.2, b'data: {"apiKey":"hunter2"}\n\n')]
    data, events, left_out = fixture_from_chunks(chunks, first_at_zero=True)
    assert (events, left_out) == (2, 0)
    assert data == b': at 0s\ndata: {"x":1}\n\n: at 0.2s\ndata: {"apiKey":"REDACTED"}\n\n'


# --- scenarios -----------------------------------------------------------------------------


def _gemini_call(number: int, body: dict[str, object], chunks: list[bytes]) -> Captured:
    return Captured(
        number=number,
        method="POST",
        target=f"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={GOOGLE_KEY}",
        rpc=None,
        request_headers=(("x-goog-api-key", GOOGLE_KEY), ("Cookie", COOKIE)),
        request_body=json.dumps(body).encode(),
        status=200,
        content_type="text/event-stream",
        chunks=tuple((0.02 * i, c) for i, c in enumerate(chunks)),
    )


def _chunk(parts: list[dict[str, object]], finish: bool = False) -> bytes:
    candidate: dict[str, object] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return b"data: " + json.dumps({"candidates": [candidate]}).encode() + b"\r\n\r\n"


def _write(tmp_path: Path, text: str, fixtures: list[tuple[str, bytes]]) -> Path:
    for relative, data in fixtures:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(data)
    scenario = tmp_path / "recorded.yaml"
    scenario.write_text(text, encoding="utf-8")
    return scenario


def test_a_recorded_gateway_turn_becomes_a_scenario_the_loader_accepts(tmp_path: Path) -> None:
    user: dict[str, object] = {
        "role": "user",
        "parts": [{"text": f"Where is order 1042? my key is {GOOGLE_KEY}"}],
    }
    call: dict[str, object] = {"functionCall": {"name": "lookupOrder", "args": {"orderId": "1042"}}}
    result: dict[str, object] = {
        "functionResponse": {"name": "lookupOrder", "response": {"status": "shipped"}}
    }
    captured = [
        _gemini_call(0, {"contents": [user]}, [_chunk([call], finish=True)]),
        _gemini_call(
            1,
            {"contents": [user, {"role": "model", "parts": [call]}, {"parts": [result]}]},
            [_chunk([{"text": "Shipped "}]), _chunk([{"text": "on Monday."}], finish=True)],
        ),
        Captured(1, "GET", "/healthz", None, (), b"", 200, "application/json", ()),
    ]
    assert guess_kind(captured) == "model"
    text, fixtures, notes = plan_files(
        captured,
        kind="model",
        name="order-1042",
        upstream=f"http://127.0.0.1:9/?key={GOOGLE_KEY}",
        written_at="2026-12-01T00:00:00Z",
    )
    assert notes == []
    assert [f.relative for f in fixtures] == [
        "order-1042/01-model-turn.sse",
        "order-1042/02-model-turn.sse",
    ]
    everything = text + "".join(f.data.decode() for f in fixtures)
    for secret in SECRETS:
        assert secret not in everything
    assert "x-goog-api-key: REDACTED, Cookie: REDACTED" in text
    data = yaml.safe_load(text)
    assert data["kind"] == "gateway"
    assert data["request"] == f"Where is order 1042? my key is {REDACTED}"
    assert data["model"] == [{"fixture": f.relative} for f in fixtures]
    assert data["tools"] == {"lookupOrder": {"status": "shipped"}}
    assert data["expect"] == {"model_calls": 2, "tool_calls": {"lookupOrder": 1}}
    scenario = _write(tmp_path, text, [(f.relative, f.data) for f in fixtures])
    (loaded,) = load_scenarios(scenario)
    assert loaded.scenario.id == "gateway/order-1042"


def _a2a_event(result: dict[str, object]) -> bytes:
    return (
        b"data: " + json.dumps({"id": "r1", "jsonrpc": "2.0", "result": result}).encode() + b"\n\n"
    )


def test_a_recorded_a2a_stream_becomes_a_scenario_with_its_outcome(tmp_path: Path) -> None:
    ids = {"taskId": "t1", "contextId": "c1"}
    body = {
        "jsonrpc": "2.0",
        "id": "r1",
        "method": "message/stream",
        "params": {"message": {"role": "user", "parts": [{"kind": "text", "text": "Summarise"}]}},
    }
    events = [
        _a2a_event(
            {"id": "t1", "contextId": "c1", "kind": "task", "status": {"state": "submitted"}}
        ),
        _a2a_event(
            {**ids, "kind": "status-update", "final": False, "status": {"state": "working"}}
        ),
        _a2a_event(
            {
                **ids,
                "kind": "artifact-update",
                "append": False,
                "lastChunk": True,
                "artifact": {"artifactId": "summary", "parts": [{"kind": "text", "text": "Done."}]},
            }
        ),
        _a2a_event(
            {**ids, "kind": "status-update", "final": True, "status": {"state": "completed"}}
        ),
    ]
    stream = Captured(
        number=1,
        method="POST",
        target="/",
        rpc="message/stream",
        request_headers=(("Authorization", f"Bearer {BEARER}"),),
        request_body=json.dumps(body).encode(),
        status=200,
        content_type="text/event-stream",
        chunks=((0.01, events[0]), (0.5, events[1]), (4.0, events[2]), (4.5, events[3])),
    )
    card = Captured(
        0, "GET", "/.well-known/agent-card.json", None, (), b"", 200, "application/json", ()
    )
    captured = [card, stream]
    assert guess_kind(captured) == "a2a"
    text, fixtures, _ = plan_files(
        captured, kind="a2a", name="summary", upstream="http://127.0.0.1:9", written_at="now"
    )
    assert BEARER not in text and "Authorization: Bearer REDACTED" in text
    data = yaml.safe_load(text)
    assert data["task"] == {"fixture": "summary/01-message-stream.sse"}
    assert data["client"]["prompt"] == "Summarise"
    assert data["client"]["idle"] == "11s"  # three times the longest gap (3.5 s), rounded up
    assert data["client"]["deadline"] == "30s"
    assert data["expect"] == {
        "result": {"status": "completed", "artifacts": {"summary": "complete"}},
        "ledger": ["message/stream"],
        "tasks_created": 1,
    }
    (fixture,) = fixtures
    assert [e.at for e in parse_fixture(fixture.data, "f")] == [0.0, 0.5, 4.0, 4.5]
    scenario = _write(tmp_path, text, [(fixture.relative, fixture.data)])
    (loaded,) = load_scenarios(scenario)
    assert loaded.scenario.id == "a2a_client/summary"


def test_nothing_streamed_gives_a_scenario_saying_so() -> None:
    text, fixtures, _ = plan_files(
        [], kind="a2a", name="empty", upstream="http://127.0.0.1:9", written_at="now"
    )
    assert fixtures == []
    assert "No streamed A2A response was recorded" in text
    assert "#   (no requests)" in text


@pytest.mark.parametrize("cut", [b"data: {}", b"data: {}\r\n"])
def test_a_stream_with_no_complete_event_writes_no_fixture(cut: bytes) -> None:
    captured = [_gemini_call(0, {}, [cut])]
    text, fixtures, notes = plan_files(
        captured, kind="model", name="cut", upstream="http://127.0.0.1:9", written_at="now"
    )
    assert fixtures == []
    assert notes == ["req 0: the stream held no complete event; no fixture"]
    assert "No streamed Gemini response was recorded" in text


def test_a_recorded_rest_stream_becomes_a_1_0_scenario(tmp_path: Path) -> None:
    """The REST binding's stream: its prompt from the body's message, its outcome from the
    bare events; a 1.0 scenario (run on each binding the client declares)."""
    body = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Summarise"}]}}
    ids = {"taskId": "t1", "contextId": "c1"}
    events = [
        b"data: " + json.dumps(e).encode() + b"\n\n"
        for e in (
            {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}},
            {
                "artifactUpdate": {
                    **ids,
                    "artifact": {"artifactId": "summary", "parts": [{"text": "Done."}]},
                    "lastChunk": True,
                }
            },
            {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_COMPLETED"}}},
        )
    ]
    stream = Captured(
        number=1,
        method="POST",
        target="/message:stream",
        rpc="SendStreamingMessage",
        request_headers=(),
        request_body=json.dumps(body).encode(),
        status=200,
        content_type="text/event-stream",
        chunks=((0.01, events[0]), (0.5, events[1]), (1.0, events[2])),
    )
    text, fixtures, _ = plan_files(
        [stream], kind="a2a", name="rest", upstream="http://127.0.0.1:9", written_at="now"
    )
    data = yaml.safe_load(text)
    assert data["server"] == {"wire": "1.0"} and data["client"]["prompt"] == "Summarise"
    assert data["expect"]["result"] == {
        "status": "completed",
        "artifacts": {"summary": "complete"},
    }
    (fixture,) = fixtures
    scenario = _write(tmp_path, text, [(fixture.relative, fixture.data)])
    (loaded,) = load_scenarios(scenario)
    assert loaded.scenario.task is not None and len(loaded.scenario.task) == 3
