"""``streamproof run --baseline`` and ``streamproof baseline write`` end to end, on one bundled
gateway scenario with a seeded defect: a failed scenario's JUnit ``message=`` names its first
broken rule; a baseline recorded from that run turns it into an expected failure (exit 0, an
xfail in JUnit); without the defect the entries are reported fixed (exit 0); another defect
still fails the gate (exit 1). Bad baselines and bad results files are bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module

# Slow (whole-suite runs); one xdist worker for the module, so its recorded run is made once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cli-baseline")]

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = str(ROOT / "scenarios" / "gateway" / "plain_streamed_answer.yaml")
SCENARIO_ID = "gateway/plain-streamed-answer"
BUG = "untyped-frames"  # breaks GW-FRAME-TYPES first, and three more rules and expect.frames


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _run(reports: Path, *args: str) -> tuple[int, str, dict[str, Any], ET.Element]:
    """``streamproof run`` on the one scenario: exit status, output, results.json, the JUnit
    test case."""
    run = _cli("run", SCENARIO, "--report-dir", str(reports), "-q", *args)
    output = run.stdout + run.stderr
    report = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    (case,) = ET.parse(reports / "junit.xml").getroot().iter("testcase")
    return run.returncode, output, report, case


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ET.Element, str]:
    """A run with the defect (no baseline), and the baseline ``baseline write`` made of it."""
    require_module("google.adk")
    folder = tmp_path_factory.mktemp("recorded")
    code, output, report, case = _run(folder / "reports", "--bug", BUG)
    assert code == 1, output
    assert not report["summary"]["ok"]
    baseline = folder / "baseline.yaml"
    written = _cli(
        "baseline", "write", str(folder / "reports" / "results.json"), "-o", str(baseline)
    )
    assert written.returncode == 0, written.stdout + written.stderr
    assert f"5 known failure(s) written to {baseline}" in written.stdout
    return baseline, case, output


def test_a_failed_scenarios_junit_message_is_its_first_broken_rule(
    recorded: tuple[Path, ET.Element, str],
) -> None:
    _, case, output = recorded
    (failure,) = case.iter("failure")
    message = failure.get("message", "")
    assert message.startswith("GW-FRAME-TYPES MUST: frame #0 (event:message id:1) "), message
    assert "\n" not in message and "Rule:" not in message
    body = (failure.text or "").splitlines()
    assert body[0] == message  # the body opens with the same line ...
    # ... and keeps the gateway's diagnosis and the evidence after it.
    assert body[1].startswith(f"scenario {SCENARIO_ID} on target reference-gateway[bug={BUG}]: ")
    assert "no frame names its type" in body[1]
    assert "frames:" in body
    # The per-requirement properties stay.
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["GW-FRAME-TYPES"] == "fail" and properties["GW-SSE-RESPONSE"] == "pass"
    assert f"\n{message}\n" in output  # the console's failure section opens with it too


def test_baseline_write_records_every_failure_sorted(
    recorded: tuple[Path, ET.Element, str],
) -> None:
    from streamproof.report.baseline import load_baseline

    baseline, _, _ = recorded
    text = baseline.read_text(encoding="utf-8")
    assert text.startswith("# streamproof baseline: known failures;")
    assert f"bug {BUG}): 5 failure(s)." in text
    entries = load_baseline(baseline).entries
    assert [e.requirement for e in entries] == [
        "GW-FRAME-TYPES",
        "GW-NO-DOUBLE-RENDER",
        "GW-PERSIST-MATCHES-MESSAGE",
        "GW-STREAM-TERMINAL",
        "expect.frames",
    ]
    assert {e.scenario for e in entries} == {SCENARIO_ID}
    assert all(e.reason.startswith("recorded from 20") for e in entries)


def test_the_known_failures_pass_the_gate_as_expected_failures(
    recorded: tuple[Path, ET.Element, str], tmp_path: Path
) -> None:
    baseline, _, _ = recorded
    code, output, report, case = _run(tmp_path, "--bug", BUG, "--baseline", str(baseline))
    assert code == 0, output
    summary = report["summary"]
    assert summary["ok"] is True and summary["failed"] == 1
    assert summary["baseline"] == {
        "file": str(baseline),
        "known": 5,
        "fixed": [],
        "not_run": [],
        "new_failures": 0,
    }
    (record,) = report["scenarios"]
    assert record["known_failure"] is True
    failed = [v for v in record["verdicts"] if v["outcome"] == "fail"]
    assert len(failed) == 5 and all(v["baseline"].startswith("recorded from") for v in failed)
    assert not case.findall("failure")
    (skipped,) = case.iter("skipped")
    assert skipped.get("type") == "pytest.xfail"
    assert skipped.get("message", "").startswith(
        "known failure (baseline): GW-FRAME-TYPES MUST: frame #0"
    )
    assert skipped.get("message", "").endswith("(and 4 more)")
    assert "XFAIL" in output or "1 xfailed" in output
    assert f"known failure (baseline): {SCENARIO_ID} GW-FRAME-TYPES MUST: recorded from" in output
    assert "5 known failure(s), 0 new, 0 fixed, 0 not run" in output


def test_without_the_defect_the_entries_are_fixed_and_the_run_green(
    recorded: tuple[Path, ET.Element, str], tmp_path: Path
) -> None:
    baseline, _, _ = recorded
    code, output, report, case = _run(tmp_path, "--baseline", str(baseline))
    assert code == 0, output
    assert report["summary"]["ok"] is True
    assert len(report["summary"]["baseline"]["fixed"]) == 5
    assert f"fixed, remove from the baseline: {SCENARIO_ID} GW-FRAME-TYPES" in output
    assert f"fixed, remove from the baseline: {SCENARIO_ID} expect.frames" in output
    assert not case.findall("failure") and not case.findall("skipped")


def test_another_defect_still_fails_the_gate(
    recorded: tuple[Path, ET.Element, str], tmp_path: Path
) -> None:
    baseline, _, _ = recorded
    code, output, report, case = _run(
        tmp_path, "--bug", "json-not-sse", "--baseline", str(baseline)
    )
    assert code == 1, output
    assert report["summary"]["ok"] is False
    assert report["summary"]["baseline"]["new_failures"] >= 1
    (failure,) = case.iter("failure")
    assert failure.get("message", "").startswith("GW-SSE-RESPONSE MUST: Content-Type ")
    # expect.frames fails with this defect too and is in the baseline: known, said so.
    assert "known failure(s) (baseline): expect.frames" in (failure.text or "")
    assert "rerun a failed scenario alone:" in output


def test_a_bad_baseline_is_bad_input_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "baseline.yaml"
    bad.write_text(
        "known_failures:\n  - scenario: gateway/x\n    requirement: GW-NOPE\n    reason: r\n",
        encoding="utf-8",
    )
    run = _cli("run", SCENARIO, "--baseline", str(bad), "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{bad}:3: known_failures[0].requirement: 'GW-NOPE' is neither" in run.stderr
    assert "Traceback" not in run.stderr
    report = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert report["summary"]["ok"] is False and "GW-NOPE" in report["summary"]["error"]
    # Through the pytest plugin it is a usage error, before any scenario runs.
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", SCENARIO, "-p", "no:cacheprovider",
         "-o", "streamproof_dirs=scenarios", f"--streamproof-baseline={bad}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert plugin.returncode == 4, plugin.stdout + plugin.stderr
    assert f"{bad}:3: known_failures[0].requirement:" in plugin.stderr


def test_baseline_write_refuses_what_is_not_a_saved_run(tmp_path: Path) -> None:
    missing = _cli("baseline", "write", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "none.json: no such file" in missing.stderr
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    bad = _cli("baseline", "write", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "bad.json: not JSON" in bad.stderr
    (tmp_path / "other.json").write_text('{"a": 1}', encoding="utf-8")
    other = _cli("baseline", "write", str(tmp_path / "other.json"))
    assert other.returncode == 2 and "not a streamproof results.json" in other.stderr
    # A run that stopped on bad input left a report with its error: nothing was judged.
    _cli("run", str(tmp_path / "nowhere"), "--report-dir", str(tmp_path / "r"))
    stopped = _cli("baseline", "write", str(tmp_path / "r" / "results.json"))
    assert stopped.returncode == 2
    assert "that run did not run any scenario: " in stopped.stderr
    assert "no such file or folder" in stopped.stderr
    # The default is reports/results.json where it is run.
    default = _cli("baseline", "write", cwd=tmp_path)
    assert default.returncode == 2 and "reports/results.json: no such file" in default.stderr
    for run in (missing, bad, other, stopped, default):
        assert "Traceback" not in run.stderr


def test_known_failures_beside_a_target_error_still_exit_as_a_target_error(
    tmp_path: Path,
) -> None:
    """Exit 3 means no MUST was judged broken; a known failure is not a new one."""
    from streamproof.cli.run_reports import only_target_errors

    def results(*verdicts: dict[str, str]) -> Path:
        path = tmp_path / "results.json"
        report = {
            "summary": {"target_errors": 1, "must_failures": len(verdicts)},
            "scenarios": [
                {"id": "gateway/a", "outcome": "failed", "verdicts": list(verdicts)},
                {"id": "gateway/b", "outcome": "failed", "target_error": True},
            ],
        }
        path.write_text(json.dumps(report), encoding="utf-8")
        return path

    known = {"requirement": "GW-AUTH", "outcome": "fail", "baseline": "ticket 1"}
    new = {"requirement": "GW-DISPOSE", "outcome": "fail"}
    assert only_target_errors(results()) is True
    assert only_target_errors(results(known)) is True
    assert only_target_errors(results(known, new)) is False
