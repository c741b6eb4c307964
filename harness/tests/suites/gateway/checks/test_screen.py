"""The screens a browser shows after each frame, and GW-NO-DOUBLE-RENDER judged on them
(harness/streamproof/suites/gateway/checks/screen.py): the trailing delta after its message is a
double render; a new draft by another author, or of the next model turn, is not; the judgement reads
screens only, so a wire without authors is judged alike."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    LOOKUP,
    assert_fails,
    assert_passes,
    delta,
    frames,
    message,
    model_call,
    observation,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks.rendering import double_render_verdicts
from streamproof.suites.gateway.checks.screen import (
    Screen,
    Shown,
    double_render_problems,
    typed_frame_screens,
)
from streamproof.suites.gateway.profiles.registry import check_gateway

TOOL_STEP = (tool_call("lookupOrder"), tool_result())


def test_the_screens_follow_the_seed_reducer_frame_by_frame() -> None:
    shown = typed_frame_screens(
        frames(*TOOL_STEP, delta(CHUNKS[0]), delta(CHUNKS[1]), message(ANSWER), DONE)
    )
    assert [s.frame for s in shown] == [0, 1, 2, 3, 4, 5]
    assert shown[0].status == "Calling lookupOrder" and not shown[0].drafts
    assert shown[2].drafts == (Shown("support", CHUNKS[0], 2),)
    assert shown[3].drafts == (Shown("support", CHUNKS[0] + CHUNKS[1], 3),)
    assert shown[4].drafts == () and shown[4].messages == (Shown("support", ANSWER, 4),)
    assert shown[5].status == "done" and shown[5].messages == shown[4].messages
    assert shown[3].label == "frame #3 (event:delta id:4)"


def test_a_delta_after_its_message_is_a_double_render() -> None:
    obs = worked_example(
        frames=frames(*TOOL_STEP, *(delta(c) for c in CHUNKS), message(ANSWER), delta(ANSWER), DONE)
    )
    verdict = assert_fails(
        double_render_verdicts(obs),
        "GW-NO-DOUBLE-RENDER",
        "after frame #6 (event:delta id:7) the draft of 'support' reads",
        "which repeats the answer already settled by frame #5 (event:message id:6)",
        "the screen shows it twice",
    )
    assert verdict.at == obs.frames[6].t
    # the only requirement it breaks: the frame order, the message and the end are all right
    failed = {v.requirement for v in check_gateway(obs) if v.outcome is Outcome.FAIL}
    assert failed == {"GW-NO-DOUBLE-RENDER", "expect.frames"}


def test_the_trailing_delta_is_caught_as_its_first_chunk_too() -> None:
    obs = worked_example(
        frames=frames(
            *TOOL_STEP, *(delta(c) for c in CHUNKS), message(ANSWER), delta(CHUNKS[0]), DONE
        )
    )
    assert_fails(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER", "repeats the answer")


def test_a_new_draft_by_another_author_is_not_a_double_render() -> None:
    courier = "Your parcel is out for delivery."
    obs = worked_example(
        frames=frames(
            *(delta(c) for c in CHUNKS),
            message(ANSWER),
            delta(courier, author="courier"),
            message(courier, author="courier"),
            DONE,
        ),
        model_calls=(model_call(0, text=ANSWER), model_call(1, text=courier, agent="courier")),
    )
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_the_next_model_turn_may_start_a_draft_of_the_same_words() -> None:
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
            model_call(1, text="On it."),
        ),
        history=None,
        expect=observation().expect,
    )
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_the_judgement_reads_screens_alone_and_an_author_may_be_unknown() -> None:
    """A wire without authors (AG-UI names a role and a message id): the same judgement."""
    answer = model_call(0, text="Hello there.", agent=None)

    def screen(i: int, messages: tuple[Shown, ...], drafts: tuple[Shown, ...]) -> Screen:
        return Screen(frame=i, t=0.1 * i, label=f"event #{i}", messages=messages, drafts=drafts)

    settled = (Shown(None, "Hello there.", 2),)
    good = [
        screen(0, (), (Shown(None, "Hello ", 0),)),
        screen(1, (), (Shown(None, "Hello there.", 1),)),
        screen(2, settled, ()),
    ]
    assert double_render_problems(good, [answer]) == []
    again = [*good, screen(3, settled, (Shown(None, "Hello there.", 3),))]
    (problem,) = double_render_problems(again, [answer])
    assert problem.t == again[3].t
    assert "after event #3 the draft of an unnamed author" in problem.text
    assert "repeats the answer already settled by event #2" in problem.text
    twice = [*good, screen(3, (*settled, Shown(None, "Hello there.", 3)), ())]
    (problem,) = double_render_problems(twice, [answer])
    assert "is rendered 2 times (message frames #2, #3) but the model said it 1 time(s)" in (
        problem.text
    )
