"""End to end: explore finds a client mutant from a fault-free scenario, writes a single-fault
reproducer that loads and reruns red under ``streamproof run``, tries it first next time, and
finds nothing on the reference within a small budget."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.explore.search import (
    EXIT_BAD_INPUT,
    EXIT_FOUND,
    EXIT_NOTHING,
    Options,
    explore,
)
from harness.mutants import failed_requirements
from harness.suites.loading import load_scenarios

ROOT = Path(__file__).resolve().parents[3]
CLI = (sys.executable, "-m", "harness.cli")
HAPPY = ROOT / "scenarios" / "a2a_client" / "happy_path_1_0_wire.yaml"


def _explore(opts: Options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = explore(opts, err=err, out=out)
    return code, out.getvalue(), err.getvalue()


def test_finds_no_watchdog_and_writes_a_single_fault_reproducer(tmp_path: Path) -> None:
    opts = Options(
        scenario=str(HAPPY),
        bug="no-watchdog",
        seed=1,
        max_examples=60,
        time_budget=150.0,
        out=tmp_path,
    )
    code, out, err = _explore(opts)
    assert code == EXIT_FOUND, out + err
    assert "example(s) tried" in err and "left; best failure so far" in err  # progress
    [written] = sorted((tmp_path / "explore").glob("*.yaml"))
    requirement = written.stem.split("--")[-1]
    assert written.name == f"a2a_client-happy-path-1-0-wire--{requirement}.yaml"
    assert f"rerun: streamproof run {written} --bug no-watchdog" in out
    text = written.read_text(encoding="utf-8")
    assert "# Found by `streamproof explore`" in text and "seed: 1;" in text
    [loaded] = load_scenarios(written)
    scenario = loaded.scenario
    assert len(scenario.links.a2a) == 1  # a single fault
    assert scenario.requirements == (requirement,)

    # `streamproof run --bug` fails the same requirement.
    reports = tmp_path / "rerun"
    run = subprocess.run(
        [*CLI, "run", str(written), "--bug", "no-watchdog", "--report-dir", str(reports), "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    assert requirement in failed_requirements(report)

    # A second search tries the known failure first.
    code, out, err = _explore(opts)
    assert code == EXIT_FOUND
    assert "example 1 breaks" in err


def test_the_reference_breaks_nothing_within_a_small_budget(tmp_path: Path) -> None:
    opts = Options(scenario=str(HAPPY), seed=3, max_examples=4, time_budget=90.0, out=tmp_path)
    code, out, _err = _explore(opts)
    assert code == EXIT_NOTHING
    assert out.startswith("nothing broke:")
    assert not list((tmp_path / "explore").glob("*.yaml"))


def test_the_scenario_may_be_named_by_its_bundled_id(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.bundled
    from harness.explore.search import load_scenario

    # This tree's suites, whichever checkout the installed package points at.
    monkeypatch.setattr(harness.bundled, "bundled_scenarios", lambda: ROOT / "scenarios")

    scenario, had_faults = load_scenario("a2a_client/summary-survives-proxy-timeout")
    assert had_faults and scenario.space.links == ("a2a",)
    assert "links" not in scenario.data
    assert scenario.space.trigger_horizon == 79.0  # the last step at 78 s, plus a second


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no/such.yaml"], "no such scenario file"),
        ([str(HAPPY), "--bug", "no-such-bug"], "--bug no-such-bug: unknown"),
        ([str(HAPPY), "--time-budget", "soon"], "--time-budget soon"),
        ([str(HAPPY), "--max-examples", "0"], "--max-examples must be 1 or more"),
        ([str(ROOT / "scenarios" / "a2a_client")], "a folder"),
    ],
)
def test_bad_input_exits_2_naming_it(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["explore", *argv, "--out", str(tmp_path)]) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err


def test_a_file_of_several_scenarios_is_refused(tmp_path: Path) -> None:
    text = HAPPY.read_text(encoding="utf-8")
    two = tmp_path / "two.yaml"
    two.write_text(text + "\n---\n" + text.replace("happy-path-1-0-wire", "other"), "utf-8")
    code, _out, err = _explore(Options(scenario=str(two), out=tmp_path))
    assert code == EXIT_BAD_INPUT
    assert "holds 2 scenarios" in err and "name one of them by its id" in err
    from harness.explore.search import load_scenario

    scenario, _ = load_scenario(f"{two}::a2a_client/other")
    assert scenario.id == "a2a_client/other" and scenario.data["id"] == "a2a_client/other"
    code, _out, err = _explore(Options(scenario=f"{two}::nope", out=tmp_path))
    assert code == EXIT_BAD_INPUT and "no scenario 'nope'" in err


def _in_session(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # session id; zombies are gone
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_stops_the_search_and_leaves_no_process(tmp_path: Path) -> None:
    import os
    import signal
    import time

    out = str(tmp_path)
    proc = subprocess.Popen(
        [*CLI, "explore", str(HAPPY), "--bug", "no-watchdog", "--seed", "5", "--out", out],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(4.0)  # the environment has started and an example runs
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert "interrupted" in err
    deadline = time.monotonic() + 5
    while _in_session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _in_session(proc.pid) == []


def test_a_scenario_that_replays_a_fixture_keeps_it_from_anywhere(tmp_path: Path) -> None:
    """The reproducer lands in reports/explore/, not beside the scenario: its canned stream is
    named by the file it resolved to, so it loads wherever it is written."""
    from harness.explore.search import load_scenario
    from harness.suites.loading import load_scenarios

    story = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"
    scenario, _ = load_scenario(str(story))
    fixture = Path(scenario.data["task"]["fixture"])
    assert fixture.is_absolute() and fixture.is_file()
    moved = tmp_path / "elsewhere" / "story.yaml"
    moved.parent.mkdir()
    moved.write_text(yaml.safe_dump(scenario.data, sort_keys=False), encoding="utf-8")
    (loaded,) = load_scenarios(moved)
    assert loaded.scenario.id == "a2a_client/summary-survives-proxy-timeout"
