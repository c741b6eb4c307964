"""GW-NO-DOUBLE-RENDER and GW-ANSWER-AS-MESSAGE."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    EV_ANSWER,
    LEGITIMATE,
    LOOKUP,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
    delta,
    error,
    frame,
    frames,
    message,
    model_call,
    observation,
    text_event,
    tool_call,
    tool_result,
    user_event,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks.rendering import (
    answer_as_message_verdicts,
    double_render_verdicts,
)
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.profiles.registry import check_gateway

TOOL_STEP = (tool_call("lookupOrder"), tool_result())


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_variants_pass(name: str) -> None:
    obs = LEGITIMATE[name]()
    assert_holds(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")
    assert_holds(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")


# --- GW-NO-DOUBLE-RENDER -----------------------------------------------------------------------


def test_the_aggregate_sent_as_one_more_delta_shows_twice() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, *(delta(c) for c in CHUNKS), delta(ANSWER), DONE)
    )
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "after frame #5 (event:delta id:6) the draft of 'support' reads",
        "the draft shows 'Order 1042 shipped on 30 September and is due Monday.' twice",
    )


def test_a_delta_that_repeats_a_chunk_shows_it_twice() -> None:
    obs = worked_example(
        frames=frames(
            *TOOL_STEP, delta(CHUNKS[0]), delta(CHUNKS[0]), delta(CHUNKS[1]), message(ANSWER), DONE
        )
    )
    verdict = assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "frame #3",
        "the draft shows 'Order 1042 shipped' twice",
    )
    assert verdict.message.count("the draft shows") == 1  # one report per draft, not per delta


def test_a_delta_the_model_never_sent_fails() -> None:
    obs = worked_example(frames=frames(*TOOL_STEP, delta("Hello!"), message(ANSWER), DONE))
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "which is not how any model text for 'support' begins",
    )


def test_the_same_answer_in_two_messages_fails() -> None:
    obs = worked_example(
        frames=frames(
            *TOOL_STEP, *(delta(c) for c in CHUNKS), message(ANSWER), message(ANSWER), DONE
        )
    )
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "is rendered 2 times (message frames #5, #6) but the model said it 1 time(s)",
    )


def test_the_same_text_said_twice_by_the_model_may_render_twice() -> None:
    obs = worked_example(
        frames=frames(
            delta("On it."),
            message("On it.", final=False),
            *TOOL_STEP,
            delta("On it."),
            message("On it."),
            DONE,
        ),
        model_calls=(
            model_call(0, text="On it.", calls=[LOOKUP]),
            model_call(1, text="On it.", t=0.5),
        ),
        history=None,
        expect=observation().expect,
    )
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")


def test_each_chunk_sent_as_a_message_and_then_the_aggregate_fails() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, *(message(c) for c in CHUNKS), message(ANSWER), DONE)
    )
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "rendered 2 times (message frames #5, #2-#4)",
    )


def test_deltas_and_aggregate_joined_in_one_message_fail() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, *(delta(c) for c in CHUNKS), message(ANSWER + ANSWER), DONE)
    )
    assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "frame #5 (event:message id:6) shows the answer",
        "2 times in one message",
    )


def test_without_model_records_rendering_is_not_judged() -> None:
    obs = worked_example(model_calls=())
    assert_not_applicable(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER", "no model calls")
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")  # deltas vs message


def test_a_stream_without_text_gives_rendering_nothing_to_judge() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, DONE), model_calls=(model_call(0, calls=[LOOKUP]),)
    )
    assert_not_applicable(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER", "no text frame")
    assert_not_applicable(
        answer_as_message_verdicts(obs),
        "GW-ANSWER-AS-MESSAGE",
        "no model text completed cleanly and no message frame",
    )


# --- GW-ANSWER-AS-MESSAGE ----------------------------------------------------------------------


def test_an_answer_that_never_becomes_a_message_fails() -> None:
    obs = worked_example(frames=frames(*TOOL_STEP, *(delta(c) for c in CHUNKS), DONE))
    assert_fails(
        answer_as_message_verdicts(obs),
        "GW-ANSWER-AS-MESSAGE",
        "model call #1 completed (STOP) with the text 'Order 1042 shipped on 30 September and is "
        "due Monday.', but no message frame from 'support' carries it",
    )


def test_a_message_that_is_not_the_deltas_fails() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, *(delta(c) for c in CHUNKS), message("Order 1042 shipped."), DONE)
    )
    verdict = assert_fails(
        answer_as_message_verdicts(obs),
        "GW-ANSWER-AS-MESSAGE",
        "frame #5 (event:message id:6) says 'Order 1042 shipped.' but the deltas before it "
        "(frames #2-#4) spelled 'Order 1042 shipped on 30 September and is due Monday.'",
    )
    assert "no message frame from 'support' carries it" in verdict.message


def test_a_message_from_another_author_does_not_count() -> None:
    obs = worked_example(frames=frames(*TOOL_STEP, message(ANSWER, author="coordinator"), DONE))
    assert_fails(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE", "model call #1")


def test_an_unknown_agent_matches_any_author() -> None:
    obs = worked_example(
        model_calls=(
            model_call(0, calls=[LOOKUP], agent=None),
            model_call(1, text=ANSWER, agent=None),
        )
    )
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_calls_after_the_stream_ended_in_error_are_not_required() -> None:
    late = model_call(1, text="Too late.", t=5.0)
    obs = observation(
        frames=frames(delta("Order "), error(code="UNAVAILABLE"), error(retryable=True)),
        model_calls=(
            model_call(0, text="Order ", finish=None, error_sent={"status": "UNAVAILABLE"}),
            late,
        ),
    )
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")
    earlier = obs.model_copy(update={"model_calls": (late.model_copy(update={"t": 0.0}),)})
    assert_fails(answer_as_message_verdicts(earlier), "GW-ANSWER-AS-MESSAGE", "'Too late.'")


def test_a_broken_connection_does_not_require_the_lost_messages() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, delta(CHUNKS[0])),
        response=ChatResponse(status=200, content_type="text/event-stream", end="error"),
    )
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")


def test_a_text_beside_a_function_call_needs_its_message_too() -> None:
    obs = worked_example(
        model_calls=(
            model_call(0, text="Let me check.", calls=[LOOKUP]),
            model_call(1, text=ANSWER, t=0.25),
        )
    )
    assert_fails(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE", "'Let me check.'")


# --- a property: any chunking, any whitespace in the aggregate --------------------------------

_WORDS = st.lists(st.text(alphabet="abcxyz.,!?é1", min_size=1, max_size=6), min_size=1, max_size=8)


def _streamed(words: list[str], cuts: list[int], spacing: list[str]) -> GatewayObservation:
    text = "".join(w + s for w, s in zip(words, itertools.cycle(spacing), strict=False))
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    aggregate = " ".join(text.split())  # the settled text: same words, other whitespace
    return observation(
        frames=frames(*(delta(c) for c in chunks), message(aggregate, id=EV_ANSWER), DONE),
        model_calls=(model_call(0, text=text, chunks=len(chunks)),),
        history=(user_event(), text_event(aggregate)),
    )


@settings(max_examples=60, deadline=None)
@given(
    words=_WORDS,
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
    spacing=st.lists(st.sampled_from(["", " ", "  ", "\n", " \t"]), min_size=1, max_size=4),
)
def test_any_chunking_of_a_correct_stream_passes_every_check(
    words: list[str], cuts: list[int], spacing: list[str]
) -> None:
    verdicts = check_gateway(_streamed(words, cuts, spacing))
    bad = [v.render() for v in verdicts if v.outcome in (Outcome.FAIL, Outcome.NON_STRICT)]
    assert not bad, bad


def test_raw_frames_are_accepted_by_the_helpers() -> None:
    # A sanity check of the builder the property relies on.
    obs = _streamed(["ab", "cd"], [1, 3], [" "])
    assert [f.event for f in obs.frames] == ["delta", "delta", "delta", "message", "done"]
    assert frame(0, "delta", "{}").data == "{}"
