"""The scenario's own expectations (checks/expectations.py): verdicts of their own, apart from the
requirements a client is judged by."""

from __future__ import annotations

from harness.tests.suites.a2a_client.checks.helpers import follow_up_story
from harness.tests.suites.a2a_client.observations import (
    CTX,
    S3,
    SUMMARY,
    TASK,
    Story,
    art,
    assert_fails,
    assert_passes,
    judged,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    worked_example,
)
from streamproof.core.verdicts import Kind
from streamproof.suites.a2a_client.checks import (
    a2a_expectation_verdicts,
    artifacts_complete_verdicts,
    recovery_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.scenario import A2AClientExpect


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
    good = follow_up_story(TASK, CTX).build(expect=expect)
    assert judged(a2a_expectation_verdicts(good)) == ["expect.result", "expect.follow_up"]
    wrong = A2AClientExpect.model_validate({"follow_up": {"status": "failed"}})
    bad = follow_up_story(TASK, CTX).build(expect=wrong)
    assert_fails(
        a2a_expectation_verdicts(bad), "expect.follow_up", "the follow-up says 'completed'"
    )
