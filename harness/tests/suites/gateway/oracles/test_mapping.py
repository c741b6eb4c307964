"""The finding -> requirement table (mapping.py): every row reads a kind of finding as a
requirement of ours that its library's profile compares, and each kind of finding the libraries
give is read as the requirement that judges its fact (or as none)."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.oracles.builders import (
    finding,
)
from streamproof.core.requirements import REGISTRY
from streamproof.suites.gateway import requirements as _registered  # noqa: F401 (registers the ids)
from streamproof.suites.gateway.oracles.differences import ANY, KNOWN_DIFFERENCES
from streamproof.suites.gateway.oracles.finding import Finding
from streamproof.suites.gateway.oracles.mapping import (
    AI,
    CLIENT,
    COMPARED,
    ORACLES,
    READINGS,
    VALIDATE,
    requirement_of,
)


def test_every_row_maps_to_a_compared_requirement_of_its_oracles_profile() -> None:
    profile_of = {o: p for p, oracles in ORACLES.items() for o in oracles}
    known = set(REGISTRY)
    for row in READINGS:
        assert row.requirement in COMPARED[profile_of[row.oracle]], row
    for k in KNOWN_DIFFERENCES:
        for library in k.libraries:
            assert library in profile_of, k.name
            assert k.requirement in (None, ANY) or k.requirement in COMPARED[profile_of[library]]
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
