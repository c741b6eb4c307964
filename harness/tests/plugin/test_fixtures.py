"""The fixtures shipped for users' own tests (harness/streamproof/plugin/fixtures.py,
harness/streamproof/testing.py).

The fresh-project tests run pytest in a subprocess from a folder holding only a test file, so
the fixtures come from the installed ``pytest11`` entry point, not from any conftest of ours.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.tests.conftest import require_module
from streamproof.testing import (
    TOOL_MARKER,
    A2AEnv,
    FakeA2A,
    FakeModelServer,
    Fakes,
    FaultLinks,
    GatewayEnv,
    ScriptError,
)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "user_fixtures_example.py"
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
SUBPROCESS_TIMEOUT = 120


def _run_fresh(pytester: pytest.Pytester, **files: str) -> pytest.RunResult:
    pytester.makepyfile(**files)
    return pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
        timeout=SUBPROCESS_TIMEOUT,
    )  # fmt: skip


# --- in a fresh project, through the entry point ------------------------------------------------


def test_the_readme_example_passes_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    result = _run_fresh(pytester, test_example=EXAMPLE.read_text(encoding="utf-8"))
    result.assert_outcomes(passed=3)
    assert not list(pytester.path.glob("conftest.py"))


RESET = """
import json, urllib.error, urllib.request

def post(url):
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
    request = urllib.request.Request(url + "/v1beta/models/m:generateContent", body,
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code

def test_one_scripts_everything(fake_model, fake_a2a, fault_link):
    fake_model.reply("scripted", times="forever")
    fake_a2a.play(reply="scripted")
    link = fault_link(fake_model.base_url, "on_request: status 502")
    assert post(fake_model.base_url) == 200
    assert post(link.url) == 502
    assert len(fake_a2a.ledger.requests) == 0

def test_two_finds_nothing_left(fake_model, fake_a2a, fault_link):
    assert fake_model.calls == []
    assert post(fake_model.base_url) == 500  # no script: an unscripted call
    assert fake_model.calls[0].turn is None
    link = fault_link(fake_model.base_url)
    assert link.events == [] and link.faults == ()
    assert post(link.url) == 500  # forwarded, no fault any more
    try:
        urllib.request.urlopen(fake_a2a.card_url, timeout=5)
    except urllib.error.HTTPError as exc:
        assert exc.code == 503  # no script loaded
    else:
        raise AssertionError("the card answered without a script")
    assert fake_a2a.tasks == ()
"""

ASYNC = """
import asyncio
import aiohttp

STREAM = "/v1beta/models/m:streamGenerateContent?alt=sse"
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

async def _read(url):
    async with aiohttp.ClientSession() as session:
        async with session.post(url + STREAM, json=BODY) as response:
            return [line async for line in response.content if line.startswith(b"data: ")]

def test_asyncio_run_in_a_sync_test(fake_model):
    fake_model.reply("a", "b", chunk_delay="20ms")
    assert len(asyncio.run(_read(fake_model.base_url))) == 2

def test_a_coroutine_on_its_own_loop(fake_model, fault_link):
    fake_model.reply("a", "b", "c", chunk_delay="10ms")
    link = fault_link(fake_model.base_url, "after_event 1: end_clean")

    async def main():
        lines = await _read(link.url)
        await link.wait_quiet_async(5)
        await fake_model.wait_idle_async(5)
        return lines

    assert len(asyncio.run(main())) == 1
    assert [e.how for e in link.endings] == ["clean"]
"""


def test_fixtures_reset_between_tests_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    result = _run_fresh(pytester, test_reset=RESET)
    result.assert_outcomes(passed=2)


def test_sync_and_async_clients_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    result = _run_fresh(pytester, test_async=ASYNC)
    result.assert_outcomes(passed=2)


ON_PYTEST_ASYNCIO = """
import aiohttp
import pytest

STREAM = "/v1beta/models/m:streamGenerateContent?alt=sse"
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

@pytest.mark.asyncio
async def test_on_the_plugin_s_loop(fake_model, fault_link):
    fake_model.reply("a", "b", "c", chunk_delay="10ms")
    link = fault_link(fake_model.base_url, "after_event 1: rst")
    async with aiohttp.ClientSession() as session:
        async with session.post(link.url + STREAM, json=BODY) as response:
            with pytest.raises(aiohttp.ClientError):
                async for _ in response.content:
                    pass
    await link.wait_quiet_async(5)
    assert [f.fault.action for f in link.fired] == ["rst"]
"""


def test_a_pytest_asyncio_test_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    require_module("pytest_asyncio")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = _run_fresh(pytester, test_on_asyncio=ON_PYTEST_ASYNCIO)
    result.assert_outcomes(passed=1)


def test_the_fixtures_module_is_cheap_to_import() -> None:
    code = (
        "import sys, streamproof.plugin.fixtures; "
        "heavy = [m for m in ('pydantic', 'aiohttp', 'yaml', 'streamproof.testing', "
        "'streamproof.fakes.model') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


# --- the docs (docs/how-to/pytest.md) -------------------------------------------------------------


def test_the_docs_show_the_example_verbatim() -> None:
    page = (ROOT / "docs" / "how-to" / "pytest.md").read_text(encoding="utf-8")
    section = page[page.index("## Fakes as pytest fixtures") :]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the section has no python block"
    assert block.group(1) == EXAMPLE.read_text(encoding="utf-8")


# --- the classes directly -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fakes() -> Iterator[Fakes]:
    with Fakes() as hub:
        yield hub


def _stream(url: str) -> tuple[list[bytes], str | None]:
    request = urllib.request.Request(
        url + STREAM, json.dumps(BODY).encode(), {"Content-Type": "application/json"}
    )
    error: str | None = None
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            data = response.read()  # iterating lines would not notice a missing terminator
    except http.client.IncompleteRead as exc:
        data, error = exc.partial, "IncompleteRead"
    except (OSError, http.client.HTTPException) as exc:
        data, error = b"", type(exc).__name__
    return [line for line in data.splitlines() if line.startswith(b"data: ")], error


def test_a_fault_fires_and_is_recorded(fakes: Fakes) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    model.reply("one ", "two ", "three", chunk_delay="5ms")
    link = FaultLinks(fakes)(model.base_url, "after_event 1: fin")
    lines, error = _stream(link.url)
    assert len(lines) == 1 and error is not None
    link.wait_quiet(5)
    assert [(f.fault.index, f.fault.action) for f in link.fired if f.fault] == [(0, "fin")]
    assert [e.how for e in link.endings] == ["fin"]
    assert len(link.forwarded) == 1
    assert link.requests_seen(method="POST") == 1

    link.plan()  # no faults: the same link forwards the whole answer
    model.reply("again")
    lines, error = _stream(link.url)
    assert error is None and len(lines) == 1
    assert link.fired == [] and [e.how for e in link.endings] == ["clean"]


def test_a_plan_item_may_be_a_dict_and_scaled(fakes: Fakes) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    model.reply("slow")
    link = FaultLinks(fakes)(model.base_url, {"do": {"delay": "10s"}}, time_scale=0.01)
    lines, error = _stream(link.url)
    assert error is None and len(lines) == 1
    assert [f.fault.action for f in link.fired if f.fault] == ["delay"]


def test_scripted_turns_are_answered_in_order_and_recorded(fakes: Fakes) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    model.script({"chunks": ["first"]})
    model.add({"chunks": [{"function_call": {"name": "lookup", "args": {"q": 1}}}]})
    model.fail(429, "RESOURCE_EXHAUSTED", "slow down")
    first, _ = _stream(model.base_url)
    assert b"first" in first[0]
    second, _ = _stream(model.base_url)
    assert b'"functionCall"' in second[0]
    third, error = _stream(model.base_url)
    assert third == [] and error == "HTTPError"
    calls = model.calls
    assert [c.turn for c in calls] == [0, 1, 2]
    assert calls[1].function_calls_sent == ({"name": "lookup", "args": {"q": 1}},)
    assert calls[2].status == 429


def test_a_reply_can_end_with_an_error_or_without_a_finish_reason(fakes: Fakes) -> None:
    from streamproof.testing import stream_error, text

    fakes.reset_model()
    model = FakeModelServer(fakes)
    model.reply(text("part", delay="5ms"), stream_error(500, "INTERNAL", "boom"))
    model.reply("cut", finish_reason=None)
    lines, _ = _stream(model.base_url)
    assert b'"error"' in lines[-1] and b"boom" in lines[-1]
    lines, _ = _stream(model.base_url)
    assert b"finishReason" not in lines[-1]
    model.wait_idle(5)
    assert model.calls[0].error_sent == {"code": 500, "message": "boom", "status": "INTERNAL"}


def test_a_task_timeline_plays_on_the_chosen_wire(fakes: Fakes) -> None:
    fakes.reset_a2a()
    agent = FakeA2A(fakes)
    agent.play(
        [
            {"at": "0s", "status": "working"},
            {"at": "10ms", "artifact": {"id": "a", "text": "done"}},
            {"at": "20ms", "status": "completed"},
        ],
        wire="1.0",
    )
    card = json.load(urllib.request.urlopen(agent.card_url, timeout=5))
    assert card["supportedInterfaces"][0]["protocolVersion"].startswith("1.")
    message = {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "go"}]}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    request = urllib.request.Request(
        agent.rpc_url,
        json.dumps(call).encode(),
        {"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    answer = json.load(urllib.request.urlopen(request, timeout=5))
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [t.task_id for t in agent.tasks] == [task["id"]]
    snapshot = agent.task(task["id"])
    assert snapshot is not None and snapshot.artifacts
    assert agent.ledger.rpc_methods == ["SendMessage"]


def test_a_scripted_fixture_is_found_as_a_scenario_finds_it(
    fakes: Fakes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    # A shipped canned stream, from a folder that holds no fixtures/ of its own.
    monkeypatch.chdir(tmp_path)
    model.script({"fixture": "fixtures/gemini/mid_stream_error.sse", "chunk_delay": "0s"})
    lines, _ = _stream(model.base_url)
    assert b"The answer you are looking for is " in lines[0]
    assert b'"error"' in lines[-1] and len(lines) == 2

    # A project's own fixture, from a folder above base (a test file's path), as a scenario
    # file's folder and its ancestors are searched.
    own = tmp_path / "fixtures" / "gemini" / "ours.sse"
    own.parent.mkdir(parents=True)
    sse = (ROOT / "fixtures" / "gemini" / "mid_stream_error.sse").read_text(encoding="utf-8")
    own.write_text(sse.replace("The answer you are looking for is ", "Ours: "), encoding="utf-8")
    deeper = tmp_path / "tests" / "unit"
    deeper.mkdir(parents=True)
    model.script({"fixture": "fixtures/gemini/ours.sse"}, base=deeper / "test_x.py")
    lines, _ = _stream(model.base_url)
    assert b"Ours: " in lines[0]

    # A fixture that is nowhere is a clear error naming the call and the path.
    with pytest.raises(ScriptError, match=r"fake_model.script\(turn 0\).*nope.sse.*not found"):
        model.script({"fixture": "fixtures/gemini/nope.sse"}, base=deeper)


def test_bad_input_is_a_clear_error_naming_the_call(fakes: Fakes) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    with pytest.raises(ScriptError, match=r"fake_model.reply\(\).*finish_reason"):
        model.reply("x", finish_reason="DONE")  # type: ignore[arg-type]
    with pytest.raises(ScriptError, match=r"fake_model.script\(turn 0\)"):
        model.script({"chunks": [], "times": 0})
    with pytest.raises(ScriptError, match="fault_link plan item 0"):
        FaultLinks(fakes)(model.base_url, "after_event three: rst")
    with pytest.raises(ScriptError, match=r"fault_link.*upstream must be an http"):
        FaultLinks(fakes)("ftp://127.0.0.1:1")
    with pytest.raises(ScriptError, match=r"fake_a2a.play\(\)"):
        FakeA2A(fakes).play()  # neither task nor reply


def test_everything_is_closed_at_the_end() -> None:
    hub = Fakes()
    model = FakeModelServer(hub)
    link = FaultLinks(hub)(model.base_url)
    urls = [model.base_url, link.url]
    hub.close()
    for url in urls:
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(url + "/", timeout=2)
    with pytest.raises(RuntimeError, match="closed"):
        model.reply("late")


def test_a_blocking_wait_is_bounded(fakes: Fakes) -> None:
    fakes.reset_model()
    model = FakeModelServer(fakes)
    model.reply("slow", chunk_delay="2s")

    async def main() -> None:
        async def read() -> None:
            await asyncio.to_thread(_stream, model.base_url)

        reader = asyncio.create_task(read())
        await asyncio.sleep(0.3)
        with pytest.raises(TimeoutError, match="still being written"):
            await model.wait_idle_async(0.1)
        await reader

    asyncio.run(main())
    model.wait_idle(5)


# --- the ready environments, as fixtures of this very session ------------------------------------


def test_gateway_env_pairs_the_model_with_a_link_and_serves_tools(gateway_env: GatewayEnv) -> None:
    env = gateway_env.env
    assert env["GOOGLE_GEMINI_BASE_URL"] == gateway_env.link.url != gateway_env.model.base_url
    assert env["STREAMPROOF_TOOL_URL"] == gateway_env.tools_url
    assert env["GOOGLE_API_KEY"]

    gateway_env.tools({"lookupOrder": {"status": "shipped", "secret": "{{marker}}"}})
    request = urllib.request.Request(
        gateway_env.tools_url + "/lookupOrder", b"{}", {"Content-Type": "application/json"}
    )
    answer = json.load(urllib.request.urlopen(request, timeout=5))
    assert answer == {"status": "shipped", "secret": TOOL_MARKER}
    assert [c.tool for c in gateway_env.tool_calls] == ["lookupOrder"]

    gateway_env.model.reply("through ", "the link")
    gateway_env.link.plan("after_event 1: end_clean")
    lines, error = _stream(env["GOOGLE_GEMINI_BASE_URL"])
    assert error is None and len(lines) == 1  # cut cleanly after one event
    assert gateway_env.link.requests_seen(method="POST") == 1
    gateway_env.model.wait_idle(5)
    assert len(gateway_env.model.calls) == 1


def test_a2a_env_keeps_the_client_on_the_link(a2a_env: A2AEnv) -> None:
    a2a_env.agent.play(reply="hello")
    card = json.load(urllib.request.urlopen(a2a_env.card_url, timeout=5))
    assert card["url"] == a2a_env.rpc_url
    assert a2a_env.link.requests_seen(method="GET") == 1
    assert [r.path for r in a2a_env.agent.requests] == ["/.well-known/agent-card.json"]
