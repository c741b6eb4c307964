"""Reports of a run: ``results.json`` (:mod:`streamproof.report.results`) and the closing lines on
the
console (:mod:`streamproof.report.console`); pytest writes the JUnit XML."""

from __future__ import annotations

from streamproof.report.console import render_counts
from streamproof.report.results import (
    REPORT_VERSION,
    dumps_results,
    results_report,
    verdict_counts,
    write_results,
)

__all__ = [
    "REPORT_VERSION",
    "dumps_results",
    "render_counts",
    "results_report",
    "verdict_counts",
    "write_results",
]
