"""A scenario's story in time, as plain data: the parties of its path (lanes) and what happened
between them (items), drawn by the HTML report (:mod:`streamproof.report.svg`) and printed by
``streamproof report --show``.

Each suite turns its observation into a :class:`Timeline` (its ``timeline`` function); the run
keeps it in ``results.json`` under the scenario's ``timeline`` key, so a saved run can be drawn
again, identically, with nothing rerun. Times are real seconds since the scenario's epoch (what
was measured); ``time_scale`` turns them into scenario time (``t / time_scale``), the clock the
scenario was written in and the picture is drawn in.

The model is small on purpose: one item type whose ``kind`` says how to draw it.

=========== ================================================================================
kind        drawn as ===========
================================================================================
arrow       a message from ``lane`` to ``to`` at ``t`` (a request, a response, a call)
mark        a tick on ``lane`` at ``t`` (one SSE event or frame; ``count`` > 1: a burst of
            that many, from ``t`` to ``t_end``)
band        a hatched stretch on ``lane`` from ``t`` to ``t_end`` (a stall: nothing passes)
cut         a cut on ``lane`` at ``t`` (``label`` says how: ``rst``, ``fin``, ``refused``,
            ``502``...)
window      a bracket on ``lane`` from ``t`` to ``t_end`` (a watchdog's quiet window, a
            deadline, a run bound)
result      the outcome on ``lane`` at ``t`` (a client's reported result, the stream's end)
failure     a requirement that went wrong at ``t`` (``requirement``, ``level``; ``lane`` when
            it belongs to one party)
=========== ================================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from streamproof.core.verdicts import Outcome, Verdict

__all__ = [
    "MAX_ITEMS",
    "ItemKind",
    "Lane",
    "Timeline",
    "TimelineItem",
    "clip",
    "failure_items",
]

ItemKind = Literal["arrow", "mark", "band", "cut", "window", "result", "failure"]

MAX_ITEMS = 160
"""A timeline keeps at most this many items (the report of a whole suite stays small); builders
merge runs of marks into bursts first, and :meth:`Timeline.capped` drops the rest, counting them
in ``dropped``."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Lane(_Record):
    """One party of the scenario's path, drawn as a vertical lifeline (left to right in order)."""

    id: str
    """Short, stable name items refer to (``browser``, ``gateway``, ``model-link``...)."""
    label: str
    """What the picture writes at the top of the lane."""


class TimelineItem(_Record):
    kind: ItemKind
    t: float
    """Real seconds since the scenario's epoch."""
    lane: str | None = None
    """The lane it happens on (an arrow's source); ``None`` only for a failure that belongs to
    no one party."""
    to: str | None = None
    """An arrow's destination lane."""
    t_end: float | None = None
    """Where a band, window or burst ends (real seconds); ``None`` for a band still open at the
    end of the observation (drawn to the end)."""
    label: str = ""
    """A few words drawn beside the item."""
    detail: str = ""
    """More, shown on hover."""
    count: int = 1
    """How many events a mark stands for."""
    requirement: str | None = None
    """A failure's requirement id (or expectation name)."""
    level: str | None = None
    """A failure's level (``MUST``, ``SHOULD``)."""


class Timeline(_Record):
    lanes: tuple[Lane, ...]
    items: tuple[TimelineItem, ...] = ()
    time_scale: float = 1.0
    """Real seconds per scenario second."""
    horizon_s: float | None = None
    """The scenario's horizon in scenario seconds (the axis of a picture with nothing drawn;
    otherwise the axis ends just after the last item)."""
    dropped: int = 0
    """Items left out to keep the timeline small (see :data:`MAX_ITEMS`)."""

    def capped(self, limit: int = MAX_ITEMS) -> Timeline:
        """At most ``limit`` items, sorted by time: failures, results, cuts, bands and windows
        are always kept; arrows and marks are thinned evenly when there are too many."""
        items = sorted(self.items, key=lambda i: (i.t, i.kind))
        if len(items) <= limit:
            return self.model_copy(update={"items": tuple(items)})
        keep_kinds = {"failure", "result", "cut", "band", "window"}
        kept = [i for i in items if i.kind in keep_kinds]
        rest = [i for i in items if i.kind not in keep_kinds]
        room = max(limit - len(kept), 0)
        if room and rest:
            step = len(rest) / room
            thinned = [rest[int(k * step)] for k in range(min(room, len(rest)))]
        else:
            thinned = []
        chosen = sorted([*kept, *thinned], key=lambda i: (i.t, i.kind))
        return self.model_copy(
            update={
                "items": tuple(chosen),
                "dropped": self.dropped + len(items) - len(chosen),
            }
        )

    def scenario_time(self, t: float) -> float:
        """``t`` (real seconds) on the scenario's clock."""
        return t / self.time_scale if self.time_scale > 0 else t

    def lines(self) -> list[str]:
        """The timeline as text, one line per item in time order: scenario time, real time, the
        lane (``gateway -> model-link`` for an arrow) and the label, for a terminal."""
        names = {lane.id: lane.label for lane in self.lanes}
        out: list[str] = []
        for item in sorted(self.items, key=lambda i: (i.t, i.kind)):
            where = names.get(item.lane or "", item.lane or "-")
            if item.kind == "arrow" and item.to:
                where = f"{where} -> {names.get(item.to, item.to)}"
            span = ""
            if item.t_end is not None:
                span = f" until {self.scenario_time(item.t_end):.1f}s"
            elif item.kind == "band":
                span = " until the end"
            what = item.label or item.kind
            if item.kind == "failure":
                what = f"[{item.requirement} {item.level}] {item.label}".rstrip()
            elif item.kind == "mark" and item.count > 1:
                what = f"{what} x{item.count}"
            out.append(
                f"{self.scenario_time(item.t):8.2f}s ({item.t:7.3f}s real)  "
                f"{item.kind:<7} {where}: {what}{span}"
            )
        if self.dropped:
            out.append(f"  ({self.dropped} more items left out)")
        return out


def clip(text: str, limit: int = 60) -> str:
    """``text`` on one line, at most ``limit`` characters (``...`` where it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_items(verdicts: Sequence[Verdict], *, end: float, lane: str) -> list[TimelineItem]:
    """One ``failure`` item per failed or unmet verdict, on ``lane`` (the system under test), at
    the verdict's ``at`` or else at ``end`` (the last moment the observation knows of),
    labelled with the first line of its message without the requirement id and the rule it
    quotes."""
    items: list[TimelineItem] = []
    for verdict in verdicts:
        if verdict.outcome not in (Outcome.FAIL, Outcome.NON_STRICT):
            continue
        message = verdict.message.removeprefix(f"{verdict.requirement}: ")
        first = (message.splitlines() or [""])[0].split(". Rule: ")[0]
        items.append(
            TimelineItem(
                kind="failure",
                t=verdict.at if verdict.at is not None else end,
                lane=lane,
                label=clip(first, 90),
                requirement=verdict.requirement,
                level=verdict.level.value,
            )
        )
    return items
