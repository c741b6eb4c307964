"""The differential's comparison, with the oracles' reports given (no library runs here): the
mapping table, agreement and disagreement on each side, every known difference explaining its
own case and nothing else, and a disagreement no row explains failing the differential."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.requirements import REGISTRY
from harness.suites.gateway import requirements as _registered  # noqa: F401 (registers the ids)
from harness.suites.gateway.oracles.differences import (
    ANY,
    KNOWN_DIFFERENCES,
    Side,
    explain,
)
from harness.suites.gateway.oracles.differential import compare, differential
from harness.suites.gateway.oracles.finding import Finding, OracleReport
from harness.suites.gateway.oracles.mapping import (
    AI,
    CLIENT,
    COMPARED,
    ORACLES,
    READINGS,
    VALIDATE,
    requirement_of,
)
from harness.suites.gateway.oracles.stream import Stream, stream_of
from harness.suites.gateway.oracles.table import differential_table
from harness.suites.gateway.profiles.registry import check_gateway
from harness.tests.suites.gateway.profiles.wires import THREAD, agui_worked_example
from harness.verdicts import Kind, Level, Outcome, Verdict


def ev(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def stream(*payloads: str, profile: str = "ag-ui", **kw: Any) -> Stream:
    return Stream(name="s", profile=profile, payloads=payloads, **kw)


def finding(rule: str, index: int | None = 0, kind: str = "error", message: str = "") -> Finding:
    return Finding(rule=rule, kind=kind, message=message, index=index)


def report(library: str, *findings: Finding, events: int = 3) -> OracleReport:
    return OracleReport(library=library, version="0", events=events, findings=findings)


def verdict(requirement: str, outcome: Outcome = Outcome.FAIL) -> Verdict:
    return Verdict(requirement=requirement, level=Level.MUST, outcome=outcome, message="why")


def passing(profile: str = "ag-ui", **outcomes: Outcome) -> list[Verdict]:
    return [verdict(r, outcomes.get(r, Outcome.PASS)) for r in COMPARED[profile]]


STARTED = ev("RUN_STARTED", threadId="t", runId="r")
FINISHED = ev("RUN_FINISHED", threadId="t", runId="r")
VALID = stream(STARTED, FINISHED)


# --- the tables --------------------------------------------------------------------------------


def test_every_row_maps_to_a_compared_requirement_of_its_oracles_profile() -> None:
    profile_of = {o: p for p, oracles in ORACLES.items() for o in oracles}
    known = set(REGISTRY)
    for row in READINGS:
        assert row.requirement in COMPARED[profile_of[row.oracle]], row
    for k in KNOWN_DIFFERENCES:
        assert k.oracle in profile_of, k.name
        assert k.requirement in (None, ANY) or k.requirement in COMPARED[profile_of[k.oracle]]
    assert {r for rs in COMPARED.values() for r in rs} <= known


def test_names_of_known_differences_are_unique() -> None:
    names = [k.name for k in KNOWN_DIFFERENCES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("oracle", "found", "requirement"),
    [
        (VALIDATE, finding("AGUI001"), "AGUI-RUN-STARTED-FIRST"),
        (VALIDATE, finding("AGUI103", index=4), "AGUI-CLOSED-AT-FINISH"),
        (VALIDATE, finding("AGUI103", index=None), "GW-STREAM-TERMINAL"),
        (VALIDATE, finding("AGUI105"), None),
        (
            CLIENT,
            finding("AGUIError", message="First event must be 'RUN_STARTED'"),
            "AGUI-RUN-STARTED-FIRST",
        ),
        (
            CLIENT,
            finding(
                "AGUIError",
                message="Cannot send 'TOOL_CALL_START' event: A tool call with ID 'c' is already "
                "in progress. Complete it with 'TOOL_CALL_END' first.",
            ),
            "AGUI-NO-REOPEN",
        ),
        (
            CLIENT,
            finding(
                "AGUIError",
                message="Cannot send 'TEXT_MESSAGE_END' event: No active text message found "
                "with ID 'm'. A 'TEXT_MESSAGE_START' event must be sent first.",
            ),
            "AGUI-EVENTS-PAIRED",
        ),
        (
            CLIENT,
            finding(
                "AGUIError",
                message="Cannot send 'RUN_FINISHED' while tool calls are still active: c",
            ),
            "AGUI-CLOSED-AT-FINISH",
        ),
        (
            CLIENT,
            finding(
                "AGUIError",
                message="Cannot send event type 'TEXT_MESSAGE_START': The run has already "
                "finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.",
            ),
            "GW-STREAM-TERMINAL",
        ),
        (CLIENT, finding("AGUIError", message="Cannot send 'RUN_STARTED' while a run is"), None),
        (
            CLIENT,
            finding("AGUIError", message="Step \"s\" is already active for 'STEP_STARTED'"),
            "AGUI-NO-REOPEN",
        ),
        (
            CLIENT,
            finding(
                "AGUIError",
                message="Cannot send 'STEP_FINISHED' for step \"s\" that was not started",
            ),
            "AGUI-EVENTS-PAIRED",
        ),
        (CLIENT, finding("enforce", kind="warning", message="[ag-ui][enforce] Removed"), None),
        (AI, finding("AI_TypeValidationError", kind="schema"), "GW-FRAME-TYPES"),
        (
            AI,
            finding(
                "AI_UIMessageStreamError",
                kind="stream",
                message='Received reasoning-end for missing reasoning part with ID "r".',
            ),
            "AISDK-PART-STARTED",
        ),
        (
            AI,
            finding(
                "AI_UIMessageStreamError",
                kind="stream",
                message='No tool invocation found for tool call ID "c".',
            ),
            "GW-FRAME-SEQUENCE",
        ),
    ],
)
def test_a_finding_reads_as_the_requirement_of_its_fact(
    oracle: str, found: Finding, requirement: str | None
) -> None:
    assert requirement_of(oracle, found) == requirement


# --- agreement and disagreement ----------------------------------------------------------------


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


def test_a_stream_is_read_from_its_observation() -> None:
    obs = agui_worked_example()
    read = stream_of(obs)
    assert (read.name, read.profile, read.end) == (obs.scenario, "ag-ui", "clean")
    assert read.payloads == tuple(f.data for f in obs.frames)
    assert read.request_thread == THREAD and read.types()[0] == "RUN_STARTED"
    assert read.value(0, "runId") == "run-1" and read.value(99, "runId") is None
    ui = stream('{"type":"start"}', "[DONE]", "not json", profile="ai-sdk-ui")
    assert ui.types() == ("start", "[DONE]", None)


# --- the known differences, each on its own case -----------------------------------------------

TRUNCATED = stream(STARTED, ev("TEXT_MESSAGE_START", messageId="m"))
REUSED = stream(
    STARTED,
    ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
    ev("TOOL_CALL_END", toolCallId="c"),
    ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
    ev("TOOL_CALL_ARGS", toolCallId="c", delta="{}"),
    ev("TOOL_CALL_END", toolCallId="c"),
    FINISHED,
)
STEP_TWICE = stream(
    STARTED,
    ev("STEP_STARTED", stepName="s"),
    ev("STEP_STARTED", stepName="s"),
    ev("STEP_FINISHED", stepName="s"),
    FINISHED,
)
UI_TRUNCATED = stream('{"type":"start"}', '{"type":"text-start","id":"t"}', profile="ai-sdk-ui")
UI_DONE = stream('{"type":"start"}', '{"type":"finish"}', profile="ai-sdk-ui")

Case = tuple[Stream, OracleReport, Side, str | None, Finding | None]

CASES: dict[str, Case] = {
    "empty delta": (VALID, report(VALIDATE), "oracle only", None, finding("AGUI105")),
    "id reused after its end": (
        REUSED,
        report(VALIDATE),
        "oracle only",
        "AGUI-NO-REOPEN",
        finding("AGUI205", index=3),
    ),
    "validator lost a reused id": (
        REUSED,
        report(VALIDATE),
        "oracle only",
        "AGUI-EVENTS-PAIRED",
        finding("AGUI201", index=4),
    ),
    "browser left": (
        stream(STARTED, end="client-closed"),
        report(VALIDATE),
        "oracle only",
        "GW-STREAM-TERMINAL",
        finding("AGUI003", index=None),
    ),
    "validator counts a step started twice": (
        STEP_TWICE,
        report(VALIDATE),
        "oracle only",
        "AGUI-CLOSED-AT-FINISH",
        finding("AGUI007", index=5),
    ),
    "validator lets a step start twice": (
        STEP_TWICE,
        report(VALIDATE),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "client has no end-of-stream check": (
        TRUNCATED,
        report(CLIENT),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "client takes a result for an unknown call": (
        stream(STARTED, ev("TOOL_CALL_RESULT", toolCallId="c", messageId="t", content="x")),
        report(CLIENT),
        "ours only",
        "GW-FRAME-SEQUENCE",
        None,
    ),
    "client compares no run ids": (VALID, report(CLIENT), "ours only", "AGUI-RUN-IDS", None),
    "validator not given the request": (
        stream(STARTED, FINISHED, request_thread="other"),
        report(VALIDATE),
        "ours only",
        "AGUI-RUN-IDS",
        None,
    ),
    "client strips an unknown key": (
        VALID,
        report(CLIENT),
        "oracle only",
        None,
        finding(
            "enforce", kind="warning", message="[ag-ui][enforce] Removed unrecognised material"
        ),
    ),
    "client stops at its first error": (
        VALID,
        report(CLIENT, finding("AGUIError", index=0)),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "ai stops at its first error": (
        UI_DONE,
        report(AI, finding("AI_TypeValidationError", index=0, kind="schema")),
        "ours only",
        "AISDK-PART-ENDED",
        None,
    ),
    "ai requires no [DONE]": (UI_DONE, report(AI), "ours only", "AISDK-DONE", None),
    "ai checks nothing at finish": (UI_DONE, report(AI), "ours only", "AISDK-PART-ENDED", None),
    "ai is not given the headers": (
        UI_DONE,
        report(AI),
        "ours only",
        "AISDK-STREAM-HEADER",
        None,
    ),
    "ai has no end-of-stream check": (
        UI_TRUNCATED,
        report(AI),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
}


def test_every_known_difference_has_its_case() -> None:
    assert set(CASES) == {k.name for k in KNOWN_DIFFERENCES}


@pytest.mark.parametrize("name", list(CASES))
def test_a_known_difference_explains_its_case(name: str) -> None:
    known = explain(*CASES[name])
    assert known is not None and known.name == name


NOT_EXPLAINED: dict[str, Case] = {
    # the client does reject a stream that ends, in order, with a RUN_FINISHED it refused
    "a terminated stream the client accepts": (
        VALID,
        report(CLIENT),
        "ours only",
        "GW-STREAM-TERMINAL",
        None,
    ),
    "an id started twice while open": (
        stream(
            STARTED,
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
        ),
        report(VALIDATE),
        "oracle only",
        "AGUI-NO-REOPEN",
        finding("AGUI205", index=2),
    ),
    "a stream the browser did not leave": (
        TRUNCATED,
        report(VALIDATE),
        "oracle only",
        "GW-STREAM-TERMINAL",
        finding("AGUI003", index=None),
    ),
    "the run ids changing within the stream": (
        stream(STARTED, ev("RUN_FINISHED", threadId="t", runId="other")),
        report(VALIDATE),
        "ours only",
        "AGUI-RUN-IDS",
        None,
    ),
    "a client that read the whole stream": (
        VALID,
        report(CLIENT, finding("AGUIError", index=1)),
        "ours only",
        "AGUI-NO-REOPEN",
        None,
    ),
    "a step started again after its end": (
        stream(
            STARTED,
            ev("STEP_STARTED", stepName="s"),
            ev("STEP_FINISHED", stepName="s"),
            ev("STEP_STARTED", stepName="s"),
            FINISHED,
        ),
        report(VALIDATE),
        "oracle only",
        "AGUI-CLOSED-AT-FINISH",
        finding("AGUI007", index=4),
    ),
    "a result for a call that was started": (
        stream(
            STARTED,
            ev("TOOL_CALL_START", toolCallId="c", toolCallName="f"),
            ev("TOOL_CALL_END", toolCallId="c"),
            ev("TOOL_CALL_RESULT", toolCallId="c", messageId="t", content="x"),
        ),
        report(CLIENT),
        "ours only",
        "GW-FRAME-SEQUENCE",
        None,
    ),
    "another library's difference": (UI_DONE, report(CLIENT), "ours only", "AISDK-DONE", None),
    "a finished UI stream": (UI_DONE, report(AI), "ours only", "GW-STREAM-TERMINAL", None),
}


@pytest.mark.parametrize("name", list(NOT_EXPLAINED))
def test_a_known_difference_explains_nothing_else(name: str) -> None:
    assert explain(*NOT_EXPLAINED[name]) is None


def test_an_explained_disagreement_carries_its_reason() -> None:
    ours = passing(**{"GW-STREAM-TERMINAL": Outcome.FAIL})
    diff = compare(TRUNCATED, [report(VALIDATE, finding("AGUI003", None)), report(CLIENT)], ours)
    (d,) = diff.disagreements
    assert (d.oracle, d.known) == (CLIENT, "client has no end-of-stream check")
    assert d.reason is not None and "#2300" in d.reason and diff.holds
    assert diff.oracles[0].agreed == ("GW-STREAM-TERMINAL",)
