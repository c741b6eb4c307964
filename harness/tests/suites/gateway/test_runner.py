"""The gateway runner's wait between scenarios: no call from an orphaned run may still be
coming when the next scenario loads its script, and a quiet spell that has already passed is
not waited for again (``python -m harness.bench.reset_overhead``: about 500 ms a scenario
that did not end cleanly, before)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from harness.suites.gateway import runner
from harness.suites.gateway.runner import QUIET_SECONDS, GatewayEnvironment
from harness.suites.gateway.target import load_target


class _Model:
    """What ``_wait_quiet`` reads of the fake model: its calls (``t``/``t_end`` relative to the
    epoch), whether one is open, and its idle wait."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.busy = False

    async def wait_idle(self, timeout: float) -> bool:
        return not self.busy


def _env(monkeypatch: pytest.MonkeyPatch) -> tuple[GatewayEnvironment, _Model, SimpleNamespace]:
    env = GatewayEnvironment(load_target(None), time_scale=0.1)
    model, tools = _Model(), SimpleNamespace(calls=[])
    monkeypatch.setattr(env, "model", model)
    monkeypatch.setattr(env, "tools", tools)
    return env, model, tools


def _spy_sleep(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[int], None] | None = None
) -> list[float]:
    """Record every sleep the runner asks for (and still sleep); ``before(i)`` runs first."""
    slept: list[float] = []
    real: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def spy(delay: float) -> None:
        if before is not None:
            before(len(slept))
        slept.append(delay)
        await real(delay)

    monkeypatch.setattr(runner.asyncio, "sleep", spy)
    return slept


async def test_a_quiet_spell_that_already_passed_is_not_waited_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, model, tools = _env(monkeypatch)
    t0 = time.monotonic() - 10.0
    # the last model call ended and the last tool call came well over QUIET_SECONDS ago
    model.calls = [SimpleNamespace(t=1.0, t_end=8.0)]
    tools.calls = [SimpleNamespace(t=7.5)]
    slept = _spy_sleep(monkeypatch)
    await env._wait_quiet(30.0, t0)
    assert slept == []
    assert env._quiet_for(t0) >= QUIET_SECONDS


async def test_a_call_that_just_ended_is_waited_past_and_a_new_one_restarts_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, model, tools = _env(monkeypatch)
    t0 = time.monotonic() - 2.0
    model.calls = [SimpleNamespace(t=0.5, t_end=time.monotonic() - t0)]

    def orphan_calls_again(i: int) -> None:
        if i == 0:  # 0.2 s into the runner's wait, the orphaned run calls a tool
            tools.calls.append(SimpleNamespace(t=time.monotonic() - t0 + 0.2))

    slept = _spy_sleep(monkeypatch, orphan_calls_again)
    await env._wait_quiet(30.0, t0)
    assert len(slept) >= 2  # the tool call restarted the quiet spell
    assert env._quiet_for(t0) >= QUIET_SECONDS
    assert len(tools.calls) == 1


async def test_an_open_model_call_keeps_it_waiting_until_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, model, _ = _env(monkeypatch)
    t0 = time.monotonic() - 10.0
    model.calls = [SimpleNamespace(t=1.0, t_end=None)]
    model.busy = True
    slept = _spy_sleep(monkeypatch)
    await env._wait_quiet(0.3, t0)  # bounded: returns when the limit passes
    assert slept, "an open model call must not count as quiet"


def test_with_no_call_at_all_the_quiet_spell_counts_from_the_epoch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, _, _ = _env(monkeypatch)
    t0 = time.monotonic() - 3.0
    assert 3.0 <= env._quiet_for(t0) < 60.0
