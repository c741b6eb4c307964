from __future__ import annotations

import pytest

from harness.patterns import compile_frame_pattern, matches


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
