"""Link records as timeline items: a stall is a band to the next thing that passed, an end the
proxy caused is a cut, other actions are marks; runs of equal marks merge into bursts."""

from __future__ import annotations

from typing import Any

from streamproof.core.timeline import TimelineItem
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.faults.timeline import link_fault_items, merge_bursts


def _event(t: float, kind: str, *, request: int = 0, **fields: Any) -> LinkEvent:
    return LinkEvent.model_validate(
        {"t": t, "link": "a2a", "connection": 1, "request": request, "kind": kind, **fields}
    )


def _fault(t: float, action: str, *, request: int = 0) -> LinkEvent:
    return _event(
        t,
        "fault",
        request=request,
        rpc="message/stream",
        detail="after: 40s",
        fault=FaultRef(index=0, action=action),
    )


def test_a_finite_stall_ends_at_the_next_event_of_its_own_response() -> None:
    events = [
        _event(1.0, "request", rpc="message/stream"),
        _event(4.0, "event", event_index=3),
        _fault(4.1, "stall"),
        _event(5.0, "event", request=1),  # another response: it does not end the stall
        _event(6.5, "event", event_index=4),
        _event(9.0, "end", how="clean", by="upstream"),
    ]
    (band,) = link_fault_items(events, "link")
    assert (band.kind, band.lane, band.t, band.t_end, band.label) == (
        "band",
        "link",
        4.1,
        6.5,
        "stall",
    )
    assert band.detail == "stall on message/stream (after: 40s)"


def test_a_stall_nothing_follows_is_open_to_the_end() -> None:
    (band,) = link_fault_items([_event(1.0, "request"), _fault(4.1, "stall")], "link")
    assert band.t_end is None


def test_ends_the_proxy_caused_are_cuts_and_other_actions_marks() -> None:
    rst = FaultRef(index=0, action="rst")
    status = FaultRef(index=1, action="status")
    events = [
        _fault(2.0, "rst"),
        _event(2.0, "end", how="rst", by="proxy", fault=rst),
        _event(3.0, "end", request=1, how="clean", by="proxy", status=502, fault=status),
        _event(
            4.0,
            "end",
            request=2,
            how="refused",
            by="proxy",
            fault=FaultRef(index=2, action="refuse"),
        ),
        _fault(5.0, "corrupt", request=3),
        _event(6.0, "end", request=4, how="fin", by="client"),  # the client left: no fault, no cut
        _event(7.0, "end", request=5, how="upstream_error", by="upstream", detail="reset"),
    ]
    items = link_fault_items(events, "link")
    assert [(i.kind, i.t, i.label) for i in items] == [
        ("cut", 2.0, "rst"),
        ("cut", 3.0, "502"),
        ("cut", 4.0, "refused"),
        ("mark", 5.0, "corrupt"),
        ("cut", 7.0, "upstream error"),
    ]


def _mark(t: float, label: str, lane: str = "browser") -> TimelineItem:
    return TimelineItem(kind="mark", t=t, lane=lane, label=label, detail=f"#{t}")


def test_runs_of_one_label_on_one_lane_merge_into_bursts() -> None:
    marks = [
        _mark(0.1, "delta"),
        _mark(0.2, "delta"),
        _mark(0.3, "delta"),
        _mark(0.4, "message"),
        _mark(0.5, "delta"),
        _mark(0.6, "delta", lane="link"),
    ]
    merged = merge_bursts(marks)
    assert [(m.label, m.lane, m.count, m.t, m.t_end) for m in merged] == [
        ("delta", "browser", 3, 0.1, 0.3),
        ("message", "browser", 1, 0.4, None),
        ("delta", "browser", 1, 0.5, None),
        ("delta", "link", 1, 0.6, None),
    ]
    assert merged[0].detail == "#0.1 ... #0.3 (3 in all)"
