"""The corporate-proxy scenarios on the reference gateway (real google-adk): the gateway reaches
the fake Gemini, served over HTTPS, only through mitmproxy as a TLS-intercepting forward proxy,
configured by the proxy variables the harness sets.

One environment for the module (starting the gateway costs seconds); each test runs bundled
scenarios through it in-process, so the link records and the fakes can be looked at directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harness.tests.conftest import require_module
from streamproof.core.capabilities import GATEWAY_CAPABILITIES, missing_reason
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.suites.gateway.links import proxy_environment
from streamproof.suites.gateway.runner import GatewayEnvironment, ScenarioResult
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.config import load_target
from streamproof.suites.loading import load_scenarios

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS = ROOT / "scenarios" / "gateway"


def scenario(file: str) -> GatewayScenario:
    (loaded,) = load_scenarios(SCENARIOS / file)
    assert isinstance(loaded.scenario, GatewayScenario)
    return loaded.scenario


def failures(result: ScenarioResult) -> list[str]:
    return [v.message for v in result.verdicts if v.outcome == "fail"]


@pytest.fixture
async def environment() -> AsyncIterator[GatewayEnvironment]:
    require_module("google.adk")
    require_module("mitmproxy")
    env = GatewayEnvironment(load_target(None))
    await env.start()
    yield env
    await env.close()


def test_the_proxy_variables_name_the_proxy_for_both_schemes_and_exempt_nothing() -> None:
    env = proxy_environment("http://127.0.0.1:9", "/tmp/ca.pem")
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        assert env[name] == "http://127.0.0.1:9"
    assert env["NO_PROXY"] == env["no_proxy"] == ""
    assert env["SSL_CERT_FILE"] == "/tmp/ca.pem"


def test_a_proxy_path_runs_the_model_link_on_mitmproxy_and_rejects_another_engine() -> None:
    plain = scenario("corporate_proxy_tls.yaml")
    assert plain.model_path == "forward-proxy" and plain.model_engine == "mitmproxy"
    data = plain.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    with pytest.raises(ValueError, match=r"links\.engine\.model cannot be toxiproxy"):
        GatewayScenario.model_validate({**data, "links": {"engine": {"model": "toxiproxy"}}})
    with pytest.raises(ValueError, match=r"intercepts TLS .*after: 1s -> end_clean"):
        GatewayScenario.model_validate(
            {**data, "links": {"model": [{"when": {"after": "1s"}, "do": "end_clean"}]}}
        )
    buffered = {**data, "model_path": "buffering-proxy"}
    with pytest.raises(ValueError, match=r"leave links\.model empty"):
        GatewayScenario.model_validate(
            {**buffered, "links": {"model": [{"when": {"idle": "1s"}, "do": "fin"}]}}
        )


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
async def test_the_plain_tls_path_works_and_the_proxy_sees_every_model_call(
    environment: GatewayEnvironment,
) -> None:
    result = await environment.run(scenario("corporate_proxy_tls.yaml"))
    assert not failures(result), failures(result)
    observation = result.observation
    assert observation.response.end == "clean"
    assert environment.model.tls_url is not None  # the gateway was given the https URL
    calls = observation.model_calls
    assert len(calls) == 2
    requests = [e for e in observation.link_events["model"] if e.kind == "request"]
    # every call the fake answered went through the proxy, in order, and nothing else did
    assert [r.path for r in requests] == [c.path for c in calls]
    assert all(e.by == "upstream" for e in observation.link_events["model"] if e.kind == "end")
    assert environment.link_engines["model"] == "mitmproxy"

    # the next scenario on the direct path gets a gateway without the proxy again
    direct = await environment.run(scenario("plain_streamed_answer.yaml"))
    assert not failures(direct), failures(direct)
    assert environment.link_engines["model"] == "inline"
    assert [e.path for e in direct.observation.link_events["model"] if e.kind == "request"] == [
        c.path for c in direct.observation.model_calls
    ]


async def test_a_buffering_proxy_delivers_every_chunk_at_once_and_the_frames_stay_right(
    environment: GatewayEnvironment,
) -> None:
    result = await environment.run(scenario("corporate_proxy_buffering.yaml"))
    assert not failures(result), failures(result)
    observation = result.observation
    model_events = [e for e in observation.link_events["model"] if e.kind == "event"]
    assert len(model_events) == 4
    (call,) = observation.model_calls
    # The fake spent ~0.6 s on its four chunks; the proxy let them through together at the end.
    assert call.t_end is not None and call.t_end - call.t > 0.5
    # together: within one of the fake's 0.2 s chunk gaps (not 0.05 s: a loaded machine)
    assert max(e.t for e in model_events) - min(e.t for e in model_events) < 0.2
    deltas = [f.t for f in observation.frames if f.event == "delta"]
    assert len(deltas) == 4 and min(deltas) >= call.t_end - 0.05


@pytest.mark.parametrize(
    ("bug", "requirement"),
    [
        ("aggregate-as-delta", "GW-NO-DOUBLE-RENDER"),
        ("tidy-message-text", "GW-PERSIST-MATCHES-MESSAGE"),
    ],
)
async def test_the_buffering_scenario_catches_a_mutant(bug: str, requirement: str) -> None:
    require_module("google.adk")
    require_module("mitmproxy")
    env = GatewayEnvironment(load_target(None), bug=bug)
    await env.start()
    try:
        result = await env.run(scenario("corporate_proxy_buffering.yaml"))
    finally:
        await env.close()
    failed = {v.requirement for v in result.verdicts if v.outcome == "fail"}
    assert requirement in failed, failed


def idle_scenarios() -> dict[str, GatewayScenario]:
    out = {}
    for loaded in load_scenarios(SCENARIOS / "corporate_proxy_idle.yaml"):
        assert isinstance(loaded.scenario, GatewayScenario)
        out[loaded.scenario.id.removeprefix("gateway/corporate-proxy-")] = loaded.scenario
    return out


def verdict_of(result: ScenarioResult, requirement: str) -> str:
    return next(v.outcome.value for v in result.verdicts if v.requirement == requirement)


@pytest.fixture
async def scaled() -> AsyncIterator[GatewayEnvironment]:
    """The reference at the CLI's default time scale (0.1): the black hole's 30 s bound is 3 s."""
    require_module("google.adk")
    require_module("mitmproxy")
    env = GatewayEnvironment(load_target(None), time_scale=DEFAULT_TIME_SCALE)
    await env.start()
    yield env
    await env.close()


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
async def test_a_proxy_that_drops_the_quiet_stream_never_hangs_the_reference(
    scaled: GatewayEnvironment,
) -> None:
    environment = scaled
    scenarios = idle_scenarios()
    for how in ("fin", "rst"):
        result = await environment.run(scenarios[f"idle-{how}"])
        assert not failures(result), failures(result)
        (end,) = [e for e in result.observation.link_events["model"] if e.kind == "end"]
        assert (end.how, end.by) == (how, "proxy")
        assert verdict_of(result, "GW-ERROR-FRAME") == "pass"
    result = await environment.run(scenarios["black-hole"])
    assert not failures(result), failures(result)
    observation = result.observation
    assert observation.run_bound_s == pytest.approx(3.0)  # 30 s at the default scale, 0.1
    assert verdict_of(result, "GW-RUN-BOUND") == "pass"
    assert verdict_of(result, "GW-RUN-BOUND-ERROR") == "pass"
    # the proxy swallowed everything after the first event and closed nothing: the gateway
    # closed the model call itself, at its bound
    (end,) = [e for e in observation.link_events["model"] if e.kind == "end"]
    assert end.by == "client" and 2.9 < end.t < 4.5
    assert observation.frames[-1].event == "error"


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
async def test_a_gateway_without_a_run_bound_hangs_on_the_black_hole_and_is_caught() -> None:
    require_module("google.adk")
    require_module("mitmproxy")
    env = GatewayEnvironment(load_target(None), bug="no-run-timeout", time_scale=DEFAULT_TIME_SCALE)
    await env.start()
    try:
        result = await env.run(idle_scenarios()["black-hole"])
    finally:
        await env.close()
    assert result.observation.response.end == "timeout"
    assert verdict_of(result, "GW-RUN-BOUND") == "fail"
    # one behaviour (the stream never ended), one rule: the MUST alone fails it
    assert verdict_of(result, "GW-RUN-BOUND-ERROR") == "not-applicable"
    assert verdict_of(result, "GW-STREAM-TERMINAL") == "not-applicable"


def test_a_target_that_does_not_declare_a_run_bound_skips_the_black_hole() -> None:
    target = load_target(None)
    assert "run_timeout" in target.declared
    silent = target.model_copy(update={"run_timeout": False})
    black_hole = idle_scenarios()["black-hole"]
    reason = missing_reason(
        silent.name, black_hole.all_needs, silent.declared, GATEWAY_CAPABILITIES
    )
    assert reason is not None and "run_timeout" in reason and "STREAMPROOF_RUN_TIMEOUT" in reason
    # the proxy that closes the stream needs no declared bound
    assert "run_timeout" not in idle_scenarios()["idle-fin"].all_needs
