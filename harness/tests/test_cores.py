"""The slow tests' wait for the cores (harness/tests/cores.py)."""

from __future__ import annotations

from harness.tests.cores import wait_for_cores
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
