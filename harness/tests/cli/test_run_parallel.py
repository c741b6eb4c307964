"""``streamproof run -n N`` and ``--shard I/N``: bad values are bad input, targets that cannot
be shared are refused, and a parallel or sharded run reaches the verdicts a serial one does,
in one report."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harness.tests.cli.test_run_reports import _marked_target, _processes_with
from harness.tests.conftest import require_module
from harness.tests.run_pool import streamproof_command

# End to end (real targets, whole runs): scheduled first under xdist (see conftest).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
_CLI = [sys.executable, "-m", "streamproof.cli"]
GATEWAY = ROOT / "scenarios" / "gateway"
# A representative part of the gateway suite: a plain stream, a multiline answer, two users, a
# model HTTP error, text then a tool call, NONE mode, a model error event mid-stream.
SUBSET = "plain or multiline or auth or model-http or text-then or none-mode or mid-stream"


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return streamproof_command(*args, timeout=timeout)


def _error(reports: Path) -> str:
    return str(json.loads((reports / "results.json").read_text())["summary"]["error"])


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (["--shard", "0/2"], "--shard '0/2': I must be between 1 and N (2)"),
        (["--shard", "3/2"], "--shard '3/2': I must be between 1 and N (2)"),
        (["--shard", "x"], "--shard 'x' is not I/N"),
        (["-n", "x"], "-n: 'x' is not a number of workers or auto"),
        (["--durations-from", "r.json"], "and neither is given"),
        (["-n", "2", "--durations-from", "nowhere.json"], "nowhere.json: no such file"),
        (["--shard", "1/2", "--durations-from", "nowhere.json"], "nowhere.json: no such file"),
    ],
)
def test_bad_parallel_options_are_bad_input(tmp_path: Path, option: list[str], says: str) -> None:
    reports = tmp_path / "reports"
    run = _cli("run", str(GATEWAY), *option, "--report-dir", str(reports))
    assert run.returncode == 2, run.stdout + run.stderr
    assert says in run.stderr
    assert says in _error(reports)
    assert "Traceback" not in run.stderr


def _target(tmp_path: Path, name: str, text: str) -> Path:
    file = tmp_path / f"{name}.yaml"
    file.write_text(text)
    return file


def test_a_target_attached_by_url_or_on_a_fixed_port_is_refused_for_two_workers(
    tmp_path: Path,
) -> None:
    require_module("xdist")
    reports = tmp_path / "reports"
    url = _target(tmp_path, "url", "name: running\nurl: http://127.0.0.1:9\n")
    run = _cli("run", str(GATEWAY), "--target", str(url), "-n", "2", "--report-dir", str(reports))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "attached by url (http://127.0.0.1:9)" in _error(reports)
    assert "run it with -n 1 or without -n" in run.stderr
    fixed = _target(tmp_path, "fixed", "name: fixed\ncommand: [python, gw.py]\nport: 8123\n")
    run = _cli(
        "run", str(GATEWAY), "--target", str(fixed), "-n", "auto", "--report-dir", str(reports)
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "fixed port 8123" in _error(reports)
    # The pytest route refuses it as a usage error.
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", str(GATEWAY), "-n", "2", "-p", "no:cacheprovider"),
            *(f"--streamproof-target={url}", f"--streamproof-report-dir={reports}"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    assert "attached by url" in run.stderr


def _verdicts(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per scenario id: each requirement (and expectation) with its outcome."""
    return {
        s["id"]: {v["requirement"]: v["outcome"] for v in s.get("verdicts", [])}
        | {"(outcome)": s["outcome"]}
        for s in report["scenarios"]
    }


def _run(reports: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    run = _cli(
        "run",
        str(GATEWAY),
        "-k",
        SUBSET,
        "--bug",
        "aggregate-as-delta",
        "--report-dir",
        str(reports),
        *extra,
        timeout=600,
    )
    report = json.loads((reports / "results.json").read_text())
    return run, report


def test_serial_parallel_and_sharded_runs_reach_the_same_verdicts(tmp_path: Path) -> None:
    """A mutant, so failures are compared too: per scenario and requirement, the same verdict
    serially, on two workers, and as two shards put together (the first on two workers)."""
    require_module("google.adk")
    require_module("xdist")
    serial_run, serial = _run(tmp_path / "serial")
    assert serial_run.returncode == 1, serial_run.stdout[-3000:]  # the mutant is caught
    expected = _verdicts(serial)
    assert len(expected) >= 7
    assert any(o == "fail" for v in expected.values() for o in v.values())

    # The serial report's durations balance the shards (the default: the last report). The
    # parallel run and the two shards (the first on two workers: shards and workers combine)
    # run at once.
    for index in (1, 2):
        reports = tmp_path / f"shard{index}"
        reports.mkdir()
        (reports / "results.json").write_text((tmp_path / "serial" / "results.json").read_text())
    with ThreadPoolExecutor(3) as pool:
        parallel_future = pool.submit(_run, tmp_path / "parallel", "-n", "2")
        shard_futures = {
            index: pool.submit(
                _run,
                tmp_path / f"shard{index}",
                "--shard",
                f"{index}/2",
                *(["-n", "2"] if index == 1 else []),
            )
            for index in (1, 2)
        }
        parallel_run, parallel = parallel_future.result()
        shards = {index: future.result() for index, future in shard_futures.items()}

    assert parallel_run.returncode == 1, parallel_run.stdout[-3000:]
    assert _verdicts(parallel) == expected
    # One report in collection order, as the serial run's, saying it ran on two workers.
    assert [s["id"] for s in parallel["scenarios"]] == [s["id"] for s in serial["scenarios"]]
    assert parallel["environment"]["workers"] == 2
    assert parallel["summary"]["verdicts"] == serial["summary"]["verdicts"]
    junit = ET.parse(tmp_path / "parallel" / "junit.xml").getroot()
    assert [c.get("name") for c in junit.iter("testcase")] == list(expected)
    assert "ran on 2 parallel worker(s)" in parallel_run.stdout
    assert (tmp_path / "parallel" / "report.html").is_file()

    merged: dict[str, dict[str, str]] = {}
    for index, (shard_run, shard) in shards.items():
        reports = tmp_path / f"shard{index}"
        assert shard_run.returncode in (0, 1), shard_run.stdout[-3000:]
        assert shard["summary"]["shard"] == f"{index}/2"
        info = shard["environment"]["shard"]
        assert info["balanced_by"] == "durations" and info["of"] == len(expected)
        assert info["durations_from"] == str(reports / "results.json")
        assert f"shard {index}/2: {info['scenarios']} of the {len(expected)}" in shard_run.stdout
        assert shard["environment"].get("workers") == (2 if index == 1 else None)
        part = _verdicts(shard)
        assert not set(part) & set(merged)  # disjoint
        merged |= part
    assert merged == expected  # and together the whole, with the same verdicts


def test_the_pytest_route_with_two_workers_writes_one_report(tmp_path: Path) -> None:
    require_module("google.adk")
    require_module("xdist")
    reports = tmp_path / "reports"
    scenarios = [GATEWAY / "plain_streamed_answer.yaml", GATEWAY / "multiline_answer.yaml"]
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", *map(str, scenarios), "-n", "2"),
            *("-p", "no:cacheprovider", f"--streamproof-report-dir={reports}"),
            f"--junitxml={reports / 'junit.xml'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((reports / "results.json").read_text())
    ids = ["gateway/plain-streamed-answer", "gateway/multiline-answer"]
    assert [s["id"] for s in report["scenarios"]] == ids
    assert report["summary"]["ok"] is True and report["summary"]["passed"] == 2
    assert report["environment"]["workers"] == 2
    assert "gateway" in report["environment"]["targets"]
    junit = ET.parse(reports / "junit.xml").getroot()
    assert [c.get("name") for c in junit.iter("testcase")] == ids
    # the run's own folder (runs/<time>/, latest) as the CLI lays it out, copies on top
    names = ["junit.xml", "latest", "report.html", "results.json", "runs"]
    assert sorted(p.name for p in reports.iterdir()) == names
    assert (reports / "latest" / "results.json").read_text() == (
        reports / "results.json"
    ).read_text()


def test_sigterm_to_a_parallel_run_ends_every_workers_target(tmp_path: Path) -> None:
    """CI cancels with SIGTERM to streamproof alone: each worker's gateway goes too."""
    require_module("google.adk")
    require_module("xdist")
    mark = f"streamproof-parallel-sigterm-{uuid.uuid4().hex}"
    target = _marked_target(
        tmp_path, "harness/streamproof/suites/gateway/reference-gateway.yaml", mark
    )
    reports = tmp_path / "reports"
    argv = [*_CLI, "run", str(GATEWAY), "--target", str(target), "-n", "2", "-q"]
    proc = subprocess.Popen(
        [*argv, "--report-dir", str(reports)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        # Both workers' gateways (the gateway and anything it started carry the mark).
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_gateway_groups(mark)) >= 2:
                break
            time.sleep(0.2)
        assert len(_gateway_groups(mark)) >= 2, proc.communicate()[0][-3000:]
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    assert _processes_with(mark) == [], f"a target outlived the run:\n{output[-3000:]}"
    assert proc.returncode == 143, output[-3000:]
    summary = json.loads((reports / "results.json").read_text())["summary"]
    assert summary["interrupted"] is True and summary["ok"] is False


def _gateway_groups(mark: str) -> set[int]:
    """The process groups of the processes carrying ``mark``: one per worker's target."""
    import os

    groups: set[int] = set()
    for pid in _processes_with(mark):
        try:
            groups.add(os.getpgid(pid))
        except OSError:
            continue
    return groups
