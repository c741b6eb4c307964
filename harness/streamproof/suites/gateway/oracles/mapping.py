"""Which of our requirements judges the structural fact an oracle's finding is about.

The differential compares the oracles with our *structural* verdicts only: the requirements
that judge the stream's own form (:data:`COMPARED`). The seed's other rules (tool calls from
aggregates, render once, no tool payload leak, errors as error frames ...) judge what the
gateway did with the model's answer; a consumer library has no way to know it, so they are not
compared (a stream that breaks them is well formed, and both libraries accept it).

:data:`READINGS` is the explicit table: one row per kind of finding, the requirement of ours it
maps to. ``ag-ui-validate`` names its rules (``AGUI001``); ``@ag-ui/client`` and ``ai`` name
only the error's class, so their rows also match the message. A finding no row matches maps to
no requirement: it is a disagreement unless a known difference
(:mod:`~streamproof.suites.gateway.oracles.differences`) explains it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from streamproof.suites.gateway.oracles.ag_ui_client import PACKAGE as CLIENT
from streamproof.suites.gateway.oracles.ag_ui_validate import PACKAGE as VALIDATE
from streamproof.suites.gateway.oracles.ai_sdk import PACKAGE as AI
from streamproof.suites.gateway.oracles.finding import Finding

__all__ = [
    "AI",
    "CLIENT",
    "COMPARED",
    "ORACLES",
    "READINGS",
    "VALIDATE",
    "Reading",
    "reading_of",
    "requirement_of",
]

COMPARED: Final[Mapping[str, tuple[str, ...]]] = {
    "ag-ui": (
        "GW-FRAME-TYPES",
        "GW-STREAM-TERMINAL",
        "GW-FRAME-SEQUENCE",
        "AGUI-RUN-STARTED-FIRST",
        "AGUI-EVENTS-PAIRED",
        "AGUI-NO-REOPEN",
        "AGUI-CLOSED-AT-FINISH",
        "AGUI-RUN-IDS",
    ),
    "ai-sdk-ui": (
        "GW-FRAME-TYPES",
        "GW-STREAM-TERMINAL",
        "GW-FRAME-SEQUENCE",
        "AISDK-STREAM-HEADER",
        "AISDK-PART-STARTED",
        "AISDK-PART-ENDED",
        "AISDK-DONE",
    ),
}
"""Per profile, our structural requirements: the ones compared with the oracles."""

ORACLES: Final[Mapping[str, tuple[str, ...]]] = {
    "ag-ui": (VALIDATE, CLIENT),
    "ai-sdk-ui": (AI,),
}
"""Per profile, the libraries run over its streams, in table order."""


@dataclass(frozen=True)
class Reading:
    """One row of the table: a kind of finding and the requirement that judges its fact."""

    oracle: str
    rule: str
    requirement: str
    fact: str
    """The structural fact, in words (the README's mapping table)."""
    message: str | None = None
    """A pattern the finding's message must contain (``re.search``), for a library whose
    findings name only the error's class."""
    at: Literal["event", "end"] | None = None
    """Only a finding about one event (``event``) or about the stream as a whole (``end``)."""

    def matches(self, oracle: str, finding: Finding) -> bool:
        if oracle != self.oracle or finding.rule != self.rule:
            return False
        if self.at == "event" and finding.index is None:
            return False
        if self.at == "end" and finding.index is not None:
            return False
        return self.message is None or re.search(self.message, finding.message) is not None


_OPEN_AT_FINISH = "a message, tool call, step or reasoning message still open at RUN_FINISHED"
_OPEN_AT_END = "a message, tool call, step or reasoning message still open when the stream ends"

READINGS: Final[tuple[Reading, ...]] = (
    # ag-ui-validate 0.4: its rule catalogue
    Reading(VALIDATE, "AGUI001", "AGUI-RUN-STARTED-FIRST", "the first event is not RUN_STARTED"),
    Reading(VALIDATE, "AGUI003", "GW-STREAM-TERMINAL", "no RUN_FINISHED or RUN_ERROR at the end"),
    Reading(VALIDATE, "AGUI004", "GW-STREAM-TERMINAL", "an event after RUN_FINISHED or RUN_ERROR"),
    Reading(VALIDATE, "AGUI005", "GW-STREAM-TERMINAL", "both RUN_FINISHED and RUN_ERROR"),
    Reading(VALIDATE, "AGUI006", "AGUI-EVENTS-PAIRED", "STEP_FINISHED for a step not open"),
    Reading(VALIDATE, "AGUI007", "AGUI-CLOSED-AT-FINISH", _OPEN_AT_FINISH, at="event"),
    Reading(VALIDATE, "AGUI007", "GW-STREAM-TERMINAL", _OPEN_AT_END, at="end"),
    Reading(VALIDATE, "AGUI008", "AGUI-RUN-IDS", "RUN_FINISHED names other ids than RUN_STARTED"),
    Reading(VALIDATE, "AGUI101", "AGUI-EVENTS-PAIRED", "CONTENT for a message not open"),
    Reading(VALIDATE, "AGUI102", "AGUI-EVENTS-PAIRED", "END for a message not open"),
    Reading(VALIDATE, "AGUI103", "AGUI-CLOSED-AT-FINISH", _OPEN_AT_FINISH, at="event"),
    Reading(VALIDATE, "AGUI103", "GW-STREAM-TERMINAL", _OPEN_AT_END, at="end"),
    Reading(VALIDATE, "AGUI104", "AGUI-NO-REOPEN", "a message id started twice in the run"),
    Reading(VALIDATE, "AGUI106", "AGUI-NO-REOPEN", "a START for a message that is open"),
    Reading(VALIDATE, "AGUI201", "AGUI-EVENTS-PAIRED", "ARGS for a tool call not open"),
    Reading(VALIDATE, "AGUI202", "AGUI-EVENTS-PAIRED", "END for a tool call not open"),
    Reading(VALIDATE, "AGUI203", "AGUI-CLOSED-AT-FINISH", _OPEN_AT_FINISH, at="event"),
    Reading(VALIDATE, "AGUI203", "GW-STREAM-TERMINAL", _OPEN_AT_END, at="end"),
    Reading(VALIDATE, "AGUI205", "AGUI-NO-REOPEN", "a tool call id started twice in the run"),
    Reading(VALIDATE, "AGUI207", "GW-FRAME-SEQUENCE", "a tool result for a call never started"),
    Reading(VALIDATE, "AGUI401", "AGUI-EVENTS-PAIRED", "reasoning CONTENT for a message not open"),
    Reading(VALIDATE, "AGUI402", "AGUI-CLOSED-AT-FINISH", _OPEN_AT_FINISH, at="event"),
    Reading(VALIDATE, "AGUI402", "GW-STREAM-TERMINAL", _OPEN_AT_END, at="end"),
    Reading(VALIDATE, "AGUI502", "GW-FRAME-TYPES", "an event whose data is not a JSON object"),
    Reading(VALIDATE, "AGUI503", "GW-FRAME-TYPES", "an event type AG-UI does not define"),
    Reading(VALIDATE, "AGUI504", "GW-FRAME-TYPES", "a required field missing or mistyped"),
    # @ag-ui/client 1.0: the verify middleware's AGUIError, by message; the schema; the parser
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-RUN-STARTED-FIRST",
        "the first event is not RUN_STARTED",
        message=r"^First event must be 'RUN_STARTED'",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "GW-STREAM-TERMINAL",
        "an event after RUN_FINISHED or RUN_ERROR",
        message=r"The run has already (errored|finished)",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-NO-REOPEN",
        "a START for an id that is open",
        message=r"^Cannot send '\w+_START' event: .* is already in progress",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-EVENTS-PAIRED",
        "CONTENT, ARGS or END for an id that is not open",
        message=r"^Cannot send '\w+' event: No active [\w ]+ found with ID",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-EVENTS-PAIRED",
        "STEP_FINISHED for a step not open",
        message=r"^Cannot send 'STEP_FINISHED' for step .* that was not started",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-NO-REOPEN",
        "STEP_STARTED for a step that is open",
        message=r"^Step .* is already active for 'STEP_STARTED'",
    ),
    Reading(
        CLIENT,
        "AGUIError",
        "AGUI-CLOSED-AT-FINISH",
        _OPEN_AT_FINISH,
        message=r"^Cannot send 'RUN_FINISHED' while [\w ]+ are still active",
    ),
    Reading(CLIENT, "ZodError", "GW-FRAME-TYPES", "a required field missing or mistyped"),
    Reading(CLIENT, "SyntaxError", "GW-FRAME-TYPES", "an event whose data is not JSON"),
    Reading(
        CLIENT,
        "enforce",
        "GW-FRAME-TYPES",
        "an event type AG-UI does not define (dropped, with a warning)",
        message=r"Dropping unrecognised event",
    ),
    # ai 7: the chunk schema and JSON parse (the transport), then readUIMessageStream
    Reading(AI, "AI_TypeValidationError", "GW-FRAME-TYPES", "a chunk its schema rejects"),
    Reading(AI, "AI_JSONParseError", "GW-FRAME-TYPES", "a chunk whose data is not JSON"),
    Reading(
        AI,
        "AI_UIMessageStreamError",
        "AISDK-PART-STARTED",
        "a delta or end for a part never started",
        message=r"^Received [\w-]+ for missing [\w ]+ with ID",
    ),
    Reading(
        AI,
        "AI_UIMessageStreamError",
        "GW-FRAME-SEQUENCE",
        "a tool output for a tool call never started",
        message=r"^No tool invocation found for tool call ID",
    ),
)
"""Finding -> requirement: every kind of finding the libraries give on a structural fact that
one of our requirements judges. What no row names (an empty delta, an unknown key, state and
sub-agent rules ...) is judged by none of ours."""


def reading_of(oracle: str, finding: Finding) -> Reading | None:
    """The row that reads ``finding`` of ``oracle``, if any."""
    return next((r for r in READINGS if r.matches(oracle, finding)), None)


def requirement_of(oracle: str, finding: Finding) -> str | None:
    """The requirement of ours that judges the fact ``finding`` is about (``None``: none)."""
    reading = reading_of(oracle, finding)
    return reading.requirement if reading is not None else None
