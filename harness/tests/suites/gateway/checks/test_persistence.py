"""GW-PERSIST-AGGREGATES, GW-PERSIST-MATCHES-MESSAGE and the history classifier."""

from __future__ import annotations

from typing import Any

import pytest

from harness.tests.suites.gateway.observations import (
    CHUNKS,
    DONE,
    LEGITIMATE,
    LOOKUP,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
    assert_skips,
    call_event,
    delta,
    error_event,
    error_twice,
    frames,
    message,
    response_event,
    text_event,
    tool_call,
    tool_result,
    user_event,
    whitespace_aggregate,
    worked_example,
)
from streamproof.suites.gateway.checks.persistence import (
    event_text,
    history_kind,
    history_kinds,
    no_half_record_verdicts,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
)
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.scenario import GatewayExpect


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_holds(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")
    assert_holds(persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE")


# --- history_kinds -----------------------------------------------------------------------------


def test_history_kinds_of_the_worked_example() -> None:
    history = worked_example().history
    assert history is not None
    assert history_kinds(history) == ["user", "function_call", "function_response", "text"]


@pytest.mark.parametrize(
    "event, kind",
    [
        (user_event(), "user"),
        ({"author": "user"}, "user"),
        (call_event(LOOKUP, text="Let me check."), "function_call"),
        (response_event(), "function_response"),
        (error_event("UNAVAILABLE"), "error"),
        (error_event("MAX_TOKENS", text="Order 1042"), "error"),
        (text_event(), "text"),
        (
            {"author": "support", "content": {"parts": [{"function_call": {"name": "x"}}]}},
            "function_call",
        ),
        ({"author": "support", "error_code": "INTERNAL"}, "error"),
        ({"author": "support", "content": {"parts": [{"text": ""}]}}, None),
        ({"author": "support", "actions": {"stateDelta": {"k": 1}}}, None),
        ({"author": "support", "content": "garbage"}, None),
    ],
)
def test_history_kind(event: dict[str, Any], kind: str | None) -> None:
    assert history_kind(event) == kind


def test_events_of_no_kind_are_skipped() -> None:
    assert history_kinds([user_event(), {"author": "support"}, text_event()]) == ["user", "text"]


def test_event_text_joins_the_text_parts() -> None:
    event = {"content": {"parts": [{"text": "a "}, {"functionCall": {}}, {"text": "b"}]}}
    assert event_text(event) == "a b"


# --- GW-PERSIST-AGGREGATES ---------------------------------------------------------------------


def test_no_history_endpoint_skips() -> None:
    obs = worked_example(history=None)
    assert_skips(
        persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES", "declares no history endpoint"
    )
    assert_skips(
        persist_matches_message_verdicts(obs),
        "GW-PERSIST-MATCHES-MESSAGE",
        "declares no history endpoint",
    )


UNREADABLE = "the declared history endpoint could not be read: GET /history/s1 answered 500"


def _unreadable(obs: GatewayObservation) -> GatewayObservation:
    return obs.model_copy(update={"history": None, "history_error": "GET /history/s1 answered 500"})


def test_an_unreadable_history_fails_every_persistence_check() -> None:
    answered = _unreadable(worked_example())  # a message frame to compare with the record
    broke = _unreadable(error_twice())  # a model stream that broke mid-answer
    assert_fails(persist_aggregates_verdicts(answered), "GW-PERSIST-AGGREGATES", UNREADABLE)
    assert_fails(
        persist_matches_message_verdicts(answered), "GW-PERSIST-MATCHES-MESSAGE", UNREADABLE
    )
    assert_fails(persist_aggregates_verdicts(broke), "GW-PERSIST-AGGREGATES", UNREADABLE)
    assert_fails(no_half_record_verdicts(broke), "GW-NO-HALF-RECORD", UNREADABLE)


def test_stored_partials_fail() -> None:
    chunks = [text_event(c, id=f"p{i}", partial=True) for i, c in enumerate(CHUNKS)]
    obs = worked_example(
        history=(user_event(), call_event(LOOKUP), response_event(), *chunks, text_event())
    )
    assert_fails(
        persist_aggregates_verdicts(obs),
        "GW-PERSIST-AGGREGATES",
        "stored event #3 (text by 'support' 'Order 1042 shipped ') is a partial chunk "
        "(partial: true)",
    )


def test_a_session_without_the_user_message_fails() -> None:
    obs = worked_example(history=(call_event(LOOKUP), response_event(), text_event()))
    assert_fails(
        persist_aggregates_verdicts(obs),
        "GW-PERSIST-AGGREGATES",
        "the session holds [function_call, function_response, text]: the user message "
        "'Where is order 1042?' was not stored",
    )


def test_the_scenarios_expected_kinds_are_not_judged_here() -> None:
    # A missing aggregate breaks expect.history (test_checks_expectations) and
    # GW-PERSIST-MATCHES-MESSAGE, not the rule that only aggregates are stored.
    obs = worked_example(history=(user_event(), call_event(LOOKUP), response_event()))
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")


def test_a_java_aggregate_without_a_partial_key_is_fine() -> None:
    obs = worked_example(
        history=(user_event(), call_event(LOOKUP), response_event(), text_event(partial=None))
    )
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")


def test_a_stored_user_message_alone_holds_no_partial() -> None:
    obs = worked_example(history=(user_event(),), expect=GatewayExpect())
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")


# --- GW-PERSIST-MATCHES-MESSAGE ----------------------------------------------------------------


def test_the_stored_aggregate_matches_even_when_the_deltas_differ_in_whitespace() -> None:
    assert_passes(
        persist_matches_message_verdicts(whitespace_aggregate()), "GW-PERSIST-MATCHES-MESSAGE"
    )


def test_a_message_built_from_the_deltas_fails() -> None:
    streamed = "Order 1042 shipped  on 30 September and is due Monday."
    obs = worked_example(
        frames=frames(
            tool_call("lookupOrder"),
            tool_result(),
            *(delta(c) for c in CHUNKS),
            message(streamed),
            DONE,
        )
    )
    assert_fails(
        persist_matches_message_verdicts(obs),
        "GW-PERSIST-MATCHES-MESSAGE",
        "frame #5 (event:message id:6) says 'Order 1042 shipped  on 30 September and is due "
        "Monday.' but no stored event by 'support' holds exactly that text",
        "differs only in whitespace: the message was not the aggregate",
    )


def test_a_message_nobody_stored_fails() -> None:
    obs = worked_example(history=(user_event(), call_event(LOOKUP), response_event()))
    assert_fails(persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "frame #5")


def test_the_author_must_match() -> None:
    obs = worked_example(
        history=(
            user_event(),
            call_event(LOOKUP),
            response_event(),
            text_event(author="coordinator"),
        )
    )
    assert_fails(
        persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "by 'support'"
    )


def test_without_a_stream_persistence_is_not_applicable() -> None:
    obs = worked_example(
        response=ChatResponse(status=401, content_type="application/json", end="not-sse")
    )
    assert_not_applicable(
        persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "no event stream"
    )
    assert_not_applicable(
        persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES", "no event stream"
    )


def test_without_a_message_frame_the_comparison_is_not_applicable() -> None:
    obs = worked_example(frames=frames(tool_call("lookupOrder"), tool_result(), DONE))
    assert_not_applicable(
        persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "no message frame"
    )
