"""The gateway environment keeps a gateway per settings
(harness/streamproof/suites/gateway/target/gateways.py): a
scenario whose model path, model-link engine or run bound differs from the previous one's uses
the gateway started for those settings earlier, still running, instead of a new start; at most
MAX_PARKED wait beside the one in use, the least recently used closed first. On the real
reference gateway, three runs that each pass."""

from __future__ import annotations

import pytest

from harness.tests.conftest import require_module
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.suites.gateway.runner import GatewayEnvironment
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target import gateways
from streamproof.suites.gateway.target.config import load_target

PLAIN = """\
id: gateway/plain
title: A plain answer
requirements: [GW-SSE-RESPONSE]
model:
  - chunks: ["Order 1042 ", "shipped."]
    chunk_delay: 10ms
request: Where is order 1042?
limits: {gateway_run_timeout: RUN_BOUND}
"""


def _scenario(run_bound: str) -> GatewayScenario:
    import yaml

    return GatewayScenario.model_validate(yaml.safe_load(PLAIN.replace("RUN_BOUND", run_bound)))


@pytest.mark.slow
async def test_a_gateway_of_earlier_settings_is_used_again_and_the_oldest_parked_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_module("google.adk")
    monkeypatch.setattr(gateways, "MAX_PARKED", 1)
    env = GatewayEnvironment(load_target(None), time_scale=DEFAULT_TIME_SCALE)
    await env.start()
    try:
        seen = []
        for bound in ("120s", "60s", "120s", "30s"):
            result = await env.run(_scenario(bound))
            failed = [v.message for v in result.verdicts if v.outcome == "fail"]
            assert not failed, failed
            seen.append(env.gateway)
        first, second, again, last = seen
        assert again is first  # 120 s again: the gateway started for it, not a new one
        assert len({id(first), id(second), id(last)}) == 3
        # The 30 s run parked the 120 s gateway; with one parked at most, the 60 s one (the
        # least recently used) was closed.
        assert env.starts == 3
        assert second is not None and second.process is not None
        assert second.process.returncode is not None
        assert first is not None and first.crashed() is None
    finally:
        await env.close()
    assert first.process is not None and first.process.returncode is not None  # all closed
