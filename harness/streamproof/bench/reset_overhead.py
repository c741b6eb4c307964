"""What it costs to reset the fakes and the links between two scenarios (goal: at most 50 ms).

Run ``python -m streamproof.bench.reset_overhead [--resets 200]``. Three resets are measured side
by side, each on real servers started once on loopback, each after a little traffic (a stream
through the link to the fake), so there are records, a task and a connection to clear:

* ``a2a suite``: the A2A client environment as ``streamproof run`` starts it
  (:class:`~streamproof.suites.a2a_client.runner.A2AClientEnvironment` with the bundled reference
  client's target: the fake A2A server and its ``a2a`` link on the default engine). After the
  stream the runner's work between the client's last turn and the next scenario's clock: the
  settle (the fake and the link quiet, the task at the end of its turn), then the next
  scenario's engine choice, the script and the plan loaded, the epochs set.
* ``gateway suite``: the gateway environment's fakes and links (the fake model behind a
  ``model`` link, the fake tool service, a ``browser`` link) without a gateway process (the
  gateway is the target: its time is not the harness's): after a streamed model call through
  the ``model`` link, the runner's settle after a clean stream (the model idle, the model link
  quiet), then the next scenario's model script, tool payloads, link plans and epochs.
* ``fixtures``: the pytest fixtures' reset before each test (``fake_model``, ``fake_a2a`` and
  ``fault_link`` all in one test: :meth:`streamproof.testing.Fakes.reset_model`, ``reset_a2a``,
  ``reset_links``), called from the test's thread as the fixtures are, after a stream through a
  ``fault_link`` to ``fake_a2a``.

Each reset is timed on its own (the traffic before it is not counted); the table gives the
median and p95 of each, and how many resets took longer than the goal. The run stops by itself
after ``--resets`` resets of each kind or ``--time-limit`` seconds; every server it starts is
closed. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import aiohttp

from streamproof.faults.engines.inline import InlineProxy
from streamproof.protocol import sse
from streamproof.suites.a2a_client.runner import MIN_PLAY_OUT_S, SETTLE_S, A2AClientEnvironment
from streamproof.suites.a2a_client.target import load_client_target
from streamproof.suites.gateway.checks.disposal import MIN_BOUND as MIN_DISPOSE_BOUND
from streamproof.suites.gateway.runner import GatewayEnvironment
from streamproof.suites.gateway.target.config import load_target as load_gateway_target
from streamproof.suites.gateway.target.waits import (
    DISPOSE_MARGIN,
    LINK_SETTLE_SECONDS,
    SETTLE_SECONDS,
)
from streamproof.suites.loading import parse_scenarios
from streamproof.testing import FakeA2A, Fakes, FaultLinks

__all__ = ["GOAL_MS", "KINDS", "main"]

GOAL_MS: Final = 50.0
KINDS: Final = ("a2a suite", "gateway suite", "gateway, cut", "fixtures")
_TIME_SCALE: Final = 0.1
_REQUEST_TIMEOUT: Final = aiohttp.ClientTimeout(total=30.0)

_A2A_SCENARIO: Final = """
id: bench/reset
title: a short task, streamed to its end
kind: a2a-client
requirements: [A2A-C-STATUS]
client: {deadline: 30s, idle: 10s, prompt: hello}
task:
  - {at: 0s, status: submitted}
  - {at: 0.1s, status: working, message: on it}
  - {at: 0.2s, artifact: {id: answer, text: "the answer", last: true}}
  - {at: 0.3s, status: completed}
"""
_TASK: Final = [
    {"at": 0.0, "status": "working", "message": "on it"},
    {"at": 0.01, "artifact": {"id": "answer", "text": "the answer", "last": True}},
    {"at": 0.02, "status": "completed"},
]
_GATEWAY_SCENARIO: Final = """
id: bench/reset
title: a plain streamed answer
kind: gateway
requirements: [GW-FRAME-TYPES]
request: {text: hi}
model:
  - chunks: [{text: "Hello "}, {text: there, delay: 1s}, {text: ., delay: 1s}]
"""
_MODEL_PATH: Final = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
_MODEL_BODY: Final = {"contents": [{"parts": [{"text": "hi"}], "role": "user"}]}


def _stream_body() -> dict[str, Any]:
    message = {
        "kind": "message",
        "role": "user",
        "messageId": f"bench-{time.monotonic_ns()}",
        "parts": [{"kind": "text", "text": "hello"}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}


async def _read_sse(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], headers: dict[str, str]
) -> int:
    """POST ``body`` and read the SSE answer to its end; the number of events."""
    decoder = sse.Decoder()
    events = 0
    async with session.post(url, data=json.dumps(body), headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
        async for chunk in response.content.iter_any():
            events += len(decoder.feed(chunk))
    if not events:
        raise RuntimeError(f"{url}: the stream carried no event")
    return events


async def _a2a_stream(session: aiohttp.ClientSession, rpc_url: str) -> None:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    await _read_sse(session, rpc_url, _stream_body(), headers)


# --- the resets ---------------------------------------------------------------------------------


class _A2ASuite:
    """The A2A client environment of ``streamproof run``, reset the way its runner does."""

    def __init__(self) -> None:
        self.env = A2AClientEnvironment(load_client_target(None), time_scale=_TIME_SCALE)
        loaded = parse_scenarios(_A2A_SCENARIO, "<reset_overhead>")
        self.scenario: Any = loaded[0].scenario

    async def start(self) -> None:
        await self.env.start()
        self._load()

    def _load(self) -> None:
        env, scenario = self.env, self.scenario
        assert env.link is not None
        env.fake.load(scenario.script, time_scale=env.scale, public_url=env.url + "/")
        env.link.load(scenario.links.a2a)
        t0 = time.monotonic()
        env.fake.set_epoch(t0)
        env.link.set_epoch(t0)

    async def traffic(self, session: aiohttp.ClientSession) -> None:
        await _a2a_stream(session, self.env.url + "/")

    async def reset(self) -> None:
        env, scenario = self.env, self.scenario
        assert env.link is not None
        # the end of one scenario: A2AClientEnvironment.run after the client's last turn
        await env.fake.wait_quiet(SETTLE_S)
        await env.link.wait_quiet(SETTLE_S)
        await env._let_tasks_finish(max(env.scale(scenario.limits.grace), MIN_PLAY_OUT_S))
        # the start of the next: its engine, its script, its plan, its clock
        chosen, problems = env.engines.choose(
            {"a2a": scenario.links.a2a}, scenario.links.engine.items()
        )
        if problems:
            raise RuntimeError("; ".join(problems))
        await env.engines.ready(chosen.values())
        await env._use_engine(chosen["a2a"])
        self._load()

    async def close(self) -> None:
        await self.env.close()


class _GatewaySuite:
    """The gateway environment's fakes and links, reset the way its runner does: after a
    stream that ended cleanly, or (``cut``) after one the browser left early."""

    def __init__(self, *, cut: bool) -> None:
        self.cut = cut
        self.env = GatewayEnvironment(load_gateway_target(None), time_scale=_TIME_SCALE)
        loaded = parse_scenarios(_GATEWAY_SCENARIO, "<reset_overhead>")
        self.scenario: Any = loaded[0].scenario
        self.t0 = time.monotonic()

    async def start(self) -> None:
        env = self.env
        model_url = await env.model.start()
        tools_url = await env.tools.start()
        env.links["model"] = InlineProxy("model", model_url, time_scale=env.scale)
        # the browser link fronts the gateway; with no gateway here, any upstream will do
        env.links["browser"] = InlineProxy("browser", tools_url, time_scale=env.scale)
        for link in env.links.values():
            await link.start()
        self._load()

    def _load(self) -> None:
        # GatewayEnvironment.run: the fakes and both links loaded, one epoch for all
        env, scenario = self.env, self.scenario
        env.model.load(
            scenario.model,
            time_scale=env.scale.factor,
            runaway_cap=scenario.limits.runaway_cap,
        )
        env.tools.load(scenario.tools, "SP-SECRET-bench")
        env.links["model"].load(scenario.links.model)
        env.links["browser"].load(scenario.links.browser)
        self.t0 = time.monotonic()
        env.model.set_epoch(self.t0)
        env.tools.set_epoch(self.t0)
        for link in env.links.values():
            link.set_epoch(self.t0)

    async def traffic(self, session: aiohttp.ClientSession) -> None:
        """A streamed model call through the model link, as a gateway makes it; ``cut``: the
        caller leaves after the first event, and the disposal bound is waited out (the
        scenario's own time: the runner waits it before it looks)."""
        url = self.env.links["model"].base_url + _MODEL_PATH
        headers = {"Content-Type": "application/json"}
        if not self.cut:
            await _read_sse(session, url, _MODEL_BODY, headers)
            return
        decoder = sse.Decoder()
        async with session.post(url, data=json.dumps(_MODEL_BODY), headers=headers) as response:
            async for chunk in response.content.iter_any():
                if decoder.feed(chunk):
                    break
        left = time.monotonic()
        await asyncio.sleep(MIN_DISPOSE_BOUND + DISPOSE_MARGIN - (time.monotonic() - left))

    async def reset(self) -> None:
        env = self.env
        if self.cut:
            # GatewayEnvironment.run after a stream that did not end cleanly: no call may still
            # be coming from an orphaned run when the next scenario loads its script
            await env.waits.orphans(self.scenario, self.t0)
        else:
            # ... after a clean end: the model idle, the model link quiet
            await env.model.wait_idle(max(env.scale(SETTLE_SECONDS), 1.0))
            await env.links["model"].wait_quiet(LINK_SETTLE_SECONDS)
        self._load()

    async def close(self) -> None:
        for link in self.env.links.values():
            await link.close()
        await self.env.model.close()
        await self.env.tools.close()


class _Fixtures:
    """The pytest fixtures' hub; its resets are called from this (the test's) thread."""

    def __init__(self) -> None:
        self.fakes = Fakes()
        try:
            self.a2a = FakeA2A(self.fakes)
            self.link = FaultLinks(self.fakes)(self.a2a.base_url)
            self.fakes.model()  # started once, as the session's first fake_model would
        except BaseException:
            self.fakes.close()
            raise

    def play(self) -> None:
        self.a2a.play(_TASK)
        self.link.plan()

    def traffic(self) -> None:
        async def _go() -> None:
            async with aiohttp.ClientSession(timeout=_REQUEST_TIMEOUT) as session:
                await _a2a_stream(session, self.link.url + "/")

        self.fakes.run(_go, timeout=30.0)

    def reset(self) -> None:
        # what fake_model, fake_a2a and fault_link do before each test
        self.fakes.reset_model()
        self.fakes.reset_a2a()
        self.fakes.reset_links()

    def close(self) -> None:
        self.fakes.close()


# --- the run ------------------------------------------------------------------------------------


async def _timed(reset: Callable[[], Awaitable[None]]) -> float:
    t0 = time.perf_counter()
    await reset()
    return time.perf_counter() - t0


async def _bench(args: argparse.Namespace) -> dict[str, list[float]]:
    deadline = time.monotonic() + args.time_limit
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    a2a = _A2ASuite()
    gateways = {"gateway suite": _GatewaySuite(cut=False), "gateway, cut": _GatewaySuite(cut=True)}
    fixtures: _Fixtures | None = None
    try:
        await a2a.start()
        for gateway in gateways.values():
            await gateway.start()
        fixtures = await asyncio.to_thread(_Fixtures)
        async with aiohttp.ClientSession(timeout=_REQUEST_TIMEOUT) as session:
            for i in range(args.resets + 1):  # the first of each is a warm-up, not counted
                if time.monotonic() >= deadline:
                    break
                for kind in KINDS[i % len(KINDS) :] + KINDS[: i % len(KINDS)]:
                    if kind == "a2a suite":
                        await a2a.traffic(session)
                        took = await _timed(a2a.reset)
                    elif kind in gateways:
                        await gateways[kind].traffic(session)
                        took = await _timed(gateways[kind].reset)
                    else:
                        took = await asyncio.to_thread(_fixture_round, fixtures)
                    if i:
                        times[kind].append(took)
    finally:
        if fixtures is not None:
            await asyncio.to_thread(fixtures.close)
        for gateway in gateways.values():
            await gateway.close()
        await a2a.close()
    return times


def _fixture_round(fixtures: _Fixtures) -> float:
    fixtures.play()
    fixtures.traffic()
    t0 = time.perf_counter()
    fixtures.reset()
    return time.perf_counter() - t0


def _pct(values: Sequence[float], pct: int) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * pct // 100) - 1)]


def _report(times: dict[str, list[float]]) -> None:
    kinds = [k for k in KINDS if times[k]]
    width = 15
    print(
        f"reset overhead benchmark: {min(len(times[k]) for k in kinds)} resets of each kind; "
        f"loopback; goal <= {GOAL_MS:g} ms"
    )
    print(f"{'':24}" + "".join(f"{k:>{width}}" for k in kinds))

    def row(label: str, values: list[str]) -> None:
        print(f"{label:24}" + "".join(f"{v:>{width}}" for v in values))

    row("resets", [str(len(times[k])) for k in kinds])
    row("median ms", [f"{statistics.median(times[k]) * 1000:.2f}" for k in kinds])
    row("p95 ms", [f"{_pct(times[k], 95) * 1000:.2f}" for k in kinds])
    row("max ms", [f"{max(times[k]) * 1000:.2f}" for k in kinds])
    row(
        f"over {GOAL_MS:g} ms",
        [str(sum(t * 1000 > GOAL_MS for t in times[k])) for k in kinds],
    )
    verdicts = ["yes" if _pct(times[k], 95) * 1000 <= GOAL_MS else "no" for k in kinds]
    row("p95 within goal", verdicts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.reset_overhead", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--resets", type=int, default=200, help="resets of each kind")
    parser.add_argument("--time-limit", type=float, default=120.0, help="stop after this, s")
    args = parser.parse_args(argv)
    if args.resets < 1 or args.time_limit <= 0:
        parser.error("--resets and --time-limit must be positive")
    try:
        times = asyncio.run(_bench(args))
    except (RuntimeError, aiohttp.ClientError, TimeoutError, OSError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not any(times.values()):
        print("error: the time limit passed before a reset was measured", file=sys.stderr)
        return 1
    _report(times)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
