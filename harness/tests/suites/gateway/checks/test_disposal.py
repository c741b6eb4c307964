"""GW-DISPOSE: the run is disposed when the browser goes away."""

from __future__ import annotations

from harness.suites.gateway.checks.disposal import dispose_verdicts
from harness.suites.gateway.observation import ChatResponse, ModelCall
from harness.suites.gateway.scenario import GatewayLimits
from harness.tests.suites.gateway.observations import (
    CHUNKS,
    assert_not_applicable,
    delta,
    frames,
    model_call,
    one,
    tool_call,
    tool_result,
    tool_run,
    worked_example,
)
from harness.verdicts import Outcome

LEFT = ChatResponse(status=200, content_type="text/event-stream", end="client-closed", elapsed=0.4)


def _call(index: int, t: float, t_end: float | None, **kw: object) -> ModelCall:
    return model_call(index, t=t, **kw).model_copy(update={"t_end": t_end})  # type: ignore[arg-type]


def _left(*calls: ModelCall, tools: tuple[object, ...] = ()) -> object:
    return worked_example(
        response=LEFT,
        frames=frames(tool_call("lookupOrder"), tool_result(1), delta(CHUNKS[0]), delta(CHUNKS[1])),
        disconnected_at=0.4,
        model_calls=calls,
        tool_calls=tools or (tool_run(),),
        limits=GatewayLimits(dispose_within=2.0),
        time_scale=0.1,  # bound: max(0.2, 0.5) = 0.5 s
        history=None,
    )


def test_not_applicable_when_the_browser_stays() -> None:
    assert_not_applicable(
        dispose_verdicts(worked_example()),
        "GW-DISPOSE",
        "the browser stayed until the stream ended",
    )


def test_model_stream_closed_promptly_passes() -> None:
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, 0.42, completed=False, closed_early=True))
    verdict = one(dispose_verdicts(obs), "GW-DISPOSE")  # type: ignore[arg-type]
    assert verdict.outcome is Outcome.PASS, verdict.render()


def test_stream_still_open_fails() -> None:
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, None, completed=False))
    verdict = one(dispose_verdicts(obs), "GW-DISPOSE")  # type: ignore[arg-type]
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message.startswith("GW-DISPOSE: ") and "still streaming" in verdict.message


def test_stream_closed_only_after_the_bound_fails() -> None:
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, 3.0, completed=True))
    verdict = one(dispose_verdicts(obs), "GW-DISPOSE")  # type: ignore[arg-type]
    assert verdict.outcome is Outcome.FAIL and "stayed open until 2.60s" in verdict.message


def test_new_calls_after_the_browser_left_fail() -> None:
    late_tool = tool_run(t=2.0)
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, 0.3), _call(2, 1.5, 1.6), tools=(late_tool,))
    verdict = one(dispose_verdicts(obs), "GW-DISPOSE")  # type: ignore[arg-type]
    assert verdict.outcome is Outcome.FAIL
    assert "model call #2 started 1.10s (11s scenario time) after" in verdict.message
    assert "tool lookupOrder ran 1.60s (16s scenario time) after" in verdict.message
