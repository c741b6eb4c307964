"""``exit_now`` ends the process with its status, its unflushed output and its exit handlers,
without the interpreter's teardown."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_status_output_and_exit_handlers_survive() -> None:
    done = _run(
        "import atexit, sys\n"
        "from streamproof.runtime.process_exit import exit_now\n"
        "atexit.register(lambda: sys.stderr.write(' handler'))\n"
        "print('to stdout', end='')\n"  # unflushed, on a pipe: must still arrive
        "sys.stderr.write('to stderr')\n"
        "exit_now(3)\n"
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "to stdout", "to stderr handler")


def test_the_teardown_is_skipped() -> None:
    """An object's finaliser that only the teardown would run never runs."""
    done = _run(
        "import sys\n"
        "from streamproof.runtime.process_exit import exit_now\n"
        "class Noisy:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('torn down')\n"
        "keep = Noisy()\n"
        "exit_now(0)\n"
    )
    assert (done.returncode, done.stdout) == (0, "")
