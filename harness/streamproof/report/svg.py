"""A scenario's :class:`~streamproof.core.timeline.Timeline` drawn as a sequence diagram in SVG.

Lanes are vertical lifelines, left to right; time runs down, on the scenario's clock (tick
labels like ``40 s``), and every item's ``<title>`` gives its scenario and real time on hover.
Each kind of item has its own shape, so the picture reads in greyscale too: an arrow with a
head, a tick (a burst: a thicker stretch and its count), a hatched band, an X for a cut, a bracket
for a window, a box for a result and a diamond with the requirement id for a failure.

Pure: a timeline in, SVG text out, the same bytes for the same timeline. The shared pieces
(the arrowhead marker and the hatch pattern, :func:`svg_defs`; the stylesheet, :data:`SVG_CSS`)
are written once per HTML document, and the pictures refer to them by id and class, which keeps
the report of a whole suite small.
"""

from __future__ import annotations

import math
from html import escape

from streamproof.core.timeline import Lane, Timeline, TimelineItem

__all__ = ["SVG_CSS", "svg_defs", "tick_step", "timeline_svg"]

LEFT = 56.0
"""Room for the time axis' labels."""
LANE_W = 150.0
TOP = 44.0
"""Room for the lanes' labels."""
BOTTOM = 24.0
RIGHT = 150.0
"""Room for labels right of the last lane (and for failures that belong to no lane)."""
MIN_PLOT_H = 400.0
MAX_PLOT_H = 960.0
PX_PER_ITEM = 12.0
MARGIN = 0.05
"""The axis runs this fraction past the last thing that happened."""
MAX_TICKS = 10
CHAR_W = 6.0
"""About the width of a character of the 11 px labels."""
LINE_H = 11.0
_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)

ARROWHEAD = "sp-arrowhead"
HATCH = "sp-hatch"

SVG_CSS = """\
svg.timeline{font:11px sans-serif;background:#fff}
svg.timeline text{fill:#222;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg.timeline .axis line{stroke:#ddd}
svg.timeline .axis text{fill:#666;text-anchor:end}
svg.timeline .lane line{stroke:#888;stroke-dasharray:4 3}
svg.timeline .lane text{font-weight:bold;text-anchor:middle}
svg.timeline .arrow line{stroke:#246;stroke-width:1.2}
svg.timeline .arrow text{fill:#246}
svg.timeline .mark line{stroke:#444;stroke-width:1.5}
svg.timeline .mark rect{fill:#444}
svg.timeline .band rect{fill:url(#sp-hatch);stroke:#a60;stroke-width:1}
svg.timeline .cut path{stroke:#c00;stroke-width:2.5;fill:none}
svg.timeline .cut text{fill:#c00;font-weight:bold}
svg.timeline .window path{stroke:#555;stroke-width:1.2;fill:none}
svg.timeline .window text{fill:#555;font-style:italic}
svg.timeline .result rect{fill:#eef;stroke:#224;stroke-width:1.2}
svg.timeline .result text{text-anchor:middle}
svg.timeline .failure path{fill:#c00;stroke:#600}
svg.timeline .failure text{fill:#c00;font-weight:bold}
svg.timeline .dropped{fill:#666;font-style:italic}
svg.timeline g.item:hover text{text-decoration:underline}
"""
"""The pictures' stylesheet (classes of :func:`timeline_svg`), once per document."""


def svg_defs() -> str:
    """A hidden SVG holding what every picture of a document refers to by id: the arrowhead
    marker and the stall bands' hatch pattern."""
    return (
        '<svg class="timeline-defs" width="0" height="0" aria-hidden="true" '
        'style="position:absolute">'
        "<defs>"
        f'<marker id="{ARROWHEAD}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse">'
        '<path d="M0,0L10,5L0,10z" fill="#246"/></marker>'
        f'<pattern id="{HATCH}" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        '<rect width="6" height="6" fill="#fff3e0"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#a60" stroke-width="2.5"/></pattern>'
        "</defs></svg>"
    )


def tick_step(end_s: float, max_ticks: int = MAX_TICKS) -> float:
    """The step of the time axis (scenario seconds): the smallest round step that gives at most
    ``max_ticks`` ticks from 0 to ``end_s``."""
    for step in _STEPS:
        if end_s / step <= max_ticks:
            return step
    return float(math.ceil(end_s / max_ticks / 3600) * 3600)


def timeline_svg(timeline: Timeline) -> str:
    """``timeline`` as an ``<svg class="timeline">``: one ``<g class="lane">`` per lane, one
    ``<g class="item KIND">`` per item (with a ``<title>`` for hover). At most
    :data:`~streamproof.core.timeline.MAX_ITEMS` items are drawn (:meth:`Timeline.capped`)."""
    return _Picture(timeline.capped()).render()


class _Picture:
    def __init__(self, timeline: Timeline) -> None:
        self.tl = timeline
        lanes = list(timeline.lanes)
        known = {lane.id for lane in lanes}
        # An item naming a lane the timeline does not list still gets a lifeline of its own.
        for item in timeline.items:
            for ref in (item.lane, item.to):
                if ref is not None and ref not in known:
                    lanes.append(Lane(id=ref, label=ref))
                    known.add(ref)
        self.lanes = lanes
        self.x_of = {lane.id: LEFT + LANE_W * (i + 0.5) for i, lane in enumerate(lanes)}
        ends = [timeline.scenario_time(i.t_end if i.t_end is not None else i.t) for i in self.items]
        ends += [timeline.scenario_time(i.t) for i in self.items]
        # The axis ends just after the last thing that happened (a deadline or stall window
        # reaching the horizon takes it there): a scenario allowed 30 s that was over in 12 s
        # gets the whole height for its 12 s. With nothing drawn, the horizon sets it.
        last = max([*ends, 0.0])
        self.end_s = last * (1 + MARGIN) if last > 0 else (timeline.horizon_s or 1.0)
        n = len(timeline.items)
        self.plot_h = min(MAX_PLOT_H, max(MIN_PLOT_H, PX_PER_ITEM * n))
        self.width = LEFT + LANE_W * max(len(lanes), 1) + RIGHT
        self.height = TOP + self.plot_h + BOTTOM + (14.0 if timeline.dropped else 0.0)
        self.placed: list[tuple[float, float, float]] = []
        """Labels drawn so far: left, right, baseline."""

    @property
    def items(self) -> tuple[TimelineItem, ...]:
        return self.tl.items

    # --- coordinates ---------------------------------------------------------------------

    def y(self, t_real: float) -> float:
        """The y of real time ``t_real`` (drawn on the scenario's clock)."""
        s = min(max(self.tl.scenario_time(t_real), 0.0), self.end_s)
        return TOP + self.plot_h * s / self.end_s

    def y_end(self, item: TimelineItem) -> float:
        """Where a span ends: its ``t_end``, or the end of the picture when still open."""
        return self.y(item.t_end) if item.t_end is not None else TOP + self.plot_h

    def x(self, lane: str | None) -> float:
        if lane is None:
            return LEFT + LANE_W * len(self.lanes) + 12.0
        return self.x_of[lane]

    # --- text ----------------------------------------------------------------------------

    def when(self, item: TimelineItem) -> str:
        text = f"{self.tl.scenario_time(item.t):.1f} s scenario time, {item.t:.3f} s real"
        if item.t_end is not None:
            text += f"; until {self.tl.scenario_time(item.t_end):.1f} s ({item.t_end:.3f} s real)"
        elif item.kind == "band":
            text += "; until the end"
        return text

    def title(self, item: TimelineItem) -> str:
        names = {lane.id: lane.label for lane in self.lanes}
        where = names.get(item.lane or "", "")
        if item.kind == "arrow" and item.to:
            where = f"{where} \u2192 {names.get(item.to, item.to)}"
        head = item.label or item.kind
        if item.kind == "failure":
            head = f"{item.requirement or '?'} {item.level or ''}".strip()
            if item.label:
                head += f": {item.label}"
        elif item.kind == "mark" and item.count > 1:
            head = f"{head} \u00d7{item.count}"
        parts = [f"{where}: {head}" if where else head, self.when(item)]
        if item.detail:
            parts.append(item.detail)
        return "\n".join(parts)

    # --- drawing -------------------------------------------------------------------------

    def render(self) -> str:
        out = [
            f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" '
            f'width="{_n(self.width)}" height="{_n(self.height)}" '
            f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" role="img">',
            self.axis(),
        ]
        out += [self.lane(lane) for lane in self.lanes]
        # Result boxes stay at their times: the labels around them make room.
        for item in self.items:
            if item.kind == "result":
                x, w = self.x(item.lane), _result_width(_short(item.label or "result", 22))
                self.placed.append((x - w / 2, x + w / 2, self.y(item.t) + 4))
        out += [self.item(item) for item in self.items]
        if self.tl.dropped:
            out.append(
                f'<text class="dropped" x="{_n(LEFT)}" y="{_n(self.height - 6)}">'
                f"{self.tl.dropped} more items left out</text>"
            )
        out.append("</svg>")
        return "".join(out)

    def axis(self) -> str:
        step = tick_step(self.end_s)
        parts = ['<g class="axis">']
        k = 0
        while k * step <= self.end_s + 1e-9:
            s = k * step
            y = TOP + self.plot_h * s / self.end_s
            parts.append(
                f'<line x1="{_n(LEFT)}" y1="{_n(y)}" x2="{_n(self.width - RIGHT + 40)}" '
                f'y2="{_n(y)}"/><text x="{_n(LEFT - 6)}" y="{_n(y + 4)}">{_seconds(s)}</text>'
            )
            k += 1
        parts.append("</g>")
        return "".join(parts)

    def lane(self, lane: Lane) -> str:
        x = self.x_of[lane.id]
        return (
            f'<g class="lane" data-lane="{_a(lane.id)}"><title>{_t(lane.label)} '
            f"({_t(lane.id)})</title>"
            f'<text x="{_n(x)}" y="{_n(TOP - 18)}">{_t(_short(lane.label, 24))}</text>'
            f'<line x1="{_n(x)}" y1="{_n(TOP - 8)}" x2="{_n(x)}" '
            f'y2="{_n(TOP + self.plot_h)}"/></g>'
        )

    def text(self, x: float, y: float, text: str, anchor: str = "start") -> str:
        """A label at ``(x, y)``, or as far below as it takes not to overlap one already
        drawn (items close in time stack their labels instead of printing over each other);
        the shapes stay at their times, and the hover title has the exact one."""
        width = CHAR_W * len(text)
        x0 = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        x1 = x0 + width
        for _ in range(len(self.placed) + 1):
            clash = next(
                (
                    py
                    for px0, px1, py in self.placed
                    if px0 < x1 and x0 < px1 and abs(py - y) < LINE_H
                ),
                None,
            )
            if clash is None:
                break
            y = clash + LINE_H
        self.placed.append((x0, x1, y))
        attr = "" if anchor == "start" else f' text-anchor="{anchor}"'
        return f'<text x="{_n(x)}" y="{_n(y)}"{attr}>{_t(text)}</text>'

    def item(self, item: TimelineItem) -> str:
        body = getattr(self, f"_{item.kind}")(item)
        return f'<g class="item {item.kind}"><title>{_t(self.title(item))}</title>{body}</g>'

    def _arrow(self, item: TimelineItem) -> str:
        x1, y = self.x(item.lane), self.y(item.t)
        if item.to is None or item.to == item.lane:
            # A message to itself (or to no lane): a short loop back onto the lifeline.
            d = f"M{_n(x1)},{_n(y)}h24v8h-22"
            return (
                f'<path d="{d}" fill="none" stroke="#246" marker-end="url(#{ARROWHEAD})"/>'
                + self.text(x1 + 28, y + 6, _short(item.label, 28), "start")
            )
        x2 = self.x(item.to)
        pad = 3.0 if x2 > x1 else -3.0
        mid = (x1 + x2) / 2
        return (
            f'<line x1="{_n(x1)}" y1="{_n(y)}" x2="{_n(x2 - pad)}" y2="{_n(y)}" '
            f'marker-end="url(#{ARROWHEAD})"/>'
            + self.text(mid, y - 3, _short(item.label, 26), "middle")
        )

    def _mark(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane), self.y(item.t)
        if item.count > 1:
            y2 = max(self.y_end(item), y + 2.0)
            return (
                f'<rect x="{_n(x - 4)}" y="{_n(y)}" width="8" height="{_n(y2 - y)}"/>'
                + self.text(x + 8, (y + y2) / 2 + 4, f"{_short(item.label, 18)} \u00d7{item.count}")
            )
        label = self.text(x + 9, y + 4, _short(item.label, 18)) if item.label else ""
        return f'<line x1="{_n(x - 6)}" y1="{_n(y)}" x2="{_n(x + 6)}" y2="{_n(y)}"/>{label}'

    def _band(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane), self.y(item.t)
        y2 = max(self.y_end(item), y + 2.0)
        return f'<rect x="{_n(x - 9)}" y="{_n(y)}" width="18" height="{_n(y2 - y)}"/>' + self.text(
            x + 13, y + 11, _short(item.label or "stall", 22)
        )

    def _cut(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane), self.y(item.t)
        d = (
            f"M{_n(x - 7)},{_n(y - 7)}L{_n(x + 7)},{_n(y + 7)}"
            f"M{_n(x - 7)},{_n(y + 7)}L{_n(x + 7)},{_n(y - 7)}"
        )
        return f'<path d="{d}"/>' + self.text(x + 10, y + 4, _short(item.label or "cut", 18))

    def _window(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane) - 16.0, self.y(item.t)
        y2 = max(self.y_end(item), y + 2.0)
        d = f"M{_n(x + 5)},{_n(y)}H{_n(x)}V{_n(y2)}H{_n(x + 5)}"
        return f'<path d="{d}"/>' + self.text(
            x - 3, (y + y2) / 2 + 4, _short(item.label or "window", 22), "end"
        )

    def _result(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane), self.y(item.t)
        label = _short(item.label or "result", 22)
        w = _result_width(label)
        return (
            f'<rect x="{_n(x - w / 2)}" y="{_n(y - 8)}" width="{_n(w)}" height="16" rx="2"/>'
            f'<text x="{_n(x)}" y="{_n(y + 4)}">{_t(label)}</text>'
        )

    def _failure(self, item: TimelineItem) -> str:
        x, y = self.x(item.lane), self.y(item.t)
        d = f"M{_n(x)},{_n(y - 7)}L{_n(x + 7)},{_n(y)}L{_n(x)},{_n(y + 7)}L{_n(x - 7)},{_n(y)}z"
        return f'<path d="{d}"/>' + self.text(x + 10, y + 4, item.requirement or "?")


def _result_width(label: str) -> float:
    return max(40.0, CHAR_W * len(label) + 10.0)


def _n(value: float) -> str:
    """A coordinate rounded to one decimal, without a trailing ``.0``."""
    text = f"{round(value, 1):.1f}"
    text = text.removesuffix(".0")
    return "0" if text == "-0" else text


def _seconds(s: float) -> str:
    """A tick label: ``40 s``, ``0.5 s``."""
    return f"{round(s, 3):g} s"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _t(text: str) -> str:
    """Text content, escaped for XML (and HTML)."""
    return escape(text, quote=False)


def _a(text: str) -> str:
    """An attribute value, escaped for XML (and HTML)."""
    return escape(text, quote=True)
