"""The seed's client reducer, branch by branch, and its append-then-replace property."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    delta,
    error,
    frame,
    frames,
    message,
    tool_call,
    tool_result,
    worked_example,
)
from streamproof.suites.gateway.checks.reducer import Draft, Message, ReducerState, reduce, replay


def test_the_worked_example_renders_one_message_and_no_draft() -> None:
    states = replay(worked_example().frames)
    assert [s.draft for s in states] == [
        None,
        None,
        Draft("support", CHUNKS[0]),
        Draft("support", CHUNKS[0] + CHUNKS[1]),
        Draft("support", ANSWER),
        None,
        None,
    ]
    assert states[0].status == "Calling lookupOrder"
    assert states[-1] == ReducerState(
        messages=(Message("support", ANSWER, True, "6f1d2c3a-1b2c-4d5e-8f90-0a1b2c3d4e04"),),
        draft=None,
        status="done",
    )


def test_a_delta_from_another_author_starts_a_new_draft() -> None:
    states = replay(
        frames(delta("Hi "), delta("there", author="billing"), delta("!", author="billing"))
    )
    assert states[-1].draft == Draft("billing", "there!")


def test_a_message_replaces_the_draft_it_does_not_append_to_it() -> None:
    states = replay(frames(delta("Hel"), delta("lo"), message("Hello")))
    assert states[-1].draft is None
    assert [m.text for m in states[-1].messages] == ["Hello"]


def test_tool_call_clears_the_draft_and_sets_a_status() -> None:
    state = replay(frames(delta("Let me"), tool_call("lookupOrder", "refund")))[-1]
    assert state.draft is None
    assert state.status == "Calling lookupOrder, refund"


@pytest.mark.parametrize("end", [DONE, error(code="MAX_TOKENS"), error(retryable=True)])
def test_error_and_done_clear_the_draft(end: tuple[str, object]) -> None:
    state = replay(frames(delta("half a sent"), end))[-1]
    assert state.draft is None
    assert state.status == end[0]


def test_tool_result_and_unknown_types_leave_the_state_alone() -> None:
    before = replay(frames(delta("x")))[-1]
    for f in frames(tool_result(2), ("ping", {}), ("message_v2", {"text": "y"})):
        assert reduce(before, f) is before


@pytest.mark.parametrize(
    "event, data",
    [
        ("delta", "not json"),
        ("delta", "[1, 2]"),
        ("delta", '{"author": "support"}'),
        ("message", '{"text": "no author"}'),
        ("tool_call", '{"names": "lookupOrder"}'),
        ("done", "garbage"),
    ],
)
def test_a_frame_the_javascript_would_choke_on_leaves_the_state(event: str, data: str) -> None:
    before = replay(frames(delta("x")))[-1]
    assert reduce(before, frame(1, event, data)) == before


def test_states_are_frozen() -> None:
    state = ReducerState()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.status = "done"  # type: ignore[misc]


def test_replay_of_nothing_is_nothing() -> None:
    assert replay([]) == []


@given(
    text=st.text(min_size=1, max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=10),
    author=st.sampled_from(["support", "coordinator", "a b"]),
)
def test_any_split_into_deltas_then_the_message_renders_the_text_once(
    text: str, cuts: list[int], author: str
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    states = replay(
        frames(*(delta(c, author=author) for c in chunks), message(text, author=author), DONE)
    )
    for i, state in enumerate(states[: len(chunks)]):
        assert state.draft == Draft(author, "".join(chunks[: i + 1]))
        assert state.messages == ()
    final = states[-1]
    assert final.draft is None
    assert [(m.author, m.text) for m in final.messages] == [(author, text)]
    assert final.status == "done"
