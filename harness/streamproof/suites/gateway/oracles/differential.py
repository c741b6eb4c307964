"""The oracle differential: the real consumer libraries and our structural verdicts, side by
side on one stream.

Given one observation of an ``ag-ui`` or ``ai-sdk-ui`` target and our verdicts for it, run the
oracles on the same events and compare, per oracle: each finding is read as the requirement of
ours that judges the same structural fact (:mod:`~streamproof.suites.gateway.oracles.mapping`), and
set beside our verdicts on the compared requirements. Where both flag a requirement, or both
accept the stream, they agree; every other difference is a disagreement, explained by a row of
:mod:`~streamproof.suites.gateway.oracles.differences` or not, and the differential holds when every
disagreement is explained.

:func:`compare` is pure (the oracles' reports are given); :func:`differential` runs the oracles.
Our verdicts are an argument, never computed here: the oracles judge on their own and import no
check (an import-linter contract says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Final

from pydantic import BaseModel, ConfigDict

from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.oracles.ag_ui_client import run_ag_ui_client
from streamproof.suites.gateway.oracles.ag_ui_validate import validate_ag_ui
from streamproof.suites.gateway.oracles.ai_sdk import read_ai_sdk_stream
from streamproof.suites.gateway.oracles.differences import Side, explain
from streamproof.suites.gateway.oracles.finding import OracleReport
from streamproof.suites.gateway.oracles.mapping import COMPARED, ORACLES, requirement_of
from streamproof.suites.gateway.oracles.stream import Stream, stream_of

__all__ = [
    "Disagreement",
    "OracleComparison",
    "ReadFinding",
    "StreamDifferential",
    "compare",
    "differential",
    "run_oracles",
]

_FLAGGED: Final = frozenset({Outcome.FAIL, Outcome.NON_STRICT})


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReadFinding(_Record):
    """An oracle's finding and the requirement of ours it is read as."""

    rule: str
    kind: str
    index: int | None
    message: str
    requirement: str | None
    """``None``: no requirement of ours judges the fact."""

    def label(self) -> str:
        where = "end" if self.index is None else str(self.index)
        return f"{self.rule}@{where}"


class Disagreement(_Record):
    oracle: str
    side: Side
    requirement: str | None
    """Ours: the one the finding maps to, or the one that failed (``None``: the finding's fact
    is judged by none of ours)."""
    ours: str
    """Our outcome on :attr:`requirement` (``pass``, ``not-applicable``, ``fail`` ...; ``not
    judged`` when none of ours judges the fact)."""
    rule: str | None = None
    """``oracle only``: the finding's rule."""
    indices: tuple[int | None, ...] = ()
    """``oracle only``: the events its findings are about (``None``: the whole stream)."""
    detail: str
    """The oracle's message (``oracle only``) or our verdict's (``ours only``)."""
    known: str | None = None
    """The known difference that explains it (``None``: unexplained)."""
    reason: str | None = None

    @property
    def explained(self) -> bool:
        return self.known is not None

    def what(self) -> str:
        """One line: who flags what."""
        if self.side == "ours only":
            return f"we fail {self.requirement}; {self.oracle} finds nothing it maps to"
        where = ", ".join("end" if i is None else str(i) for i in self.indices)
        target = (
            f"our {self.requirement} is {self.ours}"
            if self.requirement is not None
            else "no requirement of ours judges it"
        )
        return f"{self.oracle} flags {self.rule}@{where}; {target}"


class OracleComparison(_Record):
    """One oracle on one stream, beside our verdicts."""

    oracle: str
    version: str
    findings: tuple[ReadFinding, ...]
    agreed: tuple[str, ...]
    """The requirements both flag."""
    disagreements: tuple[Disagreement, ...]

    def verdict(self) -> str:
        """``accepts``, or the findings as ``RULE@i → REQUIREMENT``."""
        if not self.findings:
            return "accepts"
        return "; ".join(
            f"{f.label()} → {f.requirement or '(none of ours)'}" for f in self.findings
        )


class StreamDifferential(_Record):
    """The differential of one stream."""

    stream: str
    profile: str
    events: int
    ours: tuple[tuple[str, str], ...]
    """Each compared requirement and our outcome on it."""
    beyond: tuple[str, ...] = ()
    """The requirements outside the comparison that we fail (the seed's rules on what the
    gateway did with the model's answer: no library can know them)."""
    oracles: tuple[OracleComparison, ...]
    """Empty when the stream had no events (nothing to compare)."""

    @property
    def flagged(self) -> tuple[str, ...]:
        """The compared requirements we fail (or find a SHOULD of unmet)."""
        return tuple(r for r, o in self.ours if o in _FLAGGED)

    @property
    def disagreements(self) -> tuple[Disagreement, ...]:
        return tuple(d for o in self.oracles for d in o.disagreements)

    @property
    def unexplained(self) -> tuple[Disagreement, ...]:
        return tuple(d for d in self.disagreements if not d.explained)

    @property
    def holds(self) -> bool:
        """Every disagreement is a known difference."""
        return not self.unexplained


def _outcomes(profile: str, verdicts: Sequence[Verdict]) -> dict[str, str]:
    """Our outcome on each compared requirement: failed if any verdict failed, else the first
    verdict's outcome (``not judged`` when there was none)."""
    out: dict[str, str] = {}
    for requirement in COMPARED[profile]:
        mine = [v for v in verdicts if v.kind is Kind.REQUIREMENT and v.requirement == requirement]
        flagged = next((v for v in mine if v.outcome in _FLAGGED), None)
        chosen = flagged or next((v for v in mine if v.outcome is Outcome.PASS), None)
        chosen = chosen or (mine[0] if mine else None)
        out[requirement] = chosen.outcome.value if chosen is not None else "not judged"
    return out


def _compare_one(
    stream: Stream, report: OracleReport, ours: dict[str, str], messages: dict[str, str]
) -> OracleComparison:
    oracle = report.library
    read = tuple(
        ReadFinding(
            rule=f.rule,
            kind=f.kind,
            index=f.index,
            message=f.message,
            requirement=requirement_of(oracle, f),
        )
        for f in report.findings
    )
    flagged = {r for r, o in ours.items() if o in _FLAGGED}
    mapped = {f.requirement for f in read if f.requirement is not None}
    agreed = tuple(r for r in ours if r in flagged and r in mapped)

    alone: list[tuple[ReadFinding, str | None, str | None]] = []
    for f, original in zip(read, report.findings, strict=True):
        if f.requirement is not None and f.requirement in flagged:
            continue
        known = explain(stream, report, "oracle only", f.requirement, original)
        alone.append((f, known.name if known else None, known.reason if known else None))
    disagreements: list[Disagreement] = []
    for (rule, requirement, known, reason), group in groupby(
        alone, key=lambda a: (a[0].rule, a[0].requirement, a[1], a[2])
    ):
        found = [g[0] for g in group]
        disagreements.append(
            Disagreement(
                oracle=oracle,
                side="oracle only",
                requirement=requirement,
                ours=ours.get(requirement, "not judged") if requirement else "not judged",
                rule=rule,
                indices=tuple(f.index for f in found),
                detail=found[0].message,
                known=known,
                reason=reason,
            )
        )
    for requirement in ours:
        if requirement not in flagged or requirement in mapped:
            continue
        known_diff = explain(stream, report, "ours only", requirement)
        disagreements.append(
            Disagreement(
                oracle=oracle,
                side="ours only",
                requirement=requirement,
                ours=ours[requirement],
                detail=messages.get(requirement, ""),
                known=known_diff.name if known_diff else None,
                reason=known_diff.reason if known_diff else None,
            )
        )
    return OracleComparison(
        oracle=oracle,
        version=report.version,
        findings=read,
        agreed=agreed,
        disagreements=tuple(disagreements),
    )


def compare(
    stream: Stream, reports: Sequence[OracleReport], verdicts: Sequence[Verdict]
) -> StreamDifferential:
    """The differential of ``stream``: each oracle's report beside our ``verdicts`` for it."""
    if stream.profile not in COMPARED:
        raise ValueError(
            f"{stream.name}: the differential compares ag-ui and ai-sdk-ui streams, not "
            f"{stream.profile!r}"
        )
    ours = _outcomes(stream.profile, verdicts)
    messages = {
        v.requirement: v.message
        for v in reversed(verdicts)
        if v.kind is Kind.REQUIREMENT and v.outcome in _FLAGGED
    }
    beyond = dict.fromkeys(
        v.requirement
        for v in verdicts
        if v.kind is Kind.REQUIREMENT and v.outcome in _FLAGGED and v.requirement not in ours
    )
    return StreamDifferential(
        stream=stream.name,
        profile=stream.profile,
        events=len(stream.payloads),
        ours=tuple(ours.items()),
        beyond=tuple(beyond),
        oracles=tuple(_compare_one(stream, r, ours, messages) for r in reports),
    )


def run_oracles(stream: Stream, *, timeout: float = 30.0) -> tuple[OracleReport, ...]:
    """Every oracle of the stream's profile over its events (:data:`~.mapping.ORACLES` order).

    Raises :class:`~streamproof.suites.gateway.oracles.errors.OracleUnavailable` when one cannot
    run here, :class:`~streamproof.suites.gateway.oracles.errors.OracleFailed` when one gave no
    result.
    """
    if stream.profile == "ag-ui":
        return (
            validate_ag_ui(stream.payloads),
            run_ag_ui_client(stream.payloads, timeout=timeout),
        )
    if stream.profile == "ai-sdk-ui":
        return (read_ai_sdk_stream(stream.payloads, timeout=timeout),)
    raise ValueError(
        f"{stream.name}: no oracle reads the {stream.profile!r} wire (only {' and '.join(ORACLES)})"
    )


def differential(
    obs: GatewayObservation,
    verdicts: Sequence[Verdict],
    *,
    name: str | None = None,
    timeout: float = 30.0,
) -> StreamDifferential:
    """Run the oracles over ``obs``'s stream and compare them with ``verdicts`` (ours, for
    ``obs``). A stream with no event has nothing to compare: its differential has no oracle."""
    stream = stream_of(obs, name)
    if not stream.payloads:
        return compare(stream, (), verdicts)
    return compare(stream, run_oracles(stream, timeout=timeout), verdicts)
