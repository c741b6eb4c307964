"""The cores' load as ``/proc/stat`` gives it, when one more run may start, and the pool that
starts tasks as that allows."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

import pytest

from harness.tests.gauges import steady
from streamproof.runtime.cpu import (
    Admission,
    CpuGauge,
    CpuTimes,
    GatedPool,
    busy_between,
    parse_proc_stat,
)

STAT = """\
cpu  100 20 30 800 50 5 5 0 40 0
cpu0 50 10 15 400 25 3 2 0 20 0
cpu1 50 10 15 400 25 2 3 0 20 0
intr 12345 0 0
ctxt 999
"""


def test_the_aggregate_line_is_read_and_guest_time_is_not_counted_twice() -> None:
    # busy: user, nice, system, irq, softirq, steal; idle and iowait are not; guest (40) is
    # inside user already.
    assert parse_proc_stat(STAT) == CpuTimes(busy=160, total=1010)


def test_a_short_line_of_an_older_kernel_counts_what_it_has() -> None:
    assert parse_proc_stat("cpu 10 0 10 80\n") == CpuTimes(busy=20, total=100)


def test_a_text_without_the_aggregate_line_is_refused() -> None:
    with pytest.raises(ValueError, match="no aggregate cpu line"):
        parse_proc_stat("cpu0 1 2 3 4\nintr 5\n")


@pytest.mark.parametrize(
    ("before", "after", "busy"),
    [
        (CpuTimes(100, 1000), CpuTimes(150, 1100), 0.5),
        (CpuTimes(100, 1000), CpuTimes(200, 1100), 1.0),
        (CpuTimes(100, 1000), CpuTimes(100, 1100), 0.0),
        (CpuTimes(100, 1000), CpuTimes(100, 1000), None),  # no tick passed
    ],
)
def test_busy_between_two_readings(before: CpuTimes, after: CpuTimes, busy: float | None) -> None:
    assert busy_between(before, after) == busy


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_gauge_reads_over_its_window_and_forgets_older_readings() -> None:
    clock = Clock()
    readings = iter(
        [
            CpuTimes(0, 0),  # when made
            CpuTimes(100, 100),  # t=1: all busy since
            CpuTimes(100, 200),  # t=2: idle for a second
            CpuTimes(100, 300),  # t=3: idle again; the window (2 s) starts at t=1 now
            CpuTimes(100, 300),  # t=3: no tick since the last reading
        ]
    )
    gauge = CpuGauge(window_s=2.0, read=lambda: next(readings), clock=clock)
    clock.now = 1.0
    assert gauge.busy() == 1.0
    clock.now = 2.0
    assert gauge.busy() == 0.5  # since t=0
    clock.now = 3.0
    assert gauge.busy() == 0.0  # since t=1: the first reading left the window
    assert gauge.busy() == 0.0


def test_the_gauge_says_not_free_until_a_tick_has_passed_and_nothing_without_proc_stat() -> None:
    same = CpuGauge(read=lambda: CpuTimes(5, 10), clock=Clock())
    assert same.busy() == 1.0
    assert CpuGauge(read=lambda: None).busy() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_the_gauge_reads_this_machine() -> None:
    gauge = CpuGauge()
    time.sleep(0.05)
    busy = gauge.busy()
    assert busy is not None and 0.0 <= busy <= 1.0


@pytest.mark.parametrize(
    ("running", "busy", "since", "starts"),
    [
        (0, 1.0, 0.0, True),  # fewer than the cores run: always
        (1, 1.0, 0.0, True),
        (2, 0.5, 2.0, True),  # past the cores: the cores have time and the last start showed
        (2, 0.9, 2.0, False),  # the cores are busy
        (2, 0.5, 0.5, False),  # too soon after the last start
        (2, None, 0.0, True),  # no gauge: the ceiling alone
        (4, 0.0, 9.0, False),  # the ceiling
    ],
)
def test_admission(running: int, busy: float | None, since: float, starts: bool) -> None:
    admission = Admission(jobs=4, cores=2, busy_limit=0.85, spacing_s=1.0)
    assert admission.may_start(running, busy, since) is starts


def test_a_busy_limit_of_one_starts_up_to_the_ceiling_regardless() -> None:
    admission = Admission(jobs=4, cores=2, busy_limit=1.0)
    assert admission.may_start(3, 1.0, 0.0)
    assert not admission.may_start(4, 0.0, 9.0)


# --- the pool ------------------------------------------------------------------------------------


class Tasks:
    """Tasks that each wait for ``release`` and record the order they started in and how
    many ran at once."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.running = self.most = 0
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, n: int) -> int:
        with self._lock:
            self.started.append(n)
            self.running += 1
            self.most = max(self.most, self.running)
        self.release.wait(5)
        with self._lock:
            self.running -= 1
        return n * 10


def _wait_for(check: Callable[[], bool]) -> None:
    end = time.monotonic() + 5
    while not check() and time.monotonic() < end:
        time.sleep(0.01)


def test_the_pool_starts_tasks_in_order_up_to_its_ceiling_and_gives_their_results() -> None:
    tasks = Tasks()
    with GatedPool(Admission(jobs=3, cores=1, busy_limit=1.0), steady(1.0), tick_s=0.01) as pool:
        futures = [pool.submit(tasks, n) for n in range(5)]
        _wait_for(lambda: len(tasks.started) >= 3)
        time.sleep(0.1)  # a pool without a ceiling would have started the other two by now
        assert tasks.started == [0, 1, 2]
        tasks.release.set()
    assert [f.result() for f in futures] == [0, 10, 20, 30, 40]
    assert tasks.started == [0, 1, 2, 3, 4] and tasks.most == 3


def test_past_its_cores_the_pool_waits_while_they_are_busy() -> None:
    tasks = Tasks()
    admission = Admission(jobs=3, cores=1, busy_limit=0.85, spacing_s=0.0)
    with GatedPool(admission, steady(0.95), tick_s=0.01) as pool:
        futures = [pool.submit(tasks, n) for n in range(3)]
        _wait_for(lambda: len(tasks.started) >= 1)
        time.sleep(0.1)
        assert tasks.started == [0]  # one a core always gets; no more while they are busy
        tasks.release.set()
    assert [f.result() for f in futures] == [0, 10, 20] and tasks.most == 1
    free = Tasks()
    with GatedPool(admission, steady(0.5), tick_s=0.01) as pool:
        for n in range(3):
            pool.submit(free, n)
        _wait_for(lambda: len(free.started) >= 3)
        free.release.set()
    assert free.most == 3


def test_a_task_that_raises_gives_its_error_and_the_pool_goes_on() -> None:
    def fail() -> None:
        raise ValueError("boom")

    with GatedPool(Admission(jobs=1), steady(0.0), tick_s=0.01) as pool:
        bad, good = pool.submit(fail), pool.submit(lambda: "ok")
    with pytest.raises(ValueError, match="boom"):
        bad.result()
    assert good.result() == "ok"


def test_shutdown_can_cancel_what_has_not_started_and_refuses_more() -> None:
    tasks = Tasks()
    pool = GatedPool(Admission(jobs=1), steady(0.0), tick_s=0.01)
    first, second = pool.submit(tasks, 1), pool.submit(tasks, 2)
    _wait_for(lambda: len(tasks.started) >= 1)
    tasks.release.set()
    pool.shutdown(cancel_pending=True)
    assert first.result() == 10 and second.cancelled()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(tasks, 3)
