"""What a fault link's records look like on a scenario's timeline
(:mod:`streamproof.core.timeline`):
the faults it fired and how it ended responses, as items on the link's lane. Both suites draw
their links with it, so a stall or a reset reads the same in every picture.

The records' times are the link's epoch; the suites set it to the scenario's epoch, so the items
need no shifting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from streamproof.core.timeline import TimelineItem
from streamproof.faults.records import LinkEvent

__all__ = ["link_fault_items", "merge_bursts"]

_CUT_HOWS = ("fin", "rst", "refused")


def _what(event: LinkEvent) -> str:
    """``message/stream``, ``POST /v1beta/...``: what a request was, in a few words."""
    if event.rpc:
        return event.rpc
    return " ".join(p for p in (event.method, event.path) if p) or "a request"


def link_fault_items(events: Sequence[LinkEvent], lane: str) -> list[TimelineItem]:
    """The faults the link fired and the ends it caused, on ``lane``:

    * a ``stall``: a band from when it fired to the next thing that passed on that response
      (what a finite stall lets through, or the end of the connection, whoever closed it),
      open (``t_end`` ``None``) when nothing did;
    * an end by the proxy (``rst``, ``fin``, ``refused``, a ``status`` answer): a cut labelled
      how, at the end's time; an upstream failure the client saw as a FIN: a cut too;
    * any other action that fired (``delay``, ``drip``, ``split``, ``corrupt``, ``end_clean``): a
      mark labelled with the action, at the time it fired.
    """
    items: list[TimelineItem] = []
    by_request: dict[tuple[int, int | None], list[LinkEvent]] = {}
    for e in events:
        by_request.setdefault((e.connection, e.request), []).append(e)
    for e in events:
        if e.kind == "fault" and e.fault is not None:
            action = e.fault.action
            what = _what(e)
            detail = f"{action} on {what} ({e.detail})" if e.detail else f"{action} on {what}"
            if action == "stall":
                later = [
                    x.t
                    for x in by_request.get((e.connection, e.request), ())
                    if x.t >= e.t and x is not e and x.kind in ("event", "comment", "end")
                ]
                items.append(
                    TimelineItem(
                        kind="band",
                        t=e.t,
                        t_end=min(later) if later else None,
                        lane=lane,
                        label="stall",
                        detail=detail,
                    )
                )
            elif action not in ("rst", "fin", "refuse", "status"):
                items.append(
                    TimelineItem(kind="mark", t=e.t, lane=lane, label=action, detail=detail)
                )
        elif e.kind == "end" and e.by == "proxy" and e.fault is not None:
            if e.how in _CUT_HOWS:
                label = str(e.how)
            elif e.status is not None:
                label = str(e.status)
            else:
                continue  # end_clean: its mark is enough
            items.append(
                TimelineItem(
                    kind="cut",
                    t=e.t,
                    lane=lane,
                    label=label,
                    detail=f"the link ended {_what(e)}: {e.how}"
                    + (f" ({e.detail})" if e.detail else ""),
                )
            )
        elif e.kind == "end" and e.how == "upstream_error":
            items.append(
                TimelineItem(
                    kind="cut",
                    t=e.t,
                    lane=lane,
                    label="upstream error",
                    detail=f"upstream failed on {_what(e)}" + (f": {e.detail}" if e.detail else ""),
                )
            )
    return items


def merge_bursts(marks: Iterable[TimelineItem]) -> list[TimelineItem]:
    """Runs of consecutive marks on one lane with one label, merged: one mark with ``count``
    the run's length, from the first's ``t`` to the last's (``t_end``). ``marks`` in time
    order; a mark of another label (or another lane) between two ends the run."""
    out: list[TimelineItem] = []
    for mark in marks:
        last = out[-1] if out else None
        if (
            last is not None
            and last.kind == "mark"
            and mark.kind == "mark"
            and last.lane == mark.lane
            and last.label == mark.label
        ):
            count = last.count + mark.count
            out[-1] = last.model_copy(
                update={
                    "count": count,
                    "t_end": mark.t_end if mark.t_end is not None else mark.t,
                    "detail": _burst_detail(last, mark, count),
                }
            )
        else:
            out.append(mark)
    return out


def _burst_detail(first: TimelineItem, last: TimelineItem, count: int) -> str:
    head = first.detail.split(" ... ")[0]
    tail = last.detail.split(" ... ")[-1]
    if not head and not tail:
        return ""
    return f"{head} ... {tail} ({count} in all)" if head != tail else head
