"""The A2A client path through a real forward proxy: the reference client, given the fake
agent's own URL and HTTP_PROXY naming mitmproxy in regular mode, recovers from the proxy going
quiet on its stream (the seed's worked example) through that proxy; a client without the
watchdog is caught. At the CLI's default time scale (0.1) each run takes about 8 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.durations import DEFAULT_TIME_SCALE
from harness.suites.a2a_client.runner import A2AClientEnvironment
from harness.suites.a2a_client.scenario import A2AClientScenario
from harness.suites.a2a_client.target import client_environment, load_client_target
from harness.suites.loading import load_scenarios
from harness.targets.proxy_env import proxy_environment
from harness.tests.conftest import require_module

ROOT = Path(__file__).resolve().parents[4]
FILE = ROOT / "scenarios" / "a2a_client" / "summary_through_forward_proxy.yaml"


def scenario() -> A2AClientScenario:
    (loaded,) = load_scenarios(FILE)
    assert isinstance(loaded.scenario, A2AClientScenario)
    return loaded.scenario


def test_the_proxy_variables_reach_the_client_after_the_contract() -> None:
    target = load_client_target(None)
    proxy = proxy_environment("http://127.0.0.1:9")
    env = client_environment(
        target, url="http://127.0.0.1:8", prompt="p", deadline_s=1, idle_s=1, proxy_env=proxy
    )
    assert env["HTTP_PROXY"] == env["https_proxy"] == "http://127.0.0.1:9"
    assert env["NO_PROXY"] == "" and "SSL_CERT_FILE" not in proxy
    assert env["STREAMPROOF_A2A_URL"] == "http://127.0.0.1:8"


def test_a_forward_proxy_path_rejects_another_engine() -> None:
    data = scenario().model_dump(mode="json", by_alias=True, exclude_defaults=True)
    with pytest.raises(ValueError, match=r"links\.engine\.a2a cannot be inline"):
        A2AClientScenario.model_validate({**data, "links": {"engine": {"a2a": "inline"}}})


@pytest.mark.parametrize("bug", [None, "no-watchdog"])
async def test_the_client_recovers_through_a_real_forward_proxy(bug: str | None) -> None:
    require_module("a2a")
    require_module("mitmproxy")
    env = A2AClientEnvironment(load_client_target(None), bug=bug, time_scale=DEFAULT_TIME_SCALE)
    await env.start()
    try:
        result = await env.run(scenario())
        fake_url = env.fake.base_url
    finally:
        await env.close()
    observation = result.observation
    failed = {v.requirement for v in result.verdicts if v.outcome.value == "fail"}
    # every call the client made reached the fake through the proxy, addressed to the fake
    requests = [e for e in observation.link_events if e.kind == "request" and e.rpc]
    assert [e.rpc for e in requests] == observation.ledger.rpc_methods
    # the card was fetched through the proxy too
    assert any(e.kind == "request" and e.method == "GET" for e in observation.link_events)
    if bug is None:
        assert not failed, [v.message for v in result.verdicts if v.outcome.value == "fail"]
        assert [e.rpc for e in requests] == ["message/stream", "tasks/get", "tasks/resubscribe"]
        stall = [e for e in observation.link_events if e.kind == "fault"]
        assert len(stall) == 1 and stall[0].fault is not None and stall[0].fault.action == "stall"
    else:
        assert "A2A-C-RECOVERY" in failed
    assert fake_url.startswith("http://127.0.0.1:")
