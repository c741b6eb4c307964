"""The A2A client timeline: lanes, requests, faults, the watchdog's quiet window, results and
failures, built from hand-made observations, and from a real run of the seed's worked example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module
from streamproof.core.timeline import MAX_ITEMS, Timeline, TimelineItem
from streamproof.core.verdicts import Level, Outcome, Verdict
from streamproof.suites.a2a_client.checks import check_a2a_client
from streamproof.suites.a2a_client.checks.calls import no_resend_verdicts
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.suite import timeline

from .observations import (
    S1,
    S2,
    Story,
    art,
    assert_fails,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    worked_example,
)
from .push_observations import FORGED, delivery, finished, push_call

ROOT = Path(__file__).resolve().parents[4]


def _kinds(tl: Timeline, kind: str) -> list[TimelineItem]:
    return [i for i in tl.items if i.kind == kind]


def _arrows(tl: Timeline, label: str) -> list[TimelineItem]:
    return [i for i in tl.items if i.kind == "arrow" and i.label.startswith(label)]


def test_the_worked_example_tells_the_seed_story() -> None:
    obs = worked_example()
    tl = timeline(obs, check_a2a_client(obs))
    assert [lane.id for lane in tl.lanes] == ["client", "link", "server"]
    # the proxy's stall: a band from when it fired to when the client closed the stream
    (band,) = _kinds(tl, "band")
    assert (band.lane, band.t, band.t_end, band.label) == ("link", 40.1, 59.55, "stall")
    # requests in order, each with how it ended, and the snapshot's answer
    requests = [i.label for i in _kinds(tl, "arrow") if i.lane == "client"]
    assert requests == [
        "agent card",
        "message/stream (client_closed)",
        "tasks/get",
        "tasks/resubscribe (completed)",
    ]
    (answer,) = [i for i in _kinds(tl, "arrow") if i.lane == "server"]
    assert answer.to == "client" and answer.label == "working"
    # the watchdog's quiet window: from the last event (39.1 s) to the tasks/get (59.5 s)
    windows = {i.label: i for i in _kinds(tl, "window")}
    idle = windows["idle 20s"]
    assert (idle.t, idle.t_end) == (39.1, 59.5)
    deadline = windows["deadline 90s"]
    assert (deadline.t, deadline.t_end) == (0.0, 90.0)
    (res,) = _kinds(tl, "result")
    assert (res.t, res.label) == (78.2, "completed [summary]")
    assert not _kinds(tl, "failure")  # a correct client breaks nothing


def test_events_the_link_forwarded_merge_into_bursts_by_kind() -> None:
    tl = timeline(worked_example(), [])
    marks = [(i.label, i.count) for i in _kinds(tl, "mark")]
    assert marks == [
        ("task submitted", 1),
        ("status working", 2),  # 2.1 s and 8.1 s, one burst
        ("artifact summary", 2),
        ("status working", 1),
        ("task working", 1),
        ("artifact summary", 1),
        ("status completed", 1),
    ]
    burst = next(i for i in _kinds(tl, "mark") if i.count == 2)
    assert (burst.t, burst.t_end, burst.lane) == (2.1, 8.1, "link")


def test_without_a_link_the_client_gets_the_events_and_there_is_no_link_lane() -> None:
    tl = timeline(worked_example(link=False), [])
    assert [lane.id for lane in tl.lanes] == ["client", "server"]
    assert {i.lane for i in _kinds(tl, "mark")} == {"client"}
    assert not _kinds(tl, "band")


def test_a_reset_is_a_cut_and_no_watchdog_window() -> None:
    story = Story(deadline=60, idle=10)
    story.created(0.1)
    story.card(0.0)
    story.message(
        0.1,
        (task_frame(0.1),),
        ended="client_closed",
        link_end=(3.2, "rst", "proxy"),
        fault=(3.2, "rst"),
    )
    story.get(3.25, "working")
    story.run(result("error", {}), t_result=3.4)
    tl = timeline(story.build(), [])
    (cut,) = _kinds(tl, "cut")
    assert (cut.lane, cut.t, cut.label) == ("link", 3.2, "rst")
    # the client reacted to the reset, not to silence: no quiet window is claimed
    assert [i.label for i in _kinds(tl, "window")] == ["deadline 60s"]


def test_a_resend_fails_at_the_second_message() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.created(59.5, task_id="t-2")
    story.message(59.5, (task_frame(59.5),), task_id="t-2")
    story.run(result(), t_result=78.2)
    obs = story.build(expect=worked_example().expect)
    resend = assert_fails(no_resend_verdicts(obs), "A2A-C-NO-RESEND", "2 times")
    assert resend.at == 59.5
    verdicts = check_a2a_client(obs)
    tasks = next(v for v in verdicts if v.requirement == "expect.tasks_created")
    assert tasks.outcome is Outcome.FAIL and tasks.at == 59.5  # the second task's creation
    tl = timeline(obs, verdicts)
    failures = {i.requirement: i for i in _kinds(tl, "failure")}
    assert failures["A2A-C-NO-RESEND"].t == 59.5
    assert failures["A2A-C-NO-RESEND"].level == "MUST"
    assert failures["A2A-C-NO-RESEND"].lane == "client"
    assert failures["A2A-C-NO-RESEND"].label.startswith("the call sent its message 2 times")
    assert "Rule:" not in failures["A2A-C-NO-RESEND"].label


def test_a_missing_recovery_fails_when_it_was_due_and_a_truncated_result_when_it_came() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=90.1)
    story.run(result("completed", {"summary": S1 + S2}), t_result=90.1)
    obs = story.build()
    verdicts = check_a2a_client(obs)
    by_id = {v.requirement: v for v in verdicts}
    recovery = by_id["A2A-C-RECOVERY"]
    assert recovery.outcome is Outcome.FAIL
    assert recovery.at == 39.1 + 20.0 + 5.0  # the last event + idle limit + tolerance
    truncated = by_id["A2A-C-ARTIFACTS-COMPLETE"]
    assert truncated.outcome is Outcome.FAIL and truncated.at == 90.1
    tl = timeline(obs, verdicts)
    at = {i.requirement: i.t for i in _kinds(tl, "failure")}
    assert at["A2A-C-RECOVERY"] == 64.1 and at["A2A-C-ARTIFACTS-COMPLETE"] == 90.1
    # no tasks/get followed the silence: no watchdog window is drawn
    assert [i.label for i in _kinds(tl, "window")] == ["deadline 90s"]


def test_a_failure_without_a_moment_lands_at_the_end_of_the_run() -> None:
    obs = worked_example()
    verdict = Verdict(
        requirement="A2A-C-RESULT",
        level=Level.MUST,
        outcome=Outcome.FAIL,
        message="A2A-C-RESULT: x",
    )
    passed = verdict.model_copy(update={"outcome": Outcome.PASS})
    tl = timeline(obs, [verdict, passed])
    (failure,) = _kinds(tl, "failure")
    assert failure.t == 78.2 and failure.label == "x"


def test_times_count_from_the_first_request_not_the_process_start() -> None:
    """The runner's epoch comes before the client process starts; the picture's clock starts at
    the call's first request, and a verdict's ``at`` is moved with everything else."""
    late = 1.5  # the client process took 1.5 s to send its first request
    moved = _later(worked_example(), late)
    failed = Verdict(
        requirement="A2A-C-RECOVERY",
        level=Level.MUST,
        outcome=Outcome.FAIL,
        message="A2A-C-RECOVERY: late",
        at=50.0 + late,
    )
    tl = timeline(moved, [failed])
    assert _kinds(tl, "band")[0].t == 40.1
    assert _kinds(tl, "result")[0].t == 78.2
    assert _kinds(tl, "failure")[0].t == 50.0
    assert min(i.t for i in tl.items) == 0.0


_TIMES = frozenset({"t", "t_end", "t_start", "t_result", "t_exit"})


def _later(obs: A2AClientObservation, by: float) -> A2AClientObservation:
    """``obs`` with every recorded time ``by`` later (the runner's epoch that much earlier)."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: v + by if k in _TIMES and isinstance(v, float | int) else walk(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return A2AClientObservation.model_validate(walk(obs.model_dump(mode="json")))


def test_a_long_run_is_capped() -> None:
    story = Story(deadline=600, idle=600)
    story.created(0.1)
    story.card(0.0)
    frames = [task_frame(0.1)]
    for i in range(400):
        frames.append(status(0.2 + i, "working", f"step {i}"))
        frames.append(art(0.3 + i, "log", f"line {i}. ", append=i > 0))
    story.message(0.1, frames)
    story.run(result("timeout", {}), t_result=401.0)
    tl = timeline(story.build(), [])
    assert len(tl.items) <= MAX_ITEMS and tl.dropped > 0
    assert _kinds(tl, "result") and _kinds(tl, "window")


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_the_seed_proxy_timeout_scenario_recorded_in_scenario_time(tmp_path: Path) -> None:
    """The bundled seed scenario, run by ``streamproof run``: its recorded timeline tells the
    seed's story on the scenario's clock."""
    require_module("a2a")  # the reference client is built on a2a-sdk
    scenario = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamproof.cli",
            "run",
            str(scenario),
            # a milder scale than the default 0.1: the watchdog's 20 s are 5 s real, so a
            # loaded machine does not bend the story (its times are read in scenario time)
            "--time-scale",
            "0.25",
            "--report-dir",
            str(tmp_path),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    (record,) = report["scenarios"]
    tl = Timeline.model_validate(record["timeline"])
    st = tl.scenario_time
    # 0 s is the call's first request (its agent card fetch); the task's script and the link's
    # timer start a moment later, with the message/stream: the story is told from there
    (stream,) = _arrows(tl, "message/stream")
    began = st(stream.t)
    assert 0.0 < began < 5.0, began
    (band,) = _kinds(tl, "band")
    assert band.label == "stall" and abs(st(band.t) - began - 40.0) <= 2.0, st(band.t)
    # the tasks/get about 20 s after the last event that came before the stall
    before = [i for i in _kinds(tl, "mark") if i.lane == "link" and i.t <= band.t]
    last_event = max(i.t_end if i.t_end is not None else i.t for i in before)
    (get,) = _arrows(tl, "tasks/get")
    waited = st(get.t) - st(last_event)
    assert 20.0 - 1.0 <= waited <= 20.0 + 6.0, waited  # the idle limit + the scenario's tolerance
    (resubscribe,) = _arrows(tl, "tasks/resubscribe")
    assert resubscribe.t >= get.t
    (res,) = _kinds(tl, "result")
    assert res.label.startswith("completed") and abs(st(res.t) - began - 78.0) <= 4.0, st(res.t)
    idle = [i for i in _kinds(tl, "window") if i.label.startswith("idle")]
    assert len(idle) == 1 and idle[0].t_end == get.t
    assert not _kinds(tl, "failure")
    text = "\n".join(tl.lines())
    assert "band    a2a link: stall until" in text and "result  client: completed" in text


def test_a_missing_cancel_fails_at_the_deadline() -> None:
    story = Story(deadline=20, idle=8)
    story.created(0.1)
    frames = [task_frame(0.1)]
    for t in (1.1, 5.1, 9.1, 13.1, 17.1):
        story.state(t, "working", "still at it")
        frames.append(status(t, "working", "still at it"))
    story.card(0.0)
    story.message(0.1, frames, ended="client_closed", link_end=(20.05, "fin", "client"))
    story.run(result("timeout", {}, incomplete=True), t_result=20.1)
    obs = story.build()
    verdicts = check_a2a_client(obs)
    cancel = assert_fails(verdicts, "A2A-C-CANCEL", "no tasks/cancel was sent")
    assert cancel.at == 20.0  # the deadline, counted from the first request (the card at 0 s)
    tl = timeline(obs, verdicts)
    (failure,) = [i for i in _kinds(tl, "failure") if i.requirement == "A2A-C-CANCEL"]
    assert failure.t == 20.0
    # the client got status updates every 4 s until the deadline: no quiet window to draw
    assert [i.label for i in _kinds(tl, "window")] == ["deadline 20s"]


def test_push_deliveries_have_a_lane_of_their_own() -> None:
    lost = delivery(
        7,
        3.5,
        "artifact-update",
        artifact_id="s",
        text="x",
        fault="lost",
        ended="lost",
        receiver_status=None,
        status=None,
    )
    obs = push_call(finished(FORGED, lost), result("completed", {"s": "one two"}), t_result=4.1)
    tl = timeline(obs, check_a2a_client(obs))
    assert [lane.id for lane in tl.lanes][-1] == "webhook"
    to_webhook = [i for i in _kinds(tl, "arrow") if i.to == "webhook"]
    assert len(to_webhook) == 6  # the five genuine deliveries and the forged one
    assert any(i.label == "forged failed [wrong_token]" for i in to_webhook)
    cuts = {(i.lane, i.label) for i in _kinds(tl, "cut")}
    assert ("webhook", "401") in cuts and ("server", "#8 lost") in cuts
