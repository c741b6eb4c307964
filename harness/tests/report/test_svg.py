"""The timeline picture: parsed back with xml.etree and checked by structure and position."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest

from streamproof.core.timeline import MAX_ITEMS, Lane, Timeline, TimelineItem
from streamproof.report.svg import (
    ARROWHEAD,
    BOTTOM,
    HATCH,
    LANE_W,
    LEFT,
    MIN_PLOT_H,
    SVG_CSS,
    TOP,
    svg_defs,
    tick_step,
    timeline_svg,
)

NS = "{http://www.w3.org/2000/svg}"
LANES = (
    Lane(id="browser", label="browser"),
    Lane(id="gateway", label="gateway"),
    Lane(id="model-link", label="model link"),
)


def _story(**extra: object) -> Timeline:
    """A gateway scenario at time scale 0.1: a request, a streamed answer, a stall from 40 s
    (4 s real) to the end, a watchdog window, a reset, the result and a broken rule."""
    items = (
        TimelineItem(kind="arrow", t=0.1, lane="browser", to="gateway", label="POST /run_sse"),
        TimelineItem(kind="arrow", t=0.2, lane="gateway", to="model-link", label="generate"),
        TimelineItem(kind="mark", t=0.5, lane="model-link", label="chunk"),
        TimelineItem(kind="mark", t=0.6, t_end=1.5, lane="model-link", label="chunk", count=12),
        TimelineItem(kind="arrow", t=1.0, lane="gateway", to="browser", label="delta"),
        TimelineItem(kind="band", t=4.0, lane="model-link", label="stall"),
        TimelineItem(kind="window", t=1.6, t_end=3.6, lane="gateway", label="watchdog 20 s"),
        TimelineItem(kind="cut", t=4.5, lane="browser", label="rst"),
        TimelineItem(kind="result", t=5.0, lane="browser", label="completed"),
        TimelineItem(
            kind="failure", t=4.6, lane="gateway", requirement="GW-ERROR-FRAME", level="MUST"
        ),
    )
    fields: dict[str, object] = {
        "lanes": LANES,
        "items": items,
        "time_scale": 0.1,
        "horizon_s": 60.0,
    }
    fields.update(extra)
    return Timeline.model_validate(fields)


def _parse(timeline: Timeline) -> ET.Element:
    return ET.fromstring(timeline_svg(timeline))


def _items(svg: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in svg.iter(f"{NS}g") if g.get("class") == f"item {kind}"]


def _y_of(svg: ET.Element, seconds: str) -> float:
    """The y of the axis tick labelled ``seconds`` (``40 s``)."""
    axis = next(g for g in svg.iter(f"{NS}g") if g.get("class") == "axis")
    lines = axis.findall(f"{NS}line")
    texts = axis.findall(f"{NS}text")
    for line, text in zip(lines, texts, strict=True):
        if text.text == seconds:
            return float(line.get("y1", "nan"))
    raise AssertionError(f"no tick {seconds!r}: {[t.text for t in texts]}")


def test_every_lane_and_item_has_its_group_and_a_title_for_hover() -> None:
    svg = _parse(_story())
    assert svg.tag == f"{NS}svg" and svg.get("class") == "timeline"
    lanes = [g for g in svg.iter(f"{NS}g") if g.get("class") == "lane"]
    assert [g.get("data-lane") for g in lanes] == ["browser", "gateway", "model-link"]
    # lanes left to right, one lane width apart
    xs = [float(g.find(f"{NS}line").get("x1", "nan")) for g in lanes]  # type: ignore[union-attr]
    assert xs == [LEFT + LANE_W * (i + 0.5) for i in range(3)]
    counts = {
        kind: len(_items(svg, kind))
        for kind in ("arrow", "mark", "band", "cut", "window", "result", "failure")
    }
    assert counts == {
        "arrow": 3,
        "mark": 2,
        "band": 1,
        "cut": 1,
        "window": 1,
        "result": 1,
        "failure": 1,
    }
    for group in svg.iter(f"{NS}g"):
        if (group.get("class") or "").startswith("item "):
            title = group.find(f"{NS}title")
            assert title is not None and title.text


def test_time_runs_down_in_scenario_seconds_with_real_time_on_hover() -> None:
    svg = _parse(_story())
    # 0.1 real seconds per scenario second: the last item is at 50 s, and the axis runs just
    # past it in 10 s steps (the 60 s horizon would leave the end of the picture empty)
    labels = [
        t.text
        for g in svg.iter(f"{NS}g")
        if g.get("class") == "axis"
        for t in g.findall(f"{NS}text")
    ]
    assert labels == ["0 s", "10 s", "20 s", "30 s", "40 s", "50 s"]
    assert _y_of(svg, "0 s") == TOP and _y_of(svg, "10 s") < _y_of(svg, "50 s")
    (cut,) = _items(svg, "cut")
    assert "45.0 s scenario time, 4.500 s real" in (cut.findtext(f"{NS}title") or "")


def test_a_stall_band_is_hatched_from_its_start_to_the_end() -> None:
    svg = _parse(_story())
    (band,) = _items(svg, "band")
    rect = band.find(f"{NS}rect")
    assert rect is not None
    y, height = float(rect.get("y", "nan")), float(rect.get("height", "nan"))
    assert y == pytest.approx(_y_of(svg, "40 s"), abs=0.1)
    plot_bottom = float(svg.get("height", "nan")) - BOTTOM
    assert y + height == pytest.approx(plot_bottom, abs=0.1)  # open: to the end of the picture
    assert y + height > _y_of(svg, "50 s")
    assert f"fill:url(#{HATCH})" in SVG_CSS.replace(" ", "")  # the hatch, not a colour alone
    assert "until the end" in (band.findtext(f"{NS}title") or "")


def test_arrows_point_from_their_source_lane_to_their_destination_with_a_head() -> None:
    svg = _parse(_story())
    x_of = {
        g.get("data-lane"): float(g.find(f"{NS}line").get("x1", "nan"))  # type: ignore[union-attr]
        for g in svg.iter(f"{NS}g")
        if g.get("class") == "lane"
    }
    arrows = _items(svg, "arrow")
    ends = []
    for arrow in arrows:
        line = arrow.find(f"{NS}line")
        assert line is not None and line.get("marker-end") == f"url(#{ARROWHEAD})"
        ends.append((float(line.get("x1", "nan")), float(line.get("x2", "nan"))))
    # browser -> gateway, gateway -> model link, then the delta back from gateway to browser
    assert ends[0][0] == x_of["browser"] and ends[0][1] == pytest.approx(x_of["gateway"], abs=4)
    assert ends[1][0] == x_of["gateway"] and ends[1][1] > ends[1][0]
    assert ends[2][0] == x_of["gateway"] and ends[2][1] == pytest.approx(x_of["browser"], abs=4)
    assert [a.find(f"{NS}text").text for a in arrows] == [  # type: ignore[union-attr]
        "POST /run_sse",
        "generate",
        "delta",
    ]


def test_shapes_read_in_greyscale_burst_cut_window_result_failure() -> None:
    svg = _parse(_story())
    burst = next(m for m in _items(svg, "mark") if m.find(f"{NS}rect") is not None)
    assert "\u00d712" in (burst.findtext(f"{NS}text") or "")
    single = next(m for m in _items(svg, "mark") if m.find(f"{NS}rect") is None)
    assert single.find(f"{NS}line") is not None
    (cut,) = _items(svg, "cut")
    path = cut.find(f"{NS}path")
    assert path is not None and path.get("d", "").count("M") == 2  # an X: two strokes
    assert cut.findtext(f"{NS}text") == "rst"
    (window,) = _items(svg, "window")
    assert window.findtext(f"{NS}text") == "watchdog 20 s"
    bracket = window.find(f"{NS}path")
    assert bracket is not None and re.fullmatch(
        r"M[\d.,]+H[\d.]+V[\d.]+H[\d.]+", bracket.get("d", "")
    )
    (result,) = _items(svg, "result")
    assert result.find(f"{NS}rect") is not None and result.findtext(f"{NS}text") == "completed"
    (failure,) = _items(svg, "failure")
    diamond = failure.find(f"{NS}path")
    assert diamond is not None and diamond.get("d", "").count("L") == 3  # a diamond
    assert failure.findtext(f"{NS}text") == "GW-ERROR-FRAME"
    y = float(diamond.get("d", "M0,0").split(",")[1].split("L")[0]) + 7
    assert y == pytest.approx(
        _y_of(svg, "40 s") + (_y_of(svg, "50 s") - _y_of(svg, "40 s")) * 0.6, abs=0.2
    )


def test_a_failure_of_no_lane_and_an_unknown_lane_are_still_drawn() -> None:
    items = (
        TimelineItem(kind="failure", t=1.0, requirement="expect.frames", level="MUST"),
        TimelineItem(kind="arrow", t=0.5, lane="browser", to="elsewhere", label="?"),
    )
    svg = _parse(Timeline(lanes=LANES[:1], items=items))
    lanes = [g.get("data-lane") for g in svg.iter(f"{NS}g") if g.get("class") == "lane"]
    assert lanes == ["browser", "elsewhere"]
    (failure,) = _items(svg, "failure")
    assert failure.findtext(f"{NS}text") == "expect.frames"


def test_the_same_timeline_gives_the_same_bytes_and_coordinates_have_one_decimal() -> None:
    text = timeline_svg(_story())
    assert text == timeline_svg(_story().model_copy())
    numbers = re.findall(r'(?:x|y|x1|x2|y1|y2|width|height)="(-?[\d.]+)"', text)
    assert numbers and all(len(n.split(".")[1]) == 1 for n in numbers if "." in n)
    # the shared pieces are not repeated in every picture
    assert "<defs>" not in text and "<style>" not in text
    defs = ET.fromstring(svg_defs())
    ids = {e.get("id") for e in defs.iter() if e.get("id")}
    assert ids == {ARROWHEAD, HATCH}


def test_labels_are_escaped() -> None:
    items = (
        TimelineItem(kind="result", t=1.0, lane="browser", label="<script>x</script>", detail="&"),
    )
    text = timeline_svg(Timeline(lanes=(Lane(id="browser", label="a<b"),), items=items))
    assert "<script>" not in text
    root = ET.fromstring(text)  # still well-formed
    (result,) = _items(root, "result")
    assert result.findtext(f"{NS}text") == "<script>x</script>"
    assert (result.findtext(f"{NS}title") or "").endswith("&")


def test_a_long_timeline_is_capped_and_says_how_much_was_left_out() -> None:
    marks = tuple(
        TimelineItem(kind="mark", t=i * 0.01, lane="browser", label="delta") for i in range(400)
    )
    svg = _parse(Timeline(lanes=LANES[:1], items=marks))
    assert len(_items(svg, "mark")) == MAX_ITEMS
    dropped = next(t for t in svg.iter(f"{NS}text") if t.get("class") == "dropped")
    assert dropped.text == f"{400 - MAX_ITEMS} more items left out"


def test_an_empty_timeline_is_a_small_valid_picture() -> None:
    svg = _parse(Timeline(lanes=LANES[:2]))
    assert float(svg.get("height", "0")) == TOP + MIN_PLOT_H + BOTTOM
    assert not [g for g in svg.iter(f"{NS}g") if (g.get("class") or "").startswith("item")]


@pytest.mark.parametrize(
    ("end", "step"), [(60.0, 10), (1.0, 0.1), (0.05, 0.01), (600.0, 60), (7200.0, 1800)]
)
def test_ticks_are_round_and_at_most_ten(end: float, step: float) -> None:
    assert tick_step(end) == step and end / step <= 10


def test_labels_of_items_at_the_same_moment_stack_instead_of_overlapping() -> None:
    marks = [TimelineItem(kind="mark", t=1.0, lane="gateway", label=f"f{i}") for i in range(4)]
    items = (*marks, TimelineItem(kind="result", t=1.0, lane="gateway", label="clean"))
    svg = _parse(Timeline(lanes=LANES, items=items, horizon_s=10.0))
    drawn = _items(svg, "mark")
    ticks = {float(m.find(f"{NS}line").get("y1", "nan")) for m in drawn}  # type: ignore[union-attr]
    assert len(ticks) == 1  # every tick at its time
    ys = sorted(float(m.find(f"{NS}text").get("y", "nan")) for m in drawn)  # type: ignore[union-attr]
    assert all(b - a >= 11 for a, b in itertools.pairwise(ys)), ys
    (result,) = _items(svg, "result")
    box_y = float(result.find(f"{NS}text").get("y", "nan"))  # type: ignore[union-attr]
    assert box_y == ticks.pop() + 4  # the result stays at its time; the labels moved
    assert all(abs(y - box_y) >= 11 for y in ys)
