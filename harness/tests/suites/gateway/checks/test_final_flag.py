"""GW-FINAL-FLAG: a message's final flag is the event's finalResponse()."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    LEGITIMATE,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
    text_with_tool_call,
    worked_example,
)
from streamproof.suites.gateway.checks.rendering import final_flag_verdicts


def test_the_seeds_flags_pass() -> None:
    assert_passes(final_flag_verdicts(worked_example()), "GW-FINAL-FLAG")
    assert_passes(final_flag_verdicts(text_with_tool_call()), "GW-FINAL-FLAG")
    for build in LEGITIMATE.values():
        assert_holds(final_flag_verdicts(build()), "GW-FINAL-FLAG")


def test_messages_whose_origin_is_unknown_are_not_applicable() -> None:
    assert_not_applicable(
        final_flag_verdicts(worked_example(model_calls=())), "GW-FINAL-FLAG", "no message frame"
    )


def test_text_with_a_call_marked_final_fails() -> None:
    obs = text_with_tool_call()
    frames = tuple(
        f.model_copy(update={"data": f.data.replace('"final":false', '"final":true')})
        for f in obs.frames
    )
    assert '"final":true' in frames[[f.event for f in frames].index("message")].data
    assert_fails(
        final_flag_verdicts(obs.model_copy(update={"frames": frames})),
        "GW-FINAL-FLAG",
        "says final: true, but it is text sent with a function call",
    )


def test_an_answer_marked_not_final_fails() -> None:
    obs = worked_example()
    frames = tuple(
        f.model_copy(update={"data": f.data.replace('"final":true', '"final":false')})
        for f in obs.frames
    )
    assert_fails(
        final_flag_verdicts(obs.model_copy(update={"frames": frames})),
        "GW-FINAL-FLAG",
        "says final: false, but it is an answer with no function call",
    )
