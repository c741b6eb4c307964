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
    bad.write_text(
        "id: x\ntitle: t\nrequirements: [GW-AUTH]\nmodel: [{chunks: [a], times: 0}]\nrequest: 5\n"
    )
    assert main(["validate", str(bad), str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [
        f"{tmp_path / 'missing.yaml'}: no such file or folder",
        f"{bad}:4: model[0].times: times must be at least 1 (or 'forever')",
        f"{bad}:5: request: Input should be a valid dictionary or instance of ChatRequest",
    ]


def test_schema_covers_both_scenario_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "streamproof scenario"
    assert [b["$ref"] for b in schema["oneOf"]] == [
        "#/$defs/GatewayScenario",
        "#/$defs/A2AClientScenario",
    ]
    assert "model" in schema["$defs"]["GatewayScenario"]["required"]


def test_schema_target_covers_both_target_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--target"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "streamproof target file"
    assert [b["$ref"] for b in schema["oneOf"]] == [
        "#/$defs/GatewayTarget",
        "#/$defs/ClientTarget",
    ]


def test_list_shows_requirements_and_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
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
