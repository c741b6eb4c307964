"""The differential of a run (harness/streamproof/bench/oracles.py), read from a results.json:
every ag-ui and
ai-sdk-ui stream compared, what cannot be compared said with its reason, an unexplained
disagreement failing, and bad input refused with a message. The suite runs themselves are the
tool's, not a test's (README of the oracles: the tables for the references and ag-ui-adk)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_oracle
from harness.tests.suites.gateway.oracles.captured import hand_written
from streamproof.bench.oracles import compare_results, main, render
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.oracles.ag_ui_validate import installed_version
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.node_script import require_installed
from streamproof.suites.gateway.profiles.registry import check_gateway


def _oracles() -> None:
    require_oracle(VALIDATE, installed_version)
    for package in (CLIENT, AI):
        require_oracle(package, lambda p=package: require_installed(p))


def record(protocol: str, name: str, *, honest: bool = True) -> dict[str, Any]:
    """A results.json record of a hand-written stream; ``honest=False``: every verdict passes."""
    obs = hand_written(protocol, name)
    verdicts = check_gateway(obs)
    if not honest:
        verdicts = [v.model_copy(update={"outcome": Outcome.PASS}) for v in verdicts]
    return {
        "id": f"oracles/{name}",
        "kind": "gateway",
        "outcome": "passed",
        "observation_detail": "full",
        "observation": obs.model_dump(mode="json"),
        "verdicts": [v.model_dump(mode="json", exclude_defaults=True) for v in verdicts],
    }


def results(*records: dict[str, Any], bug: str | None = None) -> dict[str, Any]:
    return {"environment": {"bug": bug}, "summary": {}, "scenarios": list(records)}


def test_what_cannot_be_compared_is_said_so() -> None:
    typed = record("ag-ui", "valid-text")
    typed["observation"]["profile"] = "typed-frames"
    summary = {**record("ag-ui", "valid-text"), "observation_detail": "summary"}
    compared = compare_results(
        results(
            {
                "id": "gateway/skipped",
                "kind": "gateway",
                "outcome": "skipped",
                "error": "target 't' does not declare auth",
            },
            {"id": "a2a_client/x", "kind": "a2a_client", "observation": {}},
            summary,
            typed,
        )
    )
    assert compared.diffs == () and compared.holds
    assert compared.skipped == (
        "gateway/skipped: skipped (target 't' does not declare auth)",
        "oracles/valid-text: only a summary was kept (run with --full-observations)",
        "oracles/valid-text: a typed-frames target (no oracle reads that wire)",
    )
    assert "No ag-ui or ai-sdk-ui stream to compare." in render(compared, "r.json")


def test_every_stream_of_a_run_is_compared_and_named_with_its_mutant() -> None:
    _oracles()
    run = results(
        record("ag-ui", "no-terminal-event"),
        record("ai-sdk", "valid-text"),
        bug="no-terminal-frame",
    )
    compared = compare_results(run)
    assert [d.stream for d in compared.diffs] == [
        "oracles/no-terminal-event (no-terminal-frame)",
        "oracles/valid-text (no-terminal-frame)",
    ]
    assert compared.holds
    text = render(compared, "r.json")
    assert "*client has no end-of-stream check*" in text
    assert text.endswith("1 known difference(s), 0 unexplained; the differential holds.")


def test_an_unexplained_disagreement_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _oracles()
    # our verdicts made to pass a stream both libraries rightly reject
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results(record("ag-ui", "first-not-run-started", honest=False))))
    assert main(["--results", str(path)]) == 1
    out = capsys.readouterr().out
    assert "**no listed reason**" in out and "does NOT hold" in out


def test_verdicts_are_judged_again_only_when_the_record_has_none() -> None:
    _oracles()
    bare = {**record("ag-ui", "first-not-run-started"), "verdicts": []}
    (diff,) = compare_results(results(bare)).diffs
    assert diff.flagged == ("AGUI-RUN-STARTED-FIRST",) and diff.holds


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("not json", "not a results.json"),
        ('{"scenarios": 3}', "no 'scenarios' list"),
        ('{"summary": {"error": "bad target"}, "scenarios": []}', "failed before any scenario"),
    ],
)
def test_a_bad_results_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    assert main(["--results", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err


def test_a_missing_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--target", "no/such/target.yaml"]) == 2
    assert "no/such/target.yaml: no such target file" in capsys.readouterr().err


def test_results_and_a_run_option_do_not_mix() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--results", "r.json", "--bug", "x"])
    assert exc.value.code == 2
