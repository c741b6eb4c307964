"""A report is always the truth of the run that wrote it: bad input never leaves an earlier
run's results.json behind, and an unknown mutant is bad input on every route."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.tests.conftest import require_module
from harness.tests.run_pool import streamproof_command
from streamproof.targets.warm.pool import SHARED

# End to end (real targets, whole runs): scheduled first under xdist (see conftest).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
_CLI = [sys.executable, "-m", "streamproof.cli"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return streamproof_command(*args, timeout=120)


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
    from streamproof.suites.loading import load_scenarios

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


def _pytest_with_bug(scenario: Path, bug: str, *target: str) -> subprocess.CompletedProcess[str]:
    """pytest on one bundled scenario through the plugin, with ``--streamproof-bug``."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(scenario),
            *target,
            "--streamproof-bug",
            bug,
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


def test_an_unknown_mutant_is_bad_input_through_the_plugin_too(tmp_path: Path) -> None:
    run = _pytest_with_bug(
        ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml", "typo-bug"
    )
    assert run.returncode == 4, run.stdout + run.stderr  # pytest's usage error
    assert "--streamproof-bug typo-bug: unknown" in run.stderr


def test_a_target_that_lists_its_mutants_takes_only_those_through_the_plugin() -> None:
    run = _pytest_with_bug(
        ROOT / "scenarios" / "a2a_client" / "failed.yaml",
        "gap-loss",  # a mutant of the Python reference, not of the Java one
        "--streamproof-target",
        str(ROOT / "targets" / "java-client.yaml"),
    )
    assert run.returncode == 4, run.stdout + run.stderr
    assert (
        "--streamproof-bug gap-loss: unknown; choose one of no-watchdog, resend-on-drop, "
        "stream-end-as-completed"
    ) in run.stderr


def test_list_into_a_reader_that_left_exits_quietly() -> None:
    """`streamproof list | head`: the reader is gone before the listing is written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamproof.cli", "list"],
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


def _processes_with(mark: str, where: str = "environ") -> list[int]:
    """Pids whose environment (or ``/proc/PID/`` file ``where``) holds ``mark`` (the target and
    anything it started)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            held = (entry / where).read_bytes()
        except OSError:
            continue
        if mark.encode() in held:
            found.append(int(entry.name))
    return found


def _marked_target(tmp_path: Path, reference: str, mark: str, **changes: object) -> Path:
    """A copy of a bundled reference target whose processes carry ``mark`` in their
    environment, so the test can find every one of them (children included). Started the
    ordinary way: a process forked from a zygote keeps the zygote's ``/proc/PID/environ``
    (warm starts have their own test, :func:`test_sigterm_leaves_no_warm_target_and_no_zygote`)."""
    import yaml

    target = yaml.safe_load((ROOT / reference).read_text(encoding="utf-8"))
    target["env"] = {**target.get("env", {}), "TEST_MARK_OF_STREAMPROOF": mark}
    target.pop("warm_start", None)
    target.update(changes)
    target_file = tmp_path / "target.yaml"
    target_file.write_text(yaml.safe_dump(target), encoding="utf-8")
    return target_file


def _processes_named(mark: str) -> list[int]:
    """Pids whose command line holds ``mark``."""
    return _processes_with(mark, "cmdline")


def _interrupt(
    argv: list[str],
    mark: str,
    signum: int,
    cwd: Path = ROOT,
    *,
    env: dict[str, str] | None = None,
    find: Callable[[str], list[int]] = _processes_with,
    at_least: int = 1,
) -> tuple[int, str]:
    """Start ``argv``, wait until ``at_least`` processes ``find`` finds by ``mark`` run, send
    ``signum``; the exit status and the output. Asserts that nothing ``find`` finds is left
    afterwards."""
    import time

    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 90
        while len(find(mark)) < at_least and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert len(find(mark)) >= at_least, (
            f"the target never started:\n{proc.communicate()[0][-3000:]}"
        )
        time.sleep(1.0)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    assert find(mark) == [], f"the target outlived the run:\n{output[-3000:]}"
    return proc.returncode, output


def _interrupted_report(reports: Path, *, run_folder: bool = True) -> None:
    summary = json.loads((reports / "results.json").read_text())["summary"]
    assert summary["interrupted"] is True and summary["ok"] is False
    if run_folder:  # `streamproof run` keeps run folders; plain pytest writes where it is told
        # The interrupted run has its own folder too, and `latest` names it.
        assert (reports / "latest" / "results.json").read_text() == (
            reports / "results.json"
        ).read_text()


def test_sigterm_stops_the_run_with_143_a_report_and_no_process_left(tmp_path: Path) -> None:
    """CI runners cancel a job with SIGTERM: the gateway's process group must not outlive it."""
    require_module("google.adk")
    mark = f"streamproof-sigterm-{uuid.uuid4().hex}"
    target = _marked_target(
        tmp_path, "harness/streamproof/suites/gateway/reference-gateway.yaml", mark
    )
    reports = tmp_path / "reports"
    argv = [*_CLI, "run", str(ROOT / "scenarios" / "gateway"), "--target", str(target)]
    code, output = _interrupt([*argv, "--report-dir", str(reports), "-q"], mark, signal.SIGTERM)
    assert code == 143, output[-3000:]
    _interrupted_report(reports)


def test_sigterm_leaves_no_warm_target_and_no_zygote(tmp_path: Path) -> None:
    """The bundled reference gateway is forked from a zygote (warm_start): SIGTERM ends the
    gateway and the zygote with the run. Both carry the zygote's command line, which names its
    socket in the run's TMPDIR (the mark)."""
    require_module("google.adk")
    # A short TMPDIR of its own, so that the socket path (and the mark) stays in it.
    tmp = Path(tempfile.mkdtemp(prefix="sp-warm-", dir="/tmp"))
    mark = tmp.name
    reports = tmp_path / "reports"
    argv = [*_CLI, "run", str(ROOT / "scenarios" / "gateway"), "--report-dir", str(reports), "-q"]
    env = {k: v for k, v in os.environ.items() if k != SHARED}  # this run's own zygotes
    env["TMPDIR"] = str(tmp)
    # The zygote and at least one gateway forked from it.
    try:
        code, output = _interrupt(
            argv, mark, signal.SIGTERM, env=env, find=_processes_named, at_least=2
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert code == 143, output[-3000:]
    _interrupted_report(reports)


def test_sighup_kills_a_shell_script_target_and_every_child_it_started(tmp_path: Path) -> None:
    """A closed terminal: the script, the gateway it started in the background and a sleeper
    it left running all go."""
    require_module("google.adk")
    mark = f"streamproof-sighup-{uuid.uuid4().hex}"
    script = f'sleep 600 & "{sys.executable}" -m streamproof.suites.gateway.reference.server & wait'
    target = _marked_target(
        tmp_path,
        "harness/streamproof/suites/gateway/reference-gateway.yaml",
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
    target = _marked_target(
        tmp_path, "harness/streamproof/suites/a2a_client/reference-client.yaml", mark
    )
    reports = tmp_path / "reports"
    scenario = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"
    argv = [*_CLI, "run", str(scenario), "--target", str(target), "--report-dir", str(reports)]
    code, output = _interrupt(argv, mark, signal.SIGINT)
    assert code == 130, output[-3000:]
    _interrupted_report(reports)
    # the scenario the signal stopped is interrupted, not failed, and no rerun is offered
    report = json.loads((reports / "results.json").read_text())
    (scenario,) = report["scenarios"]
    assert scenario["outcome"] == "interrupted", scenario
    assert report["summary"]["failed"] == 0 and report["summary"]["interrupted_scenarios"] == 1
    assert "rerun a failed scenario alone" not in output
    assert "interrupted, not judged: a2a_client/summary-survives-proxy-timeout" in output


def test_sigterm_to_plain_pytest_with_the_plugin_cleans_up_too(tmp_path: Path) -> None:
    """The pytest route: no `streamproof run` around it, the plugin takes SIGTERM itself."""
    require_module("google.adk")
    import shutil

    mark = f"streamproof-pytest-sigterm-{uuid.uuid4().hex}"
    target = _marked_target(
        tmp_path, "harness/streamproof/suites/gateway/reference-gateway.yaml", mark
    )
    shutil.copytree(ROOT / "scenarios" / "gateway", tmp_path / "scenarios")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nstreamproof_dirs = scenarios\nasyncio_default_fixture_loop_scope = function\n"
    )
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "pytest", "scenarios", "-q", "-p", "no:cacheprovider"]
    argv += [f"--streamproof-target={target}", f"--streamproof-report-dir={reports}"]
    code, output = _interrupt(argv, mark, signal.SIGTERM, cwd=tmp_path)
    assert code == 143, output[-3000:]
    _interrupted_report(reports, run_folder=False)


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
            (ROOT / "harness/streamproof/suites/gateway/reference-gateway.yaml").read_text(
                encoding="utf-8"
            )
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
    assert report["target_file"] == str(target) and report["report_version"] == 2


def test_a_target_with_no_path_runs_the_bundled_suite_of_its_own_kind(tmp_path: Path) -> None:
    from streamproof.runtime.bundled import bundled_scenarios

    bundled = bundled_scenarios()
    assert bundled is not None
    target = tmp_path / "client.yaml"
    target.write_text("kind: a2a-client\ncommand: [my-client]\n")
    run = _cli("run", "--target", str(target), "-k", "zzz", "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 2, run.stdout + run.stderr
    # only the A2A client suite was collected (22 gateway scenarios are not skipped one by one)
    assert f"scenario(s) found under {bundled / 'a2a_client'} (" in run.stderr


def test_the_gateway_suite_report_is_small_and_a_failure_keeps_its_whole_observation(
    tmp_path: Path,
) -> None:
    """Issue 10: 1.5 MB of observations for passing scenarios. A passing scenario keeps its
    suite's summary; the scenario that breaks a rule keeps everything."""
    require_module("google.adk")
    gateway = str(ROOT / "scenarios" / "gateway")
    run = _cli("run", gateway, "--bug", "reused-frame-ids", "--report-dir", str(tmp_path), "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr  # a SHOULD: unmet, not failed
    size = (tmp_path / "results.json").stat().st_size
    report = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    # About 7.7 KB a scenario (200 KB for the 26 scenarios this bound was set for), so the
    # bound grows with the suite but a scenario that keeps a whole observation it should not
    # (tens of KB) still breaks it. Plus 2 KB a scenario for its timeline (issue 13): measured
    # 1.84 KB on average on this run (27 scenarios, 0.9 to 11.2 KB, the runaway tool loop the
    # largest), rounded up for the run-to-run spread of how frames fall into bursts. Plus 0.4 KB
    # a scenario for issue 23's verdicts (GW-PROXY-HONOURED on each, fault.fired on each fault).
    assert size < (7_700 + 2_000 + 400) * len(report["scenarios"]), size
    assert all("timeline" in s for s in report["scenarios"])  # every scenario that ran
    # report.html beside it: the bundled suites' page stays under 1 MB (these are the gateway
    # suite's scenarios, about half of all; 22 KB a scenario, timeline included), and is what
    # `streamproof report` draws again from the saved results.json, byte for byte.
    page = (tmp_path / "report.html").read_bytes()
    assert len(page) < 22_000 * len(report["scenarios"]) < 1_000_000, len(page)
    assert page.count(b'<svg class="timeline"') == len(report["scenarios"])
    again = _cli("report", str(tmp_path / "results.json"), "--html", str(tmp_path / "again.html"))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.html").read_bytes() == page
    unmet = [
        s
        for s in report["scenarios"]
        if any(v["outcome"] == "non-strict" for v in s.get("verdicts", []))
    ]
    assert unmet, "the mutant broke no SHOULD"
    for scenario in unmet:
        assert scenario["observation_detail"] == "full"
        assert scenario["observation"]["frames"] and scenario["observation"]["model_calls"]
        fresh = next(v for v in scenario["verdicts"] if v["requirement"] == "GW-FRAME-ID-FRESH")
        assert "observed" in fresh  # the evidence stays with the verdict
    held = [s for s in report["scenarios"] if s not in unmet and s["outcome"] == "passed"]
    assert held and all(s["observation_detail"] == "summary" for s in held)
    assert all("frame_sequence" in s["observation"] for s in held)


def test_full_observations_keeps_every_observation_whole(tmp_path: Path) -> None:
    require_module("google.adk")
    scenario = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    run = _cli("run", scenario, "--full-observations", "--report-dir", str(tmp_path), "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    (record,) = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["scenarios"]
    assert record["outcome"] == "passed" and record["observation_detail"] == "full"
    # The run's own folder holds both reports; the top holds copies.
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (tmp_path / "latest").resolve() == run_dir.resolve()
    for name in ("results.json", "junit.xml"):
        assert (run_dir / name).read_bytes() == (tmp_path / name).read_bytes()
    assert f"(this run: {run_dir})" in run.stdout
    assert [f["event"] for f in record["observation"]["frames"]][-1] == "done"
    assert any("observed" in v for v in record["verdicts"])


def test_the_report_names_every_version_the_targets_and_the_command_line(tmp_path: Path) -> None:
    require_module("google.adk")
    require_module("a2a")
    from importlib import metadata

    gateway = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    client = str(ROOT / "scenarios" / "a2a_client" / "failed.yaml")
    run = _cli("run", gateway, client, "--time-scale", "0.2", "--report-dir", str(tmp_path), "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    env = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["environment"]
    assert env["streamproof"] == metadata.version("streamproof")
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    for name in ("google-adk", "a2a-sdk", "aiohttp", "pydantic", "pytest"):
        assert env["packages"][name] == metadata.version(name), name
    assert env["os"]["system"] and env["os"]["platform"]
    targets = env["targets"]
    assert targets["gateway"]["name"] == "reference-gateway"
    assert targets["gateway"]["command"][0] == sys.executable
    assert targets["gateway"]["base_url"].startswith("http://127.0.0.1:")
    assert "multi_agent" in targets["gateway"]["capabilities"]
    assert targets["a2a-client"]["name"] == "reference-client"
    assert targets["a2a-client"]["capabilities"] == ["follow_up", "proxy_env", "push"]
    assert (env["time_scale"], env["bug"], env["strict"]) == (0.2, None, False)
    assert env["command_line"][1:4] == ["run", gateway, client]


def test_a_bad_input_report_names_the_versions_too(tmp_path: Path) -> None:
    run = _cli(
        "run", str(tmp_path / "nowhere"), "--bug", "no-dispose", "--report-dir", str(tmp_path)
    )
    assert run.returncode == 2
    env = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["environment"]
    assert env["packages"]["pydantic"] and env["bug"] == "no-dispose"
    assert env["targets"] == {} and env["command_line"][1] == "run"


def test_every_run_keeps_its_own_folder_and_old_ones_go_beyond_keep_runs(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "runs").mkdir(parents=True)
    (reports / "runs" / "notes.txt").write_text("mine")
    (reports / "mutants.json").write_text("{}")
    errors = []
    for i in range(3):
        missing = str(tmp_path / f"missing-{i}")
        run = _cli("run", missing, "--report-dir", str(reports), "--keep-runs", "2")
        assert run.returncode == 2, run.stdout + run.stderr
        errors.append(json.loads((reports / "results.json").read_text())["summary"]["error"])
    folders = sorted(p for p in (reports / "runs").iterdir() if p.is_dir())
    assert len(folders) == 2  # the oldest went
    kept = [json.loads((f / "results.json").read_text())["summary"]["error"] for f in folders]
    assert kept == errors[1:]
    assert (
        json.loads((reports / "latest" / "results.json").read_text())["summary"]["error"]
        == (errors[2])
    )
    assert (reports / "runs" / "notes.txt").read_text() == "mine"
    assert (reports / "mutants.json").is_file()


def test_a_negative_keep_runs_is_bad_input_and_removes_nothing(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    first = _cli("run", str(tmp_path / "missing"), "--report-dir", str(reports))
    assert first.returncode == 2
    run = _cli("run", str(ROOT / "scenarios"), "--report-dir", str(reports), "--keep-runs", "-1")
    assert run.returncode == 2
    assert (
        "--keep-runs must be 0"
        in json.loads((reports / "results.json").read_text())["summary"]["error"]
    )
    assert len(list((reports / "runs").iterdir())) == 2


def test_a_bad_input_run_writes_a_report_html_that_says_why(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    run = _cli("run", str(tmp_path / "nowhere"), "--report-dir", str(reports))
    assert run.returncode == 2
    (run_dir,) = (reports / "runs").iterdir()
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert (reports / "report.html").read_text(encoding="utf-8") == page  # the copy on top
    assert '<header class="verdict failed">' in page
    assert "nowhere: no such file or folder" in page
    assert f"{reports / 'report.html'}" in run.stdout


def test_streamproof_report_draws_a_run_again_byte_for_byte_and_shows_a_scenario(
    tmp_path: Path,
) -> None:
    require_module("a2a")
    scenario = str(ROOT / "scenarios" / "a2a_client" / "failed.yaml")
    run = _cli("run", scenario, "--time-scale", "0.2", "--report-dir", str(tmp_path), "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    results, page = tmp_path / "results.json", (tmp_path / "report.html").read_bytes()
    assert b'<section class="scenario passed" id="scn-a2a_client--failed">' in page
    # to another file, and in place (the page the run wrote is ours to replace)
    other = _cli("report", str(results), "--html", str(tmp_path / "other.html"))
    assert other.returncode == 0 and other.stderr == "", other.stderr
    assert (tmp_path / "other.html").read_bytes() == page
    in_place = _cli("report", str(results))
    assert in_place.returncode == 0, in_place.stderr
    assert f"report in {tmp_path / 'report.html'}" in in_place.stdout
    assert (tmp_path / "report.html").read_bytes() == page

    shown = _cli("report", str(results), "--show", "a2a_client/failed")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("a2a_client/failed: passed (")
    assert "[A2A-C-STATUS MUST] pass" in shown.stdout and "\ntimeline:\n" in shown.stdout


def test_streamproof_report_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    cases: list[tuple[list[str], str]] = [
        ([str(tmp_path / "missing.json")], "missing.json: no such file"),
        ([str(tmp_path / "notjson.json")], "notjson.json: not JSON"),
        ([str(tmp_path / "other.json")], "other.json: not a streamproof report"),
        ([str(results), "--show", "gateway/nope"], "no scenario 'gateway/nope'"),
        ([str(results), "--html", str(tmp_path / "mine.html")], "not replacing it"),
    ]
    (tmp_path / "notjson.json").write_text("{")
    (tmp_path / "other.json").write_text('{"summary": {"ok": true}}')
    (tmp_path / "mine.html").write_text("<p>mine</p>")
    bad = _cli("run", str(tmp_path / "nowhere"), "--report-dir", str(tmp_path / "r"))
    assert bad.returncode == 2
    results.write_bytes((tmp_path / "r" / "results.json").read_bytes())
    for args, message in cases:
        run = _cli("report", *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert run.stderr.count("\n") == 1 and message in run.stderr, run.stderr
        assert run.stderr.startswith("streamproof report: ") and "Traceback" not in run.stderr
    assert (tmp_path / "mine.html").read_text() == "<p>mine</p>"


def test_a_timeline_that_fails_to_draw_leaves_the_verdicts_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The picture is not a verdict: a builder that raises costs the scenario its timeline,
    never its outcome."""
    require_module("google.adk")
    from streamproof.cli import main
    from streamproof.suites.gateway import suite as gateway_suite

    def broken(observation: object, verdicts: object) -> object:
        raise KeyError("model")

    monkeypatch.setattr(gateway_suite, "timeline", broken)
    scenario = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
    assert main(["run", scenario, "--report-dir", str(tmp_path)]) == 0
    (record,) = json.loads((tmp_path / "results.json").read_text())["scenarios"]
    assert record["outcome"] == "passed" and "timeline" not in record
    assert record["timeline_error"] == "KeyError: 'model'"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "the timeline could not be drawn: KeyError: &#39;model&#39;" in page


# --- issue 23: bad input and a run that judged nothing ------------------------------------------


def test_a_bad_target_files_run_folder_holds_a_junit_xml_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    target.write_text("kind: gateway\nport: nope\n", encoding="utf-8")
    scenario = ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml"
    reports = tmp_path / "r"
    run = _cli("run", str(scenario), "--target", str(target), "--report-dir", str(reports))
    assert run.returncode == 2, run.stderr
    junit = (reports / "latest" / "junit.xml").read_text(encoding="utf-8")
    assert f'name="{target}"' in junit and '<error message="' in junit
    summary = json.loads((reports / "results.json").read_text(encoding="utf-8"))["summary"]
    assert summary["ok"] is False and summary["error"] in run.stderr
    assert str(target) in summary["error"]


def test_a_bad_scenario_files_report_carries_its_file_line_and_message(tmp_path: Path) -> None:
    """Beside a good file (so the session ran and wrote its report) and alone (nothing ran)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: gateway/bad\ntitle: bad\nrequirements: [GW-NOPE]\nmodel:\n  - chunks: [hi]\n"
        "request: hi\n",
        encoding="utf-8",
    )
    good = ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml"
    expected = f"{bad}:3: requirements: unknown requirement id(s): GW-NOPE"
    for name, paths in (("beside", [str(bad), str(good)]), ("alone", [str(bad)])):
        reports = tmp_path / name
        run = _cli("run", *paths, "--report-dir", str(reports), "-q")
        assert run.returncode == 2, run.stdout[-2000:] + run.stderr
        summary = json.loads((reports / "results.json").read_text(encoding="utf-8"))["summary"]
        assert summary["ok"] is False and summary["interrupted"] is False, summary
        assert expected in summary["error"] and expected in run.stderr, summary["error"]
        junit = (reports / "latest" / "junit.xml").read_text(encoding="utf-8")
        assert "<error" in junit and "GW-NOPE" in junit
        assert "pytest stopped with exit status" not in run.stderr


def test_a_run_that_judged_nothing_exits_2_with_the_skip_reasons(tmp_path: Path) -> None:
    target = ROOT / "harness" / "tests" / "independent" / "done-only-gateway.yaml"
    scenario = ROOT / "scenarios" / "gateway" / "multi_agent.yaml"  # needs multi_agent
    reports = tmp_path / "r"
    run = _cli("run", str(scenario), "--target", str(target), "--report-dir", str(reports), "-q")
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr
    assert "nothing was judged: every selected scenario (2) was skipped" in run.stderr
    assert "does not declare multi_agent" in run.stderr
    summary = json.loads((reports / "results.json").read_text(encoding="utf-8"))["summary"]
    assert summary["ok"] is False and summary["skipped"] == 2
    assert "streamproof: FAILED: nothing was judged" in run.stdout
