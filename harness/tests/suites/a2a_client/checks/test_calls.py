"""The call checks (checks/calls.py) on hand-built observations: A2A-C-RESULT, A2A-C-COMPLETE-ONCE,
A2A-C-NO-RESEND, A2A-C-EARLY-DROP, A2A-C-DEADLINE and A2A-C-CANCEL."""

from __future__ import annotations

from harness.tests.suites.a2a_client.checks.helpers import outlives_deadline
from harness.tests.suites.a2a_client.observations import (
    FIRST_STREAM,
    Story,
    art,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    judged,
    not_passed,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    worked_example,
)
from streamproof.suites.a2a_client.checks import (
    a2a_expectation_verdicts,
    cancel_verdicts,
    check_a2a_client,
    complete_once_verdicts,
    deadline_verdicts,
    early_drop_verdicts,
    no_resend_verdicts,
    result_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.result import ClientFailure

# --- A2A-C-RESULT, A2A-C-COMPLETE-ONCE -------------------------------------------------------


def test_a_client_without_a_result_line_fails_with_its_output() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    story.message(0.1, FIRST_STREAM)
    failure = ClientFailure(kind="bad-result", message="the last stdout line is not JSON: 'ok'")
    story.run(None, t_result=None, t_exit=40.0, failure=failure)
    obs = story.build()
    assert_fails(result_verdicts(obs), "A2A-C-RESULT", "not JSON")
    # when the call ended is not seen without a result line: its exit is not a result's time
    assert_not_applicable(deadline_verdicts(obs), "A2A-C-DEADLINE", "readable result")
    assert_not_applicable(complete_once_verdicts(obs), "A2A-C-COMPLETE-ONCE", "printed a result")
    assert_not_applicable(status_verdicts(obs), "A2A-C-STATUS", "no result")


def test_two_result_lines_fail_complete_once() -> None:
    obs = worked_example()
    twice = obs.model_copy(update={"turns": (obs.turns[0].model_copy(update={"result_lines": 2}),)})
    assert_passes(complete_once_verdicts(obs), "A2A-C-COMPLETE-ONCE")
    assert_fails(complete_once_verdicts(twice), "A2A-C-COMPLETE-ONCE", "2 result lines")


# --- no resend, early drop -------------------------------------------------------------------


def test_a_resend_after_a_drop_fails_no_resend() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.created(59.5, task_id="t-2")
    story.message(59.5, (task_frame(59.5),), task_id="t-2")
    story.run(result(), t_result=78.2)
    obs = story.build(expect=worked_example().expect)
    verdict = assert_fails(no_resend_verdicts(obs), "A2A-C-NO-RESEND", "2 times")
    assert "task(s)" not in verdict.message  # the scenario's count is not this rule's business
    assert_fails(a2a_expectation_verdicts(obs), "expect.tasks_created", "created 2 task(s)")
    assert_passes(a2a_expectation_verdicts(worked_example()), "expect.tasks_created")


def test_a_drop_before_the_first_event_must_fail_the_call() -> None:
    def dropped(status: str, resend: bool = False) -> Story:
        story = Story(deadline=30, idle=10)
        story.created(0.1)
        story.card(0.0)
        story.message(
            0.1,
            (task_frame(0.1),),
            forwarded=0,
            link_end=(0.11, "rst", "proxy"),
            fault=(0.11, "rst"),
            ended="client_closed",
        )
        if resend:
            story.created(0.3, task_id="t-2")
            story.message(0.3, (task_frame(0.3),), task_id="t-2")
        story.run(result(status, {}, task_id=None, context_id=None), t_result=0.4)
        return story

    assert_passes(early_drop_verdicts(dropped("error").build()), "A2A-C-EARLY-DROP")
    assert_passes(status_verdicts(dropped("error").build()), "A2A-C-STATUS")
    assert_fails(
        early_drop_verdicts(dropped("completed").build()),
        "A2A-C-EARLY-DROP",
        "'completed' instead of a failure",
    )
    assert_fails(
        early_drop_verdicts(dropped("error", resend=True).build()),
        "A2A-C-EARLY-DROP",
        "sent its message again",
    )


def test_a_502_from_the_proxy_is_an_early_drop() -> None:
    story = Story(deadline=30, idle=10)
    story.card(0.0)
    story.rpc(
        0.1,
        "message/stream",
        reached=False,
        proxy_status=502,
        link_end=(0.11, "clean", "proxy"),
        fault=(0.1, "status: 502"),
    )
    story.run(result("error", {}, task_id=None, context_id=None), t_result=0.3)
    obs = story.build()
    assert_passes(early_drop_verdicts(obs), "A2A-C-EARLY-DROP")
    verdicts = check_a2a_client(obs)
    assert not_passed(verdicts) == []
    assert {"A2A-C-EARLY-DROP", "A2A-C-STATUS"} <= set(judged(verdicts))
    retried = Story(deadline=30, idle=10)
    retried.card(0.0)
    retried.rpc(
        0.1,
        "message/stream",
        reached=False,
        proxy_status=502,
        link_end=(0.11, "clean", "proxy"),
        fault=(0.1, "status: 502"),
    )
    retried.created(0.5)
    retried.message(0.5, (task_frame(0.5), status(1.5, "completed")))
    retried.state(1.5, "completed")
    retried.run(result(artifacts={}), t_result=1.6)
    assert_fails(no_resend_verdicts(retried.build()), "A2A-C-NO-RESEND", "2 times")


# --- deadline and cancel ---------------------------------------------------------------------


def test_cancel_on_deadline_passes_and_a_missing_cancel_fails() -> None:
    assert_passes(cancel_verdicts(outlives_deadline(cancel_at=19.9).build()), "A2A-C-CANCEL")
    assert_fails(
        cancel_verdicts(outlives_deadline(cancel_at=None).build()),
        "A2A-C-CANCEL",
        "no tasks/cancel was sent",
    )
    assert_fails(
        cancel_verdicts(outlives_deadline(cancel_at=19.9, status_="completed").build()),
        "A2A-C-CANCEL",
        "instead of a timeout",
    )


def _gives_up_early(*, cancel_at: float | None, status_: str = "error") -> Story:
    """The client gives up 1 s in (deadline 30 s) while the task is still working."""
    story = Story(deadline=30, idle=10)
    story.created(0.1)
    story.state(0.5, "working", "thinking")
    story.chunk(0.8, "findings", "Partial. ")
    story.state(12.0, "completed")
    story.card(0.0)
    frames = (
        task_frame(0.1),
        status(0.5, "working", "thinking"),
        art(0.8, "findings", "Partial. "),
    )
    story.message(0.1, frames, ended="client_closed", t_end=1.05, link_end=(1.05, "fin", "client"))
    if cancel_at is not None:
        story.cancel(cancel_at, "working")
        story.state(cancel_at + 0.01, "canceled")
    story.run(result(status_, {"findings": "Partial. "}, message="gave up"), t_result=1.1)
    return story


def test_a_call_abandoned_early_must_cancel_its_running_task() -> None:
    abandoned = _gives_up_early(cancel_at=None).build()
    assert_fails(
        cancel_verdicts(abandoned),
        "A2A-C-CANCEL",
        "ended 1.10s in",
        "still 'working'",
        "without sending tasks/cancel",
    )
    cancelled = _gives_up_early(cancel_at=1.0, status_="canceled").build()
    assert_passes(cancel_verdicts(cancelled), "A2A-C-CANCEL")
    assert not_passed(check_a2a_client(cancelled)) == []


def test_a_call_abandoned_early_may_cancel_and_report_an_error() -> None:
    obs = _gives_up_early(cancel_at=1.0).build()
    assert_passes(status_verdicts(obs), "A2A-C-STATUS")
    assert_passes(cancel_verdicts(obs), "A2A-C-CANCEL")


def test_the_deadline_counts_from_the_first_request_not_the_process_start() -> None:
    slow_boot = outlives_deadline(cancel_at=19.9, t_result=24.5)
    slow_boot.turns[0] = slow_boot.turns[0].model_copy(update={"t_start": -30.0})
    assert_passes(deadline_verdicts(slow_boot.build()), "A2A-C-DEADLINE")
    late = outlives_deadline(cancel_at=19.9, t_result=25.5)
    assert_fails(deadline_verdicts(late.build()), "A2A-C-DEADLINE", "ended 25.50s")
