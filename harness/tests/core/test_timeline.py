"""The timeline model: capping keeps what tells the story, text reads in scenario time."""

from __future__ import annotations

from streamproof.core.timeline import Lane, Timeline, TimelineItem

LANES = (Lane(id="client", label="client"), Lane(id="link", label="A2A link"))


def test_capped_keeps_every_fault_result_and_failure_and_thins_marks() -> None:
    marks = [TimelineItem(kind="mark", t=i * 0.01, lane="link", label="event") for i in range(500)]
    story = [
        TimelineItem(kind="band", t=4.0, t_end=6.0, lane="link", label="stall"),
        TimelineItem(kind="result", t=7.8, lane="client", label="completed"),
        TimelineItem(kind="failure", t=7.8, requirement="A2A-C-RESULT", level="MUST"),
    ]
    timeline = Timeline(lanes=LANES, items=(*marks, *story), time_scale=0.1).capped(50)
    assert len(timeline.items) == 50
    assert timeline.dropped == 503 - 50
    assert {i.kind for i in timeline.items} == {"mark", "band", "result", "failure"}
    assert [i.t for i in timeline.items] == sorted(i.t for i in timeline.items)
    # the marks kept are spread over the whole run, not the first 47
    kept = [i.t for i in timeline.items if i.kind == "mark"]
    assert kept[0] == 0.0 and kept[-1] > 4.5


def test_capped_leaves_a_small_timeline_whole() -> None:
    items = (TimelineItem(kind="mark", t=1.0, lane="link"),)
    timeline = Timeline(lanes=LANES, items=items).capped()
    assert timeline.items == items and timeline.dropped == 0


def test_lines_print_scenario_time_first_and_real_time_beside_it() -> None:
    timeline = Timeline(
        lanes=LANES,
        time_scale=0.1,
        items=(
            TimelineItem(kind="arrow", t=0.5, lane="client", to="link", label="message/stream"),
            TimelineItem(kind="band", t=4.0, lane="link", label="stall"),
            TimelineItem(kind="mark", t=0.6, t_end=0.9, lane="link", label="event", count=4),
            TimelineItem(kind="failure", t=7.8, requirement="A2A-C-RESULT", level="MUST"),
        ),
    )
    assert timeline.lines() == [
        "    5.00s (  0.500s real)  arrow   client -> A2A link: message/stream",
        "    6.00s (  0.600s real)  mark    A2A link: event x4 until 9.0s",
        "   40.00s (  4.000s real)  band    A2A link: stall until the end",
        "   78.00s (  7.800s real)  failure -: [A2A-C-RESULT MUST]",
    ]


def test_failure_items_land_at_their_moment_or_the_end_with_a_short_label() -> None:
    from streamproof.core.timeline import failure_items
    from streamproof.core.verdicts import Level, Outcome, Verdict

    verdicts = [
        Verdict(
            requirement="GW-NO-TOOL-LEAK",
            level=Level.MUST,
            outcome=Outcome.FAIL,
            message="GW-NO-TOOL-LEAK: frame #4 carries the marker. Rule: never leak\nmore",
            at=1.25,
        ),
        Verdict(
            requirement="GW-DISPOSE-IDLE",
            level=Level.SHOULD,
            outcome=Outcome.NON_STRICT,
            message="x" * 200,
        ),
        Verdict(requirement="GW-AUTH", level=Level.MUST, outcome=Outcome.PASS, message="ok"),
    ]
    leak, idle = failure_items(verdicts, end=9.0, lane="gateway")
    assert (leak.t, leak.lane, leak.label) == (1.25, "gateway", "frame #4 carries the marker")
    assert (leak.requirement, leak.level) == ("GW-NO-TOOL-LEAK", "MUST")
    assert idle.t == 9.0 and len(idle.label) == 90 and idle.label.endswith("...")
