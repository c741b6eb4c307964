"""The Node reducer runner: the states a module's reducer goes through, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tests.conftest import require_executable
from streamproof.suites.browser_client.drivers.reducer import run_reducer
from streamproof.suites.browser_client.target import REDUCER_TARGET, load_browser_target
from streamproof.targets.errors import TargetError

FRAMES = [
    {"type": "delta", "data": json.dumps({"author": "support", "text": "Hi "}), "id": "1"},
    {"type": "delta", "data": json.dumps({"author": "support", "text": "there."}), "id": "2"},
    {
        "type": "message",
        "data": json.dumps({"author": "support", "text": "Hi there.", "final": True}),
        "id": "3",
    },
    {"type": "done", "data": "{}", "id": "4"},
]


@pytest.fixture
def reference() -> str:
    require_executable("node")
    module = load_browser_target(REDUCER_TARGET).module
    assert module is not None
    return module


async def test_the_reference_reducer_appends_then_replaces(reference: str) -> None:
    states = await run_reducer(reference, FRAMES, None)
    assert len(states) == len(FRAMES) + 1
    assert states[2]["draft"] == {"author": "support", "text": "Hi there."}
    assert states[3]["draft"] is None
    assert states[3]["messages"] == [{"author": "support", "text": "Hi there."}]
    assert states[4]["status"] == "done"


async def test_a_mutant_is_switched_on_by_name(reference: str) -> None:
    states = await run_reducer(reference, FRAMES, "append-both")
    assert states[3]["draft"] is not None and states[3]["messages"]


async def test_a_module_without_reduce_is_a_clear_error(tmp_path: Path) -> None:
    require_executable("node")
    module = tmp_path / "nothing.mjs"
    module.write_text("export const x = 1;\n", encoding="utf-8")
    with pytest.raises(TargetError, match="reduce"):
        await run_reducer(str(module), FRAMES, None)


async def test_a_reducer_that_throws_names_the_frame(tmp_path: Path) -> None:
    require_executable("node")
    module = tmp_path / "throws.mjs"
    module.write_text(
        "export function reduce(state, frame) {\n"
        "  if (frame.type === 'message') throw new Error('boom');\n"
        "  return state;\n}\n",
        encoding="utf-8",
    )
    with pytest.raises(TargetError, match="boom"):
        await run_reducer(str(module), FRAMES, None)
