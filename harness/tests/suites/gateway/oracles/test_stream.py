"""A stream as the differential reads it (stream.py): from an observation, its events' data,
types and fields."""

from __future__ import annotations

from harness.tests.suites.gateway.oracles.builders import stream
from harness.tests.suites.gateway.profiles.wires import THREAD, agui_worked_example
from streamproof.suites.gateway.oracles.stream import stream_of


def test_a_stream_is_read_from_its_observation() -> None:
    obs = agui_worked_example()
    read = stream_of(obs)
    assert (read.name, read.profile, read.end) == (obs.scenario, "ag-ui", "clean")
    assert read.payloads == tuple(f.data for f in obs.frames)
    assert read.request_thread == THREAD and read.types()[0] == "RUN_STARTED"
    assert read.value(0, "runId") == "run-1" and read.value(99, "runId") is None
    ui = stream('{"type":"start"}', "[DONE]", "not json", profile="ai-sdk-ui")
    assert ui.types() == ("start", "[DONE]", None)
