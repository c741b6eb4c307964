"""The plugin collects scenario files, and only those, with clear collection errors; a folder
of YAML it does not take for scenarios gets a hint; the pytest route works in this repository
and in a team's project; it writes results.json to reports/ by default when scenarios ran,
and lists skipped scenarios in the default summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tests.conftest import require_module

# End to end (real targets, whole runs): scheduled first under xdist (see conftest).
pytestmark = pytest.mark.slow

SCENARIO = """\
id: gateway/collected
title: collected
requirements: [GW-NO-TOOL-LEAK, GW-AUTH]
model:
  - chunks: [hi]
request: hello
"""


INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


def test_collects_scenarios_in_configured_dirs_only(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI + "streamproof_dirs = scenarios\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "a.yaml").write_text(
        SCENARIO + "---\n" + SCENARIO.replace("gateway/collected", "gateway/second")
    )
    pytester.mkdir("config")
    (pytester.path / "config" / "unrelated.yaml").write_text("not: a scenario\n")
    (pytester.path / "other.scenario.yaml").write_text(SCENARIO.replace("collected", "suffix"))
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "other.scenario.yaml::gateway/suffix",
            "scenarios/a.yaml::gateway/collected",
            "scenarios/a.yaml::gateway/second",
        ]
    )
    assert "unrelated" not in result.stdout.str()
    assert result.ret == 0


def test_markers_for_kind_and_levels(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    (pytester.path / "x.scenario.yaml").write_text(SCENARIO)
    result = pytester.runpytest("--collect-only", "-q", "-m", "gateway and must and should")
    result.stdout.fnmatch_lines(["x.scenario.yaml::gateway/collected"])
    result = pytester.runpytest("--collect-only", "-q", "-m", "a2a_client")
    assert "gateway/collected" not in result.stdout.str()


def test_bad_scenario_is_a_collection_error_with_file_line_field(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    (pytester.path / "bad.scenario.yaml").write_text(
        SCENARIO.replace("request:", "requets:").replace("[hi]", "[hi]\n    times: 0")
    )
    result = pytester.runpytest("-q")
    # Every problem of the file, not only the first.
    result.stdout.fnmatch_lines(
        [
            "*bad.scenario.yaml:6: model[[]0[]].times: times must be at least 1 (or 'forever')",
            "*bad.scenario.yaml:7: requets: unknown key*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_an_id_used_in_two_files_is_a_collection_error_naming_both(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI)
    (pytester.path / "a.scenario.yaml").write_text(SCENARIO)
    (pytester.path / "b.scenario.yaml").write_text("# again\n" + SCENARIO)
    # Whatever -k selects: the suite itself is inconsistent.
    result = pytester.runpytest("-q", "-k", "nothing-matches")
    result.stdout.fnmatch_lines(
        [
            f"{pytester.path / 'b.scenario.yaml'}:2: id: duplicate scenario id "
            f"'gateway/collected', first at {pytester.path / 'a.scenario.yaml'}:1"
        ]
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # Distinct ids collect as before.
    (pytester.path / "b.scenario.yaml").write_text(SCENARIO.replace("collected", "other"))
    assert pytester.runpytest("-q", "--collect-only").ret == pytest.ExitCode.OK


def test_plugin_import_is_cheap() -> None:
    """The plugin's module and every module it lists in ``pytest_plugins``."""
    code = (
        "import importlib, sys, streamproof.plugin as p; "
        "[importlib.import_module(m) for m in p.pytest_plugins]; "
        "heavy = [m for m in ('pydantic', 'aiohttp', 'yaml', 'google.adk', "
        "'streamproof.suites.gateway.runner') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


SLOW = """\
id: gateway/slow-enough-to-show-progress
title: two chunks 1.3 s apart
requirements: [GW-STREAM-TERMINAL]
model:
  - chunks: ["one ", "two"]
    chunk_delay: 1300ms
request: hello
"""


def _run_in_terminal(args: list[str], timeout: float = 120) -> tuple[int, bytes]:
    """Run ``streamproof run ARGS`` with a pseudo-terminal as its stdout and stderr."""
    import os
    import pty
    import select
    import time

    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamproof.cli", "run", *args],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the child closed its side
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    return proc.wait(10), out


def test_a_long_scenario_shows_its_progress_on_a_terminal_and_erases_it(tmp_path: Path) -> None:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW)
    args = [str(scenario), "--time-scale", "1", "--report-dir", str(tmp_path / "r")]
    code, out = _run_in_terminal(args)
    assert code == 0, out.decode(errors="replace")[-3000:]
    note = b" [1s of 30s scenario time]"
    assert note in out
    # Erased before the outcome: backspaces over the note, blanks, backspaces, then PASSED.
    erase = b"\b" * len(note) + b" " * len(note) + b"\b" * len(note)
    assert erase in out and out.index(erase) < out.index(b"PASSED")


def test_no_progress_when_the_output_is_not_a_terminal(tmp_path: Path) -> None:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW)
    args = [str(scenario), "--time-scale", "1", "--report-dir", str(tmp_path / "r")]
    run = subprocess.run(
        [sys.executable, "-m", "streamproof.cli", "run", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout.decode(errors="replace")[-3000:]
    assert b"scenario time]" not in run.stdout and b"\b" not in run.stdout


def test_a_folder_of_yaml_no_ini_lists_gets_a_hint(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.mkdir("checks")
    (pytester.path / "checks" / "a.yaml").write_text(SCENARIO)
    for args in (["checks"], ["checks/a.yaml"]):
        result = pytester.runpytest(*args)
        assert result.ret in (pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.USAGE_ERROR)
        result.stdout.fnmatch_lines(
            [
                f"streamproof: no scenario collected from {args[0]}: pytest takes a .yaml file "
                "for a streamproof scenario only when it is named *.scenario.yaml or lies under "
                "a folder listed in the streamproof_dirs ini option (this run read *tox.ini)*",
                '    streamproof_dirs = ["scenarios"]',
            ]
        )


def test_no_hint_when_scenarios_were_collected_or_no_yaml_was_given(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI + "streamproof_dirs = scenarios\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "a.yaml").write_text(SCENARIO)
    pytester.mkdir("empty")
    (pytester.path / "empty" / "notes.txt").write_text("no yaml here\n")
    for args in (["scenarios", "-k", "matches-nothing"], ["empty"]):
        result = pytester.runpytest(*args)
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
        assert "streamproof: no scenario collected" not in result.stdout.str()


# --- the pytest route as docs/how-to/pytest.md documents it --------------------------------------

ROOT = Path(__file__).resolve().parents[3]


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STREAMPROOF_SCENARIO_PATHS"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_in_this_repository_pytest_scenarios_gateway_collects_the_gateway_suite() -> None:
    from streamproof.suites.loading import load_scenarios

    folder = ROOT / "scenarios" / "gateway"
    count = sum(len(load_scenarios(f)) for f in folder.glob("*.yaml"))
    run = _pytest(ROOT, "scenarios/gateway", "--collect-only", "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert f"{count} tests collected" in run.stdout
    assert "scenarios/gateway/worked_example.yaml::gateway/one-tool-call-streamed" in run.stdout


def test_in_this_repository_a_bare_pytest_runs_only_the_harness_tests() -> None:
    run = _pytest(ROOT, "--collect-only", "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "harness/tests/protocol/test_sse.py::" in run.stdout
    assert "scenarios/" not in run.stdout


def _user_project(tmp_path: Path) -> Path:
    """A team's project: a pyproject.toml that lists its scenarios folder, two scenarios
    copied from the bundled suites, nothing installed beyond streamproof."""
    project = tmp_path / "team"
    (project / "scenarios").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "team"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\nstreamproof_dirs = ["scenarios"]\n'
    )
    for name in ("gateway/plain_streamed_answer.yaml", "a2a_client/direct_message_reply.yaml"):
        shutil.copy(ROOT / "scenarios" / name, project / "scenarios" / Path(name).name)
    return project


def test_in_a_team_project_a_bare_pytest_runs_its_scenarios(tmp_path: Path) -> None:
    require_module("google.adk")
    require_module("a2a")
    run = _pytest(_user_project(tmp_path), "-rs")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # the gateway scenario, and the client one on each binding the reference declares
    assert "3 passed" in run.stdout, run.stdout[-4000:]


def test_in_a_team_project_scenarios_of_another_kind_are_skipped_saying_why(
    tmp_path: Path,
) -> None:
    target = ROOT / "harness" / "streamproof" / "suites" / "gateway" / "reference-gateway.yaml"
    run = _pytest(
        _user_project(tmp_path), "-rs", "-m", "a2a_client", f"--streamproof-target={target}"
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "1 skipped" in run.stdout
    reason = (
        f"a2a-client scenarios need a target file of kind: a2a-client, and this run's target "
        f"{target} is of kind: gateway (run them with their own target file, or deselect them "
        "with -m 'not a2a_client')"
    )
    assert reason in " ".join(run.stdout.split()), run.stdout[-4000:]


CLIENT_SCENARIO = """\
id: a2a_client/skipped-here
title: skipped here
kind: a2a-client
requirements: [A2A-C-STATUS]
client: {deadline: 30s, idle: 10s, prompt: hi}
task:
  - {at: 0s, status: submitted}
  - {at: 1s, status: completed}
"""

GATEWAY_TARGET = "kind: gateway\nname: my-gateway\ncommand: [never-started]\n"


def _skipping_project(pytester: pytest.Pytester) -> None:
    """A project whose one scenario is skipped without starting anything: an A2A client
    scenario run with a gateway target."""
    pytester.makeini(INI)
    (pytester.path / "client.scenario.yaml").write_text(CLIENT_SCENARIO)
    (pytester.path / "gw.yaml").write_text(GATEWAY_TARGET)


def test_results_land_in_reports_by_default_when_scenarios_ran(pytester: pytest.Pytester) -> None:
    """As the CLI lays them out: this run's folder under reports/runs/, reports/latest
    pointing at it, copies on top (never an older run's report beside this one's)."""
    _skipping_project(pytester)
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "report.html").write_text("an older run's report")
    result = pytester.runpytest("--streamproof-target", "gw.yaml")
    assert result.ret == 0
    report = json.loads((pytester.path / "reports" / "results.json").read_text())
    (record,) = report["scenarios"]
    assert record["id"] == "a2a_client/skipped-here" and record["outcome"] == "skipped"
    assert report["environment"]["pytest_args"][:2] == ["--streamproof-target", "gw.yaml"]
    (run,) = (pytester.path / "reports" / "runs").iterdir()
    assert (pytester.path / "reports" / "latest").resolve() == run.resolve()
    for name in ("results.json", "report.html"):
        assert (run / name).read_bytes() == (pytester.path / "reports" / name).read_bytes()
    pytester.runpytest("--streamproof-target", "gw.yaml")
    assert len(list((pytester.path / "reports" / "runs").iterdir())) == 2
    assert (pytester.path / "reports" / "latest").resolve() != run.resolve()


def test_the_report_dir_option_overrides_the_default(pytester: pytest.Pytester) -> None:
    _skipping_project(pytester)
    result = pytester.runpytest("--streamproof-target", "gw.yaml", "--streamproof-report-dir", "x")
    assert result.ret == 0
    assert (pytester.path / "x" / "results.json").is_file()
    assert (pytester.path / "x" / "latest" / "results.json").is_file()
    assert not (pytester.path / "reports").exists()


def test_the_installed_gateway_suite_is_collected_by_name(pytester: pytest.Pytester) -> None:
    """``--streamproof-suite`` collects the bundled suite where it is installed: in place of
    testpaths when no path is named, beside the paths named otherwise; so does the ini key."""
    from streamproof.runtime.bundled import bundled_scenarios

    bundled = bundled_scenarios()
    assert bundled is not None
    expected = {s.stem for s in (bundled / "gateway").glob("*.yaml")}
    pytester.makeini(INI + "testpaths = nowhere\n")
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    result = pytester.runpytest("--streamproof-suite", "gateway", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    collected = [line for line in result.stdout.lines if "::gateway/" in line]
    assert {line.split("::")[0].rsplit("/", 1)[-1].removesuffix(".yaml") for line in collected} == (
        expected
    )
    assert "test_mine" not in result.stdout.str() and "a2a_client/" not in result.stdout.str()
    beside = pytester.runpytest("test_mine.py", "--streamproof-suite", "gateway", "--co", "-q")
    assert "test_mine.py::test_mine" in beside.stdout.str()
    assert len([line for line in beside.stdout.lines if "::gateway/" in line]) == len(collected)
    pytester.makeini(INI + "testpaths = nowhere\nstreamproof_suite = a2a_client\n")
    by_ini = pytester.runpytest("--collect-only", "-q")
    assert by_ini.ret == 0 and "::a2a_client/" in by_ini.stdout.str()
    # What Python itself may put beside the suites is not offered as one.
    (bundled / "__pycache__").mkdir(exist_ok=True)
    unknown = pytester.runpytest("--streamproof-suite", "gatewy", "--collect-only")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(
        [
            "*--streamproof-suite gatewy: no such bundled suite; choose one of a2a_client, "
            "browser_client, gateway*"
        ]
    )


def test_a_session_without_scenarios_writes_no_report(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    assert pytester.runpytest().ret == 0
    _skipping_project(pytester)
    # Scenarios collected but none selected: still nothing.
    assert pytester.runpytest("-k", "test_mine", "--streamproof-target", "gw.yaml").ret == 0
    assert pytester.runpytest("--collect-only", "-q").ret == 0
    assert not (pytester.path / "reports").exists()


def test_skip_reasons_show_in_the_default_summary(pytester: pytest.Pytester) -> None:
    _skipping_project(pytester)
    result = pytester.runpytest("--streamproof-target", "gw.yaml")
    result.stdout.fnmatch_lines(
        ["*= streamproof: skipped scenarios =*", "skipped (1): *", "  a2a_client/skipped-here"]
    )
    (reason,) = [line for line in result.outlines if line.startswith("skipped (1): ")]
    assert "a2a-client" in reason and "gw.yaml" in reason  # why, and which target
    # With -rs pytest lists the skips itself; the section is not repeated.
    result = pytester.runpytest("--streamproof-target", "gw.yaml", "-rs")
    assert "streamproof: skipped scenarios" not in result.stdout.str()
    result.stdout.fnmatch_lines(["SKIPPED*a2a-client*"])


def test_no_streamproof_section_without_scenarios(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_mine="import pytest\n\ndef test_mine():\n    pytest.skip('mine')\n")
    result = pytester.runpytest()
    assert "streamproof: skipped" not in result.stdout.str()
