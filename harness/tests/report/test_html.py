"""report.html from a results.json report: parsed back (html.parser) and checked by its
selectors: the header's verdict, the matrix's rows, columns and cell states, links that land on
a scenario's section, nothing fetched from outside, and escaping."""

from __future__ import annotations

import datetime as dt
import json
from html.parser import HTMLParser
from typing import Any

from streamproof.core.timeline import Lane, Timeline, TimelineItem
from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.report.html import GENERATOR, anchor, cell_state, render_html, rerun_command
from streamproof.report.results import dumps_results, results_report

_VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "source", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.content: list[Node | str] = []
        """Children and text in document order."""

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> list[Node]:
        out = [self]
        for child in self.children:
            out += child.iter()
        return out

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag and (cls is None or cls in n.classes)]

    def all_text(self) -> str:
        return "".join(c if isinstance(c, str) else c.all_text() for c in self.content)


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.at = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        self.at.content.append(node)
        if tag not in _VOID:
            self.at = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        self.at.content.append(node)

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"unbalanced </{tag}>"
        self.at = node.parent

    def handle_data(self, data: str) -> None:
        self.at.content.append(data)


def parse(html: str) -> Node:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    return tree.root


def _v(rid: str, outcome: Outcome, level: Level = Level.MUST, **extra: Any) -> dict[str, Any]:
    kind = Kind.EXPECTATION if rid.startswith("expect.") else Kind.REQUIREMENT
    verdict = Verdict(
        requirement=rid,
        level=level,
        outcome=outcome,
        message=extra.pop("message", f"{rid}: something"),
        kind=kind,
        **extra,
    )
    return verdict.model_dump(mode="json", exclude_defaults=True)


TIMELINE = Timeline(
    lanes=(Lane(id="browser", label="browser"), Lane(id="gateway", label="gateway")),
    items=(
        TimelineItem(kind="arrow", t=0.1, lane="browser", to="gateway", label="POST"),
        TimelineItem(
            kind="failure", t=0.4, lane="gateway", requirement="GW-ERROR-FRAME", level="MUST"
        ),
    ),
    time_scale=0.1,
)


def _report(**summary: Any) -> dict[str, Any]:
    failed_verdicts = [
        _v("GW-SSE-RESPONSE", Outcome.PASS),
        _v(
            "GW-ERROR-FRAME",
            Outcome.FAIL,
            message="GW-ERROR-FRAME: a bare <script>alert(1)</script> done",
            expected="... error",
            observed="delta done",
            at=0.4,
        ),
        _v("GW-FRAME-ID-FRESH", Outcome.NON_STRICT, Level.SHOULD, observed="1 1"),
        _v("GW-DISPOSE", Outcome.NOT_APPLICABLE),
        _v("GW-AUTH", Outcome.SKIP, Level.SHOULD),
        _v("expect.frames", Outcome.FAIL, expected="delta* error", observed="delta done"),
    ]
    known = _v("GW-ERROR-EVENT", Outcome.FAIL)
    known["baseline"] = "tracked in BUG-7"
    records = [
        {
            "id": "gateway/plain",
            "title": "Plain answer",
            "file": "scenarios/gateway/plain.yaml",
            "line": 3,
            "kind": "gateway",
            "requirements": ["GW-SSE-RESPONSE"],
            "outcome": "failed",
            "known_failure": True,  # its only enforced failure is in the baseline
            "verdicts": [_v("GW-SSE-RESPONSE", Outcome.PASS), known],
            "observation_detail": "summary",
            "observation": {"frame_sequence": "delta\u00d73 message done", "frames": 5},
        },
        {
            "id": "gateway/model-error",
            "title": "Model fails <mid-stream>",
            "file": "scenarios/gateway/model error.yaml",
            "line": 9,
            "kind": "gateway",
            "requirements": ["GW-ERROR-FRAME"],
            "outcome": "failed",
            "verdicts": failed_verdicts,
            "observation_detail": "full",
            "observation": {
                "frames": [{"event": "delta"}, {"event": "done"}],
                "response": {"status": 200, "end": "clean"},
                "target_log": "line 1\n<b>not bold</b>\n",
            },
            "timeline": TIMELINE.model_dump(mode="json", exclude_defaults=True),
        },
        {
            "id": "gateway/multi",
            "title": "Multi agent",
            "file": "scenarios/gateway/multi.yaml",
            "line": 1,
            "kind": "gateway",
            "requirements": ["GW-ANSWER-AS-MESSAGE"],
            "outcome": "skipped",
            "error": "the target does not declare multi_agent",
        },
        {
            "id": "a2a_client/failed",
            "title": "Failed task",
            "file": "scenarios/a2a_client/failed.yaml",
            "line": 1,
            "kind": "a2a-client",
            "requirements": ["A2A-C-STATUS"],
            "outcome": "passed",
            "verdicts": [_v("A2A-C-STATUS", Outcome.PASS)],
            "observation_detail": "full",
            "observation": {
                "ledger": {"requests": [{"rpc_method": "message/stream"}]},
                "turns": [
                    {
                        "turn": 0,
                        "result": {"status": "failed", "artifacts": []},
                        "exit_code": 0,
                        "stderr_tail": "client: giving up",
                    }
                ],
            },
        },
    ]
    report = results_report(
        records,
        target_file="my target.yaml",
        bug="bare-done-on-failure",
        time_scale=0.1,
        strict=False,
        started_at=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        duration_s=12.5,
        exitstatus=1,
        command_line=["streamproof", "run", "scenarios"],
    )
    report["summary"].update(summary)
    # what a saved results.json gives back
    loaded: dict[str, Any] = json.loads(dumps_results(report))
    return loaded


def _matrix(page: Node) -> tuple[list[str], dict[str, dict[str, Node]]]:
    (table,) = page.find_all("table", "matrix")
    columns = [th.all_text().split(" ")[-1] for th in table.find_all("th", "scn")]
    rows: dict[str, dict[str, Node]] = {}
    for tr in table.find_all("tr"):
        head = [th for th in tr.children if th.tag == "th" and "req" in th.classes]
        if head:
            cells = [td for td in tr.children if td.tag == "td" and "cell" in td.classes]
            assert len(cells) == len(columns)
            rows[head[0].all_text()] = dict(zip(columns, cells, strict=True))
    return columns, rows


def _state(cell: Node) -> str:
    (state,) = cell.classes - {"cell"}
    return state


def test_the_header_says_failed_with_the_counts_target_time_scale_and_command() -> None:
    page = parse(render_html(_report()))
    (header,) = page.find_all("header", "verdict")
    assert header.classes == {"verdict", "failed"}
    text = " ".join(header.all_text().split())
    for expected in (
        "2 MUST requirement(s) broken",  # one known; the summary counts it (baseline: helper C)
        "FAILED: 2 MUST requirement(s) broken, 1 expectation(s) not met",
        "1 SHOULD unmet",
        "1 skipped scenarios",
        "1 not applicable",
        "my target.yaml",
        "bare-done-on-failure",
        "0.1 (real seconds per scenario second)",
        "streamproof run scenarios",
        "pydantic",
    ):
        assert expected in text, expected
    ok = parse(render_html(_report(ok=True)))
    assert ok.find_all("header", "verdict")[0].classes == {"verdict", "ok"}


def test_the_header_says_which_shard_and_how_many_workers() -> None:
    report = _report()
    whole = " ".join(parse(render_html(report)).find_all("header", "verdict")[0].all_text().split())
    assert "shard" not in whole and "parallel workers" not in whole
    report["environment"]["shard"] = {
        "index": 2,
        "count": 4,
        "scenarios": 11,
        "of": 42,
        "balanced_by": "durations",
        "durations_from": "reports/results.json",
    }
    report["environment"]["workers"] = 2
    (header,) = parse(render_html(report)).find_all("header", "verdict")
    text = " ".join(header.all_text().split())
    assert (
        "shard 2/4 (11 of the 42 selected scenarios, balanced by durations); 2 parallel workers"
        in text
    )


def test_the_matrix_has_a_row_per_requirement_a_column_per_scenario_and_each_state() -> None:
    columns, rows = _matrix(parse(render_html(_report())))
    assert columns == ["gateway/plain", "gateway/model-error", "gateway/multi", "a2a_client/failed"]
    model_error = {rid: _state(cells["gateway/model-error"]) for rid, cells in rows.items()}
    assert model_error["GW-SSE-RESPONSE"] == "pass"
    assert model_error["GW-ERROR-FRAME"] == "fail"
    assert model_error["GW-FRAME-ID-FRESH"] == "unmet"
    assert model_error["GW-DISPOSE"] == "na"
    assert model_error["GW-AUTH"] == "skip"
    assert model_error["A2A-C-STATUS"] == "none"
    assert _state(rows["GW-ERROR-EVENT"]["gateway/plain"]) == "known"
    # the skipped scenario's declared requirement is a skip; it judged nothing else
    assert _state(rows["GW-ANSWER-AS-MESSAGE"]["gateway/multi"]) == "skip"
    assert _state(rows["GW-SSE-RESPONSE"]["gateway/multi"]) == "none"
    assert _state(rows["A2A-C-STATUS"]["a2a_client/failed"]) == "pass"
    # the expectations come after every requirement
    names = list(rows)
    assert names[-1] == "expect.frames" and _state(rows["expect.frames"]["gateway/model-error"])
    assert all(not n.startswith("expect.") for n in names[:-1])
    # symbols, not colour alone
    assert rows["GW-ERROR-FRAME"]["gateway/model-error"].all_text() == "\u2717"
    assert rows["GW-ERROR-EVENT"]["gateway/plain"].all_text() == "\u2691"
    assert rows["GW-FRAME-ID-FRESH"]["gateway/model-error"].all_text() == "!"


def test_judged_cells_link_to_a_section_that_exists_and_holds_the_timeline() -> None:
    page = parse(render_html(_report()))
    sections = {s.attrs["id"]: s for s in page.find_all("section", "scenario")}
    assert set(sections) == {
        "scn-gateway--plain",
        "scn-gateway--model-error",
        "scn-gateway--multi",
        "scn-a2a_client--failed",
    }
    _, rows = _matrix(page)
    links = 0
    for cells in rows.values():
        for cell in cells.values():
            anchors = cell.find_all("a")
            if _state(cell) == "none":
                assert not anchors
                continue
            (link,) = anchors
            assert link.attrs["href"].removeprefix("#") in sections
            links += 1
    assert links >= 9
    failed = sections["scn-gateway--model-error"]
    (svg,) = failed.find_all("svg", "timeline")
    assert [g.attrs.get("data-lane") for g in svg.find_all("g", "lane")] == ["browser", "gateway"]
    assert len(svg.find_all("g", "item")) == 2 and svg.find_all("g", "failure")
    assert "no timeline recorded" in sections["scn-gateway--plain"].all_text()


def test_failed_scenarios_come_first_with_evidence_log_and_rerun_command() -> None:
    page = parse(render_html(_report()))
    order = [s.attrs["id"] for s in page.find_all("section", "scenario")]
    assert order[0] == "scn-gateway--model-error" and order[-1] == "scn-gateway--multi"
    failed = page.find_all("section", "scenario")[0]
    text = failed.all_text()
    assert "scenarios/gateway/model error.yaml:9" in text
    assert "delta* error" in text and "delta done" in text  # expected vs observed
    assert "at 4.0 s scenario time (0.400 s real)" in text  # when the rule broke
    assert "frame pattern" in text and "<b>not bold</b>" in text  # the target's output tail
    (rerun,) = failed.find_all("code", "rerun")
    assert rerun.all_text() == (
        "streamproof run --target 'my target.yaml' --bug bare-done-on-failure "
        "--time-scale 0.1 'scenarios/gateway/model error.yaml' -k gateway/model-error"
    )
    a2a = next(s for s in page.find_all("section") if s.attrs.get("id") == "scn-a2a_client--failed")
    assert "client: giving up" in a2a.all_text() and "message/stream" in a2a.all_text()
    skipped = page.find_all("section", "skipped")[0]
    assert "the target does not declare multi_agent" in skipped.all_text()


def test_nothing_is_fetched_from_outside_and_nothing_runs() -> None:
    html = render_html(_report())
    page = parse(html)
    for node in page.iter():
        for name in ("src", "href", "action", "xlink:href", "poster", "data"):
            value = node.attrs.get(name, "")
            assert not value.startswith(("http:", "https:", "//")), (node.tag, name, value)
        assert node.tag not in ("script", "link", "iframe", "img", "object", "embed")
    assert "@import" not in html and "url(http" not in html
    assert f'<meta name="generator" content="{GENERATOR}">' in html


def test_a_message_with_markup_is_escaped() -> None:
    html = render_html(_report())
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = parse(html)
    assert not page.find_all("script")
    assert "Model fails <mid-stream>" in page.all_text()


def test_the_same_report_gives_the_same_bytes() -> None:
    assert render_html(_report()) == render_html(_report())


def test_a_bad_input_report_shows_its_error_and_no_matrix() -> None:
    report = results_report(
        [],
        target_file=None,
        bug=None,
        time_scale=0.1,
        strict=False,
        started_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
        duration_s=0.0,
        exitstatus=2,
    )
    report["summary"].update(ok=False, error="streamproof run: nowhere: no such file or folder")
    page = parse(render_html(report))
    assert page.find_all("header", "failed")
    assert "nowhere: no such file or folder" in page.find_all("header")[0].all_text()
    assert not page.find_all("table", "matrix") and "No scenario ran." in page.all_text()


def test_an_unreadable_timeline_is_said_not_raised() -> None:
    report = _report()
    report["scenarios"][0]["timeline"] = {"lanes": "nope"}
    section = next(
        s
        for s in parse(render_html(report)).find_all("section")
        if s.attrs.get("id") == "scn-gateway--plain"
    )
    assert "the recorded timeline is unreadable" in section.all_text()


def test_a_timeline_that_could_not_be_drawn_says_why() -> None:
    report = _report()
    record = next(r for r in report["scenarios"] if r["id"] == "gateway/plain")
    record.pop("timeline", None)
    record["timeline_error"] = "KeyError: 'model'"
    section = next(
        s
        for s in parse(render_html(report)).find_all("section")
        if s.attrs.get("id") == "scn-gateway--plain"
    )
    assert "the timeline could not be drawn: KeyError: 'model'" in section.all_text()


def test_cell_state_is_the_worst_verdict_and_anchor_replaces_slashes() -> None:
    assert cell_state([{"outcome": "pass"}, {"outcome": "fail"}]) == "fail"
    assert cell_state([{"outcome": "fail", "baseline": "x"}, {"outcome": "pass"}]) == "known"
    assert cell_state([{"outcome": "non-strict"}, {"outcome": "pass"}]) == "unmet"
    assert cell_state([{"outcome": "info"}]) == "none" and cell_state([]) == "none"
    assert anchor("gateway/a/b") == "scn-gateway--a--b"
    assert rerun_command({"time_scale": 1.0}, {"file": "f.yaml", "id": "x/y"}) == (
        "streamproof run --time-scale 1 f.yaml -k x/y"
    )


def test_a_baseline_summary_names_its_file_known_new_and_fixed_failures() -> None:
    baseline = {
        "file": "ci/baseline.yaml",
        "known": 1,
        "fixed": [{"scenario": "gateway/x", "requirement": "GW-AUTH", "reason": "BUG-3"}],
        "new_failures": 1,
    }
    page = parse(render_html(_report(baseline=baseline)))
    text = " ".join(page.find_all("header")[0].all_text().split())
    assert "ci/baseline.yaml: 1 known failure(s), 1 new; fixed since: GW-AUTH in gateway/x" in text
    baseline["not_run"] = [{"scenario": "gateway/y", "requirement": "GW-DISPOSE", "reason": "r"}]
    page = parse(render_html(_report(baseline=baseline)))
    text = " ".join(page.find_all("header")[0].all_text().split())
    assert "; not run: GW-DISPOSE in gateway/y" in text
    without = parse(render_html(_report())).find_all("header")[0].all_text()
    assert "ci/baseline.yaml" not in without and "fixed since" not in without


def test_a_scenario_whose_failures_are_all_known_is_flagged_known_not_failed() -> None:
    page = parse(render_html(_report()))
    (header,) = page.find_all("header")
    text = " ".join(header.all_text().split())
    assert "Failed: gateway/model-error Known failures (baseline): gateway/plain" in text
    order = [s.attrs["id"] for s in page.find_all("section", "scenario")]
    assert order[:2] == ["scn-gateway--model-error", "scn-gateway--plain"]
    plain = page.find_all("section", "known")
    assert [s.attrs["id"] for s in plain] == ["scn-gateway--plain"]
    assert "known failure" in plain[0].all_text() and "tracked in BUG-7" in plain[0].all_text()
    (column,) = [th for th in page.find_all("th", "known")]
    assert column.all_text() == "\u2691 gateway/plain"
    assert cell_state([{"outcome": "non-strict", "baseline": "x"}]) == "known"  # --strict


def test_a_page_screenshot_is_shown_as_a_picture_not_as_text() -> None:
    report = _report()
    png = "data:image/png;base64,iVBORw0KGgo="
    report["scenarios"][0]["observation"] = {"mode": "page", "screenshot": png}
    report["scenarios"][1]["observation"] = {"mode": "page", "screenshot": "javascript:x"}
    html = render_html(report)
    assert html.count(f'src="{png}"') == 1 and "javascript:x" not in html
    assert "&#34;screenshot&#34;" not in html  # not repeated in the observation's JSON


def test_the_highlights_list_push_deliveries() -> None:
    from streamproof.report.html import _highlights

    ledger = {
        "requests": [],
        "deliveries": [
            {"delivery": 1, "ended": "acknowledged"},
            {"delivery": None, "ended": "refused", "fault": "no_token"},
            {"delivery": 2, "ended": "lost", "fault": "lost"},
        ],
    }
    shown = dict(_highlights({"ledger": ledger}))
    assert shown["push deliveries (ledger)"] == (
        "#1 acknowledged forged refused [no_token] #2 lost [lost]"
    )
