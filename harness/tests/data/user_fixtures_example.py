"""A team's own tests against streamproof's fakes and fault proxy: no YAML, no conftest."""

import http.client
import json
import urllib.error
import urllib.request

import pytest

STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
QUESTION = {"contents": [{"role": "user", "parts": [{"text": "Summarise the report"}]}]}


def post(url: str, body: dict) -> urllib.request.Request:
    data = json.dumps(body).encode()
    return urllib.request.Request(url, data, {"Content-Type": "application/json"})


def read_chunks(url: str) -> tuple[list[dict], str | None]:
    """The Gemini chunks a streaming call received, and the error that ended it early."""
    chunks = []
    try:
        with urllib.request.urlopen(post(url + STREAM, QUESTION), timeout=5) as response:
            for line in response:
                if line.startswith(b"data: "):
                    chunks.append(json.loads(line[len(b"data: ") :]))
    except (OSError, http.client.HTTPException) as exc:
        return chunks, type(exc).__name__
    return chunks, None


def test_the_model_streams_what_the_test_scripted(fake_model):
    fake_model.reply("Revenue grew ", "twelve percent.")

    chunks, error = read_chunks(fake_model.base_url)

    assert error is None
    texts = [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks]
    assert "".join(texts) == "Revenue grew twelve percent."
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert fake_model.calls[0].body == QUESTION


def test_a_reset_after_two_events_cuts_the_answer(fake_model, fault_link):
    fake_model.reply("one ", "two ", "three")
    link = fault_link(fake_model.base_url, "after_event 2: rst")

    chunks, error = read_chunks(link.url)

    assert len(chunks) == 2 and error is not None
    assert [f.fault.action for f in link.fired] == ["rst"]
    assert [e.how for e in link.endings] == ["rst"]


def test_an_agent_behind_a_bad_gateway(a2a_env):
    a2a_env.agent.play(reply="Hello from the fake agent")
    card = json.load(urllib.request.urlopen(a2a_env.card_url, timeout=5))
    assert card["url"] == a2a_env.rpc_url  # the card keeps the client on the link

    a2a_env.link.plan("rpc message/send: status 502")
    message = {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "hi"}]}
    call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(post(card["url"], call), timeout=5)

    assert failed.value.code == 502
    assert a2a_env.agent.ledger.messages == ()  # the agent never saw it
