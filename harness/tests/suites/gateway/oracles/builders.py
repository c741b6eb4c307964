"""Small streams, findings, reports and verdicts for the differential's tests (no library
runs: the reports are made here)."""

from __future__ import annotations

import json
from typing import Any

from streamproof.core.verdicts import Level, Outcome, Verdict
from streamproof.suites.gateway.oracles.finding import Finding, OracleReport
from streamproof.suites.gateway.oracles.mapping import COMPARED
from streamproof.suites.gateway.oracles.stream import Stream


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
