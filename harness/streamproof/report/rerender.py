"""``streamproof report RESULTS.json``: a saved run seen again, with nothing rerun.

``--html OUT`` (default: ``report.html`` beside RESULTS.json, where the run wrote its own) draws
the page again from the saved report, byte for byte what the run wrote when the streamproof is
the same; ``--show ID`` prints one scenario's verdicts and its timeline as text.

Every problem with the input (no such file, not JSON, not a streamproof report, an unknown
scenario id, an output path that is not a page of ours) is a :class:`ReportInputError` whose
message is one line naming the file.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from streamproof.core.timeline import Timeline
from streamproof.core.verdicts import Verdict
from streamproof.report.html import GENERATOR, render_html

__all__ = ["ReportInputError", "default_html_path", "load_report", "rerender", "show"]

CLOSE_IDS = 5
"""How many scenario ids an unknown ``--show`` id suggests."""


class ReportInputError(ValueError):
    """The saved report, the scenario asked for or the output path cannot be used."""


def load_report(path: Path) -> dict[str, Any]:
    """The report saved in ``path``, checked to be a streamproof ``results.json``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReportInputError(f"{path}: a folder, not a results.json file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: cannot read it ({exc})") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(
            f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(report, dict) or report.get("tool") != "streamproof":
        raise ReportInputError(
            f'{path}: not a streamproof report (a results.json has "tool": "streamproof")'
        )
    if not isinstance(report.get("scenarios"), list) or not isinstance(report.get("summary"), dict):
        raise ReportInputError(f"{path}: a streamproof report without its summary or scenarios")
    return report


def default_html_path(results: Path) -> Path:
    """Where the page goes when no ``--html`` is given: ``report.html`` beside the results."""
    return results.parent / "report.html"


def rerender(results: Path, out: Path | None = None) -> Path:
    """Draw ``results``' page again into ``out`` (default :func:`default_html_path`). A file
    already at ``out`` is replaced only when it is a page streamproof wrote."""
    report = load_report(results)
    target = out if out is not None else default_html_path(results)
    if target.exists() and target.resolve() == results.resolve():
        raise ReportInputError(f"{target}: that is the results file itself; choose another --html")
    if target.is_dir():
        raise ReportInputError(f"{target}: a folder; --html takes a file name")
    if target.exists() and not _ours(target):
        raise ReportInputError(
            f"{target}: exists and is not a streamproof report.html; not replacing it "
            "(remove it or choose another --html)"
        )
    html = render_html(report)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ReportInputError(f"{target}: cannot write it ({exc})") from None
    return target


def show(results: Path, scenario_id: str) -> list[str]:
    """One scenario of ``results`` as text: its outcome, each verdict as the console renders
    it, and its timeline (:meth:`Timeline.lines`)."""
    report = load_report(results)
    records = [r for r in report["scenarios"] if isinstance(r, Mapping)]
    record = next((r for r in records if r.get("id") == scenario_id), None)
    if record is None:
        ids = [str(r.get("id")) for r in records]
        raise ReportInputError(
            f"{results}: no scenario {scenario_id!r}; {_suggest(scenario_id, ids)}"
        )
    lines = [
        f"{record.get('id')}: {record.get('outcome', '?')} ({record.get('title', '')}, "
        f"{record.get('file', '?')}:{record.get('line', '?')})"
    ]
    if record.get("error"):
        lines.append(f"error: {record['error']}")
    for raw in record.get("verdicts") or []:
        try:
            verdict = Verdict.model_validate(raw)
        except ValidationError:
            lines.append(f"(unreadable verdict: {json.dumps(raw)[:200]})")
            continue
        line = verdict.render()
        if isinstance(raw, Mapping) and raw.get("baseline"):
            line += f"\n    known failure (baseline): {raw['baseline']}"
        lines.append(line)
    lines.append("timeline:")
    raw_timeline = record.get("timeline")
    if raw_timeline is None:
        lines.append("  no timeline recorded")
    else:
        try:
            lines += Timeline.model_validate(raw_timeline).lines() or ["  (empty)"]
        except ValidationError as exc:
            count = exc.error_count()
            lines.append(f"  the recorded timeline is unreadable ({count} problem(s))")
    return lines


def _suggest(wanted: str, ids: list[str]) -> str:
    if not ids:
        return "the report has no scenario"
    close = difflib.get_close_matches(wanted, ids, n=CLOSE_IDS, cutoff=0.4)
    close += [i for i in ids if wanted.lower() in i.lower() and i not in close]
    if close:
        return "close: " + ", ".join(close[:CLOSE_IDS])
    listed = ", ".join(ids[:CLOSE_IDS])
    more = f" ({len(ids) - CLOSE_IDS} more)" if len(ids) > CLOSE_IDS else ""
    return f"it has: {listed}{more}"


def _ours(path: Path) -> bool:
    """``path`` is a page this module (or a run) wrote: its head names the generator."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as file:
            head = file.read(2048)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">' in head
