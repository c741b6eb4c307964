"""The outcome checks (checks/outcomes.py) on hand-built observations: the status a call reports
against what the task did (A2A-C-STATUS, A2A-C-FAILURE-STATES, A2A-C-INTERRUPTED), direct replies,
follow-ups and headers."""

from __future__ import annotations

import pytest

from harness.tests.suites.a2a_client.checks.helpers import follow_up_story, outlives_deadline
from harness.tests.suites.a2a_client.observations import (
    CTX,
    TASK,
    Story,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    judged,
    not_passed,
    plain,
    reply,
    result,
    status,
    task_frame,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.a2a_client.checks import (
    check_a2a_client,
    direct_message_verdicts,
    failure_states_verdicts,
    follow_up_verdicts,
    headers_verdicts,
    interrupted_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import ClientFailure

# --- status ----------------------------------------------------------------------------------


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


def test_a_timeout_before_the_deadline_is_a_wrong_status() -> None:
    early = outlives_deadline(cancel_at=5.0, t_result=5.1)
    assert_fails(status_verdicts(early.build()), "A2A-C-STATUS", "before its deadline")


# --- status mapping --------------------------------------------------------------------------


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


# --- follow-ups and direct replies -----------------------------------------------------------


def test_the_follow_up_carries_the_same_ids() -> None:
    good = follow_up_story(TASK, CTX).build()
    verdicts = check_a2a_client(good)
    assert not_passed(verdicts) == []
    assert {"A2A-C-FOLLOW-UP", "A2A-C-INTERRUPTED"} <= set(judged(verdicts))
    fresh = follow_up_story(None, None, new_task=True).build()
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


# --- headers ---------------------------------------------------------------------------------


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


@pytest.mark.parametrize("accept", ["text/event-stream", "application/json"])
def test_headers_on_rest_read_as_on_json_rpc(accept: str) -> None:
    """On the REST binding a stream is ``POST /message:stream`` (or ``GET
    /tasks/{id}:subscribe``), and the rule is the same: it asks for ``text/event-stream`` and
    says ``A2A-Version: 1.x`` (docs/reference/a2a-client-contract.md#bindings)."""
    frames = (task_frame(0.1), status(1.0, "completed"))
    story = Story(wire="1.0", binding="rest")
    story.card(0.0)
    story.created(0.1)
    story.message(0.1, frames, accept=accept)
    story.run(result(artifacts={}), t_result=1.1)
    observation = story.build()
    assert [(r.http_method, r.path, r.binding) for r in observation.ledger.requests][-1] == (
        "POST",
        "/message:stream",
        "rest",
    )
    verdicts = headers_verdicts(observation)
    if accept == "text/event-stream":
        assert_passes(verdicts, "A2A-C-HEADERS")
    else:
        assert_fails(verdicts, "A2A-C-HEADERS", "Accept: 'application/json'")
