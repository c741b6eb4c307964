"""The slow tests' wait for the cores (harness/tests/cores.py)."""

from __future__ import annotations

import asyncio
import time

from harness.tests.cores import cores_free, wait_for_cores
from harness.tests.gauges import steady
from streamproof.runtime.cpu import CpuGauge, CpuTimes


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_free_cores_start_a_test_at_once() -> None:
    clock = Clock()
    assert wait_for_cores(steady(0.5), 0.85, 30, sleep=clock.sleep, clock=clock) == 0


def test_busy_cores_hold_a_test_until_the_longest_wait() -> None:
    clock = Clock()
    waited = wait_for_cores(steady(0.95), 0.85, 30, tick_s=0.25, sleep=clock.sleep, clock=clock)
    assert waited == 30


def test_a_test_starts_once_the_cores_have_time() -> None:
    clock = Clock()
    load = iter([1.0, 1.0, 1.0, 0.4])
    ticks = [0, 0]

    def read() -> CpuTimes:
        ticks[0] += 100
        ticks[1] += int(100 * next(load, 0.4))
        return CpuTimes(ticks[1], ticks[0])

    gauge = CpuGauge(window_s=0.1, read=read, clock=clock)
    waited = wait_for_cores(gauge, 0.85, 30, tick_s=0.25, sleep=clock.sleep, clock=clock)
    assert waited == 0.5


def test_no_reading_or_a_limit_of_one_never_waits() -> None:
    clock = Clock()
    blind = CpuGauge(read=lambda: None)
    assert wait_for_cores(blind, 0.85, 30, sleep=clock.sleep, clock=clock) == 0
    assert wait_for_cores(steady(1.0), 1.0, 30, sleep=clock.sleep, clock=clock) == 0
    assert clock.now == 0


def test_in_an_event_loop_busy_cores_hold_a_run_and_free_ones_do_not() -> None:
    started = time.monotonic()
    asyncio.run(cores_free(steady(0.5), 0.85, 5, tick_s=1.0))
    assert time.monotonic() - started < 1.0  # one wait would take a whole tick
    started = time.monotonic()
    asyncio.run(cores_free(steady(0.95), 0.85, 0.2, tick_s=0.01))
    assert 0.15 < time.monotonic() - started < 2
