"""The HTML report in a real browser: `streamproof run` writes report.html, and headless Debian
Chromium (harness/tests/browser.py) opens it from disk and finds the verdict header, a full
requirement x scenario matrix, a timeline picture per scenario that ran (the seed's proxy-timeout
story with its stall band), no console errors and no network use.

Screenshots (report.png, the whole page; timeline.png, the proxy-timeout scenario's section) go
to the test's tmp_path and, when ``STREAMPROOF_TEST_ARTIFACTS`` names a folder, also to
``$STREAMPROOF_TEST_ARTIFACTS/<test name>/`` (for CI to keep); their paths are recorded as JUnit
properties (``screenshot_report``, ``screenshot_timeline``): appended to the test's
``user_properties``, which is what pytest's ``record_property`` does, without its warning that
the default junit_family xunit2 does not know properties (this project turns warnings into
errors; pytest writes them all the same, as it does the plugin's verdicts)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.tests.browser import chromium, open_in_browser
from harness.tests.conftest import require_module

# Slow: runs suites and opens their report in Chromium.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PROXY_TIMEOUT = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"
PROXY_TIMEOUT_ID = "a2a_client/summary-survives-proxy-timeout"
# A gateway scenario with a fault: the model link is reset mid-answer (an rst cut).
GATEWAY_FAULT = ROOT / "scenarios" / "gateway" / "model_link_reset.yaml"
GATEWAY_FAULT_ID = "gateway/model-link-reset-mid-answer"
ARTIFACTS_ENV = "STREAMPROOF_TEST_ARTIFACTS"
CELL_STATES = ("pass", "fail", "unmet", "known", "skip", "na", "none")


def html_id(scenario_id: str) -> str:
    """The report's element id for a scenario (issue 13's shared contract)."""
    return "scn-" + scenario_id.replace("/", "--").replace("[", "--").replace("]", "")


def _run(scenario: Path, report_dir: Path) -> None:
    """`streamproof run SCENARIO --report-dir DIR`, once the browser is known to be there (a
    machine without it skips before spending the run)."""
    chromium()
    require_module("playwright.sync_api")
    command = [sys.executable, "-m", "streamproof.cli", "run", str(scenario)]
    run = subprocess.run(
        [*command, "--report-dir", str(report_dir), "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def _artifact_dirs(tmp_path: Path, request: pytest.FixtureRequest) -> list[Path]:
    dirs = [tmp_path]
    shared = os.environ.get(ARTIFACTS_ENV)
    if shared:
        dirs.append(Path(shared) / re.sub(r"[^\w.-]+", "_", request.node.name))
    return dirs


def check_report_in_browser(
    report_dir: Path,
    out_dirs: list[Path],
    *,
    band_in: str | None = None,
    cut_in: str | None = None,
) -> dict[str, list[Path]]:
    """Open ``report_dir``/report.html in Chromium and assert what it must show, against the
    results.json beside it; save the screenshots into each of ``out_dirs``. ``band_in`` and
    ``cut_in`` name scenarios whose timeline must hold a stall band or a cut. Returns the
    screenshot paths by kind (``report``, ``timeline``)."""
    page_file = report_dir / "report.html"
    assert page_file.is_file(), (
        f"{page_file} was not written: every `streamproof run` writes report.html beside "
        "results.json (issue 13)"
    )
    results: dict[str, Any] = json.loads((report_dir / "results.json").read_text("utf-8"))
    requirements = list(results["requirements"])
    scenarios: list[dict[str, Any]] = results["scenarios"]
    # The matrix's rows: every requirement, then each scenario expectation (expect.frames...)
    # judged anywhere; one cell per row and scenario.
    expectations = sorted(
        {
            str(v["requirement"])
            for s in scenarios
            for v in s.get("verdicts") or []
            if v.get("kind", "requirement") != "requirement"
        }
    )
    rows = requirements + expectations
    ran = [s["id"] for s in scenarios if "timeline" in s]
    assert {s["id"] for s in scenarios if s.get("outcome") == "passed"} <= set(ran), (
        "a passing scenario ran, so results.json must hold its timeline"
    )
    ok = "ok" if results["summary"]["ok"] else "failed"
    shots: dict[str, list[Path]] = {"report": [], "timeline": []}
    with open_in_browser(page_file, timeout_s=60) as page:
        assert page.count("header.verdict") == 1
        assert page.count(f"header.verdict.{ok}") == 1, f"the header must say {ok}"
        cells = page.count("table.matrix td.cell")
        assert cells == len(rows) * len(scenarios), (
            f"{cells} matrix cells for {len(requirements)} requirements + {len(expectations)} "
            f"scenario expectations, x {len(scenarios)} scenarios"
        )
        per_row = page.evaluate(
            "[...document.querySelectorAll('table.matrix tr')]"
            ".map(tr => tr.querySelectorAll('td.cell').length).filter(n => n > 0)"
        )
        assert per_row == [len(scenarios)] * len(rows), f"cells per matrix row: {per_row}"
        states = sum(page.count(f"table.matrix td.cell.{state}") for state in CELL_STATES)
        assert states == cells, "each cell has exactly one state of " + "|".join(CELL_STATES)
        assert page.count("table.matrix td.cell.pass") >= 1
        dangling = page.evaluate(
            "[...document.querySelectorAll('table.matrix td.cell a[href^=\"#\"]')]"
            ".map(a => a.getAttribute('href'))"
            ".filter(h => !document.getElementById(h.slice(1)))"
        )
        assert dangling == [], f"matrix links to no element: {dangling}"
        assert page.count("table.matrix td.cell a[href^='#scn-']") >= 1
        assert page.count("section.scenario") == len(scenarios)
        for scenario_id in ran:
            svg = f"section.scenario#{html_id(scenario_id)} svg.timeline"
            assert page.count(svg) == 1, f"no timeline picture for {scenario_id}"
            assert page.count(f"{svg} g.lane") >= 2, f"{scenario_id}: a timeline has lanes"
            assert page.count(f"{svg} g.item") >= 1, f"{scenario_id}: an empty timeline"
            assert page.count(f"{svg} g.item > title") >= 1, f"{scenario_id}: no hover text"
        assert page.count("svg.timeline") == len(ran)
        if band_in is not None:
            band = f"section.scenario#{html_id(band_in)} svg.timeline g.item.band"
            assert page.count(band) >= 1, f"no stall band in {band_in}'s timeline"
        if cut_in is not None:
            cut = f"section.scenario#{html_id(cut_in)} svg.timeline g.item.cut"
            assert page.count(cut) >= 1, f"no cut in {cut_in}'s timeline"
        for out in out_dirs:
            shots["report"].append(page.screenshot(out / "report.png"))
            if band_in is not None:
                section = f"section.scenario#{html_id(band_in)}"
                shots["timeline"].append(page.screenshot(out / "timeline.png", section))
        assert page.problems() == [], "\n".join(page.problems())
    return shots


def _record(request: pytest.FixtureRequest, shots: dict[str, list[Path]]) -> None:
    for kind, paths in shots.items():
        for index, path in enumerate(paths):
            assert path.stat().st_size > 1000, f"{path} is no real screenshot"
            name = f"screenshot_{kind}" + (f"_{index}" if index else "")
            request.node.user_properties.append((name, str(path)))


def test_the_proxy_timeout_report_renders_in_chromium(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    report_dir = tmp_path / "reports"
    _run(PROXY_TIMEOUT, report_dir)
    shots = check_report_in_browser(
        report_dir, _artifact_dirs(tmp_path, request), band_in=PROXY_TIMEOUT_ID
    )
    assert shots["timeline"] and (tmp_path / "timeline.png").is_file()
    _record(request, shots)


def test_a_gateway_fault_report_renders_in_chromium(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    require_module("google.adk")
    report_dir = tmp_path / "reports"
    _run(GATEWAY_FAULT, report_dir)
    shots = check_report_in_browser(
        report_dir, _artifact_dirs(tmp_path, request), cut_in=GATEWAY_FAULT_ID
    )
    _record(request, shots)


# --- the check itself, on a hand-made report with the shared selectors --------------------------


def _hand_made(report_dir: Path, *, extra: str = "", cells: int | None = None) -> Path:
    """A report.html and results.json, made by hand with issue 13's selectors: two
    requirements and one expectation x one scenario, its timeline with lanes, a stall band and
    a cut. ``cells`` makes that many matrix rows instead of three."""
    report_dir.mkdir(parents=True)
    results = {
        "summary": {"ok": True},
        "requirements": {"A2A-C-RECOVERY": {}, "A2A-C-GAP": {}},
        "scenarios": [
            {
                "id": PROXY_TIMEOUT_ID,
                "outcome": "passed",
                "timeline": {},
                "verdicts": [
                    {"requirement": "A2A-C-RECOVERY", "outcome": "pass"},
                    {"requirement": "expect.result", "kind": "expectation", "outcome": "pass"},
                ],
            }
        ],
    }
    (report_dir / "results.json").write_text(json.dumps(results), "utf-8")
    anchor = f"#{html_id(PROXY_TIMEOUT_ID)}"
    row = f'<td class="cell pass"><a href="{anchor}">✓</a></td>'
    rows = "".join(f"<tr><th>r{i}</th>{row}</tr>" for i in range(3 if cells is None else cells))
    (report_dir / "report.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>streamproof</title></head>'
        '<body><header class="verdict ok"><h1>ok</h1></header>'
        f'<table class="matrix">{rows}</table>'
        f'<section class="scenario" id="{anchor[1:]}"><h2>proxy timeout</h2>'
        '<svg class="timeline" width="600" height="120" xmlns="http://www.w3.org/2000/svg">'
        '<g class="lane"><line x1="10" y1="30" x2="590" y2="30" stroke="black"/></g>'
        '<g class="lane"><line x1="10" y1="90" x2="590" y2="90" stroke="black"/></g>'
        '<g class="item band"><title>stall 40 s (4.00 s real)</title>'
        '<rect x="200" y="20" width="100" height="80" fill="#999"/></g>'
        '<g class="item cut"><title>rst</title><line x1="320" y1="20" x2="320" y2="100" '
        'stroke="red"/></g></svg></section>'
        f"{extra}</body></html>",
        "utf-8",
    )
    return report_dir


def test_the_check_passes_a_sound_hand_made_report_and_saves_its_screenshots(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    report_dir = _hand_made(tmp_path / "reports")
    shots = check_report_in_browser(
        report_dir,
        [tmp_path / "a", tmp_path / "b"],
        band_in=PROXY_TIMEOUT_ID,
        cut_in=PROXY_TIMEOUT_ID,
    )
    assert shots["report"] == [tmp_path / "a" / "report.png", tmp_path / "b" / "report.png"]
    assert shots["timeline"] == [tmp_path / "a" / "timeline.png", tmp_path / "b" / "timeline.png"]
    assert all(path.read_bytes()[:4] == b"\x89PNG" for paths in shots.values() for path in paths)
    _record(request, shots)
    assert request.node.user_properties[-4:] == [
        ("screenshot_report", str(tmp_path / "a" / "report.png")),
        ("screenshot_report_1", str(tmp_path / "b" / "report.png")),
        ("screenshot_timeline", str(tmp_path / "a" / "timeline.png")),
        ("screenshot_timeline_1", str(tmp_path / "b" / "timeline.png")),
    ]


@pytest.mark.parametrize(
    ("extra", "cells", "says"),
    [
        ('<script>console.error("the matrix script broke")</script>', None, "console error"),
        ('<img src="http://127.0.0.1:9/logo.png" alt="logo">', None, "network use"),
        ('<script src="https://127.0.0.1:9/chart.js"></script>', None, "network use"),
        ("", 2, "2 matrix cells for 2 requirements \\+ 1 scenario expectations"),
        (
            '<a href="#scn-nowhere">x</a><table class="matrix"><tr><td class="cell fail">'
            '<a href="#scn-nowhere">✗</a></td></tr></table>',
            2,
            "matrix links to no element",
        ),
        (
            '<table class="matrix"><tr><td class="cell pass">✓</td><td class="cell pass">✓</td>'
            "</tr></table>",
            1,
            "cells per matrix row",
        ),
    ],
    ids=[
        "console-error",
        "network-image",
        "network-script",
        "missing-cell",
        "dangling-link",
        "ragged-row",
    ],
)
def test_the_check_fails_a_broken_hand_made_report(
    tmp_path: Path, extra: str, cells: int | None, says: str
) -> None:
    report_dir = _hand_made(tmp_path / "reports", extra=extra, cells=cells)
    with pytest.raises(AssertionError, match=says):
        check_report_in_browser(report_dir, [tmp_path / "out"], band_in=PROXY_TIMEOUT_ID)


def test_the_check_fails_a_timeline_without_the_stall_band_or_a_missing_report(
    tmp_path: Path,
) -> None:
    report_dir = _hand_made(tmp_path / "reports")
    page = report_dir / "report.html"
    marks = (
        page.read_text("utf-8").replace("item band", "item mark").replace("item cut", "item mark")
    )
    page.write_text(marks, "utf-8")
    with pytest.raises(AssertionError, match="no stall band"):
        check_report_in_browser(report_dir, [tmp_path / "out"], band_in=PROXY_TIMEOUT_ID)
    with pytest.raises(AssertionError, match="no cut"):
        check_report_in_browser(report_dir, [tmp_path / "out"], cut_in=PROXY_TIMEOUT_ID)
    page.unlink()
    with pytest.raises(AssertionError, match=r"report\.html was not written"):
        check_report_in_browser(report_dir, [tmp_path / "out"])


def test_screenshots_also_go_to_the_artifacts_folder_when_named(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ARTIFACTS_ENV, raising=False)
    assert _artifact_dirs(tmp_path, request) == [tmp_path]
    monkeypatch.setenv(ARTIFACTS_ENV, str(tmp_path / "ci"))
    dirs = _artifact_dirs(tmp_path, request)
    assert dirs == [tmp_path, tmp_path / "ci" / request.node.name]
    report_dir = _hand_made(tmp_path / "reports")
    check_report_in_browser(report_dir, dirs, band_in=PROXY_TIMEOUT_ID)
    assert (tmp_path / "ci" / request.node.name / "timeline.png").is_file()
