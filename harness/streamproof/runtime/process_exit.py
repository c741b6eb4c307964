"""Ending a process of ours without the interpreter's teardown.

The command and the references that streamproof starts by the hundred (a gateway per target
start, a client per A2A turn, a ``streamproof run`` per CI job or mutant) import google-adk,
a2a-sdk and pydantic; once they have closed what they opened, the interpreter's orderly
teardown only frees those modules' objects, 0.25 to 0.8 s of CPU a process (measured with
py-spy and ``python -m streamproof.bench.process_cpu``;
docs/explanation/performance.md#the-test-loop).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn

__all__ = ["exit_now"]


def exit_now(status: int) -> NoReturn:
    """End the process with ``status``: the exit handlers run (leftover target processes
    killed, extracted suites removed, logs flushed) and the output is flushed, then the
    process ends without the teardown."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
