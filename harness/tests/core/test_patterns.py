from __future__ import annotations

import re

import pytest

from streamproof.core.patterns import (
    check_names,
    compile_frame_pattern,
    json_schema_pattern,
    matches,
    pattern_names,
)


@pytest.mark.parametrize(
    ("pattern", "names", "ok"),
    [
        (
            "tool_call tool_result delta+ message done",
            ["tool_call", "tool_result", "delta", "delta", "message", "done"],
            True,
        ),
        (
            "tool_call tool_result delta+ message done",
            ["tool_call", "tool_result", "message", "done"],
            False,
        ),
        ("delta* error+ done?", ["error", "error"], True),
        ("delta* error+ done?", ["delta", "error", "done"], True),
        ("delta* error+ done?", ["delta", "done"], False),
        (
            "(tool_call|tool_result)+ error",
            ["tool_call", "tool_result", "tool_call", "error"],
            True,
        ),
        ("message done", ["message", "done", "done"], False),
        ("delta", ["deltas"], False),  # whole names only
    ],
)
def test_matches(pattern: str, names: list[str], ok: bool) -> None:
    assert matches(pattern, names) is ok


@pytest.mark.parametrize("bad", ["", "delta++", "Delta", "a||b", "(a|b"])
def test_bad_patterns(bad: str) -> None:
    with pytest.raises(ValueError):
        compile_frame_pattern(bad)


FRAMES = ("delta", "message", "tool_call", "tool_result", "error", "done")


def test_pattern_names_in_order_once() -> None:
    assert pattern_names("(tool_call|tool_result)+ delta* tool_call done?") == [
        "tool_call",
        "tool_result",
        "delta",
        "done",
    ]


def test_check_names_passes_a_pattern_of_legal_names() -> None:
    check_names("(tool_call|tool_result)+ delta* message? error|done", FRAMES, "frame type")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (
            "delta+ mesage done",
            "unknown frame type 'mesage' (did you mean 'message'?) in 'delta+ mesage done'; "
            "frame types are delta, message, tool_call, tool_result, error, done",
        ),
        (
            "(tool_cal|xyz)+ done",
            "unknown frame types 'tool_cal' (did you mean 'tool_call'?), 'xyz' in "
            "'(tool_cal|xyz)+ done'; frame types are delta, message, tool_call, tool_result, "
            "error, done",
        ),
    ],
)
def test_check_names_names_every_unknown_name_and_the_nearest(pattern: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        check_names(pattern, FRAMES, "frame type")
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("pattern", "ok"),
    [
        ("delta+ message done", True),
        ("  (tool_call|tool_result)+ error|done? ", True),
        ("delta+ mesage done", False),
        ("deltas", False),
        ("delta++", False),
        ("", False),
    ],
)
def test_json_schema_pattern_is_the_same_rule(pattern: str, ok: bool) -> None:
    assert (re.search(json_schema_pattern(FRAMES), pattern) is not None) is ok
