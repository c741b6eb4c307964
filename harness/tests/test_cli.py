"""The CLI's input handling: validate, schema, list, and bad input to run (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_validate_bundled(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SCENARIOS)]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_validate_reports_file_line_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\ntitle: t\nrequirements: [GW-AUTH]\nmodel: [{chunks: [a]}]\nrequest: 5\n")
    assert main(["validate", str(bad), str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:5: request: Input should be a valid dictionary or instance of ChatRequest" in err
    assert "missing.yaml: no such file or folder" in err


def test_schema_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "GatewayScenario"
    assert "model" in schema["required"]


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled suites are this repository's, however this harness was put on sys.path
    (the wheel test in test_packaging.py finds them the installed way)."""
    monkeypatch.setattr("harness.bundled.bundled_scenarios", lambda: SCENARIOS)
    return SCENARIOS


def test_list_shows_requirements_and_scenarios(
    bundled: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # from any folder
    assert main(["list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["GW-NO-TOOL-LEAK"]["level"] == "MUST"
    assert "gateway/one-tool-call-streamed" in rows["GW-NO-TOOL-LEAK"]["scenarios"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no/such/dir"], "no/such/dir: no such file or folder"),
        (["run", str(SCENARIOS), "--time-scale", "0"], "--time-scale must be a positive number"),
        (["run", str(SCENARIOS), "--bug", "no-such-bug"], "--bug no-such-bug: unknown"),
    ],
)
def test_run_rejects_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_run_rejects_bad_target_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "t.yaml"
    target.write_text("kind: gateway\ncommand: [x]\nurl: http://127.0.0.1:1\n")
    assert main(["run", str(SCENARIOS), "--target", str(target)]) == 2
    assert "exactly one of 'command' or 'url'" in capsys.readouterr().err


def test_no_path_means_the_bundled_suites_not_a_scenarios_folder_here(
    bundled: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.cli import _default_paths

    monkeypatch.chdir(tmp_path)
    assert _default_paths() == [str(bundled)]
    assert capsys.readouterr().err == ""
    (tmp_path / "scenarios").mkdir()
    assert _default_paths() == [str(bundled)]
    assert "not the scenarios/ folder here (name it to run it" in capsys.readouterr().err
    monkeypatch.chdir(bundled.parent)  # the repository: its scenarios/ folder is the bundled one
    assert _default_paths() == [str(bundled)]
    assert capsys.readouterr().err == ""


def test_without_bundled_suites_run_says_so_and_list_shows_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("harness.bundled.bundled_scenarios", lambda: None)
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "no PATH given and this streamproof has no bundled suites" in err
    report = json.loads((tmp_path / "reports" / "results.json").read_text())
    assert "no bundled suites" in report["summary"]["error"]
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert "scenarios: (none)" in out and "no bundled suites" in err
