"""GW-CONC-*: the checks over K sessions run at once, each proven both ways."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    DONE,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    delta,
    frames,
    message,
    model_call,
    text_event,
    user_event,
    worked_example,
)
from streamproof.suites.gateway.checks.concurrency import (
    Session,
    concurrency_verdicts,
    crosstalk_verdicts,
    history_per_session_verdicts,
    streams_end_verdicts,
)
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation

MARKERS = ("sp-s1-aaaa", "sp-s2-aaaa", "sp-s3-aaaa")
IDS = ("GW-CONC-NO-CROSSTALK", "GW-CONC-HISTORY-PER-SESSION", "GW-CONC-STREAMS-END")


def own(i: int, **overrides: object) -> GatewayObservation:
    """Session ``i``'s turn as a correct gateway streams and stores it: its marker in its user
    message and in every text chunk."""
    m = MARKERS[i]
    answer = f"Order 1042 shipped [{m}] "
    fields: dict[str, object] = {
        "request_text": f"Where is order 1042? [{m}]",
        "frames": frames(delta(answer), message(answer), DONE),
        "model_calls": (model_call(0, text=answer),),
        "history": (user_event(f"Where is order 1042? [{m}]"), text_event(answer)),
    }
    fields.update(overrides)
    return worked_example(**fields)


def sessions(*observations: GatewayObservation) -> list[Session]:
    return [Session(MARKERS[i], obs) for i, obs in enumerate(observations)]


def test_sessions_that_keep_to_themselves_pass() -> None:
    verdicts = concurrency_verdicts(sessions(own(0), own(1), own(2)))
    assert [v.requirement for v in verdicts] == list(IDS)
    for verdict in verdicts:
        assert_passes([verdict], verdict.requirement)


def test_one_session_alone_is_not_judged() -> None:
    for verdict in concurrency_verdicts(sessions(own(0))):
        assert_not_applicable([verdict], verdict.requirement, "one session alone")


def test_a_message_carrying_another_sessions_text_fails() -> None:
    mixed = f"Order 1042 shipped [{MARKERS[0]}] Order 1042 shipped [{MARKERS[1]}] "
    leaky = own(
        0, frames=frames(delta(f"Order 1042 shipped [{MARKERS[0]}] "), message(mixed), DONE)
    )
    verdict = assert_fails(
        crosstalk_verdicts(sessions(leaky, own(1))),
        "GW-CONC-NO-CROSSTALK",
        "session 1/2's frame #1 (message) carries the text of session 2/2",
    )
    assert verdict.at == leaky.frames[1].t


def test_no_marker_in_any_frame_is_not_applicable() -> None:
    bare = [own(i, frames=frames(message("no scripted text"), DONE)) for i in range(2)]
    assert_not_applicable(
        crosstalk_verdicts(sessions(*bare)), "GW-CONC-NO-CROSSTALK", "could not show"
    )


def test_a_history_holding_another_sessions_turn_fails() -> None:
    other = text_event(f"Order 1042 shipped [{MARKERS[2]}] ", id="ev-other")
    mixed = own(1, history=(*(own(1).history or ()), other))
    assert_fails(
        history_per_session_verdicts(sessions(own(0), mixed, own(2))),
        "GW-CONC-HISTORY-PER-SESSION",
        "session 2/3's history event #2 holds the text of session 3/3",
    )


def test_a_history_without_its_own_turn_fails_unless_the_browser_left() -> None:
    lost = own(0, history=(text_event("something else"),))
    assert_fails(
        history_per_session_verdicts(sessions(lost, own(1))),
        "GW-CONC-HISTORY-PER-SESSION",
        "session 1/2's history (1 event(s)) does not hold its own user message",
    )
    left = own(0, history=(), disconnected_at=0.1)
    assert_passes(
        history_per_session_verdicts(sessions(left, own(1))), "GW-CONC-HISTORY-PER-SESSION"
    )


def test_a_model_request_mixing_sessions_fails() -> None:
    mixed = model_call(
        0, body={"contents": [{"parts": [{"text": f"[{MARKERS[0]}] and [{MARKERS[1]}]"}]}]}
    )
    assert_fails(
        history_per_session_verdicts(sessions(own(0), own(1)), [mixed]),
        "GW-CONC-HISTORY-PER-SESSION",
        "model request #0 (agent support) carried the conversations of session 1/2, session 2/2",
    )
    nobody = model_call(3, body={"contents": []})
    assert_fails(
        history_per_session_verdicts(sessions(own(0), own(1)), [nobody]),
        "GW-CONC-HISTORY-PER-SESSION",
        "model request #3 (agent support) carried no session's conversation",
    )


def test_no_history_read_is_not_applicable() -> None:
    assert_not_applicable(
        history_per_session_verdicts(sessions(own(0, history=None), own(1, history=None))),
        "GW-CONC-HISTORY-PER-SESSION",
        "no session's history was read",
    )


def test_a_stream_left_open_fails() -> None:
    stuck = own(
        1,
        frames=frames(delta(f"Order [{MARKERS[1]}] ")),
        response=ChatResponse(
            status=200, content_type="text/event-stream", end="timeout", elapsed=10.0
        ),
    )
    assert_fails(
        streams_end_verdicts(sessions(own(0), stuck)),
        "GW-CONC-STREAMS-END",
        "session 2/2's stream was still open after",
        "(1 frame(s))",
    )
