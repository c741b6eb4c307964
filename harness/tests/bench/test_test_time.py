"""The test-time profile: records summed per module, fixture and tier; the plugin's records
from a real (tiny) pytest run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof.bench.test_time import (
    compare,
    fixture_table,
    load,
    main,
    module_table,
    summarise,
    tier_table,
)

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


def _phase(nodeid: str, wall: float, slow: bool = False) -> dict[str, object]:
    return {
        "kind": "phase",
        "nodeid": nodeid,
        "phase": "call",
        "slow": slow,
        "wall": wall,
        "cpu": 0.1,
    }


def test_compare_puts_modules_and_tiers_before_and_after_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = [_phase("a.py::t1", 10.0, slow=True), _phase("a.py::t2", 2.0), _phase("b.py::t", 1.0)]
    after = [_phase("a.py::t1", 4.0, slow=True), _phase("a.py::t2", 2.0), _phase("c.py::t", 3.0)]
    text = compare(summarise(before, 20.0), summarise(after))
    lines = text.splitlines()
    assert lines[0] == (
        "worker-seconds in tests: before 13, after 9; "
        "wall clock of the pytest run: before 20 s, after not recorded"
    )
    assert "| slow | 1 | 1 | 10.0 | 4.0 | -6.0 | 0.40 |" in lines
    assert "| not slow | 2 | 2 | 3.0 | 5.0 | +2.0 | 1.67 |" in lines
    modules = lines[
        lines.index(
            "| test module | tests before | tests after | before s | after s "
            "| change s | after/before |"
        ) :
    ]
    # costliest first (before or after); a module gone or new shows 0 on its missing side
    assert modules[2:] == [
        "| a.py | 2 | 2 | 12.0 | 6.0 | -6.0 | 0.50 |",
        "| c.py | 0 | 1 | 0.0 | 3.0 | +3.0 | - |",
        "| b.py | 1 | 0 | 1.0 | 0.0 | -1.0 | 0.00 |",
    ]
    assert compare(summarise(before), summarise(after), limit=1).splitlines()[-1] == (
        "| (2 more modules) | 1 | 1 | 1.0 | 3.0 | +2.0 | 3.00 |"
    )
    # the command reads --json files: the bare plugin list, or records with the wall clock
    (tmp_path / "before.json").write_text(json.dumps(before), encoding="utf-8")
    (tmp_path / "after.json").write_text(
        json.dumps({"wall_s": 9.5, "records": after}), encoding="utf-8"
    )
    assert load(tmp_path / "after.json") == (after, 9.5)
    assert main(["--compare", str(tmp_path / "before.json"), str(tmp_path / "after.json")]) == 0
    printed = capsys.readouterr().out
    assert "before not recorded, after 10 s" in printed and "| a.py | 2 | 2 |" in printed


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
            "streamproof.bench.test_time_plugin",
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
