"""The differential's comparison (differential.py), with the oracles' reports given (no library
runs here): agreement, disagreement on each side, what is and is not compared, and an explained
disagreement carrying its reason."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.oracles.builders import (
    STARTED,
    VALID,
    ev,
    finding,
    passing,
    report,
    stream,
    verdict,
)
from harness.tests.suites.gateway.profiles.wires import agui_worked_example
from streamproof.core.verdicts import Kind, Outcome
from streamproof.suites.gateway.oracles.differential import compare, differential
from streamproof.suites.gateway.oracles.mapping import CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.table import differential_table
from streamproof.suites.gateway.profiles.registry import check_gateway

TRUNCATED = stream(STARTED, ev("TEXT_MESSAGE_START", messageId="m"))


def test_both_accepting_agree() -> None:
    diff = compare(VALID, [report(VALIDATE), report(CLIENT)], passing())
    assert diff.holds and not diff.disagreements and diff.flagged == ()
    assert [c.verdict() for c in diff.oracles] == ["accepts", "accepts"]


def test_both_flagging_the_same_requirement_agree() -> None:
    ours = passing(**{"AGUI-RUN-STARTED-FIRST": Outcome.FAIL})
    diff = compare(VALID, [report(VALIDATE, finding("AGUI001"))], ours)
    (comparison,) = diff.oracles
    assert comparison.agreed == ("AGUI-RUN-STARTED-FIRST",)
    assert diff.holds and not diff.disagreements


def test_a_finding_on_a_requirement_that_holds_is_a_disagreement_without_a_reason() -> None:
    diff = compare(VALID, [report(VALIDATE, finding("AGUI001"))], passing())
    (d,) = diff.disagreements
    assert (d.side, d.requirement, d.ours, d.rule, d.indices) == (
        "oracle only",
        "AGUI-RUN-STARTED-FIRST",
        "pass",
        "AGUI001",
        (0,),
    )
    assert not d.explained and not diff.holds and diff.unexplained == (d,)


def test_a_requirement_we_fail_alone_is_a_disagreement_with_our_message() -> None:
    ours = passing(**{"AGUI-EVENTS-PAIRED": Outcome.FAIL})
    diff = compare(VALID, [report(VALIDATE)], ours)
    (d,) = diff.disagreements
    assert (d.side, d.requirement, d.ours, d.detail) == (
        "ours only",
        "AGUI-EVENTS-PAIRED",
        "fail",
        "why",
    )
    assert not diff.holds


def test_a_should_unmet_counts_as_flagged() -> None:
    ours = passing(**{"AGUI-RUN-IDS": Outcome.NON_STRICT})
    diff = compare(VALID, [report(VALIDATE, finding("AGUI008", kind="warning"))], ours)
    assert diff.flagged == ("AGUI-RUN-IDS",) and diff.holds


def test_findings_of_one_rule_in_a_row_are_one_disagreement() -> None:
    found = [finding("AGUI004", index=i) for i in (2, 3, 4)]
    diff = compare(VALID, [report(VALIDATE, *found)], passing())
    (d,) = diff.disagreements
    assert d.indices == (2, 3, 4) and d.requirement == "GW-STREAM-TERMINAL"


def test_a_fact_none_of_ours_judges_is_a_disagreement_with_no_requirement() -> None:
    diff = compare(VALID, [report(VALIDATE, finding("AGUI302"))], passing())
    (d,) = diff.disagreements
    assert (d.requirement, d.ours, d.explained) == (None, "not judged", False)


def test_other_failed_requirements_are_shown_but_not_compared() -> None:
    ours = [*passing(), verdict("GW-NO-DOUBLE-RENDER")]
    diff = compare(VALID, [report(VALIDATE)], ours)
    assert diff.holds and diff.beyond == ("GW-NO-DOUBLE-RENDER",)


def test_expectations_are_not_requirements() -> None:
    expectation = verdict("GW-FRAME-TYPES").model_copy(update={"kind": Kind.EXPECTATION})
    diff = compare(VALID, [report(VALIDATE)], [*passing(), expectation])
    assert diff.holds and diff.flagged == ()


def test_a_requirement_with_no_verdict_is_not_judged() -> None:
    diff = compare(VALID, [report(VALIDATE)], [])
    assert dict(diff.ours)["AGUI-RUN-IDS"] == "not judged" and diff.holds


def test_only_the_two_wires_are_compared() -> None:
    with pytest.raises(ValueError, match=r"s: the differential compares ag-ui and ai-sdk-ui"):
        compare(stream(profile="typed-frames"), [], [])
    obs = agui_worked_example().model_copy(update={"profile": "typed-frames"})
    with pytest.raises(ValueError, match=r"no oracle reads the 'typed-frames' wire"):
        differential(obs, [])


def test_a_stream_with_no_event_has_nothing_to_compare() -> None:
    obs = agui_worked_example().model_copy(update={"frames": ()})
    diff = differential(obs, check_gateway(obs))
    assert (diff.events, diff.oracles, diff.holds) == (0, (), True)
    assert "nothing to compare (no events)" in differential_table([diff])


def test_an_explained_disagreement_carries_its_reason() -> None:
    ours = passing(**{"GW-STREAM-TERMINAL": Outcome.FAIL})
    diff = compare(TRUNCATED, [report(VALIDATE, finding("AGUI003", None)), report(CLIENT)], ours)
    (d,) = diff.disagreements
    assert (d.oracle, d.known) == (CLIENT, "client has no end-of-stream check")
    assert d.reason is not None and "#2300" in d.reason and diff.holds
    assert diff.oracles[0].agreed == ("GW-STREAM-TERMINAL",)
