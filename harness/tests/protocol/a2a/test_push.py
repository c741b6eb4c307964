"""Push on the wire: the body and headers a2a-sdk 1.3's sender writes, and a webhook
registration read from a send's configuration on both wires."""

from __future__ import annotations

import json

import pytest
from a2a.types import a2a_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from streamproof.protocol import a2a
from streamproof.protocol.a2a.push import TOKEN_HEADER, push_body, push_headers


def test_the_body_is_what_a2a_sdk_s_sender_posts() -> None:
    """Differential: a2a-sdk's sender posts httpx ``json=MessageToDict(StreamResponse)``."""
    event = a2a.ArtifactUpdate(
        task_id="t",
        context_id="c",
        artifact=a2a.Artifact(artifact_id="a", name="Ré", parts=(a2a.TextPart(text="é"),)),
        append=True,
    )
    ours = push_body(event)
    proto = ParseDict(json.loads(ours), a2a_pb2.StreamResponse())
    theirs = json.dumps(
        MessageToDict(proto), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
    assert ours == theirs


def test_headers_carry_the_token_and_the_authorization() -> None:
    config = a2a.PushConfig(url="http://x/h", token="tok", scheme="Bearer", credentials="cr")
    assert push_headers(config) == {
        "Content-Type": "application/json",
        TOKEN_HEADER: "tok",
        "Authorization": "Bearer cr",
    }
    assert push_headers(config, token="", authorization="") == {"Content-Type": "application/json"}


def _send(config: dict[str, object], version: str) -> a2a.SendParams:
    method = "SendMessage" if version == "1.0" else "message/send"
    role = "ROLE_USER" if version == "1.0" else "user"
    message: dict[str, object] = {"messageId": "m", "role": role, "parts": [{"text": "hi"}]}
    if version == "0.3":
        message["kind"] = "message"
        message["parts"] = [{"kind": "text", "text": "hi"}]
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"message": message, "configuration": config},
    }
    decoded = a2a.decode_served_request(request, version, "1.0" if version == "1.0" else None)
    assert isinstance(decoded, a2a.RpcRequest), decoded
    assert isinstance(decoded.params, a2a.SendParams)
    return decoded.params


def test_a_webhook_is_read_from_either_wire() -> None:
    one = _send(
        {
            "taskPushNotificationConfig": {
                "url": "http://h/w",
                "token": "t",
                "authentication": {"scheme": "Bearer", "credentials": "c"},
            }
        },
        "1.0",
    )
    assert one.push == a2a.PushConfig(url="http://h/w", token="t", scheme="Bearer", credentials="c")
    old = _send(
        {"pushNotificationConfig": {"url": "http://h/w", "authentication": {"schemes": ["Basic"]}}},
        "0.3",
    )
    assert old.push == a2a.PushConfig(url="http://h/w", scheme="Basic")


@pytest.mark.parametrize(
    "config", [{"taskPushNotificationConfig": {}}, {"taskPushNotificationConfig": {"url": 3}}]
)
def test_a_webhook_without_a_url_is_a_bad_request(config: dict[str, object]) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": config,
        },
    }
    decoded = a2a.decode_served_request(request, "1.0", "1.0")
    assert isinstance(decoded, a2a.RpcError) and decoded.code == a2a.INVALID_PARAMS
    assert "taskPushNotificationConfig.url" in decoded.message
