"""The A2A client checks on hand-built observations: the seed's correct recovery passes, each
rule's violation fails with its id, and what the recipe itself legitimately does passes."""

from __future__ import annotations

import pytest

from harness.tests.suites.a2a_client.observations import (
    CTX,
    FIRST_STREAM,
    S1,
    S2,
    S3,
    SUMMARY,
    TASK,
    Story,
    art,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    error_frame,
    judged,
    not_passed,
    plain,
    reply,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    verdict_for,
    worked_example,
)
from streamproof.core.verdicts import Kind, Level, Outcome
from streamproof.suites import REGISTRY
from streamproof.suites.a2a_client.checks import (
    A2A_CLIENT_CHECKS,
    A2AClientCheck,
    a2a_expectation_verdicts,
    artifacts_complete_verdicts,
    cancel_verdicts,
    check_a2a_client,
    complete_once_verdicts,
    deadline_verdicts,
    direct_message_verdicts,
    early_drop_verdicts,
    failure_states_verdicts,
    follow_up_verdicts,
    gap_verdicts,
    headers_verdicts,
    interrupted_verdicts,
    no_resend_verdicts,
    no_resubscribe_done_verdicts,
    reassembly_verdicts,
    recovery_verdicts,
    result_verdicts,
    snapshot_first_verdicts,
    status_verdicts,
    structured_verdicts,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.requirements import A2A_CLIENT
from streamproof.suites.a2a_client.result import ClientFailure, ClientResult
from streamproof.suites.a2a_client.scenario import A2AClientExpect

# --- the registry and the correct recovery -----------------------------------------------------


def test_every_requirement_has_one_check_and_a_seed_section() -> None:
    # the concurrency rules are judged over K calls (checks/concurrency.py), not per call
    ids = [r.id for r in A2A_CLIENT if not r.concurrent]
    # one check per requirement, then the scenario's own expectations
    assert len(ids) == len(set(ids)) == len(A2A_CLIENT_CHECKS) - 1
    assert A2A_CLIENT_CHECKS[-1] is a2a_expectation_verdicts
    assert all(REGISTRY[i].kind == "a2a-client" and REGISTRY[i].section for i in ids)
    assert [r.id for r in A2A_CLIENT if r.level is Level.SHOULD] == ["A2A-C-GAP"]
    verdicts = check_a2a_client(worked_example())
    assert [v.requirement for v in verdicts if v.kind is Kind.REQUIREMENT] == ids
    assert [v.requirement for v in verdicts if v.kind is Kind.EXPECTATION] == [
        "expect.ledger",
        "expect.tasks_created",
        "expect.result",
    ]
    assert not [v for v in verdicts if v.kind is Kind.EXPECTATION and v.requirement in REGISTRY]


@pytest.mark.parametrize("snapshot", [True, False], ids=["1.x-resubscribe", "0.3-resubscribe"])
@pytest.mark.parametrize("link", [True, False], ids=["through-link", "direct"])
def test_the_worked_example_passes_every_check(snapshot: bool, link: bool) -> None:
    verdicts = check_a2a_client(worked_example(snapshot=snapshot, link=link))
    assert not_passed(verdicts) == []
    assert judged(verdicts) == [
        "A2A-C-RESULT",
        "A2A-C-COMPLETE-ONCE",
        "A2A-C-NO-RESEND",
        "A2A-C-SNAPSHOT-FIRST",
        "A2A-C-RECOVERY",
        "A2A-C-DEADLINE",
        "A2A-C-ARTIFACTS-COMPLETE",
        "A2A-C-REASSEMBLY",
        "A2A-C-STATUS",
        "A2A-C-HEADERS",
        "A2A-C-GAP",
        "expect.ledger",
        "expect.tasks_created",
        "expect.result",
    ]
    # what the worked example does not exercise is said to be not judged, never passed
    for rid in (
        "A2A-C-EARLY-DROP",
        "A2A-C-NO-RESUBSCRIBE-DONE",  # its snapshot showed the task still working
        "A2A-C-CANCEL",  # the task completed well before the deadline
        "A2A-C-STRUCTURED",
        "A2A-C-FAILURE-STATES",
        "A2A-C-INTERRUPTED",
        "A2A-C-DIRECT-MESSAGE",
        "A2A-C-FOLLOW-UP",
    ):
        assert_not_applicable(verdicts, rid)


def test_the_recovery_message_tells_the_times_in_scenario_time() -> None:
    obs = worked_example().model_copy(update={"time_scale": 0.5})
    verdict = assert_passes(recovery_verdicts(obs), "A2A-C-RECOVERY")
    assert "1 dropped stream(s)" in verdict.message
    assert "(40s scenario time)" in verdict.message  # the 20 s idle limit, at scale 0.5


# --- a client that asks nothing earns nothing --------------------------------------------------


def _asked_nothing() -> A2AClientObservation:
    """A client that made no request at all (not even the agent card) and printed only
    ``{"status": "error"}``, in the worked example's scenario."""
    story = Story(deadline=30, idle=10)
    story.run(ClientResult.model_validate({"status": "error"}), t_result=0.3)
    return story.build(expect=worked_example().expect)


ASKED_NOTHING_JUDGED: frozenset[str] = frozenset({"A2A-C-RESULT"})
"""What the silent client does give to judge: A2A-C-RESULT's own rule (one readable result
line, last on stdout, then exit), which it kept."""


@pytest.mark.parametrize(
    "check",
    list(A2A_CLIENT_CHECKS),
    ids=lambda c: getattr(c, "__name__", str(c)),
)
def test_a_client_that_asked_nothing_earns_no_pass(check: A2AClientCheck) -> None:
    verdicts = check(_asked_nothing())
    passed = [
        v.render()
        for v in verdicts
        if v.outcome is Outcome.PASS and v.requirement not in ASKED_NOTHING_JUDGED
    ]
    assert passed == []


def test_a_client_that_asked_nothing_fails_status() -> None:
    verdicts = check_a2a_client(_asked_nothing())
    assert not [v for v in verdicts if v.outcome is Outcome.SKIP]
    assert_fails(verdicts, "A2A-C-STATUS", "never sent its message", "'error'")
    assert_passes(verdicts, "A2A-C-RESULT")
    for name in ("expect.ledger", "expect.tasks_created", "expect.result"):
        assert_fails(verdicts, name)
    requirements = [v for v in verdicts if v.kind is Kind.REQUIREMENT]
    assert [v.requirement for v in requirements if v.outcome is Outcome.FAIL] == ["A2A-C-STATUS"]
    for v in requirements:
        if v.requirement not in ("A2A-C-STATUS", *ASKED_NOTHING_JUDGED):
            assert_not_applicable(verdicts, v.requirement)


def test_a_client_whose_agent_card_failed_may_report_an_error() -> None:
    story = Story(deadline=30, idle=10)
    story.card(0.0, proxy_status=502)
    message = "cannot read the agent card: 502 Bad Gateway"
    story.run(result("error", {}, task_id=None, context_id=None, message=message), t_result=0.1)
    assert not_passed(status_verdicts(story.build())) == []


def test_a_client_whose_agent_card_came_after_its_deadline_may_report_a_timeout() -> None:
    """The card's answer is held past the deadline (an explore screen finding): the client
    gives up at its deadline without sending its message. Before the deadline it is wrong."""

    def slow_card(t_result: float) -> A2AClientObservation:
        story = Story(deadline=30, idle=10)
        story.card(0.0)
        story.run(result("timeout", {}, task_id=None, context_id=None), t_result=t_result)
        return story.build()

    assert not_passed(status_verdicts(slow_card(30.1))) == []
    assert_fails(status_verdicts(slow_card(5.0)), "A2A-C-STATUS", "never sent its message")


# --- A2A-C-RESULT, A2A-C-COMPLETE-ONCE ---------------------------------------------------------


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


def test_an_exit_without_a_result_after_a_drop_earns_no_recovery_pass() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=45.0)
    failure = ClientFailure(kind="bad-result", message="the last stdout line is not JSON: 'ok'")
    story.run(None, t_result=None, t_exit=45.0, failure=failure)
    verdict = verdict_for(recovery_verdicts(story.build()), "A2A-C-RECOVERY")
    assert verdict.outcome is not Outcome.PASS, verdict.render()


def test_two_result_lines_fail_complete_once() -> None:
    obs = worked_example()
    twice = obs.model_copy(update={"turns": (obs.turns[0].model_copy(update={"result_lines": 2}),)})
    assert_passes(complete_once_verdicts(obs), "A2A-C-COMPLETE-ONCE")
    assert_fails(complete_once_verdicts(twice), "A2A-C-COMPLETE-ONCE", "2 result lines")


# --- recovery ----------------------------------------------------------------------------------


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


def test_the_scenario_ledger_pattern_is_an_expectation_not_recovery() -> None:
    obs = worked_example()
    other = obs.model_copy(
        update={"expect": obs.expect.model_copy(update={"ledger": ("message/stream",)})}
    )
    assert_passes(recovery_verdicts(other), "A2A-C-RECOVERY")  # the recovery itself was right
    verdict = assert_fails(
        a2a_expectation_verdicts(other),
        "expect.ledger",
        "the server received message/stream tasks/get tasks/resubscribe",
    )
    assert verdict.kind is Kind.EXPECTATION
    assert verdict.expected == "message/stream"
    assert verdict.observed == "message/stream tasks/get tasks/resubscribe"
    assert_passes(a2a_expectation_verdicts(obs), "expect.ledger")


def test_the_result_expectations_are_their_own_verdicts() -> None:
    obs = worked_example()
    assert_passes(a2a_expectation_verdicts(obs), "expect.result")
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    story.run(result(artifacts={"summary": SUMMARY}, incomplete=True), t_result=78.2)
    flagged = story.build(expect=obs.expect)
    # an incomplete flag on a whole artifact breaks no rule, only what this scenario expects
    assert_passes(artifacts_complete_verdicts(flagged), "A2A-C-ARTIFACTS-COMPLETE")
    verdict = assert_fails(
        a2a_expectation_verdicts(flagged), "expect.result", "'summary' expected complete"
    )
    assert verdict.kind is Kind.EXPECTATION
    wrong = A2AClientExpect.model_validate({"result": {"status": "failed"}})
    other = obs.model_copy(update={"expect": wrong})
    assert_passes(status_verdicts(other), "A2A-C-STATUS")  # completed is completed
    assert_fails(a2a_expectation_verdicts(other), "expect.result", "says 'completed'")
    assert [v.requirement for v in a2a_expectation_verdicts(other)] == ["expect.result"]
    assert a2a_expectation_verdicts(obs.model_copy(update={"expect": A2AClientExpect()})) == []


def test_the_follow_up_expectation_is_judged_on_the_follow_up() -> None:
    expect = A2AClientExpect.model_validate(
        {"result": {"status": "input-required"}, "follow_up": {"status": "completed"}}
    )
    good = _follow_up(TASK, CTX).build(expect=expect)
    assert judged(a2a_expectation_verdicts(good)) == ["expect.result", "expect.follow_up"]
    wrong = A2AClientExpect.model_validate({"follow_up": {"status": "failed"}})
    bad = _follow_up(TASK, CTX).build(expect=wrong)
    assert_fails(
        a2a_expectation_verdicts(bad), "expect.follow_up", "the follow-up says 'completed'"
    )


# --- snapshot first, no resubscribe when done, no resend ---------------------------------------


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


# --- deadline and cancel -----------------------------------------------------------------------


def _outlives_deadline(
    *, cancel_at: float | None, status_: str = "timeout", t_result: float = 20.1
) -> Story:
    story = Story(deadline=20, idle=8)
    story.created(0.1)
    frames = [task_frame(0.1)]
    for t in (1.1, 5.1, 9.1, 13.1, 17.1):
        story.state(t, "working", "still at it")
        frames.append(status(t, "working", "still at it"))
    story.chunk(4.1, "findings", "Partial. ")
    frames.insert(2, art(4.1, "findings", "Partial. "))
    story.card(0.0)
    story.message(0.1, frames, ended="client_closed", link_end=(20.05, "fin", "client"))
    if cancel_at is not None:
        story.cancel(cancel_at, "working")
        story.state(cancel_at + 0.01, "canceled")
    story.run(result(status_, {"findings": "Partial. "}, incomplete=True), t_result=t_result)
    return story


def test_cancel_on_deadline_passes_and_a_missing_cancel_fails() -> None:
    assert_passes(cancel_verdicts(_outlives_deadline(cancel_at=19.9).build()), "A2A-C-CANCEL")
    assert_fails(
        cancel_verdicts(_outlives_deadline(cancel_at=None).build()),
        "A2A-C-CANCEL",
        "no tasks/cancel was sent",
    )
    assert_fails(
        cancel_verdicts(_outlives_deadline(cancel_at=19.9, status_="completed").build()),
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
    slow_boot = _outlives_deadline(cancel_at=19.9, t_result=24.5)
    slow_boot.turns[0] = slow_boot.turns[0].model_copy(update={"t_start": -30.0})
    assert_passes(deadline_verdicts(slow_boot.build()), "A2A-C-DEADLINE")
    late = _outlives_deadline(cancel_at=19.9, t_result=25.5)
    assert_fails(deadline_verdicts(late.build()), "A2A-C-DEADLINE", "ended 25.50s")


def test_a_timeout_before_the_deadline_is_a_wrong_status() -> None:
    early = _outlives_deadline(cancel_at=5.0, t_result=5.1)
    assert_fails(status_verdicts(early.build()), "A2A-C-STATUS", "before its deadline")


# --- artifacts ---------------------------------------------------------------------------------


def _silence_with_gap_chunk(result_text: str, *, incomplete: bool = False) -> Story:
    story = Story()
    summary_progress(story, gap_chunk=45.0)  # streamed while the stream was stalled
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    story.run(result(artifacts={"summary": result_text}, incomplete=incomplete), t_result=78.2)
    return story


def test_the_snapshot_restores_a_chunk_streamed_in_the_silence() -> None:
    full = S1 + S2 + "Section 2b. " + S3
    assert_passes(
        artifacts_complete_verdicts(_silence_with_gap_chunk(full).build()),
        "A2A-C-ARTIFACTS-COMPLETE",
    )


def test_a_truncated_artifact_reported_complete_fails() -> None:
    obs = _silence_with_gap_chunk(SUMMARY).build()
    assert_fails(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE", "is truncated")
    assert_passes(reassembly_verdicts(obs), "A2A-C-REASSEMBLY")  # a truncation, not a mix-up


def test_a_truncated_artifact_flagged_incomplete_passes() -> None:
    obs = _silence_with_gap_chunk(SUMMARY, incomplete=True).build()
    verdict = assert_passes(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE")
    assert "says incomplete" in verdict.message


def _partial_after_a_stall(status_: str, t_result: float) -> A2AClientObservation:
    """The stream stalls at 40 s and the client never recovers: it holds S1 + S2 of a summary
    the server finished (S3) at 70 s, and reports them without an incomplete flag."""
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=t_result)
    if status_ == "timeout":
        story.cancel(t_result - 0.1, "completed", code=-32002)
    story.run(result(status_, {"summary": S1 + S2}), t_result=t_result)
    return story.build()


@pytest.mark.parametrize(
    ("status_", "t_result"), [("timeout", 90.1), ("error", 80.0), ("failed", 80.0)]
)
def test_a_partial_artifact_without_a_claimed_success_owes_no_incomplete_flag(
    status_: str, t_result: float
) -> None:
    obs = _partial_after_a_stall(status_, t_result)
    assert_not_applicable(
        artifacts_complete_verdicts(obs),
        "A2A-C-ARTIFACTS-COMPLETE",
        f"says {status_!r}, not a success",
    )
    assert_passes(reassembly_verdicts(obs), "A2A-C-REASSEMBLY")  # what it holds is right


def test_a_truncated_artifact_in_a_completed_result_fails_artifacts_complete() -> None:
    obs = _partial_after_a_stall("completed", 80.0)
    assert_fails(
        artifacts_complete_verdicts(obs),
        "A2A-C-ARTIFACTS-COMPLETE",
        "'summary' is truncated",
        "does not say incomplete",
    )


def test_a_chunk_counted_twice_fails_reassembly() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    # appended the resubscribe's Task snapshot onto the tasks/get snapshot
    story.run(result(artifacts={"summary": S1 + S2 + S1 + S2 + S3}), t_result=78.2)
    obs = story.build()
    assert_fails(reassembly_verdicts(obs), "A2A-C-REASSEMBLY", "counted twice")
    assert_passes(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE")


def test_replace_against_append() -> None:
    frames = (
        task_frame(0.1),
        art(2.0, "release", "Draft one."),
        art(3.0, "release", " More draft.", append=True),
        art(4.0, "release", "Final text."),
        art(5.0, "release", " The end.", append=True, last=True),
        status(6.0, "completed"),
    )
    good = plain(frames, result(artifacts={"release": "Final text. The end."}))
    verdicts = check_a2a_client(good)
    assert not_passed(verdicts) == []
    assert {"A2A-C-REASSEMBLY", "A2A-C-ARTIFACTS-COMPLETE"} <= set(judged(verdicts))
    all_appended = plain(
        frames, result(artifacts={"release": "Draft one. More draft.Final text. The end."})
    )
    assert_fails(reassembly_verdicts(all_appended), "A2A-C-REASSEMBLY", "'release'")
    invented = plain(frames, result(artifacts={"release": "Final text. The end.", "x": "?"}))
    assert_fails(reassembly_verdicts(invented), "A2A-C-REASSEMBLY", "never streamed")


def test_the_recipe_loses_the_gap_between_snapshot_and_resubscribe_as_a_should() -> None:
    """The recipe's own behaviour: a chunk streamed after its tasks/get and before its
    resubscribe (on a server whose resubscribe starts without a snapshot) is lost. Every MUST
    passes; only the SHOULD A2A-C-GAP says so, non-strict."""
    story = Story()
    summary_progress(story, gap_chunk=59.55)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6, (art(70.1, "summary", S3, append=True, last=True), status(78.1, "completed"))
    )
    story.run(result(artifacts={"summary": SUMMARY}), t_result=78.2)
    obs = story.build()
    fine = (Outcome.PASS, Outcome.NOT_APPLICABLE)
    bad = [v for v in check_a2a_client(obs) if v.outcome not in fine]
    assert [v.requirement for v in bad] == ["A2A-C-GAP"]
    assert bad[0].outcome is Outcome.NON_STRICT and "'Section 2b. '" in bad[0].message
    assert "reconnect gap" in verdict_for(check_a2a_client(obs), "A2A-C-ARTIFACTS-COMPLETE").message
    flagged = story.build().model_copy(
        update={"turns": (story.turns[0].model_copy(update={"result": result(incomplete=True)}),)}
    )
    assert_passes(gap_verdicts(flagged), "A2A-C-GAP")


def test_structured_output_parsed_whole_passes_and_a_partial_parse_fails() -> None:
    pieces = ('{"regions": [{"name": "EU"}, ', '{"name": "US"}], ', '"currency": "EUR"}')
    whole = {"regions": [{"name": "EU"}, {"name": "US"}], "currency": "EUR"}
    frames = (
        task_frame(0.1),
        art(2.0, "regions", pieces[0]),
        art(3.0, "regions", pieces[1], append=True),
        art(4.0, "regions", pieces[2], append=True, last=True),
        status(5.0, "completed"),
    )
    text = "".join(pieces)
    good = plain(frames, result(artifacts={"regions": text}, data={"regions": whole}))
    assert_passes(structured_verdicts(good), "A2A-C-STRUCTURED")
    unparsed = plain(frames, result(artifacts={"regions": text}))  # parsing is optional
    assert_passes(structured_verdicts(unparsed), "A2A-C-STRUCTURED")
    wrong = plain(frames, result(artifacts={"regions": text}, data={"regions": {"regions": []}}))
    assert_fails(structured_verdicts(wrong), "A2A-C-STRUCTURED", "not as the whole artifact")
    choked = plain(
        frames,
        result("error", {"regions": pieces[0]}, message="not valid JSON"),
        t_result=2.1,
    )
    assert_fails(structured_verdicts(choked), "A2A-C-STRUCTURED", "a partial chunk was parsed")


# --- status mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["rejected", "unknown"])
def test_rejected_and_unknown_are_failures(state: str) -> None:
    frames = (task_frame(0.1), status(1.0, state, "no"))
    for ok in (state, "failed", "error"):
        obs = plain(frames, result(ok, {}, message="no"))
        assert_passes(failure_states_verdicts(obs), "A2A-C-FAILURE-STATES")
        assert_passes(status_verdicts(obs), "A2A-C-STATUS")
    success = plain(frames, result("completed", {}))
    assert_fails(failure_states_verdicts(success), "A2A-C-FAILURE-STATES", state.upper())


@pytest.mark.parametrize(
    ("state", "good", "bad"),
    [
        ("completed", "completed", "failed"),
        ("failed", "failed", "completed"),
        ("canceled", "canceled", "completed"),
    ],
)
def test_terminal_states_map_to_the_result(state: str, good: str, bad: str) -> None:
    frames = (task_frame(0.1), status(1.0, "working"), status(2.0, state))
    assert_passes(status_verdicts(plain(frames, result(good, {}))), "A2A-C-STATUS")
    assert_fails(status_verdicts(plain(frames, result(bad, {}))), "A2A-C-STATUS", repr(bad))


def test_success_while_the_task_still_works_fails() -> None:
    frames = (task_frame(0.1), status(1.0, "working"))
    assert_fails(
        status_verdicts(plain(frames, result("completed", {}))), "A2A-C-STATUS", "still 'working'"
    )


@pytest.mark.parametrize("state", ["input-required", "auth-required"])
def test_interrupted_states_end_the_call_with_the_ids(state: str) -> None:
    frames = (task_frame(0.1), status(1.0, "working"), status(2.0, state, "Which region?"))
    good = plain(frames, result(state, {}, message="Which region?"))
    verdicts = check_a2a_client(good)
    assert not_passed(verdicts) == []
    assert {"A2A-C-INTERRUPTED", "A2A-C-STATUS"} <= set(judged(verdicts))
    timeout = plain(frames, result("timeout", {}), t_result=30.0)
    assert_fails(interrupted_verdicts(timeout), "A2A-C-INTERRUPTED", "'timeout'")
    no_ids = plain(frames, result(state, {}, task_id=None, context_id=None))
    assert_fails(interrupted_verdicts(no_ids), "A2A-C-INTERRUPTED", "taskId None")


def _follow_up(task_id: str | None, context_id: str | None, *, new_task: bool = False) -> Story:
    story = Story(deadline=30, idle=10)
    story.created(0.1)
    story.state(1.0, "input-required", "Which region?")
    story.card(0.0)
    story.message(0.1, (task_frame(0.1), status(1.0, "input-required", "Which region?")))
    story.run(result("input-required", {}), t_result=1.1, t_start=-0.3)
    story.card(2.0)
    if new_task:
        story.created(2.1, task_id="t-9", context_id="c-9")
        story.message(2.1, (task_frame(2.1), status(3.0, "completed")), task_id="t-9")
        story.state(3.0, "completed", task_id="t-9")
    else:
        story.follow_up_event(2.1)
        story.message(
            2.1,
            (status(2.1, "working"), status(3.0, "completed")),
            outcome="continued",
            given_task=task_id,
            context_id=context_id,
        )
        story.state(2.1, "working", turn=1)
        story.state(3.0, "completed", turn=1)
    story.run(
        result("completed", {}, task_id="t-9" if new_task else TASK),
        t_result=3.1,
        t_start=1.8,
        turn=1,
        task_id_given=TASK,
        context_id_given=CTX,
    )
    return story


def test_the_follow_up_carries_the_same_ids() -> None:
    good = _follow_up(TASK, CTX).build()
    verdicts = check_a2a_client(good)
    assert not_passed(verdicts) == []
    assert {"A2A-C-FOLLOW-UP", "A2A-C-INTERRUPTED"} <= set(judged(verdicts))
    fresh = _follow_up(None, None, new_task=True).build()
    assert_fails(follow_up_verdicts(fresh), "A2A-C-FOLLOW-UP", "taskId None", "1 new task")


def test_a_follow_up_the_proxy_stopped_before_the_server_is_not_judged() -> None:
    """The follow-up's message/stream is reset by the link on request: the client sent it, the
    server never saw it, so its ids cannot be judged (an explore screen finding)."""

    def follow_up(*, sent: bool, card_status: int | None = None) -> Story:
        story = Story(deadline=30, idle=10)
        story.created(0.1)
        story.state(1.0, "input-required", "Which region?")
        story.card(0.0)
        story.message(0.1, (task_frame(0.1), status(1.0, "input-required", "Which region?")))
        story.run(result("input-required", {}), t_result=1.1, t_start=-0.3)
        story.card(2.0, proxy_status=card_status)
        if sent:
            story.message(
                2.1, (), reached=False, fault=(2.1, "rst"), link_end=(2.11, "rst", "proxy")
            )
        story.run(
            result("error", {}, message="reset"),
            t_result=2.3,
            t_start=1.8,
            turn=1,
            task_id_given=TASK,
            context_id_given=CTX,
        )
        return story

    stopped = follow_up(sent=True).build()
    assert_not_applicable(follow_up_verdicts(stopped), "A2A-C-FOLLOW-UP", "reached the server")
    assert not_passed(check_a2a_client(stopped)) == []
    silent = follow_up(sent=False).build()
    assert_fails(follow_up_verdicts(silent), "A2A-C-FOLLOW-UP", "sent no message")
    # Its agent card refused by the link: it had nothing to send the message by.
    no_card = follow_up(sent=False, card_status=502).build()
    assert_not_applicable(follow_up_verdicts(no_card), "A2A-C-FOLLOW-UP", "reached the server")
    assert not_passed(check_a2a_client(no_card)) == []


def test_a_direct_reply_is_a_message_result() -> None:
    story = Story(deadline=30, idle=10)
    story.card(0.0)
    story.message(0.1, (reply(1.0, "Hello there"),), task_id=None, outcome="reply")
    story.run(
        result("message", {}, task_id=None, context_id=None, message="Hello there"), t_result=1.1
    )
    obs = story.build(reply_text="Hello there")
    verdicts = check_a2a_client(obs)
    assert not_passed(verdicts) == []
    assert {"A2A-C-DIRECT-MESSAGE", "A2A-C-STATUS"} <= set(judged(verdicts))
    lost = obs.model_copy(
        update={"turns": (obs.turns[0].model_copy(update={"result": result("error", {})}),)}
    )
    assert_fails(direct_message_verdicts(lost), "A2A-C-DIRECT-MESSAGE", "'error'")
    wrong = obs.model_copy(
        update={
            "turns": (
                obs.turns[0].model_copy(update={"result": result("message", {}, message="Hello")}),
            )
        }
    )
    assert_fails(direct_message_verdicts(wrong), "A2A-C-DIRECT-MESSAGE", "carries 'Hello'")


# --- headers -----------------------------------------------------------------------------------


def test_headers_fit_the_wire() -> None:
    frames = (task_frame(0.1), status(1.0, "completed"))
    assert_passes(
        headers_verdicts(plain(frames, result(artifacts={}), wire="1.0")), "A2A-C-HEADERS"
    )
    story = Story(wire="1.0")
    story.card(0.0)
    story.created(0.1)
    story.message(0.1, frames, accept="application/json", a2a_version="")
    story.run(result(artifacts={}), t_result=1.1)
    assert_fails(
        headers_verdicts(story.build()),
        "A2A-C-HEADERS",
        "Accept: 'application/json'",
        "A2A-Version: ''",
    )
    old = Story()  # a 0.3 client that sends no A2A-Version at all is right (a2a-sdk 0.3, Java)
    old.card(0.0)
    old.created(0.1)
    old.message(0.1, frames, a2a_version="")
    old.run(result(artifacts={}), t_result=1.1)
    assert_passes(headers_verdicts(old.build()), "A2A-C-HEADERS")


def test_the_observation_is_plain_data_with_a_readable_timeline() -> None:
    obs = worked_example()
    again = type(obs).model_validate(obs.model_dump(mode="json"))
    assert again == obs
    timeline = obs.timeline()
    assert "link fault: stall" in timeline
    assert "tasks/resubscribe [working, summary, completed]" in timeline
    assert "call result: completed taskId=t-81" in timeline


def test_a_missing_result_after_a_direct_reply_is_only_a_result_failure() -> None:
    """One requirement, one reason: a client that printed a log line after its result lost
    the result line, which is A2A-C-RESULT's rule; the reply's rule has nothing to judge."""
    story = Story(deadline=30, idle=10)
    story.card(0.0)
    story.message(0.1, (reply(1.0, "Hello there"),), task_id=None, outcome="reply")
    failure = ClientFailure(kind="bad-result", message="the last stdout line is not JSON: 'bye'")
    story.run(None, t_result=None, t_exit=1.2, failure=failure)
    verdicts = check_a2a_client(story.build(reply_text="Hello there"))
    broken = [v.requirement for v in verdicts if v.outcome is Outcome.FAIL]
    assert [r for r in broken if not r.startswith("expect.")] == ["A2A-C-RESULT"]
    assert_not_applicable(verdicts, "A2A-C-DIRECT-MESSAGE")
