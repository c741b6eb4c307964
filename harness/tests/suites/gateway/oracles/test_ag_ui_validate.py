"""ag-ui-validate over the hand-written AG-UI streams: each valid one gets no finding, each
invalid one exactly the findings streams.AG_UI records (rule and event index), and the streams
it accepts although they are wrong are recorded there too."""

from __future__ import annotations

import pytest

from harness.tests.conftest import require_oracle
from harness.tests.suites.gateway.oracles.streams import (
    AG_UI,
    VALIDATE,
    found,
    oracle_report,
    payloads,
)
from streamproof.suites.gateway.oracles.ag_ui_validate import installed_version, validate_ag_ui

TRANSPORT_RULES = {"AGUI501", "AGUI505", "AGUI506", "AGUI507", "AGUI508"}


@pytest.fixture(autouse=True)
def _installed() -> None:
    require_oracle("ag-ui-validate", installed_version)


@pytest.mark.parametrize("name", list(AG_UI))
def test_findings_are_the_recorded_ones(name: str) -> None:
    report = oracle_report(VALIDATE, "ag-ui", name)
    assert found(report) == AG_UI[name][VALIDATE], report.findings


@pytest.mark.parametrize("name", [n for n in AG_UI if n.startswith("valid-")])
def test_a_valid_stream_has_at_most_the_no_timestamps_note(name: str) -> None:
    report = validate_ag_ui(payloads("ag-ui", name))
    assert report.findings == ()
    assert {n.rule for n in report.notes} <= {"AGUI902"}
    assert report.events == len(payloads("ag-ui", name))


def test_the_report_names_the_library_and_what_it_did_not_evaluate() -> None:
    report = validate_ag_ui(payloads("ag-ui", "valid-text"))
    assert (report.library, report.version) == ("ag-ui-validate", installed_version())
    assert report.version.startswith("0.4.")
    # Its transport rules are about bytes and timing, which payloads do not carry.
    assert TRANSPORT_RULES <= set(report.skipped)


def test_a_run_never_terminated_is_about_the_stream_not_an_event() -> None:
    (finding,) = validate_ag_ui(payloads("ag-ui", "no-terminal-event")).findings
    assert (finding.rule, finding.index) == ("AGUI003", None)
    assert "run-1" in finding.message


def test_no_events_is_no_finding() -> None:
    assert validate_ag_ui([]).findings == ()
