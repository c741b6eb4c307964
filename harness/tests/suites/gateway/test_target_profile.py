"""Target-file keys for ADK's dev server: ``profile``, ``chat_body``, ``endpoints.session`` and
``{port}`` in ``command``; validated at load with errors naming the file and the key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from streamproof.suites.gateway.drivers.chat import chat_request
from streamproof.suites.gateway.target.config import GatewayTarget, load_target
from streamproof.targets.errors import TargetConfigError

ROOT = Path(__file__).resolve().parents[4]
ADK_API_SERVER = ROOT / "targets" / "adk-api-server.yaml"

BASE = """
kind: gateway
name: t
command: ["{python}", "-m", "some.server", "--port", "{port}"]
port: auto
endpoints:
  chat: "POST /run_sse"
  history: "GET /apps/a/users/u/sessions/{sessionId}"
chat_body: {sessionId: "{sessionId}", message: "{text}", streaming: "{streaming}"}
"""


def write(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "target.yaml"
    file.write_text(text)
    return file


def test_the_adk_api_server_target_file_loads() -> None:
    target = load_target(ADK_API_SERVER)
    assert target.profile == "adk-events"
    assert target.endpoints.session == "POST /apps/support/users/streamproof/sessions/{sessionId}"
    assert {"none_mode", "history", "multi_agent"} <= target.declared
    assert "{port}" in (target.command or ())


def test_the_chat_body_is_filled_in_as_json() -> None:
    target = load_target(ADK_API_SERVER)
    body = chat_request(target, 'Say "hi"\n', "sp-1", streaming=True)
    assert body.content_type == "application/json"
    assert (
        json.loads(body.data)
        == body.json
        == {
            "appName": "support",
            "userId": "streamproof",
            "sessionId": "sp-1",
            "newMessage": {"role": "user", "parts": [{"text": 'Say "hi"\n'}]},
            "streaming": True,
        }
    )
    body = chat_request(target, "hi", "sp-1", streaming=False)
    assert json.loads(body.data)["streaming"] is False


def test_without_a_chat_body_the_text_is_the_body() -> None:
    target = GatewayTarget(command=("x",))
    body = chat_request(target, "hi", "s", streaming=True)
    assert (body.data, body.content_type) == (b"hi", "text/plain; charset=utf-8")


def test_port_placeholder_is_replaced_in_the_argv(tmp_path: Path) -> None:
    target = load_target(write(tmp_path, BASE))
    assert target.argv(4321) == [sys.executable, "-m", "some.server", "--port", "4321"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("port: auto", "port: 0", r"command: '\{port\}' needs a port streamproof picks"),
        ('message: "{text}"', 'message: "hello"', r"chat_body: no string holds '\{text\}'"),
        ('sessionId: "{sessionId}", ', "", r"endpoints\.chat: 'POST /run_sse' must contain"),
        ("/sessions/{sessionId}", "/sessions", r"endpoints\.history: .* must contain"),
        ("  chat:", '  session: "PUT nowhere"\n  chat:', r"endpoints\.session: 'PUT nowhere' is"),
        (
            "name: t",
            "name: t\nprofile: raw",
            r"profile: Input should be 'typed-frames', 'adk-events', 'ag-ui' or",
        ),
    ],
)
def test_bad_keys_are_errors_naming_file_and_key(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    file = write(tmp_path, BASE.replace(old, new))
    with pytest.raises(TargetConfigError, match=message) as caught:
        load_target(file)
    assert str(caught.value).startswith(str(file))


def test_a_session_id_in_the_path_needs_no_chat_body(tmp_path: Path) -> None:
    text = BASE.replace("POST /run_sse", "POST /chat/{sessionId}").split("chat_body")[0]
    target = load_target(write(tmp_path, text))
    assert target.chat_body is None
