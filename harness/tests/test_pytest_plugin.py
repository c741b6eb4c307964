"""The plugin collects scenario files, and only those, with clear collection errors."""

from __future__ import annotations

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
    code = (
        "import sys, harness.pytest_plugin; "
        "heavy = [m for m in ('pydantic', 'aiohttp', 'yaml', 'google.adk', "
        "'harness.suites.gateway.runner') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
