"""A stand-in for the cores' load (:class:`streamproof.runtime.cpu.CpuGauge`) in tests that
decide when runs start."""

from __future__ import annotations

import itertools

from streamproof.runtime.cpu import CpuGauge, CpuTimes


def steady(busy: float) -> CpuGauge:
    """A gauge whose cores are always ``busy`` of the time."""
    ticks = itertools.count(100, 100)

    def read() -> CpuTimes:
        total = next(ticks)
        return CpuTimes(int(total * busy), total)

    return CpuGauge(read=read)
