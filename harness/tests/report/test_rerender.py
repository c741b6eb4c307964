"""``streamproof report``'s logic: a saved results.json drawn again, one scenario shown as text,
and every bad input a one-line error naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tests.report.test_html import TIMELINE, _report
from streamproof.report.html import render_html
from streamproof.report.rerender import (
    ReportInputError,
    default_html_path,
    load_report,
    rerender,
    show,
)
from streamproof.report.results import write_results


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return write_results(_report(), tmp_path / "run" / "results.json")


def test_the_page_is_drawn_again_beside_the_results_and_replaces_our_own(saved: Path) -> None:
    out = rerender(saved)
    assert out == default_html_path(saved) == saved.parent / "report.html"
    first = out.read_bytes()
    assert first == render_html(json.loads(saved.read_text(encoding="utf-8"))).encode()
    assert rerender(saved).read_bytes() == first  # a page of ours is replaced, same bytes
    elsewhere = rerender(saved, saved.parent / "deep" / "copy.html")
    assert elsewhere.read_bytes() == first


def test_a_file_that_is_not_our_page_is_never_replaced(saved: Path) -> None:
    notes = saved.parent / "notes.html"
    notes.write_text("<html>my notes</html>")
    with pytest.raises(ReportInputError, match=r"notes\.html: exists and is not a streamproof"):
        rerender(saved, notes)
    assert notes.read_text() == "<html>my notes</html>"
    with pytest.raises(ReportInputError, match="the results file itself"):
        rerender(saved, saved)
    with pytest.raises(ReportInputError, match="a folder"):
        rerender(saved, saved.parent)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not JSON (line 1, column 2"),
        ('{"summary": {"ok": true}, "stale": true}', "not a streamproof report"),
        ("[1, 2]", "not a streamproof report"),
        ('{"tool": "streamproof", "summary": {}}', "without its summary or scenarios"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReportInputError) as caught:
        load_report(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_show_prints_the_verdicts_and_the_timeline(saved: Path) -> None:
    lines = show(saved, "gateway/model-error")
    assert lines[0].startswith("gateway/model-error: failed (Model fails <mid-stream>")
    text = "\n".join(lines)
    assert "[GW-ERROR-FRAME MUST] fail: a bare <script>alert(1)</script> done" in text
    assert "    expected: ... error" in text
    assert lines[lines.index("timeline:") + 1 :] == TIMELINE.lines()
    plain = "\n".join(show(saved, "gateway/plain"))
    assert "known failure (baseline): tracked in BUG-7" in plain
    assert plain.endswith("timeline:\n  no timeline recorded")


def test_an_unknown_scenario_names_close_ids(saved: Path) -> None:
    with pytest.raises(ReportInputError) as caught:
        show(saved, "gateway/model-eror")
    assert "no scenario 'gateway/model-eror'; close: gateway/model-error" in str(caught.value)
    with pytest.raises(ReportInputError) as caught:
        show(saved, "zzz")
    assert "it has: gateway/plain, gateway/model-error" in str(caught.value)
