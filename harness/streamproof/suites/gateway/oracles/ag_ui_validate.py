"""The community validator ``ag-ui-validate`` (PyPI) run over a captured AG-UI stream.

In process: each event's data is fed to the validator's core (``create_validator``, ``feed``,
``finalize``), which judges the events against its rule catalogue (``AGUI0xx`` lifecycle,
``AGUI1xx`` text messages, ``AGUI2xx`` tool calls, ``AGUI3xx`` state, ``AGUI5xx`` payloads, ...).
Its transport rules (SSE framing, Content-Type, keepalive, buffering) are not evaluated: they are
about bytes and timing, which the payloads do not carry and our own SSE decoder judges. Findings
of severity ``error`` and ``warning`` are the report's findings; ``info`` ones (no timestamps, a
mid-run snapshot, ...) are notes, which a conforming stream may have.

The validator is a test dependency of streamproof (the ``test`` extra), imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import Final

from streamproof.suites.gateway.oracles.errors import OracleFailed, OracleUnavailable
from streamproof.suites.gateway.oracles.finding import Finding, OracleReport

__all__ = ["AgUiValidateReport", "installed_version", "validate_ag_ui"]

PACKAGE: Final = "ag-ui-validate"


class AgUiValidateReport(OracleReport):
    notes: tuple[Finding, ...]
    """The validator's ``info`` findings: remarks, not violations."""
    skipped: tuple[str, ...]
    """Rules the validator did not evaluate here (its transport rules), by id."""


def installed_version() -> str:
    """The installed validator's version; :class:`OracleUnavailable` when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise OracleUnavailable(
            f"{PACKAGE} is not installed: pip install -e '.[test]' (scripts/bootstrap does)"
        ) from exc


def validate_ag_ui(payloads: Sequence[str]) -> AgUiValidateReport:
    """The validator's reading of the stream whose events carry ``payloads`` (in order).

    Raises :class:`~streamproof.suites.gateway.oracles.errors.OracleUnavailable` when the package is
    not installed, :class:`~streamproof.suites.gateway.oracles.errors.OracleFailed` when one of its
    checks crashed (it reports that instead of raising).
    """
    version = installed_version()
    from ag_ui_validate import create_validator

    validator = create_validator()
    for payload in payloads:
        validator.feed(payload)
    validator.finalize()
    report = validator.report()
    if report.internal_errors:
        raise OracleFailed(f"{PACKAGE} crashed in a check: {report.internal_errors[0]}")
    found = [
        Finding(
            rule=d.rule,
            kind=d.severity,
            message=d.message,
            index=d.event_index if d.event_index >= 0 else None,
        )
        for d in report.diagnostics
    ]
    return AgUiValidateReport(
        library=PACKAGE,
        version=version,
        events=report.event_count,
        findings=tuple(f for f in found if f.kind != "info"),
        notes=tuple(f for f in found if f.kind == "info"),
        skipped=tuple(s.rule for s in report.skipped),
    )
