"""How busy the machine's cores are, so that runs which mostly wait can be started while the
cores have time to spare and held back while they have none (``streamproof mutants``,
docs/explanation/mutants.md#which-jobs).

:func:`parse_proc_stat` reads the aggregate ``cpu`` line of Linux's ``/proc/stat`` (no I/O);
:class:`CpuGauge` reads the file and says what fraction of all cores was busy over a recent
window; :class:`Admission` decides from that whether one more run may start, and
:class:`GatedPool` starts tasks in the order given as it allows. Where there is no
``/proc/stat`` the gauge says nothing and only the ceiling on runs applies.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["Admission", "CpuGauge", "CpuTimes", "GatedPool", "busy_between", "parse_proc_stat"]

T = TypeVar("T")

PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuTimes:
    """Clock ticks summed over every core since boot: spent working, and in all."""

    busy: int
    total: int


def parse_proc_stat(text: str) -> CpuTimes:
    """The aggregate ``cpu`` line of ``/proc/stat``. Idle and waiting for I/O are not busy;
    ``guest`` time is already inside ``user``, so it is not added twice. A text without that
    line is a ValueError."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            ticks = [int(f) for f in fields[1:9]]
            ticks += [0] * (8 - len(ticks))
            user, nice, system, idle, iowait, irq, softirq, steal = ticks
            busy = user + nice + system + irq + softirq + steal
            return CpuTimes(busy, busy + idle + iowait)
    raise ValueError("no aggregate cpu line in /proc/stat")


def busy_between(before: CpuTimes, after: CpuTimes) -> float | None:
    """The fraction of all cores busy between two readings (0 to 1); ``None`` when no tick
    passed between them."""
    total = after.total - before.total
    if total <= 0:
        return None
    return min(max((after.busy - before.busy) / total, 0.0), 1.0)


def _read_proc_stat() -> CpuTimes | None:
    try:
        return parse_proc_stat(PROC_STAT.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


class CpuGauge:
    """The cores' busy fraction over about the last ``window_s`` seconds, from readings taken
    when it is made and each time it is asked (``read`` and ``clock`` are for tests)."""

    def __init__(
        self,
        window_s: float = 2.0,
        read: Callable[[], CpuTimes | None] = _read_proc_stat,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_s = window_s
        self._read = read
        self._clock = clock
        self._readings: deque[tuple[float, CpuTimes]] = deque()
        first = read()
        if first is not None:
            self._readings.append((clock(), first))

    def busy(self) -> float | None:
        """Busy over the window (from the oldest reading still inside it, or the newest one
        before it). ``None`` where there is no ``/proc/stat``; 1.0 (not known to be free)
        while no clock tick has passed since the first reading."""
        now, times = self._clock(), self._read()
        if times is None:
            return None
        readings = self._readings
        while len(readings) > 1 and now - readings[1][0] >= self.window_s:
            readings.popleft()
        readings.append((now, times))
        busy = busy_between(readings[0][1], times)
        return 1.0 if busy is None else busy


@dataclass(frozen=True)
class Admission:
    """When one more run may start: never past ``jobs`` at once; always while fewer than
    ``cores`` run; past that, only while the cores were busy less than ``busy_limit`` of the
    time and at least ``spacing_s`` after the last start (a run's own start-up shows in the
    gauge only after a moment). Without a gauge reading, or with ``busy_limit`` 1, ``jobs``
    alone decides."""

    jobs: int
    cores: int = os.cpu_count() or 1
    busy_limit: float = 0.85
    spacing_s: float = 1.0

    def may_start(self, running: int, busy: float | None, since_last_start_s: float) -> bool:
        if running >= self.jobs:
            return False
        if running < self.cores or busy is None or self.busy_limit >= 1:
            return True
        return since_last_start_s >= self.spacing_s and busy < self.busy_limit


class GatedPool:
    """Threads that run the tasks given to :meth:`submit` one each, started in the order given
    as ``admission`` allows (read from ``gauge``; asked again every ``tick_s`` while a task
    waits). Leaving the ``with`` block waits for every task."""

    def __init__(
        self, admission: Admission, gauge: CpuGauge | None = None, tick_s: float = 0.25
    ) -> None:
        self.admission = admission
        self.gauge = gauge if gauge is not None else CpuGauge()
        self.tick_s = tick_s
        self._queue: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._running = 0
        self._last_start = float("-inf")
        self._closed = False
        self._cond = threading.Condition()
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="streamproof-gated-pool", daemon=True
        )
        self._dispatcher.start()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("GatedPool: submit after shutdown")
            self._queue.append((future, lambda: fn(*args, **kwargs)))
            self._cond.notify_all()
        return future

    def _dispatch(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                if not self.admission.may_start(
                    self._running, self.gauge.busy(), time.monotonic() - self._last_start
                ):
                    self._cond.wait(self.tick_s)
                    continue
                future, task = self._queue.popleft()
                if not future.set_running_or_notify_cancel():
                    continue
                self._running += 1
                self._last_start = time.monotonic()
            threading.Thread(
                target=self._run, args=(future, task), name="streamproof-gated-task", daemon=True
            ).start()

    def _run(self, future: Future[Any], task: Callable[[], Any]) -> None:
        try:
            future.set_result(task())
        except BaseException as exc:
            future.set_exception(exc)
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def shutdown(self, cancel_pending: bool = False) -> None:
        """No more tasks; ``cancel_pending`` cancels those not started yet. Returns once every
        started task has ended."""
        with self._cond:
            self._closed = True
            if cancel_pending:
                while self._queue:
                    self._queue.popleft()[0].cancel()
            self._cond.notify_all()
        self._dispatcher.join()
        with self._cond:
            while self._running:
                self._cond.wait()

    def __enter__(self) -> GatedPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()
