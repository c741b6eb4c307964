"""The adk-events profile: a raw ADK event stream judged by the seed's rules that apply to it.

The raw worked example is what ``adk api_server`` streams for "Where is order 1042?" (captured
from a real run, trimmed): the partial and aggregate function-call events, the function
response with the tool's payload, three partial texts and their aggregate. Every check is
proved both ways on it: the correct stream passes (GW-NO-TOOL-LEAK aside, which a raw stream
fails by design) and one thing broken at a time fails under the right requirement.
"""

from __future__ import annotations

from typing import Any

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    LOOKUP,
    call_event,
    error_event,
    frame,
    model_call,
    observation,
    response_event,
    text_event,
    tool_run,
    user_event,
)
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.checks.adk_events import REASON, TYPED_FRAME_REQUIREMENTS
from streamproof.suites.gateway.observation import Frame, GatewayObservation
from streamproof.suites.gateway.profiles.registry import check_gateway
from streamproof.suites.gateway.scenario import GatewayExpect


def raw(*events: dict[str, Any]) -> tuple[Frame, ...]:
    """Data-only SSE events, as ``/run_sse`` sends them: no ``event:`` line, no id."""
    return tuple(frame(i, "message", e, id="", id_line=False) for i, e in enumerate(events))


def partial_call() -> dict[str, Any]:
    return {**call_event(LOOKUP), "partial": True}


def raw_worked_example(**overrides: Any) -> GatewayObservation:
    fields: dict[str, Any] = {
        "scenario": "gateway/one-tool-call-streamed",
        "profile": "adk-events",
        "frames": raw(
            partial_call(),
            call_event(LOOKUP),
            response_event(),
            *(text_event(c, partial=True) for c in CHUNKS),
            text_event(ANSWER),
        ),
        "model_calls": (
            model_call(0, calls=[LOOKUP], t=0.05),
            model_call(1, text=ANSWER, chunks=3, t=0.25),
        ),
        "tool_calls": (tool_run(),),
        "history": (user_event(), call_event(LOOKUP), response_event(), text_event()),
        "expect": GatewayExpect(
            frames="tool_call tool_result delta+ message done",
            history=("user", "function_call", "function_response", "text"),
            tool_calls={"lookupOrder": 1},
        ),
    }
    fields.update(overrides)
    return observation(**fields)


def by_id(verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {v.requirement: v for v in verdicts}


def outcome(obs: GatewayObservation, rid: str) -> Outcome:
    return by_id(check_gateway(obs))[rid].outcome


def test_a_raw_stream_fails_only_the_tool_payload_rule() -> None:
    verdicts = by_id(check_gateway(raw_worked_example()))
    failed = {r for r, v in verdicts.items() if v.outcome is Outcome.FAIL}
    assert failed == {"GW-NO-TOOL-LEAK"}
    assert "forwards every function call and function response by design" in (
        verdicts["GW-NO-TOOL-LEAK"].message
    )
    for rid in (
        "GW-SSE-RESPONSE",
        "GW-ANSWER-AS-MESSAGE",
        "GW-TOOL-ONCE",
        "GW-PERSIST-AGGREGATES",
        "GW-PERSIST-MATCHES-MESSAGE",
        "expect.history",
        "expect.tool_calls",
    ):
        assert verdicts[rid].outcome is Outcome.PASS, verdicts[rid].message


def test_every_typed_frame_rule_is_not_applicable_never_pass() -> None:
    verdicts = by_id(check_gateway(raw_worked_example()))
    for rid in (*TYPED_FRAME_REQUIREMENTS, "expect.frames"):
        assert verdicts[rid].outcome is Outcome.NOT_APPLICABLE, rid
        assert REASON in verdicts[rid].message


def test_every_requirement_gets_one_verdict_as_on_the_typed_profile() -> None:
    from harness.tests.suites.gateway.observations import worked_example

    typed = [v.requirement for v in check_gateway(worked_example())]
    raw_ids = [v.requirement for v in check_gateway(raw_worked_example())]
    assert sorted(raw_ids) == sorted(typed)


def test_a_stream_that_leaves_the_function_response_out_passes_the_payload_rule() -> None:
    obs = raw_worked_example(
        frames=raw(
            call_event(LOOKUP), *(text_event(c, partial=True) for c in CHUNKS), text_event(ANSWER)
        )
    )
    assert outcome(obs, "GW-NO-TOOL-LEAK") is Outcome.PASS


def test_an_aggregate_that_disagrees_with_its_partials_fails() -> None:
    obs = raw_worked_example(
        frames=raw(
            call_event(LOOKUP),
            *(text_event(c, partial=True) for c in CHUNKS),
            text_event("Order 1042 is lost."),
        )
    )
    verdict = by_id(check_gateway(obs))["GW-ANSWER-AS-MESSAGE"]
    assert verdict.outcome is Outcome.FAIL
    assert "its partials said" in verdict.message


def test_a_streamed_turn_needs_partials_a_none_mode_turn_does_not() -> None:
    only_aggregate = raw(call_event(LOOKUP), text_event(ANSWER))
    assert outcome(raw_worked_example(frames=only_aggregate), "GW-ANSWER-AS-MESSAGE") is (
        Outcome.FAIL
    )
    none_mode = raw_worked_example(frames=only_aggregate, streaming=False)
    assert outcome(none_mode, "GW-ANSWER-AS-MESSAGE") is Outcome.PASS


def test_partials_never_settled_on_a_clean_end_fail() -> None:
    obs = raw_worked_example(
        frames=raw(call_event(LOOKUP), *(text_event(c, partial=True) for c in CHUNKS))
    )
    verdict = by_id(check_gateway(obs))["GW-ANSWER-AS-MESSAGE"]
    assert verdict.outcome is Outcome.FAIL
    assert "never settled" in verdict.message


def test_partials_cut_by_an_error_event_are_not_an_unsettled_answer() -> None:
    obs = raw_worked_example(
        frames=raw(text_event("Order ", partial=True), error_event("UNAVAILABLE")),
        model_calls=(
            model_call(0, text="Order ", completed=False, error_sent={"code": 503}, finish=None),
        ),
        history=(user_event(), error_event("UNAVAILABLE")),
        tool_calls=(),
    )
    verdicts = by_id(check_gateway(obs))
    assert verdicts["GW-ANSWER-AS-MESSAGE"].outcome is not Outcome.FAIL
    assert verdicts["GW-ERROR-EVENT"].outcome is Outcome.PASS


def test_an_error_event_missing_from_the_stream_fails() -> None:
    cut = "Order 1042 shipped on 30 September and"
    shown = raw(text_event(cut, partial=True), error_event("MAX_TOKENS", text=cut))
    obs = raw_worked_example(
        frames=shown,
        model_calls=(model_call(0, text=cut, finish="MAX_TOKENS"),),
        history=(user_event(), error_event("MAX_TOKENS", text=cut)),
        tool_calls=(),
    )
    assert outcome(obs, "GW-ERROR-EVENT") is Outcome.PASS
    hidden = obs.model_copy(update={"frames": raw(text_event(cut, partial=True), text_event(cut))})
    assert outcome(hidden, "GW-ERROR-EVENT") is Outcome.FAIL


def test_the_run_error_line_counts_as_the_error_reaching_the_browser() -> None:
    obs = raw_worked_example(
        frames=raw({"error": "ServerError: 503 UNAVAILABLE", "error_details": {}}),
        model_calls=(
            model_call(0, status=503, completed=False, finish=None, error_sent={"code": 503}),
        ),
        history=(user_event(),),
        tool_calls=(),
    )
    assert outcome(obs, "GW-ERROR-EVENT") is Outcome.PASS


def test_a_stored_text_that_is_not_the_aggregate_fails() -> None:
    obs = raw_worked_example(
        history=(user_event(), call_event(LOOKUP), response_event(), text_event(ANSWER + " "))
    )
    assert outcome(obs, "GW-PERSIST-MATCHES-MESSAGE") is Outcome.FAIL
    assert outcome(raw_worked_example(), "GW-PERSIST-MATCHES-MESSAGE") is Outcome.PASS


def test_a_stored_partial_fails_the_aggregates_rule() -> None:
    stored = (user_event(), text_event(CHUNKS[0], partial=True), text_event())
    assert outcome(raw_worked_example(history=stored), "GW-PERSIST-AGGREGATES") is Outcome.FAIL
