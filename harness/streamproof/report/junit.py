"""A ``junit.xml`` for a run that could not start: one error test case naming the bad input.

A run folder always holds ``junit.xml``, so a CI test tab shows why a run judged nothing: pytest
writes it for every run it starts (a scenario file it cannot load is an error test case of its
own); a run stopped before pytest (a bad target or baseline file, a path that does not exist, a
bad option) gets this one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

__all__ = ["bad_input_junit", "write_bad_input_junit"]


def bad_input_junit(subject: str, reason: str) -> str:
    """The XML text: one ``testsuite`` named streamproof with one ``testcase`` named
    ``subject`` (the file or option at fault) holding an ``error`` whose message is the
    reason's first line and whose text is the whole reason."""
    suites = ET.Element("testsuites", name="streamproof")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="streamproof",
        tests="1",
        errors="1",
        failures="0",
        skipped="0",
        time="0.000",
    )
    case = ET.SubElement(suite, "testcase", classname="streamproof.input", name=subject)
    first = reason.splitlines()[0] if reason else "bad input"
    error = ET.SubElement(case, "error", message=first, type="bad input")
    error.text = reason
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")


def write_bad_input_junit(path: Path, subject: str, reason: str) -> Path:
    """Write :func:`bad_input_junit` to ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bad_input_junit(subject, reason) + "\n", encoding="utf-8")
    return path
