"""``streamproof record`` end to end, as a user runs it: real processes, real sockets, loopback.

* The A2A link: a real a2a-sdk 1.3 server (``harness/tests/independent/a2a_sdk_server.py``, the
  seed's summary story at a tenth of its clock) behind ``record``, the reference client
  through it; the written scenario validates and passes on the reference client with
  ``streamproof run``, and the prompt's API key is redacted in both files.
* The model link: the reference gateway (google-adk) with ``GOOGLE_GEMINI_BASE_URL`` pointed at
  ``record`` in front of the fake model (``streamproof serve model`` playing the worked
  example), as the suite wires its model link; one chat turn, then the fixtures load, replay,
  and the written gateway scenario passes on the reference gateway; the API key google-genai
  sent never reaches a file.
* Stopping (SIGINT, SIGTERM, ``--max-duration``) frees the port and leaves no process; bad
  input is exit 2 with the reason.

Every process runs in its own process group, killed at the end whatever happened.
"""

from __future__ import annotations

import signal
import sys
import urllib.request
from pathlib import Path

import pytest

from harness.tests.cli.test_proxy import (
    Running,
    free_port,
    group_is_gone,
    port_is_free,
    running,
    start,
)
from harness.tests.conftest import require_module
from streamproof.protocol.fixture import parse_fixture
from streamproof.suites.loading import load_scenarios

__all__ = ["running"]  # the fixture, shared with the proxy command's tests

GOOGLE_KEY = "AIzaSyA1234567890abcdefghijABCDEFGHIJKL"
LISTENING = r"^streamproof record: listening on (http://\S+) -> (\S+)$"


def record(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamproof.cli", "record", *args]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamproof.cli", *args]


def written_text(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file())


def run_green(running: list[Running], scenario: Path, reports: Path, passed: int = 1) -> str:
    """``streamproof validate`` then ``streamproof run`` on the bundled reference: both 0."""
    checked = start(running, cli("validate", str(scenario)))
    assert checked.wait(120) == 0, checked.output()
    ran = start(running, cli("run", str(scenario), "--report-dir", str(reports)))
    assert ran.wait(300) == 0, ran.output()
    output = ran.output()
    assert f"{passed} passed" in output, output
    return output


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_a_task_streamed_by_a_real_a2a_sdk_server_is_recorded_and_replays_green(
    running: list[Running], tmp_path: Path
) -> None:
    require_module("a2a.server.routes")
    require_module("sse_starlette")
    port = free_port()
    server = start(
        running,
        [
            sys.executable,
            "-m",
            "harness.tests.independent.a2a_sdk_server",
            "--time-scale",
            "0.1",
            "--card-url",
            f"http://127.0.0.1:{port}/",
        ],
    )
    upstream = server.wait_for(r"listening on (http://\S+)")[1]
    out = tmp_path / "recorded"
    recorder = start(
        running,
        record(
            "--upstream", upstream, "--listen", f"127.0.0.1:{port}", "--out", str(out),
            "--name", "summary", "--kind", "a2a",
        ),
    )  # fmt: skip
    assert recorder.wait_for(LISTENING)[1] == f"http://127.0.0.1:{port}"

    client = start(
        running,
        [sys.executable, "-m", "streamproof.suites.a2a_client.reference.client"],
        STREAMPROOF_A2A_URL=f"http://127.0.0.1:{port}",
        STREAMPROOF_PROMPT=f"Summarise the market (key {GOOGLE_KEY})",
        STREAMPROOF_DEADLINE_S="45",
        STREAMPROOF_IDLE_S="5",
    )
    assert client.wait(90) == 0, client.output()
    recorder.wait_for(r"req \d+ POST / rpc=message/stream -> 200 text/event-stream")
    assert recorder.stop(signal.SIGINT) == 130, recorder.output()
    assert port_is_free(port) and group_is_gone(recorder.proc.pid)
    output = recorder.output()
    assert "Traceback" not in output
    scenario = out / "summary.yaml"
    assert recorder.out[-1].startswith(f"streamproof record: wrote {scenario} (a2a scenario, 1 ")
    assert f"wrote {out / 'summary' / '01-message-stream.sse'} (9 events)" in output

    text = written_text(out)
    assert GOOGLE_KEY not in text and "key REDACTED" in text
    events = parse_fixture((out / "summary" / "01-message-stream.sse").read_bytes(), "f")
    times = [e.at if e.at is not None else -1.0 for e in events]  # every event is stamped
    assert times[0] == 0.0 and times == sorted(times)
    assert 6.0 <= times[-1] <= 12.0  # completed at the seed's 78 s, at a tenth
    (loaded,) = load_scenarios(scenario)
    assert loaded.scenario.id == "a2a_client/summary"

    server.kill()  # the replay needs no upstream: the fake A2A server plays the fixture
    # the reference client declares JSON-RPC and REST: the recorded call replays on each
    run_green(running, scenario, tmp_path / "reports", passed=2)
    # ... and it judges: a client that streams without asking for SSE fails it.
    broken = start(
        running,
        cli("run", str(scenario), "--bug", "no-sse-accept", "--report-dir", str(tmp_path / "r2")),
    )
    assert broken.wait(300) == 1, broken.output()
    assert "A2A-C-HEADERS" in broken.output()


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_adk_model_calls_are_recorded_and_replay_on_the_reference_gateway(
    running: list[Running], tmp_path: Path
) -> None:
    require_module("google.adk")
    root = Path(__file__).resolve().parents[3]
    fake = start(
        running, cli("serve", "model", str(root / "scenarios/gateway/worked_example.yaml"))
    )
    model_url = fake.wait_for(r"fake Gemini listening on (http://\S+)")[1]
    tools_url = fake.wait_for(r"fake tool service listening on (http://\S+)")[1]
    out = tmp_path / "recorded"
    recorder = start(
        running,
        record("--upstream", model_url, "--out", str(out), "--name", "order-1042"),
    )
    record_url = recorder.wait_for(LISTENING)[1]
    gateway_port = free_port()
    gateway = start(
        running,
        [sys.executable, "-m", "streamproof.suites.gateway.reference.server"],
        PORT=str(gateway_port),
        GOOGLE_GEMINI_BASE_URL=record_url,
        GOOGLE_API_KEY=GOOGLE_KEY,
        STREAMPROOF_TOOL_URL=tools_url,
    )
    gateway.wait_for(r"listening on http://", timeout=120)
    chat = urllib.request.Request(
        f"http://127.0.0.1:{gateway_port}/chat/s1",
        data=b"Where is order 1042?",
        headers={"Authorization": "Bearer alice-token"},
        method="POST",
    )
    with urllib.request.urlopen(chat, timeout=60) as response:
        frames = response.read().decode()
    assert "event: tool_call" in frames and "event: done" in frames, frames
    assert recorder.stop(signal.SIGTERM) == 143, recorder.output()
    assert group_is_gone(recorder.proc.pid)
    output = recorder.output()
    assert "Traceback" not in output
    assert "(model scenario, 2 fixtures, 2 requests recorded)" in recorder.out[-1], output

    text = written_text(out)
    assert GOOGLE_KEY not in text, "the API key google-genai sent reached a file"
    assert "x-goog-api-key: REDACTED" in text
    turns = sorted((out / "order-1042").glob("*.sse"))
    assert [p.name for p in turns] == ["01-model-turn.sse", "02-model-turn.sse"]
    answer = parse_fixture(turns[1].read_bytes(), str(turns[1]))
    assert len(answer) == 3 and all(e.raw.endswith(b"\r\n\r\n") for e in answer)
    scenario = out / "order-1042.yaml"
    (loaded,) = load_scenarios(scenario)
    assert loaded.scenario.id == "gateway/order-1042"

    for process in (gateway, fake):
        process.kill()
    run_green(running, scenario, tmp_path / "reports")


def test_max_duration_stops_it_and_writes_a_scenario_saying_nothing_streamed(
    running: list[Running], tmp_path: Path
) -> None:
    port = free_port()
    recorder = start(
        running,
        record(
            "--upstream", "http://127.0.0.1:9", "--listen", str(port), "--out", str(tmp_path),
            "--name", "idle", "--max-duration", "1s",
        ),
    )  # fmt: skip
    assert recorder.wait(30) == 0, recorder.output()
    assert port_is_free(port)
    assert recorder.out[-1] == (
        f"streamproof record: wrote {tmp_path / 'idle.yaml'} (a2a scenario, 0 fixtures, "
        "0 requests recorded); stopped by --max-duration 1s"
    )
    assert "nothing to replay yet" in (tmp_path / "idle.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--upstream", "ftp://example"], "--upstream"),
        (["--upstream", "http://127.0.0.1:9", "--name", "Not OK"], "--name 'Not OK'"),
        (["--upstream", "http://127.0.0.1:9", "--max-duration", "soon"], "--max-duration soon"),
        (["--upstream", "http://127.0.0.1:9", "--listen", "10.0.0.1:80"], "--listen"),
    ],
)
def test_bad_input_is_exit_2_with_the_reason(
    running: list[Running], args: list[str], said: str, tmp_path: Path
) -> None:
    process = start(running, record(*args, "--out", str(tmp_path)))
    assert process.wait(60) == 2, process.output()
    assert any(said in line for line in process.err), process.output()
    assert "Traceback" not in process.output()
    assert not any(tmp_path.iterdir())


# --- the recording link in process --------------------------------------------------------


async def test_the_recording_link_forwards_unchanged_and_keeps_timed_inflated_bytes() -> None:
    """A gzip SSE body reaches the client as sent (still gzip), and the recording holds it
    inflated, each piece at the time its write went out; the response headers are kept."""
    import asyncio
    import gzip
    import zlib

    import aiohttp
    from aiohttp import web

    from streamproof.standalone.record import RecordingProxy
    from streamproof.standalone.recorded import plan_files

    events = [b'data: {"n":1}\r\n\r\n', b'data: {"n":2}\r\n\r\n']
    packer = zlib.compressobj(wbits=31)
    pieces = [packer.compress(events[0]) + packer.flush(zlib.Z_SYNC_FLUSH)]
    pieces.append(packer.compress(events[1]) + packer.flush())

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Content-Encoding": "gzip",
                "Set-Cookie": "session=8f2b9c1d77; HttpOnly",
            }
        )
        await response.prepare(request)
        await response.write(pieces[0])
        await asyncio.sleep(0.3)
        await response.write(pieces[1])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/{tail:.*}", stream)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    proxy = RecordingProxy(f"http://127.0.0.1:{port}")
    try:
        url = await proxy.start()
        async with (
            aiohttp.ClientSession(auto_decompress=False) as session,
            session.post(
                f"{url}/v1beta/models/m:streamGenerateContent?alt=sse&key={GOOGLE_KEY}",
                data=b"{}",
                headers={"x-goog-api-key": GOOGLE_KEY},
            ) as response,
        ):
            raw = await response.read()
        assert gzip.decompress(raw) == b"".join(events)  # forwarded as the upstream sent it
        assert await proxy.wait_quiet(5)
    finally:
        await proxy.close()
        await runner.cleanup()
    (captured,) = proxy.captured
    assert b"".join(data for _, data in captured.chunks) == b"".join(events)
    (first, t1), (second, t2) = ((c[1], c[0]) for c in captured.chunks)
    assert (first, second) == tuple(events)
    assert t1 < 0.2 <= t2 < 5.0
    assert ("Content-Encoding", "gzip") in captured.response_headers
    text, (fixture,), _ = plan_files(
        [captured], kind="model", name="gz", upstream="http://127.0.0.1:9", written_at="now"
    )
    stamped = parse_fixture(fixture.data, "gz")
    assert [e.raw for e in stamped] == events
    assert [e.at for e in stamped] == [round(t1, 3), round(t2, 3)]
    assert GOOGLE_KEY not in text and "8f2b9c1d77" not in text
    assert "Set-Cookie: REDACTED" in text and "x-goog-api-key: REDACTED" in text
    assert f"key={GOOGLE_KEY}" not in text and "key=REDACTED" in text


def test_a_body_in_an_encoding_it_cannot_undo_gives_a_note_not_a_fixture() -> None:
    from streamproof.standalone.recorded import Captured, plan_files

    brotli = Captured(
        0, "POST", "/v1beta/models/m:streamGenerateContent?alt=sse", None, (), b"{}", 200,
        "text/event-stream", (), (("Content-Encoding", "br"),), "br",
    )  # fmt: skip
    _, fixtures, notes = plan_files(
        [brotli], kind="model", name="br", upstream="http://127.0.0.1:9", written_at="now"
    )
    assert fixtures == []
    assert notes == [
        "req 0: the body is br-encoded and cannot be decoded; no fixture (ask the upstream "
        "for gzip or none: Accept-Encoding)"
    ]
