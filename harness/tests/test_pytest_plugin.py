"""The plugin collects scenario files, and only those, with clear collection errors; it writes
results.json to reports/ by default when scenarios ran, and lists skipped scenarios in the
default summary."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

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
    (pytester.path / "bad.scenario.yaml").write_text(SCENARIO.replace("request:", "requets:"))
    result = pytester.runpytest("-q")
    result.stdout.fnmatch_lines(["*bad.scenario.yaml:6: requets: unknown key*"])
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_plugin_import_is_cheap() -> None:
    code = (
        "import sys, harness.pytest_plugin; "
        "heavy = [m for m in ('pydantic', 'aiohttp', 'yaml', 'google.adk', "
        "'harness.suites.gateway.runner') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


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
    _skipping_project(pytester)
    result = pytester.runpytest("--streamproof-target", "gw.yaml")
    assert result.ret == 0
    report = json.loads((pytester.path / "reports" / "results.json").read_text())
    (record,) = report["scenarios"]
    assert record["id"] == "a2a_client/skipped-here" and record["outcome"] == "skipped"
    assert report["environment"]["pytest_args"][:2] == ["--streamproof-target", "gw.yaml"]


def test_the_report_dir_option_overrides_the_default(pytester: pytest.Pytester) -> None:
    _skipping_project(pytester)
    result = pytester.runpytest("--streamproof-target", "gw.yaml", "--streamproof-report-dir", "x")
    assert result.ret == 0
    assert (pytester.path / "x" / "results.json").is_file()
    assert not (pytester.path / "reports").exists()


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
