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
    "runners": [f"streamproof.suites.{k}.runner" in sys.modules
                for k in ("gateway", "a2a_client", "browser_client")],
    "engines": [f"streamproof.faults.engines.{e}" in sys.modules
                for e in ("inline", "mitmproxy", "toxiproxy")],
    "threads": len(os.listdir("/proc/self/task")),
}))
"""


def test_the_preload_imports_a_run_and_builds_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    said = json.loads(done.stdout)
    assert said["suites"] == [True, True, True] and said["run"]
    # What a run imports once it runs a scenario: the runners and the fault engines.
    assert said["runners"] == [True, True, True] and said["engines"] == [True, True, True]
    assert said["rules_unbuilt"]  # no requirement built: the registry still waits to load
    assert said["threads"] == 1  # a zygote forks only while it is the one thread
