"""How long the harness waits on the gateway's runs
(harness/streamproof/suites/gateway/target/waits.py): the stream's wait, a detached run's, the
script's horizon, quiet after an orphaned run."""

from __future__ import annotations

import time

import yaml

from streamproof.core.durations import TimeScale
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.suites.gateway.checks.run_bound import run_bound_deadline
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.gateway.target.waits import MIN_RUN_TIMEOUT, Waits

SCENARIO = """\
id: gateway/plain
title: A plain answer
requirements: [GW-SSE-RESPONSE]
model:
  - chunks: ["Order 1042 ", "shipped."]
    chunk_delay: 2s
request: Where is order 1042?
limits: {run_timeout: 4s, gateway_run_timeout: 20s}
"""


def _scenario() -> GatewayScenario:
    return GatewayScenario.model_validate(yaml.safe_load(SCENARIO))


def _waits(factor: float = 1.0) -> Waits:
    return Waits(FakeModel(), FakeTools(), TimeScale(factor))


def test_the_stream_is_waited_for_at_least_the_minimum_and_the_declared_run_bound() -> None:
    waits = _waits()
    assert waits.stream(_scenario(), None) == MIN_RUN_TIMEOUT  # 4 s scaled is below it
    assert waits.stream(_scenario(), 30.0) == run_bound_deadline(30.0)
    assert _waits(5.0).stream(_scenario(), None) == 20.0


def test_a_detached_run_is_given_its_bound_and_never_less_than_the_script() -> None:
    waits = _waits()
    assert waits.horizon(_scenario()) == 2.0 * 3 + 5.0  # the turn's delay and each chunk's
    assert waits.detached(_scenario(), 3.0) == waits.horizon(_scenario())
    assert waits.detached(_scenario(), 30.0) == 32.0
    assert waits.detached(_scenario(), None) == 22.0  # the scenario's gateway_run_timeout


async def test_quiet_returns_at_once_when_the_fakes_have_long_been_quiet() -> None:
    waits = _waits()
    t0 = time.monotonic() - 10.0
    started = time.monotonic()
    await waits.quiet(5.0, t0)
    assert time.monotonic() - started < 0.5
