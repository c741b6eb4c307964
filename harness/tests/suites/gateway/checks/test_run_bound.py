"""GW-RUN-BOUND and GW-RUN-BOUND-ERROR: a run that reaches the bound it was given is stopped,
with an error frame; and a model call that a fault on the model link kept from the gateway is
owed no message (GW-ANSWER-AS-MESSAGE)."""

from __future__ import annotations

from typing import Any

from harness.tests.suites.gateway.observations import (
    DONE,
    delta,
    error,
    frame,
    message,
    model_call,
    observation,
)
from streamproof.core.verdicts import Outcome
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.suites.gateway.checks.errors import error_frame_verdicts
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls
from streamproof.suites.gateway.checks.rendering import answer_as_message_verdicts
from streamproof.suites.gateway.checks.run_bound import run_bound_error_verdicts, run_bound_verdicts
from streamproof.suites.gateway.checks.stream import stream_terminal_verdicts
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation, ModelCall
from streamproof.suites.gateway.profiles.registry import check_gateway

BOUND = 3.0


def _call(t_end: float | None, **kw: Any) -> ModelCall:
    return model_call(0, t=0.1, text="Let me check the hours.", **kw).model_copy(
        update={"t_end": t_end}
    )


def _link(*records: tuple[str, float, dict[str, Any]]) -> dict[str, tuple[LinkEvent, ...]]:
    return {
        "model": tuple(
            LinkEvent(t=t, link="model", connection=0, request=0, kind=kind, **extra)  # type: ignore[arg-type]
            for kind, t, extra in records
        )
    }


STALLED = _link(
    ("request", 0.1, {}),
    ("response_headers", 0.15, {"status": 200}),
    ("fault", 0.2, {"fault": FaultRef(index=0, action="stall")}),
    ("end", 3.05, {"how": "fin", "by": "client"}),
)


def _obs(
    *,
    end: str = "clean",
    elapsed: float = 3.05,
    frame_specs: tuple[tuple[str, Any], ...] = (delta("Let me check "), error(code="TIMEOUT")),
    times: tuple[float, ...] = (0.2, 3.04),
    bound: float | None = BOUND,
    **fields: Any,
) -> GatewayObservation:
    frames = tuple(
        frame(i, event, payload, t=times[i]) for i, (event, payload) in enumerate(frame_specs)
    )
    base: dict[str, Any] = {
        "response": ChatResponse(
            status=200, content_type="text/event-stream", end=end, elapsed=elapsed
        ),
        "frames": frames,
        "model_calls": (_call(0.3),),
        "link_events": STALLED,
        "run_bound_s": bound,
        "time_scale": 0.1,
    }
    base.update(fields)
    return observation(**base)


def outcomes(obs: GatewayObservation) -> dict[str, Outcome]:
    verdicts = run_bound_verdicts(obs) + run_bound_error_verdicts(obs)
    return {v.requirement: v.outcome for v in verdicts}


def test_a_run_stopped_at_its_bound_with_an_error_frame_passes_both() -> None:
    assert outcomes(_obs()) == {"GW-RUN-BOUND": Outcome.PASS, "GW-RUN-BOUND-ERROR": Outcome.PASS}


def test_a_run_that_never_ends_fails_the_must_alone() -> None:
    obs = _obs(
        end="timeout",
        elapsed=10.0,
        frame_specs=(delta("Let me check "),),
        times=(0.2,),
        link_events=_link(
            ("request", 0.1, {}), ("fault", 0.2, {"fault": FaultRef(index=0, action="stall")})
        ),
        stream_wait_s=10.0,
    )
    verdicts = {v.requirement: v for v in run_bound_verdicts(obs) + run_bound_error_verdicts(obs)}
    assert verdicts["GW-RUN-BOUND"].outcome is Outcome.FAIL
    assert "had not ended" in verdicts["GW-RUN-BOUND"].message
    assert "request #0 on the model link was never closed" in verdicts["GW-RUN-BOUND"].message
    # one behaviour (the stream never ended), one rule: the SHOULD has no ending to judge
    assert verdicts["GW-RUN-BOUND-ERROR"].outcome is Outcome.NOT_APPLICABLE
    assert "GW-RUN-BOUND judges that" in verdicts["GW-RUN-BOUND-ERROR"].message
    terminal = stream_terminal_verdicts(obs)[0]
    assert terminal.outcome is Outcome.NOT_APPLICABLE, terminal.render()
    assert "never ended" in terminal.message


def test_a_stream_ended_late_or_a_call_left_open_fails() -> None:
    late = _obs(elapsed=9.0, times=(0.2, 8.9))
    assert outcomes(late)["GW-RUN-BOUND"] is Outcome.FAIL
    still_open = _obs(
        link_events=_link(("request", 0.1, {}), ("end", 8.0, {"how": "fin", "by": "client"}))
    )
    assert outcomes(still_open)["GW-RUN-BOUND"] is Outcome.FAIL


def test_stopping_without_an_error_frame_is_a_should_unmet() -> None:
    bare = _obs(frame_specs=(delta("Let me check "), DONE))
    assert outcomes(bare) == {
        "GW-RUN-BOUND": Outcome.PASS,
        "GW-RUN-BOUND-ERROR": Outcome.NON_STRICT,
    }


def test_the_seeds_silent_end_at_the_bound_is_the_should_alone() -> None:
    """The seed's controller on timeout: emitter.onTimeout(sub::dispose), no frame at all. The
    stream ends with a draft on screen; that is GW-RUN-BOUND-ERROR's SHOULD and nothing else
    (GW-STREAM-TERMINAL and GW-ERROR-FRAME leave the bound's ending to it)."""
    silent = _obs(frame_specs=(delta("Let me check "),), times=(0.2,))
    assert outcomes(silent) == {
        "GW-RUN-BOUND": Outcome.PASS,
        "GW-RUN-BOUND-ERROR": Outcome.NON_STRICT,
    }
    (terminal,) = stream_terminal_verdicts(silent)
    assert terminal.outcome is Outcome.NOT_APPLICABLE
    assert "still open at the gateway's run bound" in terminal.message
    assert "emitter.onTimeout(sub::dispose)" in terminal.message
    failing = {v.requirement for v in check_gateway(silent) if v.outcome is Outcome.FAIL}
    assert failing == set(), failing
    # a run that failed and was still retrying at its bound: the same ending, the same rule
    retrying = silent.model_copy(
        update={"model_calls": (model_call(0, t=0.1, status=503, text=""),)}
    )
    verdicts = {v.requirement: v for v in error_frame_verdicts(retrying)}
    assert verdicts["GW-ERROR-FRAME"].outcome is Outcome.NOT_APPLICABLE
    # a stream that ended before its bound is judged as any other
    early = _obs(elapsed=1.0, frame_specs=(delta("Let me check "),), times=(0.2,))
    (terminal,) = stream_terminal_verdicts(early)
    assert terminal.outcome is Outcome.FAIL


def test_nothing_to_judge_without_a_declared_bound_or_before_the_bound() -> None:
    na = {Outcome.NOT_APPLICABLE}
    assert set(outcomes(_obs(bound=None)).values()) == na
    quick = _obs(
        elapsed=0.5,
        frame_specs=(delta("Hi"), message("Hi"), DONE),
        times=(0.2, 0.3, 0.4),
        link_events=_link(("request", 0.1, {}), ("end", 0.35, {"how": "clean", "by": "upstream"})),
    )
    assert set(outcomes(quick).values()) == na
    left = _obs(disconnected_at=0.3)
    assert set(outcomes(left).values()) == na


def test_a_call_kept_from_the_gateway_by_a_link_fault_is_owed_no_message() -> None:
    obs = _obs()
    assert link_faulted_calls(obs) == {0}
    (verdict,) = answer_as_message_verdicts(obs)
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    # a stall the exchange came out of (released in full: the call's one chunk forwarded)
    # still owes the message
    released = _obs(
        link_events=_link(
            ("request", 0.1, {}),
            ("response_headers", 0.15, {"status": 200}),
            ("fault", 0.2, {"fault": FaultRef(index=0, action="stall")}),
            ("event", 0.9, {"event_index": 1, "detail": "message"}),
            ("end", 1.0, {"how": "clean", "by": "upstream"}),
        )
    )
    assert link_faulted_calls(released) == frozenset()
    (verdict,) = answer_as_message_verdicts(released)
    assert verdict.outcome is Outcome.FAIL
