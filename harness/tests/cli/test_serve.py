"""``streamproof serve``: a fake on its own, started as a user would, stopped by a signal.

Each end-to-end test starts the command in a subprocess (its own process group), reads the
URL it prints, sends a request, waits for that request's ledger line, stops it with a signal
and checks the exit status, that the port is free again and that nothing of the process group
is left. Bad input is checked in-process: one line on stderr, exit status 2, nothing listening.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.tests.cli.test_proxy import (
    ROOT,
    Running,
    free_port,
    group_is_gone,
    port_is_free,
    running,
    start,
)
from streamproof.cli import main
from streamproof.fakes.a2a.ledger import RequestRecord
from streamproof.fakes.records import ModelCall, ToolCall
from streamproof.standalone.ledger_lines import (
    UNANSWERED_S,
    a2a_line,
    a2a_ready,
    model_line,
    tool_line,
)

__all__ = ["running"]  # the fixture, shared with cli/test_proxy.py

A2A_SCENARIO = ROOT / "scenarios/a2a_client/happy_path_1_0_wire.yaml"
GATEWAY_SCENARIO = ROOT / "scenarios/gateway/auth.yaml"
LISTENING_A2A = r"^streamproof serve: fake A2A server listening on (http://127\.0\.0\.1:(\d+)/)"
LISTENING_MODEL = r"^streamproof serve: fake Gemini listening on (http://127\.0\.0\.1:(\d+))$"
LISTENING_TOOLS = r"^streamproof serve: fake tool service listening on (http://127\.0\.0\.1:(\d+))$"


def serve(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamproof.cli", "serve", *args]


def stopped_cleanly(process: Running, sig: signal.Signals, *ports: int) -> None:
    code = process.stop(sig)
    assert code == 128 + sig, process.output()
    assert process.out[-1] == f"streamproof serve: stopped ({sig.name})", process.output()
    assert group_is_gone(process.proc.pid)
    for port in ports:
        assert port_is_free(port)
    assert not process.err, process.output()


def test_serve_a2a_prints_its_url_and_a_line_per_request(running: list[Running]) -> None:
    process = start(running, serve("a2a", str(A2A_SCENARIO), "--time-scale", "0.05"))
    found = process.wait_for(LISTENING_A2A)
    url, port = found.group(1), int(found.group(2))
    process.wait_for(r"agent card http://127\.0\.0\.1:\d+/\.well-known/agent-card\.json$")
    process.wait_for(r"a task timeline, wire 1\.0, times scaled by 0\.05$")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Hi there"}]}
        },
    }
    with httpx.Client(timeout=30) as http:
        card = http.get(url + ".well-known/agent-card.json").json()
        assert card["supportedInterfaces"][0]["url"] == url
        response = http.post(url, json=body, headers={"A2A-Version": "1.0"})
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "TASK_STATE_COMPLETED" in response.text
        missing = http.post(url, json={**body, "method": "GetTask", "params": {"id": "nope"}})
        assert missing.json()["error"]["code"] == -32009  # no A2A-Version on a 1.0 call
    process.wait_for(r"#0 conn \d+ GET /\.well-known/agent-card\.json -> json$")
    line = process.wait_for(r"#1 conn \d+ POST / SendStreamingMessage \[A2A-Version 1\.0\] .*")
    assert '"Hi there"' in line.group(0)
    process.wait_for(r"#2 conn \d+ POST / GetTask .*-> error -32009$")
    stopped_cleanly(process, signal.SIGTERM, port)


def test_serve_a2a_on_rest(running: list[Running]) -> None:
    """``--binding rest``: the card advertises HTTP+JSON at the base URL, and a REST stream is
    one line like any other request."""
    argv = serve("a2a", str(A2A_SCENARIO), "--time-scale", "0.05", "--binding", "rest")
    process = start(running, argv)
    found = process.wait_for(LISTENING_A2A + r" \(HTTP\+JSON on the card, JSON-RPC at /\)$")
    url, port = found.group(1), int(found.group(2))
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Hi there"}]}
    with httpx.Client(timeout=30) as http:
        card = http.get(url + ".well-known/agent-card.json").json()
        assert card["supportedInterfaces"] == [
            {"url": url.rstrip("/"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ]
        response = http.post(
            url + "message:stream", json={"message": message}, headers={"A2A-Version": "1.0"}
        )
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "TASK_STATE_COMPLETED" in response.text
    process.wait_for(r"#1 conn \d+ POST /message:stream SendStreamingMessage .*-> sse$")
    stopped_cleanly(process, signal.SIGTERM, port)


def test_serve_model_on_a_fixed_port(running: list[Running]) -> None:
    port = free_port()
    process = start(running, serve("model", str(GATEWAY_SCENARIO), "--port", str(port)))
    model_url = process.wait_for(LISTENING_MODEL).group(1)
    assert model_url == f"http://127.0.0.1:{port}"
    tools = process.wait_for(LISTENING_TOOLS)
    tools_url, tools_port = tools.group(1), int(tools.group(2))
    process.wait_for(rf"GOOGLE_GEMINI_BASE_URL={model_url} STREAMPROOF_TOOL_URL={tools_url}$")
    with httpx.Client(timeout=30) as http:
        answer = http.post(
            model_url + "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
        assert answer.status_code == 200 and answer.text.startswith("data: ")
        assert http.post(tools_url + "/lookup", json={"q": 1}).status_code == 404
    process.wait_for(r"model #0 gemini-2\.0-flash stream -> turn 0$")
    process.wait_for(r'tool lookup \{"q": 1\} -> 404$')
    stopped_cleanly(process, signal.SIGINT, port, tools_port)


# --- bad input: one line, exit status 2 --------------------------------------------------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["a2a", "no/such/file.yaml"], "no/such/file.yaml: no such file"),
        (["a2a", "scenarios"], "scenarios: is a folder"),
        (["a2a", str(GATEWAY_SCENARIO)], "is not an a2a-client scenario; serve a2a needs one"),
        (["model", str(A2A_SCENARIO)], "is not a gateway scenario; serve model needs one"),
        (["a2a", str(A2A_SCENARIO), "--port", "70000"], "--port 70000: must be 0"),
        (["a2a", str(A2A_SCENARIO), "--time-scale", "0"], "--time-scale 0: must be"),
        (["a2a", str(A2A_SCENARIO), "--time-scale", "inf"], "--time-scale inf: must be"),
        (["a2a", "/dev/null"], "/dev/null: is not a regular file"),
        (["a2a", str(A2A_SCENARIO), "--id", "nope"], "no scenario with id 'nope'"),
        (
            ["a2a", str(A2A_SCENARIO), "--binding", "rest", "--wire", "0.3"],
            "--binding rest: REST is an A2A 1.0 binding",
        ),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("streamproof serve: ") and message in err, err


def test_a_malformed_scenario_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x/y\nkind: a2a-client\ntask: [{at: 1s, status: sleeping}]\n", "utf-8")
    assert main(["serve", "a2a", str(bad)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and str(bad) in err, err


@pytest.mark.parametrize("fake", ["a2a", "model", "tools"])
def test_a_port_in_use_is_one_line(
    fake: str, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    if fake == "a2a":
        argv = ["a2a", str(A2A_SCENARIO), "--port", str(busy_port)]
    elif fake == "model":
        argv = ["model", str(GATEWAY_SCENARIO), "--port", str(busy_port)]
    else:
        argv = ["model", str(GATEWAY_SCENARIO), "--tools-port", str(busy_port)]
    assert main(["serve", *argv]) == 2
    out, err = capsys.readouterr()
    option = "--tools-port" if fake == "tools" else "--port"
    assert err == f"streamproof serve: {option} {busy_port}: cannot listen on 127.0.0.1:" + (
        f"{busy_port}: Address already in use\n"
    ), err
    assert out == ""


# --- the ledger lines --------------------------------------------------------------------------


def test_a2a_lines_say_what_is_known() -> None:
    arriving = RequestRecord(
        index=0, t=0.0, t_end=None, connection=1, http_method="POST", path="/", rpc_method=None
    )
    assert not a2a_ready(arriving, now=60.0)  # the body is not read yet: wait for it
    read = arriving.model_copy(
        update={
            "rpc_method": "message/stream",
            "params": {"message": {"parts": [{"kind": "text", "text": "a\nlong " + "x" * 80}]}},
            "task_id": "t1",
        }
    )
    assert not a2a_ready(read, now=0.5)  # named, but its answer may be a moment away
    assert a2a_ready(read, now=UNANSWERED_S)  # held that long: shown without it
    assert a2a_ready(read.model_copy(update={"status": 200, "response": "sse"}), now=0.0)
    assert a2a_ready(read.model_copy(update={"ended": "client_closed"}), now=0.0)
    line = a2a_line(read)
    assert line.startswith("   0.000s #0 conn 1 POST / message/stream task t1 ")
    text = json.loads(line.split("task t1 ", 1)[1])
    assert text.startswith("a long xxx") and text.endswith("…") and len(text) == 60
    refused = read.model_copy(update={"error_code": -32602, "status": 200})
    assert a2a_line(refused).endswith("-> error -32602")
    junk = arriving.model_copy(update={"body_excerpt": "nonsense", "error_code": -32700})
    assert a2a_line(junk) == '   0.000s #0 conn 1 POST / body "nonsense" -> error -32700'
    card = arriving.model_copy(
        update={"http_method": "GET", "path": "/x", "status": 404, "t": 12.5}
    )
    assert a2a_ready(card, now=12.5) and a2a_line(card) == "  12.500s #0 conn 1 GET /x -> HTTP 404"


def test_model_and_tool_lines() -> None:
    call = ModelCall(
        index=2,
        t=1.25,
        path="/v1beta/models/m:streamGenerateContent",
        model="m",
        streaming=True,
        agent="root",
        turn=None,
        status=500,
        chunks_sent=0,
        completed=False,
        closed_early=False,
    )
    assert model_line(call) == "   1.250s model #2 m stream agent root -> no scripted turn left"
    tool = ToolCall(t=2.0, tool="lookup", arguments={"q": "x"}, status=200)
    assert tool_line(tool) == '   2.000s tool lookup {"q": "x"} -> 200'


PUSH_SCENARIO = ROOT / "scenarios/a2a_client/push_happy_path.yaml"


def test_serve_a2a_delivers_to_a_registered_webhook(running: list[Running]) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    got: list[dict[str, object]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200 if self.headers.get("X-A2A-Notification-Token") == "t" else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    webhook = f"http://127.0.0.1:{hook.server_address[1]}/hook"
    try:
        process = start(running, serve("a2a", str(PUSH_SCENARIO), "--time-scale", "0.05"))
        found = process.wait_for(LISTENING_A2A)
        url, port = found.group(1), int(found.group(2))
        process.wait_for(r"push notifications: a webhook registered in SendMessage's")
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Hi"}]},
                "configuration": {
                    "returnImmediately": True,
                    "taskPushNotificationConfig": {"url": webhook, "token": "t"},
                },
            },
        }
        with httpx.Client(timeout=30) as http:
            card = http.get(url + ".well-known/agent-card.json").json()
            assert card["capabilities"]["pushNotifications"] is True
            http.post(url, json=body, headers={"A2A-Version": "1.0"})
        process.wait_for(r"push #1 task submitted -> http://127\.0\.0\.1:\d+/hook: HTTP 200$")
        process.wait_for(r"push #5 status-update completed -> .*: HTTP 200$")
        assert "task" in got[0] and len(got) == 5
        stopped_cleanly(process, signal.SIGTERM, port)
    finally:
        hook.shutdown()
        hook.server_close()


def test_delivery_lines() -> None:
    from streamproof.fakes.a2a.push.records import DeliveryRecord
    from streamproof.standalone.ledger_lines import delivery_line

    sent = DeliveryRecord(
        seq=0,
        delivery=3,
        task_id="t",
        url="http://h/w",
        t=2.1,
        kind="artifact-update",
        artifact_id="s",
        receiver_status=200,
        ended="acknowledged",
        fault="duplicate",
    )
    assert delivery_line(sent) == (
        "   2.100s push #3 artifact-update s [duplicate] -> http://h/w: HTTP 200"
    )
    lost = sent.model_copy(update={"ended": "lost", "fault": "lost", "receiver_status": None})
    assert delivery_line(lost).endswith("push #3 artifact-update s [lost]: lost (never sent)")
