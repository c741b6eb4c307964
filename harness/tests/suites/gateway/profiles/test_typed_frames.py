"""The ``typed-frames`` profile with a team's own frame names (``frames:`` in the target)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from harness.tests.suites.gateway.observations import ANSWER, CHUNKS, frames, worked_example
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.profiles.base import ReadAs
from streamproof.suites.gateway.profiles.registry import check_gateway
from streamproof.suites.gateway.profiles.typed_frames import mapped_frames
from streamproof.suites.gateway.profiles.wire import FrameMapping

MAPPING = FrameMapping.model_validate(
    {
        "delta": {"event": "token", "author": "agent", "text": "chunk"},
        "message": {"event": "answer", "author": "agent", "text": "body.text", "final": "done"},
        "tool_call": {"event": "tool", "names": "tools"},
        "tool_result": {"event": "tool_done", "count": "n"},
        "done": "end",
    }
)


def mapped_worked_example(**overrides: object) -> object:
    return worked_example(
        frames=frames(
            ("tool", {"tools": ["lookupOrder"]}),
            ("tool_done", {"n": 1}),
            *(("token", {"agent": "support", "chunk": c}) for c in CHUNKS),
            ("answer", {"agent": "support", "body": {"text": ANSWER}, "done": True}),
            ("end", {}),
        ),
        frame_mapping=MAPPING,
        **overrides,
    )


def test_a_mapped_gateway_reads_as_the_seeds_frames() -> None:
    obs = mapped_worked_example()
    view = mapped_frames(obs.frames, ReadAs(MAPPING))  # type: ignore[attr-defined]
    assert [f.event for f in view] == [
        "tool_call",
        "tool_result",
        "delta",
        "delta",
        "delta",
        "message",
        "done",
    ]
    assert json.loads(view[5].data) == {"author": "support", "text": ANSWER, "final": True}
    assert view[5].wire == "answer"


def test_a_mapped_gateway_passes_as_the_seeds_own() -> None:
    verdicts = check_gateway(mapped_worked_example())  # type: ignore[arg-type]
    assert not [v for v in verdicts if v.outcome is Outcome.FAIL]


def test_a_field_the_mapping_does_not_find_fails_frame_types_naming_the_wire_event() -> None:
    obs = worked_example(
        frames=frames(
            ("tool", {"tools": ["lookupOrder"]}),
            ("tool_done", {"n": 1}),
            *(("token", {"agent": "support", "text": c}) for c in CHUNKS),  # 'chunk' expected
            ("answer", {"agent": "support", "body": {"text": ANSWER}, "done": True}),
            ("end", {}),
        ),
        frame_mapping=MAPPING,
    )
    types = next(v for v in check_gateway(obs) if v.requirement == "GW-FRAME-TYPES")
    assert types.outcome is Outcome.FAIL
    assert "(token as delta" in types.message


def test_a_seed_name_moved_elsewhere_is_no_longer_that_kind() -> None:
    view = mapped_frames(frames(("delta", {"author": "support", "text": "x"})), ReadAs(MAPPING))
    assert view[0].event == "unmapped:delta"


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"delta": "message"}, "message and delta are both sent as event 'message'"),
        ({"done": {"event": "end", "text": "x"}}, "done.text: a done frame has no text"),
        ({"delta": {"event": "a:b"}}, "is not an SSE event name"),
        ({"delta": {"event": "t", "text": "a..b"}}, "is not a field path"),
        ({"deltas": "x"}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_mapping_is_an_error_naming_the_key(mapping: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        FrameMapping.model_validate(mapping)
