"""A report is always the truth of the run that wrote it: bad input never leaves an earlier
run's results.json behind, and an unknown mutant is bad input on every route."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from harness.tests.conftest import require_module

ROOT = Path(__file__).resolve().parents[2]
_CLI = [sys.executable, "-m", "harness.cli"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stale(report_dir: Path) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "results.json").write_text('{"summary": {"ok": true}, "stale": true}')
    (report_dir / "junit.xml").write_text("<testsuites/>")


def test_a_malformed_scenario_replaces_an_old_passing_report(tmp_path: Path) -> None:
    bad = tmp_path / "broken.scenario.yaml"
    bad.write_text("id: x/y\ntitle: t\nrequirements: [GW-SSE-RESPONSE]\nmodel: 3\nrequest: hi\n")
    reports = tmp_path / "reports"
    _stale(reports)
    run = _cli("run", str(bad), "--report-dir", str(reports), "-q")
    assert run.returncode == 2, run.stdout + run.stderr
    report = json.loads((reports / "results.json").read_text())
    assert report["summary"]["ok"] is False and "stale" not in report
    assert (
        not (reports / "junit.xml").exists()
        or "<testsuites/>" not in (reports / "junit.xml").read_text()
    )


def test_a_missing_path_and_a_selection_of_nothing_each_say_so_in_the_report(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "reports"
    _stale(reports)
    run = _cli("run", str(tmp_path / "nowhere"), "--report-dir", str(reports))
    assert run.returncode == 2
    assert (
        "no such file or folder"
        in json.loads((reports / "results.json").read_text())["summary"]["error"]
    )
    _stale(reports)
    from harness.suites.loading import load_scenarios

    folder = ROOT / "scenarios" / "gateway"
    found = sum(len(load_scenarios(f)) for f in folder.glob("*.yaml"))
    run = _cli("run", str(folder), "-k", "zzz-matches-nothing", "--report-dir", str(reports))
    assert run.returncode == 2, run.stdout + run.stderr
    error = json.loads((reports / "results.json").read_text())["summary"]["error"]
    # It says what it left out, not that there was nothing there.
    assert (
        f"-k 'zzz-matches-nothing' selected none of the {found} scenario(s) found under "
        f"{folder} ({found} deselected)"
    ) in error


def test_an_unknown_mutant_is_bad_input_through_the_plugin_too(tmp_path: Path) -> None:
    scenarios = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            scenarios,
            "--streamproof-bug",
            "typo-bug",
            "-p",
            "no:cacheprovider",
            "-o",
            "streamproof_dirs=scenarios",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 4, run.stdout + run.stderr  # pytest's usage error
    assert "--streamproof-bug typo-bug: unknown" in run.stderr


def test_list_into_a_reader_that_left_exits_quietly() -> None:
    """`streamproof list | head`: the reader is gone before the listing is written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "list"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the interpreter has even started: every write hits EPIPE
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


def test_a_clean_run_in_this_repository_prints_no_warning(tmp_path: Path) -> None:
    require_module("google.adk")
    scenarios = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    run = _cli("run", scenarios, "--report-dir", str(tmp_path), "-q")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr


def _processes_with(mark: str) -> list[int]:
    """Pids whose environment holds ``mark`` (the target and anything it started)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if mark.encode() in environ:
            found.append(int(entry.name))
    return found


def _marked_target(tmp_path: Path, reference: str, mark: str, **changes: object) -> Path:
    """A copy of a bundled reference target whose processes carry ``mark`` in their
    environment, so the test can find every one of them (children included)."""
    import yaml

    target = yaml.safe_load((ROOT / reference).read_text(encoding="utf-8"))
    target["env"] = {**target.get("env", {}), "TEST_MARK_OF_STREAMPROOF": mark}
    target.update(changes)
    target_file = tmp_path / "target.yaml"
    target_file.write_text(yaml.safe_dump(target), encoding="utf-8")
    return target_file


def _interrupt(argv: list[str], mark: str, signum: int, cwd: Path = ROOT) -> tuple[int, str]:
    """Start ``argv``, wait until a process carrying ``mark`` runs, send ``signum``; the exit
    status and the output. Asserts that nothing carrying ``mark`` is left afterwards."""
    import time

    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 90
        while not _processes_with(mark) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _processes_with(mark), f"the target never started:\n{proc.communicate()[0][-3000:]}"
        time.sleep(1.0)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    assert _processes_with(mark) == [], f"the target outlived the run:\n{output[-3000:]}"
    return proc.returncode, output


def _interrupted_report(reports: Path) -> None:
    summary = json.loads((reports / "results.json").read_text())["summary"]
    assert summary["interrupted"] is True and summary["ok"] is False


def test_sigterm_stops_the_run_with_143_a_report_and_no_process_left(tmp_path: Path) -> None:
    """CI runners cancel a job with SIGTERM: the gateway's process group must not outlive it."""
    require_module("google.adk")
    mark = f"streamproof-sigterm-{uuid.uuid4().hex}"
    target = _marked_target(tmp_path, "harness/suites/gateway/reference-gateway.yaml", mark)
    reports = tmp_path / "reports"
    argv = [*_CLI, "run", str(ROOT / "scenarios" / "gateway"), "--target", str(target)]
    code, output = _interrupt([*argv, "--report-dir", str(reports), "-q"], mark, signal.SIGTERM)
    assert code == 143, output[-3000:]
    _interrupted_report(reports)


def test_sighup_kills_a_shell_script_target_and_every_child_it_started(tmp_path: Path) -> None:
    """A closed terminal: the script, the gateway it started in the background and a sleeper
    it left running all go."""
    require_module("google.adk")
    mark = f"streamproof-sighup-{uuid.uuid4().hex}"
    script = f'sleep 600 & "{sys.executable}" -m harness.suites.gateway.reference.server & wait'
    target = _marked_target(
        tmp_path,
        "harness/suites/gateway/reference-gateway.yaml",
        mark,
        command=["sh", "-c", script],
    )
    reports = tmp_path / "reports"
    argv = [*_CLI, "run", str(ROOT / "scenarios" / "gateway"), "--target", str(target)]
    code, output = _interrupt([*argv, "--report-dir", str(reports), "-q"], mark, signal.SIGHUP)
    assert code == 129, output[-3000:]
    _interrupted_report(reports)


def test_ctrl_c_during_an_a2a_client_turn_exits_130_and_leaves_no_client(tmp_path: Path) -> None:
    require_module("a2a")
    mark = f"streamproof-sigint-{uuid.uuid4().hex}"
    target = _marked_target(tmp_path, "harness/suites/a2a_client/reference-client.yaml", mark)
    reports = tmp_path / "reports"
    scenario = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"
    argv = [*_CLI, "run", str(scenario), "--target", str(target), "--report-dir", str(reports)]
    code, output = _interrupt(argv, mark, signal.SIGINT)
    assert code == 130, output[-3000:]
    _interrupted_report(reports)


def test_sigterm_to_plain_pytest_with_the_plugin_cleans_up_too(tmp_path: Path) -> None:
    """The pytest route: no `streamproof run` around it, the plugin takes SIGTERM itself."""
    require_module("google.adk")
    import shutil

    mark = f"streamproof-pytest-sigterm-{uuid.uuid4().hex}"
    target = _marked_target(tmp_path, "harness/suites/gateway/reference-gateway.yaml", mark)
    shutil.copytree(ROOT / "scenarios" / "gateway", tmp_path / "scenarios")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nstreamproof_dirs = scenarios\nasyncio_default_fixture_loop_scope = function\n"
    )
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "pytest", "scenarios", "-q", "-p", "no:cacheprovider"]
    argv += [f"--streamproof-target={target}", f"--streamproof-report-dir={reports}"]
    code, output = _interrupt(argv, mark, signal.SIGTERM, cwd=tmp_path)
    assert code == 143, output[-3000:]
    _interrupted_report(reports)


def test_a_fixed_port_already_taken_is_a_target_error_not_a_run_against_the_squatter(
    tmp_path: Path,
) -> None:
    import socket

    import yaml

    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        target = yaml.safe_load(
            (ROOT / "harness/suites/gateway/reference-gateway.yaml").read_text(encoding="utf-8")
        )
        target["port"] = port
        target_file = tmp_path / "target.yaml"
        target_file.write_text(yaml.safe_dump(target), encoding="utf-8")
        scenarios = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
        run = _cli("run", scenarios, "--target", str(target_file), "--report-dir", str(tmp_path))
    assert run.returncode == 3, run.stdout + run.stderr  # the target could not be started
    assert f"port {port} (the target file's 'port') is already in use" in run.stdout
    assert f"on 127.0.0.1 (pid {os.getpid()})" in run.stdout  # who holds it, when visible
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["summary"]["ok"] is False
    assert not any(v for s in report["scenarios"] for v in s.get("verdicts", []))


def test_a_client_command_that_does_not_exist_exits_3(tmp_path: Path) -> None:
    target = tmp_path / "client.yaml"
    target.write_text('kind: a2a-client\nname: nope\ncommand: ["/nonexistent/client"]\n')
    scenario = str(ROOT / "scenarios" / "a2a_client" / "failed.yaml")
    run = _cli("run", scenario, "--target", str(target), "--report-dir", str(tmp_path))
    assert run.returncode == 3, run.stdout + run.stderr
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    assert summary["target_errors"] == 1 and summary["must_failures"] == 0


def test_a_bad_target_file_writes_a_report_that_says_so(tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    target.write_text("kind: gateway\nname: g\n")  # neither command nor url
    reports = tmp_path / "reports"
    _stale(reports)
    scenario = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    run = _cli("run", scenario, "--target", str(target), "--report-dir", str(reports))
    assert run.returncode == 2, run.stdout + run.stderr
    report = json.loads((reports / "results.json").read_text())
    assert report["summary"]["ok"] is False and "command" in report["summary"]["error"]
    assert report["target_file"] == str(target) and report["report_version"] == 1


def test_a_target_with_no_path_runs_the_bundled_suite_of_its_own_kind(tmp_path: Path) -> None:
    from harness.bundled import bundled_scenarios

    bundled = bundled_scenarios()
    assert bundled is not None
    target = tmp_path / "client.yaml"
    target.write_text("kind: a2a-client\ncommand: [my-client]\n")
    run = _cli("run", "--target", str(target), "-k", "zzz", "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 2, run.stdout + run.stderr
    # only the A2A client suite was collected (22 gateway scenarios are not skipped one by one)
    assert f"scenario(s) found under {bundled / 'a2a_client'} (" in run.stderr
