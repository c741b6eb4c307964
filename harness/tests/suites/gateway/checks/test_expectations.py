"""A scenario's own expectations (expect.frames, expect.history, expect.tool_calls,
expect.model_calls, and its model script), each judged under its own name."""

from __future__ import annotations

from collections.abc import Sequence

from harness.tests.suites.gateway.observations import (
    CHUNKS,
    DONE,
    LOOKUP,
    budget_stopped,
    call_event,
    error,
    frames,
    http_error_retried,
    message,
    model_call,
    multi_agent,
    observation,
    response_event,
    text_event,
    tool_call,
    tool_result,
    tool_run,
    user_event,
    worked_example,
)
from streamproof.core.verdicts import Kind, Outcome, Verdict
from streamproof.suites.gateway.checks.expectations import gateway_expectation_verdicts
from streamproof.suites.gateway.scenario import GatewayExpect


def _one(obs_verdicts: Sequence[Verdict], name: str) -> Verdict:
    (verdict,) = [v for v in obs_verdicts if v.requirement == name]
    assert verdict.kind is Kind.EXPECTATION
    return verdict


def _fails(verdicts: Sequence[Verdict], name: str, *fragments: str) -> Verdict:
    verdict = _one(verdicts, name)
    assert verdict.outcome is Outcome.FAIL, verdict.render()
    assert verdict.message.startswith(f"{name}: "), verdict.message
    for fragment in fragments:
        assert fragment in verdict.message, f"{fragment!r} not in {verdict.message!r}"
    return verdict


def _passes(verdicts: Sequence[Verdict], name: str) -> Verdict:
    verdict = _one(verdicts, name)
    assert verdict.outcome is Outcome.PASS, verdict.render()
    return verdict


def test_the_worked_example_meets_its_expectations_in_a_fixed_order() -> None:
    verdicts = gateway_expectation_verdicts(worked_example())
    assert [v.requirement for v in verdicts] == [
        "expect.frames",
        "expect.history",
        "expect.tool_calls",
    ]
    assert all(v.outcome is Outcome.PASS and v.kind is Kind.EXPECTATION for v in verdicts)


def test_expectations_the_scenario_does_not_set_give_no_verdict() -> None:
    assert gateway_expectation_verdicts(worked_example(expect=GatewayExpect())) == []


# --- expect.frames -----------------------------------------------------------------------------


def test_frames_that_do_not_match_the_pattern_fail() -> None:
    obs = worked_example(
        expect=GatewayExpect(frames="tool_call tool_result delta+ message done"),
        frames=frames(
            tool_call("lookupOrder"), tool_result(), message("Order 1042 shipped."), DONE
        ),
    )
    verdict = _fails(
        gateway_expectation_verdicts(obs),
        "expect.frames",
        "the frames tool_call tool_result message done do not match "
        "'tool_call tool_result delta+ message done'",
    )
    assert verdict.expected == "tool_call tool_result delta+ message done"


# --- expect.history ----------------------------------------------------------------------------


def test_a_missing_aggregate_fails_the_expected_kinds() -> None:
    obs = worked_example(history=(user_event(), call_event(LOOKUP), response_event()))
    _fails(
        gateway_expectation_verdicts(obs),
        "expect.history",
        "the session holds [user, function_call, function_response], expected [user, "
        "function_call, function_response, text]",
    )


def test_stored_partials_fail_the_expected_kinds() -> None:
    chunks = [text_event(c, id=f"p{i}", partial=True) for i, c in enumerate(CHUNKS)]
    obs = worked_example(
        history=(user_event(), call_event(LOOKUP), response_event(), *chunks, text_event())
    )
    _fails(
        gateway_expectation_verdicts(obs),
        "expect.history",
        "the session holds [user, function_call, function_response, text\u00d74], "
        "expected [user, function_call, function_response, text]",
    )


def test_a_history_pattern_is_matched() -> None:
    good = worked_example(expect=GatewayExpect(history="user function_call function_response text"))
    _passes(gateway_expectation_verdicts(good), "expect.history")
    bad = worked_example(expect=GatewayExpect(history="user error"))
    _fails(gateway_expectation_verdicts(bad), "expect.history", "expected user error")


def test_an_unreadable_history_fails_the_expected_kinds() -> None:
    obs = worked_example(history=None, history_error="GET /history/s1 answered 500")
    _fails(
        gateway_expectation_verdicts(obs),
        "expect.history",
        "the history could not be read: GET /history/s1 answered 500",
    )


def test_without_a_history_endpoint_the_expected_kinds_are_skipped() -> None:
    verdict = _one(gateway_expectation_verdicts(worked_example(history=None)), "expect.history")
    assert verdict.outcome is Outcome.SKIP
    assert verdict.message == "the target declares no history endpoint"


# --- expect.tool_calls -------------------------------------------------------------------------


def test_the_scenario_tool_count_is_enforced() -> None:
    obs = worked_example(expect=GatewayExpect(tool_calls={"lookupOrder": 2}))
    _fails(
        gateway_expectation_verdicts(obs),
        "expect.tool_calls",
        "lookupOrder ran 1 time(s), expected 2",
    )


def test_a_tool_run_twice_fails_the_expected_count() -> None:
    obs = worked_example(tool_calls=(tool_run(), tool_run(t=0.16)))
    verdict = _fails(
        gateway_expectation_verdicts(obs),
        "expect.tool_calls",
        "lookupOrder ran 2 time(s), expected 1",
    )
    assert verdict.observed == {"lookupOrder": 2}


def test_a_tool_the_scenario_does_not_expect_fails() -> None:
    obs = worked_example(
        expect=GatewayExpect(tool_calls={}), tool_calls=(tool_run("cancelOrder"), tool_run())
    )
    _fails(
        gateway_expectation_verdicts(obs),
        "expect.tool_calls",
        "cancelOrder ran 1 time(s), expected 0",
        "lookupOrder ran 1 time(s), expected 0",
    )


# --- expect.model_calls ------------------------------------------------------------------------


def test_the_scenario_model_call_count_is_enforced() -> None:
    exact = worked_example(expect=GatewayExpect(model_calls=2))
    _passes(gateway_expectation_verdicts(exact), "expect.model_calls")
    more = worked_example(expect=GatewayExpect(model_calls=3))
    _fails(
        gateway_expectation_verdicts(more),
        "expect.model_calls",
        "2 model call(s) were made, expected 3",
    )


def test_model_calls_as_a_minimum_or_a_range_allow_retries() -> None:
    retried = http_error_retried(4)  # 5 calls: the first and four retries
    verdict = _passes(gateway_expectation_verdicts(retried), "expect.model_calls")
    assert "5 model call(s) (4 of them retries)" in verdict.message
    ranged = retried.model_copy(update={"expect": GatewayExpect(model_calls="1..5")})
    _passes(gateway_expectation_verdicts(ranged), "expect.model_calls")
    narrow = retried.model_copy(update={"expect": GatewayExpect(model_calls="1..3")})
    _fails(
        gateway_expectation_verdicts(narrow),
        "expect.model_calls",
        "5 model call(s) (4 of them retries) were made, expected 1..3",
    )
    exact = retried.model_copy(update={"expect": GatewayExpect(model_calls=1)})
    _fails(gateway_expectation_verdicts(exact), "expect.model_calls", "expected 1")
    none = retried.model_copy(update={"model_calls": ()})
    _fails(gateway_expectation_verdicts(none), "expect.model_calls", "0 model call(s)")


def test_retries_answered_by_the_same_turn_use_up_no_script() -> None:
    # A gateway that hides the failure behind a bare done "completes" the run: the retries of
    # the first turn must not count as the second scripted turn being asked for.
    swallowed = http_error_retried(1).model_copy(
        update={"frames": frames(DONE), "scripted_calls": 2, "expect": GatewayExpect()}
    )
    _fails(
        gateway_expectation_verdicts(swallowed),
        "model",
        "the run completed (done, no error) after 2 model call(s) (1 of them retries), but the "
        "scenario scripts 2",
    )


# --- model (the script) ------------------------------------------------------------------------


def test_the_scripted_agents_made_their_calls() -> None:
    obs = multi_agent().model_copy(update={"scripted_agents": ("coordinator", "support")})
    _passes(gateway_expectation_verdicts(obs), "model")


def test_a_call_made_by_the_wrong_agent_fails_the_script() -> None:
    obs = multi_agent().model_copy(update={"scripted_agents": ("coordinator", "billing")})
    _fails(
        gateway_expectation_verdicts(obs),
        "model",
        "model call #1 answered the turn scripted for agent 'billing', but 'support' made it",
    )


def test_a_completed_run_that_left_scripted_turns_unused_fails() -> None:
    obs = worked_example(scripted_calls=3, expect=GatewayExpect())
    _fails(
        gateway_expectation_verdicts(obs),
        "model",
        "the run completed (done, no error) after 2 model call(s), but the scenario scripts 3",
    )


def test_a_completed_run_that_used_its_script_passes() -> None:
    obs = worked_example(scripted_calls=2, expect=GatewayExpect())
    _passes(gateway_expectation_verdicts(obs), "model")


def test_a_failed_run_may_leave_scripted_turns_unused() -> None:
    obs = worked_example(
        scripted_calls=3,
        expect=GatewayExpect(),
        frames=frames(tool_call("lookupOrder"), tool_result(), error(retryable=True)),
    )
    assert gateway_expectation_verdicts(obs) == []


def test_a_script_repeated_forever_has_no_count_to_use_up() -> None:
    assert gateway_expectation_verdicts(budget_stopped(3)) == []


def test_an_observation_without_expectations_or_script_has_none() -> None:
    obs = observation(frames=frames(DONE), model_calls=(model_call(0),))
    assert gateway_expectation_verdicts(obs) == []
