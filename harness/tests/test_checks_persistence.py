"""GW-PERSIST-AGGREGATES, GW-PERSIST-MATCHES-MESSAGE and the history classifier."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks.persistence import (
    event_text,
    history_kind,
    history_kinds,
    persist_aggregates_verdicts,
    persist_matches_message_verdicts,
)
from harness.observation import ChatResponse
from harness.scenario import GatewayExpect
from harness.tests.gateway_observations import (
    ANSWER,
    CHUNKS,
    DONE,
    LEGITIMATE,
    LOOKUP,
    assert_fails,
    assert_passes,
    assert_skips,
    call_event,
    delta,
    error_event,
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


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")
    assert_passes(persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE")


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


def test_an_unreadable_history_fails_quoting_the_error() -> None:
    obs = worked_example(history=(), history_error="GET /history/s1 answered 500")
    assert_fails(
        persist_aggregates_verdicts(obs),
        "GW-PERSIST-AGGREGATES",
        "the history could not be read: GET /history/s1 answered 500",
    )
    assert_skips(
        persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "could not be read"
    )


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
        "the session holds [user, function_call, function_response, text\u00d74], "
        "expected [user, function_call, function_response, text]",
    )


def test_missing_aggregate_fails_the_expected_kinds() -> None:
    obs = worked_example(history=(user_event(), call_event(LOOKUP), response_event()))
    assert_fails(
        persist_aggregates_verdicts(obs),
        "GW-PERSIST-AGGREGATES",
        "the session holds [user, function_call, function_response], expected [user, "
        "function_call, function_response, text]",
    )


def test_a_java_aggregate_without_a_partial_key_is_fine() -> None:
    obs = worked_example(
        history=(user_event(), call_event(LOOKUP), response_event(), text_event(partial=None))
    )
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")


def test_without_expected_kinds_only_partials_matter() -> None:
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


def test_no_stream_skips_the_message_comparison() -> None:
    obs = worked_example(
        response=ChatResponse(status=401, content_type="application/json", end="not-sse")
    )
    assert_skips(
        persist_matches_message_verdicts(obs), "GW-PERSIST-MATCHES-MESSAGE", "no event stream"
    )
    assert_passes(persist_aggregates_verdicts(obs), "GW-PERSIST-AGGREGATES")
    assert ANSWER  # the worked example's answer is what the history stores
