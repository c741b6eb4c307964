"""The zygote preload of ``streamproof run`` (docs/explanation/performance.md#warm-starts):
it imports what a run imports and does nothing else, so a run forked after it is the run a
fresh interpreter makes."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, os, sys
import streamproof.cli.preload
from streamproof.core.requirements import REGISTRY
from streamproof.suites import SUITES
print(json.dumps({
    "suites": [name in sys.modules for name in SUITES.values()],
    "run": "streamproof.cli.run" in sys.modules and "pytest" in sys.modules,
    "rules_unbuilt": bool(REGISTRY._loaders),
    "threads": len(os.listdir("/proc/self/task")),
}))
"""


def test_the_preload_imports_a_run_and_builds_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    said = json.loads(done.stdout)
    assert said["suites"] == [True, True, True] and said["run"]
    assert said["rules_unbuilt"]  # no requirement built: the registry still waits to load
    assert said["threads"] == 1  # a zygote forks only while it is the one thread
