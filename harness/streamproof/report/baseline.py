"""Baselines: the failures a team already knows about, so a gate fails only on new ones.

A baseline file is YAML with one key, ``known_failures``: a list of entries, each naming a
scenario, a requirement (or a scenario's own expectation, ``expect.frames``) and why the
failure is accepted for now::

    known_failures:
      - scenario: a2a-client/recovery-after-drop
        requirement: A2A-C-RECOVERY
        reason: our client does not resubscribe yet (ticket 123)

A verdict that fails and is named by an entry is a *known failure*: it keeps its outcome
(``fail``) and carries the entry's ``reason`` as ``baseline`` in ``results.json``; a scenario
whose enforced failures are all known does not fail the run. An entry whose scenario ran and
whose requirement now holds (or had nothing to judge) is *fixed*: the run stays green and says
to remove it. An entry whose scenario did not run is neither.

Everything here is pure except :func:`load_baseline`, which reads the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from streamproof.core.verdicts import Outcome, Verdict
from streamproof.faults.fired import FAULT_FIRED
from streamproof.suites import REGISTRY
from streamproof.suites.loading import Problem, validation_problems, yaml_documents

__all__ = [
    "Baseline",
    "BaselineError",
    "BaselineFile",
    "EntryStatus",
    "KnownFailure",
    "baseline_summary",
    "baseline_text",
    "enforced_outcome",
    "entry_statuses",
    "failures_of_report",
    "headline",
    "load_baseline",
    "one_line_reason",
    "parse_baseline",
]

_EXPECTATION = re.compile(r"expect\.[a-z][a-z0-9_]*")


class KnownFailure(BaseModel):
    """One accepted failure: ``requirement`` failing in ``scenario``, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: str = Field(min_length=1)
    requirement: str = Field(min_length=1)
    """A requirement id of the registry, an expectation's name (``expect.frames``), or
    ``fault.fired`` (a planned fault that did not fire)."""
    reason: str = Field(min_length=1)

    @field_validator("requirement")
    @classmethod
    def _known_requirement(cls, value: str) -> str:
        if value in REGISTRY or _EXPECTATION.fullmatch(value) or value == FAULT_FIRED:
            return value
        raise ValueError(
            f"{value!r} is neither a requirement id (streamproof list shows them), an "
            f"expectation name such as expect.frames, nor {FAULT_FIRED}"
        )

    @property
    def key(self) -> tuple[str, str]:
        return (self.scenario, self.requirement)


class BaselineFile(BaseModel):
    """The file's shape: ``known_failures:`` and its list of entries."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    known_failures: tuple[KnownFailure, ...]


class BaselineError(Exception):
    """A baseline file that cannot be used: every problem, one per line, ``file:line: ...``."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


@dataclass(frozen=True)
class Baseline:
    """A loaded baseline: where it came from and its entries (no two for the same pair)."""

    file: str
    entries: tuple[KnownFailure, ...]

    def reason(self, scenario: str, requirement: str) -> str | None:
        """The reason the entry for this pair gives, or None when no entry names it."""
        for entry in self.entries:
            if entry.key == (scenario, requirement):
                return entry.reason
        return None


def parse_baseline(text: str, file: str) -> Baseline:
    """The baseline in ``text`` (read from ``file``, named in every problem)."""
    documents, problems = yaml_documents(text, file)
    if problems:
        raise BaselineError(*problems)
    if len(documents) != 1:
        found = "no document" if not documents else f"{len(documents)} documents"
        raise BaselineError(
            Problem(file, None, None, f"a baseline file is one YAML document ({found} found)")
        )
    document = documents[0]
    if not isinstance(document.data, dict):
        raise BaselineError(
            Problem(
                file,
                document.line,
                None,
                "a baseline file is a mapping with one key, known_failures: a list of "
                "{scenario, requirement, reason}",
            )
        )
    try:
        parsed = BaselineFile.model_validate(document.data)
    except ValidationError as exc:
        raise BaselineError(
            *validation_problems(exc, BaselineFile, document.data, document.lines, file)
        ) from None
    first: dict[tuple[str, str], int] = {}
    duplicates: list[Problem] = []
    for index, entry in enumerate(parsed.known_failures):
        line = document.lines.get(("known_failures", index), document.line)
        seen = first.setdefault(entry.key, line)
        if seen != line:
            duplicates.append(
                Problem(
                    file,
                    line,
                    f"known_failures[{index}]",
                    f"{entry.scenario} {entry.requirement} is already listed at line {seen}",
                )
            )
    if duplicates:
        raise BaselineError(*duplicates)
    return Baseline(file, parsed.known_failures)


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(
            Problem(str(path), None, None, f"cannot read the baseline: {exc.strerror or exc}")
        ) from None
    except UnicodeDecodeError as exc:
        raise BaselineError(Problem(str(path), None, None, f"not UTF-8 text: {exc}")) from None
    return parse_baseline(text, str(path))


# --- matching ----------------------------------------------------------------------------------


def enforced_outcome(outcome: str, *, strict: bool) -> bool:
    """Whether a verdict with ``outcome`` fails a run: a failure, or an unmet SHOULD under
    ``--strict``."""
    return outcome == Outcome.FAIL.value or (strict and outcome == Outcome.NON_STRICT.value)


REASON_LIMIT = 200
"""Characters of a one-line reason (a CI test tab shows one line; the rest is in the body)."""


def one_line_reason(requirement: str, message: str) -> str:
    """What a failure message says was seen, on one line: its first line, without the
    requirement id it starts with and the rule it ends with (``. Rule: ...``: the registry has
    it), cut to :data:`REASON_LIMIT` characters."""
    text = message.removeprefix(f"{requirement}: ").strip()
    first = text.splitlines()[0] if text else "failed"
    seen, _, _ = first.partition(". Rule: ")
    return seen if len(seen) <= REASON_LIMIT else seen[: REASON_LIMIT - 1].rstrip() + "…"


def headline(verdict: Verdict) -> str:
    """One line for a CI test tab: ``<REQ-ID> <LEVEL>: <reason>``
    (:func:`one_line_reason`)."""
    reason = one_line_reason(verdict.requirement, verdict.message)
    return f"{verdict.requirement} {verdict.level.value}: {reason}"


class EntryStatus(StrEnum):
    KNOWN = "known"  # the scenario ran and the requirement still fails (enforced)
    FIXED = "fixed"  # the scenario ran and the requirement held, or had nothing to judge
    NOT_RUN = "not run"  # the scenario did not run (not selected, skipped, errored)
    UNENFORCED = "unenforced"  # an unmet SHOULD without --strict: still unmet, not enforced


def _ran(record: Mapping[str, Any]) -> bool:
    return record.get("outcome") in ("passed", "failed") and "verdicts" in record


def entry_statuses(
    baseline: Baseline, records: Sequence[Mapping[str, Any]], *, strict: bool
) -> list[tuple[KnownFailure, EntryStatus]]:
    """What became of each entry in a run whose per-scenario records are ``records``."""
    ran = {str(r["id"]): r for r in records if _ran(r)}
    out: list[tuple[KnownFailure, EntryStatus]] = []
    for entry in baseline.entries:
        record = ran.get(entry.scenario)
        if record is None:
            out.append((entry, EntryStatus.NOT_RUN))
            continue
        outcomes = {
            str(v.get("outcome"))
            for v in record["verdicts"]
            if v.get("requirement") == entry.requirement
        }
        if any(enforced_outcome(o, strict=strict) for o in outcomes):
            status = EntryStatus.KNOWN
        elif Outcome.NON_STRICT.value in outcomes:
            status = EntryStatus.UNENFORCED
        elif Outcome.SKIP.value in outcomes:
            status = EntryStatus.NOT_RUN  # the target does not declare what the check needs
        else:
            # Held, had nothing to judge, or the scenario no longer judges it: either way the
            # entry protects nothing any more.
            status = EntryStatus.FIXED
        out.append((entry, status))
    return out


def baseline_summary(
    baseline: Baseline, records: Sequence[Mapping[str, Any]], *, strict: bool
) -> dict[str, Any]:
    """``summary.baseline`` of results.json: the file, how many enforced failures were known,
    the entries now fixed, the entries whose scenario did not run, and how many enforced
    failures no entry names."""
    known = new = 0
    for record in records:
        for verdict in record.get("verdicts", []):
            if enforced_outcome(str(verdict.get("outcome")), strict=strict):
                if "baseline" in verdict:
                    known += 1
                else:
                    new += 1
    statuses = entry_statuses(baseline, records, strict=strict)

    def listed(status: EntryStatus) -> list[dict[str, str]]:
        return [e.model_dump() for e, s in statuses if s is status]

    return {
        "file": baseline.file,
        "known": known,
        "fixed": listed(EntryStatus.FIXED),
        "not_run": listed(EntryStatus.NOT_RUN),
        "new_failures": new,
    }


# --- writing a baseline from a saved run -------------------------------------------------------


def failures_of_report(report: Mapping[str, Any]) -> list[KnownFailure]:
    """An entry for every enforced failure (requirement or expectation) of a saved run, sorted
    by scenario and requirement; the reason says when and what."""
    strict = bool(report.get("strict"))
    started = str(report.get("started_at") or "an unknown time")
    found: dict[tuple[str, str], KnownFailure] = {}
    for record in report.get("scenarios") or []:
        for verdict in record.get("verdicts") or []:
            if not enforced_outcome(str(verdict.get("outcome")), strict=strict):
                continue
            requirement = str(verdict["requirement"])
            reason = one_line_reason(requirement, str(verdict.get("message") or ""))
            entry = KnownFailure(
                scenario=str(record["id"]),
                requirement=requirement,
                reason=f"recorded from {started}, {reason}",
            )
            found.setdefault(entry.key, entry)
    return [found[key] for key in sorted(found)]


def baseline_text(entries: Iterable[KnownFailure], *, header: Sequence[str] = ()) -> str:
    """A baseline file holding ``entries`` in the given order, ``header`` lines as comments."""
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header)
    body = {"known_failures": [e.model_dump() for e in entries]}
    return comments + yaml.safe_dump(
        body, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )
