"""GW-DISPOSE: the run is disposed when the browser goes away."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    CHUNKS,
    delta,
    frames,
    model_call,
    one,
    tool_call,
    tool_result,
    tool_run,
    worked_example,
)
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.checks.disposal import dispose_idle_verdicts, dispose_verdicts
from streamproof.suites.gateway.observation import ChatResponse, ModelCall
from streamproof.suites.gateway.scenario import GatewayLimits

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


def _stream(
    index: int, t: float, t_end: float | None, chunks: tuple[float, ...], *, closed: bool = False
) -> ModelCall:
    """A streamed call that wrote text chunks at ``chunks`` (seconds, the run's clock) and
    ended at ``t_end``: finished by the model, or ``closed`` early by the gateway."""
    done = t_end is not None and not closed
    return _call(index, t, t_end, completed=done, closed_early=closed).model_copy(
        update={"text_chunk_times": chunks}
    )


def _both(obs: object) -> tuple[Verdict, Verdict]:
    """The two verdicts, GW-DISPOSE then GW-DISPOSE-IDLE: one each, nothing else."""
    must = one(dispose_verdicts(obs), "GW-DISPOSE")  # type: ignore[arg-type]
    idle = one(dispose_idle_verdicts(obs), "GW-DISPOSE-IDLE")  # type: ignore[arg-type]
    return must, idle


def test_not_applicable_when_the_browser_stays() -> None:
    for verdict in _both(worked_example()):
        assert verdict.outcome is Outcome.NOT_APPLICABLE
        assert "the browser stayed until the stream ended" in verdict.message


def test_model_stream_closed_promptly_passes_both() -> None:
    # The gateway closed the model stream 0.02 s after the browser left at 0.4, before the
    # model sent anything more: disposed at once, by either rule.
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, 0.42, completed=False, closed_early=True))
    must, idle = _both(obs)
    assert must.outcome is Outcome.PASS, must.render()
    assert idle.outcome is Outcome.PASS, idle.render()


def test_a_stream_that_keeps_sending_must_close_by_the_next_send() -> None:
    # Chunks keep coming every 0.2 s after the browser left at 0.4; the second one after it
    # (0.8) is the gateway's chance to send: by 1.3 the stream must be closed. It ran to 3.0.
    chunks = (0.3, 0.6, 0.8, 1.0, 1.2, 2.8)
    obs = _left(_call(0, 0.05, 0.1), _stream(1, 0.25, 3.0, chunks))
    must, idle = _both(obs)
    assert must.outcome is Outcome.FAIL
    assert "stayed open until 2.60s" in must.message
    assert "first chance to send after the browser left, 0.40s (4s scenario time) after" in (
        must.message
    )
    assert idle.outcome is Outcome.NOT_APPLICABLE


def test_closed_at_the_next_send_passes_but_noticed_late_while_quiet_is_unmet() -> None:
    # The model stalls from 0.3 to 3.0: a gateway that notices only when it next sends (the
    # seed's SseEmitter) lets go at 3.05. The MUST holds; the SHOULD (noticed while quiet) not.
    obs = _left(_call(0, 0.05, 0.1), _stream(1, 0.25, 3.05, (0.3, 0.35, 3.0)))
    must, idle = _both(obs)
    assert must.outcome is Outcome.PASS, must.render()
    assert idle.outcome is Outcome.NON_STRICT
    assert "stayed open until 2.65s" in idle.message


def test_noticed_while_quiet_passes_both() -> None:
    # The same stall, but the gateway closed the model stream 0.1 s after the browser left.
    obs = _left(_call(0, 0.05, 0.1), _stream(1, 0.25, 0.5, (0.3, 0.35), closed=True))
    must, idle = _both(obs)
    assert must.outcome is Outcome.PASS
    assert idle.outcome is Outcome.PASS, idle.render()


def test_a_stream_still_open_with_nothing_more_to_send_is_judged_by_the_idle_rule() -> None:
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, None, completed=False))
    must, idle = _both(obs)
    assert must.outcome is Outcome.NOT_APPLICABLE
    assert "nothing came the gateway's way to send" in must.message
    assert idle.outcome is Outcome.NON_STRICT
    assert "still streaming" in idle.message


def test_new_calls_after_the_next_send_fail() -> None:
    # The answer keeps streaming after the browser left at 0.4 (chunks at 0.5 and 0.6: the
    # gateway's chance to send), yet a new model call starts at 1.5 and the tool runs at 2.0.
    late_tool = tool_run(t=2.0)
    calls = (_call(0, 0.05, 0.1), _stream(1, 0.25, 0.65, (0.3, 0.5, 0.6)), _call(2, 1.5, 1.6))
    must, idle = _both(_left(*calls, tools=(late_tool,)))
    assert must.outcome is Outcome.FAIL
    assert "model call #2 started 1.10s (11s scenario time) after" in must.message
    assert "tool lookupOrder ran 1.60s (16s scenario time) after" in must.message
    assert idle.outcome is Outcome.NOT_APPLICABLE


def test_a_new_call_after_a_quiet_spell_is_the_idle_rule() -> None:
    # Nothing streamed after the browser left until a new call at 1.5 (ended 1.6, its function
    # call the gateway's next send) and a tool at 2.0, within the bound of that send: the seed's
    # wiring holds; the quiet spell's new call is the SHOULD's.
    late_tool = tool_run(t=2.0)
    obs = _left(_call(0, 0.05, 0.1), _call(1, 0.25, 0.3), _call(2, 1.5, 1.6), tools=(late_tool,))
    must, idle = _both(obs)
    assert must.outcome is Outcome.PASS, must.render()
    assert idle.outcome is Outcome.NON_STRICT
    assert "model call #2 started 1.10s (11s scenario time) after" in idle.message


def test_a_run_never_disposed_after_a_quiet_spell_is_the_must_alone() -> None:
    # The model stalls from 0.3 to 3.0 and then streams on to 5.0: the gateway neither
    # noticed the closed tab while quiet nor at its next send. One behaviour (never
    # disposed), one rule: GW-DISPOSE fails, and the SHOULD says it is moot.
    obs = _left(_call(0, 0.05, 0.1), _stream(1, 0.25, 5.0, (0.3, 0.35, 3.0, 3.2, 4.9)))
    must, idle = _both(obs)
    assert must.outcome is Outcome.FAIL, must.render()
    assert idle.outcome is Outcome.NOT_APPLICABLE
    assert "not disposed even by the gateway's next send" in idle.message
