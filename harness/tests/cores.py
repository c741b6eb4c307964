"""The slow tests start when the cores have time for them.

``make test`` runs more workers than the machine has cores, because most of a slow test's time
is spent waiting on the scripted time of the runs it starts. A slow test that started while the
cores were saturated would add its runs' start-up to that load, where a timing-bound scenario
of another test could then miss its deadline. So a slow test waits at its setup, under xdist,
until the cores were busy less than :data:`BUSY_LIMIT` of the last two seconds, for at most
:data:`MAX_WAIT_S` (then it starts anyway: a gate must not starve a test); the runs a test's
pool starts are gated the same way (run_pool). It is the gate of ``streamproof mutants``
(docs/explanation/mutants.md#which-jobs), here per test.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from streamproof.runtime.cpu import CpuGauge

BUSY_LIMIT = float(os.environ.get("STREAMPROOF_TEST_BUSY_LIMIT", "0.85"))
"""Above this busy fraction a slow test waits (``STREAMPROOF_TEST_BUSY_LIMIT``; 1: no wait)."""

MAX_WAIT_S = 30.0
"""The longest a slow test waits for the cores."""


def wait_for_cores(
    gauge: CpuGauge,
    busy_limit: float = BUSY_LIMIT,
    max_wait_s: float = MAX_WAIT_S,
    tick_s: float = 0.25,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Return once ``gauge`` says the cores were busy less than ``busy_limit``, at once when it
    has no reading (no ``/proc/stat``) or the limit is 1, and after ``max_wait_s`` at the
    latest; the seconds waited."""
    started = clock()
    while busy_limit < 1:
        busy = gauge.busy()
        waited = clock() - started
        if busy is None or busy < busy_limit or waited >= max_wait_s:
            return waited
        sleep(tick_s)
    return 0.0
