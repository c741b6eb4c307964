"""The test-time profile: records summed per module, fixture and tier; the plugin's records
from a real (tiny) pytest run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.bench.test_time import fixture_table, module_table, summarise, tier_table

ROOT = Path(__file__).resolve().parents[3]


def test_records_are_summed_per_module_fixture_and_tier() -> None:
    records = [
        {
            "kind": "phase",
            "nodeid": "a.py::t1",
            "phase": "setup",
            "slow": True,
            "wall": 2.0,
            "cpu": 0.5,
        },
        {
            "kind": "phase",
            "nodeid": "a.py::t1",
            "phase": "call",
            "slow": True,
            "wall": 10.0,
            "cpu": 1.0,
        },
        {
            "kind": "phase",
            "nodeid": "b.py::t2",
            "phase": "call",
            "slow": False,
            "wall": 1.0,
            "cpu": 1.0,
        },
        {"kind": "fixture", "name": "gateway", "scope": "module", "wall": 2.0, "cpu": 0.5},
    ]
    summary = summarise(records)
    a = summary.modules["a.py"]
    assert (a.tests, a.total, a.cpu, a.wait) == (1, 12.0, 1.5, 10.5)
    assert summary.tiers["slow"].tests == 1 and summary.tiers["not slow"].total == 1.0
    assert summary.fixtures[("gateway", "module")] == (1, 2.0, 0.5)
    assert module_table(summary).splitlines()[2].startswith("| a.py | 1 | 12.0 | 2.0 | 10.0 |")
    assert "| gateway | module | 1 | 2.0 | 0.5 |" in fixture_table(summary)
    assert "| slow | 1 |" in tier_table(summary)


def test_the_plugin_records_each_phase_and_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(
        "import time, pytest\n"
        "@pytest.fixture\n"
        "def pause():\n    time.sleep(0.05)\n"
        "def test_waits(pause):\n    time.sleep(0.05)\n",
        encoding="utf-8",
    )
    out = tmp_path / "records.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "harness.bench.test_time_plugin",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=ROOT,
        env={**os.environ, "STREAMPROOF_TEST_TIME_FILE": str(out)},
        check=True,
        capture_output=True,
        timeout=120,
    )
    records = json.loads(out.read_text(encoding="utf-8"))
    phases = {r["phase"]: r for r in records if r["kind"] == "phase"}
    assert set(phases) == {"setup", "call", "teardown"}
    assert phases["call"]["wall"] >= 0.05 and phases["setup"]["wall"] >= 0.05
    assert phases["call"]["cpu"] < phases["call"]["wall"]  # a sleep is waiting, not computing
    assert "pause" in [r["name"] for r in records if r["kind"] == "fixture"]
