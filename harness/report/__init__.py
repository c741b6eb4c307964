"""Reports of a run: ``results.json`` (:mod:`harness.report.results`) and the closing lines on the
console (:mod:`harness.report.console`); pytest writes the JUnit XML."""

from __future__ import annotations

from harness.report.console import render_counts
from harness.report.results import (
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
