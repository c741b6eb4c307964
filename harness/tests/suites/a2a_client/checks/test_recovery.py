"""The recovery checks (checks/recovery.py) on hand-built observations: A2A-C-RECOVERY within the
idle limit plus tolerance, A2A-C-SNAPSHOT-FIRST and A2A-C-NO-RESUBSCRIBE-DONE."""

from __future__ import annotations

import pytest

from harness.tests.suites.a2a_client.observations import (
    S1,
    S2,
    S3,
    Story,
    art,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    error_frame,
    judged,
    not_passed,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    verdict_for,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.a2a_client.checks import (
    artifacts_complete_verdicts,
    cancel_verdicts,
    check_a2a_client,
    deadline_verdicts,
    no_resubscribe_done_verdicts,
    recovery_verdicts,
    result_verdicts,
    snapshot_first_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.result import ClientFailure

# --- recovery --------------------------------------------------------------------------------


def test_the_recovery_message_tells_the_times_in_scenario_time() -> None:
    obs = worked_example().model_copy(update={"time_scale": 0.5})
    verdict = assert_passes(recovery_verdicts(obs), "A2A-C-RECOVERY")
    assert "1 dropped stream(s)" in verdict.message
    assert "(40s scenario time)" in verdict.message  # the 20 s idle limit, at scale 0.5


def test_an_exit_without_a_result_after_a_drop_earns_no_recovery_pass() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=45.0)
    failure = ClientFailure(kind="bad-result", message="the last stdout line is not JSON: 'ok'")
    story.run(None, t_result=None, t_exit=45.0, failure=failure)
    verdict = verdict_for(recovery_verdicts(story.build()), "A2A-C-RECOVERY")
    assert verdict.outcome is not Outcome.PASS, verdict.render()


def _recovered_at(get_t: float, *, resubscribe: bool = True, state: str = "working") -> Story:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=get_t + 0.05)
    story.get(get_t, state)
    if resubscribe:
        story.resubscribe(
            get_t + 0.1,
            (
                task_frame(get_t + 0.1, "working"),
                art(70.1, "summary", S3, append=True, last=True),
                status(78.1, "completed"),
            ),
        )
    return story


def test_recovery_within_the_idle_limit_plus_tolerance_passes() -> None:
    story = _recovered_at(63.9)  # 24.8 s after the last event: 20 s + 5 s tolerance
    story.run(result(), t_result=78.2)
    assert_passes(recovery_verdicts(story.build()), "A2A-C-RECOVERY")


def test_recovery_after_the_idle_limit_plus_tolerance_fails() -> None:
    story = _recovered_at(66.0)
    story.run(result(), t_result=78.2)
    assert_fails(recovery_verdicts(story.build()), "A2A-C-RECOVERY", "waited 26.90s")


def test_no_watchdog_waits_until_the_deadline_and_fails_recovery() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=90.1)
    story.cancel(90.0, "completed", code=-32002)
    story.run(result("timeout", {"summary": S1 + S2}, incomplete=True), t_result=90.1)
    obs = story.build()
    assert_fails(recovery_verdicts(obs), "A2A-C-RECOVERY", "went quiet (stall)", "waited 50.90s")
    assert_passes(deadline_verdicts(obs), "A2A-C-DEADLINE")
    # the task had finished at 78 s: no cancel was owed
    assert_not_applicable(cancel_verdicts(obs), "A2A-C-CANCEL", "no task outlived")
    # a timeout does not claim success: no incomplete flag is owed (it gives one anyway)
    assert_not_applicable(
        artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE", "'timeout', not a success"
    )
    assert_passes(status_verdicts(obs), "A2A-C-STATUS")  # a timeout after the deadline


def test_a_client_that_hangs_fails_recovery_and_deadline_naming_the_wait() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=100.0)
    hang = ClientFailure(kind="hang", message="still running 100s after it started")
    story.run(None, t_result=None, t_exit=99.7, failure=hang)
    obs = story.build()
    assert_fails(recovery_verdicts(obs), "A2A-C-RECOVERY", "never recovered", "waited 60.60s")
    assert_fails(deadline_verdicts(obs), "A2A-C-DEADLINE", "still running")
    assert_fails(result_verdicts(obs), "A2A-C-RESULT", "still running")


def test_a_loud_reset_is_recovered_at_once() -> None:
    story = Story(deadline=60, idle=10)
    story.created(0.1)
    story.state(1.1, "working")
    story.chunk(2.1, "report", "One. ")
    story.chunk(3.1, "report", "Two. ", append=True)
    story.chunk(6.1, "report", "Three.", append=True, last=True)
    story.state(9.1, "completed")
    story.card(0.0)
    frames = (
        task_frame(0.1),
        status(1.1, "working"),
        art(2.1, "report", "One. "),
        art(3.1, "report", "Two. ", append=True),
    )
    story.message(
        0.1, frames, ended="client_closed", link_end=(3.2, "rst", "proxy"), fault=(3.2, "rst")
    )
    story.get(3.25, "working")
    story.resubscribe(
        3.3,
        (
            task_frame(3.3, "working"),
            art(6.1, "report", "Three.", append=True, last=True),
            status(9.1, "completed"),
        ),
    )
    story.run(result(artifacts={"report": "One. Two. Three."}), t_result=9.2)
    obs = story.build()
    verdicts = check_a2a_client(obs)
    assert not_passed(verdicts) == []
    assert "A2A-C-RECOVERY" in judged(verdicts)
    assert "1 dropped stream(s)" in verdict_for(verdicts, "A2A-C-RECOVERY").message


def _timed_out(late_event: float) -> Story:
    """The deadline (20 s) passes on a working task; the client cancels and prints a timeout at
    20.1 s, and its stream, still open, closes only when the process exits at 20.4 s, after one
    more event at ``late_event``: a JVM client takes a few hundred ms to exit."""
    story = Story(deadline=20, idle=8)
    story.created(0.1)
    frames = [task_frame(0.1)]
    for at in (1.1, 5.1, 9.1, 13.1, 17.1, late_event):
        story.state(at, "working")
        frames.append(status(at, "working"))
    story.card(0.0)
    story.message(0.1, frames, ended="client_closed", link_end=(20.4, "rst", "client"))
    story.cancel(20.0, "working", code=-32002)
    story.run(result("timeout", {}, incomplete=True), t_result=20.1, t_exit=20.4)
    return story


def test_a_stream_still_delivering_after_the_result_is_no_drop() -> None:
    # the call was over at its result; an event that arrives before the process exits is no
    # stream "gone quiet" the client owed a recovery for
    late = _timed_out(20.3).build()
    assert_not_applicable(recovery_verdicts(late), "A2A-C-RECOVERY", "no stream")
    # the same stream quiet since 17.1 s, well inside the idle limit before the result: fine too
    quiet = _timed_out(17.2).build()
    assert_passes(recovery_verdicts(quiet), "A2A-C-RECOVERY")


# --- snapshot first, no resubscribe when done ------------------------------------------------


def test_a_resubscribe_without_a_snapshot_fails() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    story.run(result(), t_result=78.2)
    obs = story.build()
    assert_fails(snapshot_first_verdicts(obs), "A2A-C-SNAPSHOT-FIRST", "with no tasks/get")
    assert_passes(snapshot_first_verdicts(worked_example()), "A2A-C-SNAPSHOT-FIRST")


def test_a_resubscribe_after_a_finished_snapshot_fails() -> None:
    story = Story()
    story.created(0.1)
    story.state(1.1, "working")
    story.chunk(2.1, "check", "Totals match", last=True)
    story.state(6.1, "completed")
    story.card(0.0)
    story.message(
        0.1,
        (task_frame(0.1), status(1.1, "working"), art(2.1, "check", "Totals match", last=True)),
        fault=(3.0, "stall"),
        ended="client_closed",
        link_end=(22.2, "fin", "client"),
    )
    story.get(22.1, "completed")
    story.resubscribe(22.2, (error_frame(22.2, -32004),), error_code=-32004)
    story.run(result(artifacts={"check": "Totals match"}), t_result=22.3)
    obs = story.build()
    assert_fails(
        no_resubscribe_done_verdicts(obs), "A2A-C-NO-RESUBSCRIBE-DONE", "showed 'completed'"
    )
    # the worked example's snapshot showed the task working: nothing to judge
    assert_not_applicable(
        no_resubscribe_done_verdicts(worked_example()),
        "A2A-C-NO-RESUBSCRIBE-DONE",
        "no snapshot showed a finished task",
    )


@pytest.mark.parametrize("state", ["completed", "failed", "input-required"])
def test_a_finished_snapshot_without_a_resubscribe_is_a_judged_pass(state: str) -> None:
    story = Story()
    story.created(0.1)
    story.state(1.1, "working")
    story.chunk(2.1, "check", "Totals match", last=True)
    story.state(6.1, state)
    story.card(0.0)
    story.message(
        0.1,
        (task_frame(0.1), status(1.1, "working"), art(2.1, "check", "Totals match", last=True)),
        fault=(3.0, "stall"),
        ended="client_closed",
        link_end=(22.15, "fin", "client"),
    )
    story.get(22.1, state)
    story.run(result(state, {"check": "Totals match"}), t_result=22.2)
    verdicts = check_a2a_client(story.build())
    verdict = assert_passes(verdicts, "A2A-C-NO-RESUBSCRIBE-DONE")
    assert "1 snapshot(s) showed the task finished" in verdict.message
    assert not_passed(verdicts) == []
