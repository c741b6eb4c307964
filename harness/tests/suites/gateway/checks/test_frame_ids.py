"""Checks on the frames' SSE ids (harness/streamproof/suites/gateway/checks/frame_ids.py):
GW-FRAME-ID-COUNTER and GW-FRAME-ID-FRESH."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    EV_ANSWER,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    frames,
    renumber,
    text_with_tool_call,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks.frame_ids import (
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
)
from streamproof.suites.gateway.observation import Frame

# --- GW-FRAME-ID-COUNTER and GW-FRAME-ID-FRESH ------------------------------------------------


def test_frame_ids_pass_on_the_worked_example() -> None:
    assert_passes(frame_id_counter_verdicts(worked_example()), "GW-FRAME-ID-COUNTER")
    # no message comes with a tool_call: the one pair GW-FRAME-ID-FRESH judges is absent
    assert_not_applicable(
        frame_id_fresh_verdicts(worked_example()), "GW-FRAME-ID-FRESH", "no message came with"
    )
    assert_passes(frame_id_fresh_verdicts(text_with_tool_call(fresh=True)), "GW-FRAME-ID-FRESH")


def test_a_shared_id_for_message_and_tool_call_is_only_a_should() -> None:
    # The seed's controller numbers per ADK event: message and tool_call share one id.
    obs = text_with_tool_call()
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")
    assert_fails(
        frame_id_fresh_verdicts(obs),
        "GW-FRAME-ID-FRESH",
        "frame #1 (event:message id:3) and frame #2 (event:tool_call id:3) share id 3",
        "Last-Event-ID",
        outcome=Outcome.NON_STRICT,
    )


def test_gaps_in_the_counter_are_fine() -> None:
    obs = worked_example(
        frames=frames(
            *((f.event, f.data) for f in worked_example().frames), ids=[2, 3, 5, 6, 7, 9, 12]
        )
    )
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")


def _with_ids(ids: list[str | int]) -> list[Frame]:
    return list(frames(*((f.event, f.data) for f in worked_example().frames), ids=ids))


def test_adk_event_ids_as_frame_ids_fail() -> None:
    obs = worked_example(
        frames=tuple(_with_ids([f"9a7b{i}c00-1b2c-4d5e-8f90-0a1b2c3d4e0{i}" for i in range(7)]))
    )
    assert_fails(
        frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "looks like an ADK event id"
    )


def test_a_stored_event_id_as_frame_id_fails() -> None:
    ids: list[str | int] = [1, 2, 3, 4, 5, EV_ANSWER, 7]
    obs = worked_example(frames=tuple(_with_ids(ids)))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #5 (event:message id:6f1d2c3a",
        "uses the id of stored ADK event #3, not the gateway's own counter",
    )


def test_frame_ids_that_go_backwards_or_are_not_integers_fail() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 3, 2, "x5", 6, 7])))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #3 (event:delta id:2) goes backwards after id 3",
        "id 'x5' is not a decimal integer",
    )


def test_a_frame_without_its_own_id_line_fails() -> None:
    fs = _with_ids([1, 2, 3, 4, 5, 6, 7])
    fs[4] = fs[4].model_copy(update={"id": "4", "id_line": False})
    verdict = assert_fails(
        frame_id_counter_verdicts(worked_example(frames=tuple(fs))),
        "GW-FRAME-ID-COUNTER",
        "frame #4",
        "has no id: line of its own (the browser keeps the previous id '4')",
    )
    assert verdict.observed == "1 2 3 4 4 6 7"


def test_frames_with_no_id_at_all_fail_the_counter_alone() -> None:
    """One behaviour, one rule: missing ids are the MUST's; the SHOULD has nothing left."""
    plain = text_with_tool_call()
    fs = tuple(f.model_copy(update={"id": "", "id_line": False}) for f in plain.frames)
    obs = plain.model_copy(update={"frames": fs})
    assert_fails(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "has no id: line")
    assert_not_applicable(frame_id_fresh_verdicts(obs), "GW-FRAME-ID-FRESH", "no message came")


def test_ids_that_do_not_increase_fail_the_counter_alone() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 5, 3, 6, 7, 8])))
    assert_fails(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER", "goes backwards after id 5")
    assert_not_applicable(frame_id_fresh_verdicts(obs), "GW-FRAME-ID-FRESH", "no message came")


def test_frames_of_different_events_sharing_an_id_fail_the_counter() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 2, 3, 3, 3, 3, 4])))
    verdict = assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #3 (event:delta id:3) repeats the id of frame #2 (event:delta id:3)",
        "frame #5 (event:message id:3) repeats the id of frame #4",
    )
    assert verdict.message.count("repeats the id") == 3


def test_a_tool_result_reusing_its_tool_calls_id_fails_the_counter() -> None:
    obs = worked_example(frames=tuple(_with_ids([1, 1, 2, 3, 4, 5, 6])))
    assert_fails(
        frame_id_counter_verdicts(obs),
        "GW-FRAME-ID-COUNTER",
        "frame #1 (event:tool_result id:1) repeats the id of frame #0 (event:tool_call id:1): "
        "only a message and the tool_call of the same event may share an id",
    )


def test_the_seeds_per_event_numbering_passes_the_counter() -> None:
    # The seed's send(): one seq.incrementAndGet() per ADK event, so the message and tool_call
    # of a function-call event with text share an id, and a partial event leaves a gap.
    obs = text_with_tool_call()
    assert [f.id for f in obs.frames] == ["1", "3", "3", "4", "5", "6", "7", "8", "9"]
    assert_passes(frame_id_counter_verdicts(obs), "GW-FRAME-ID-COUNTER")


def test_a_tool_call_before_its_message_may_not_share_the_id() -> None:
    obs = text_with_tool_call()
    swapped = (obs.frames[0], obs.frames[2], obs.frames[1], *obs.frames[3:])
    assert_fails(
        frame_id_counter_verdicts(
            obs.model_copy(update={"frames": renumber(swapped, [1, 3, 3, 4, 5, 6, 7, 8, 9])})
        ),
        "GW-FRAME-ID-COUNTER",
        "frame #2 (event:message id:3) repeats the id of frame #1 (event:tool_call id:3)",
    )
