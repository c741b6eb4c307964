"""GW-STREAMS-PROGRESSIVELY: deltas reach the browser while the answer streams (before its last
chunk is sent), lag short of that allowed, and a gateway that holds its frames until the run
ends is caught."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    DONE,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    delta,
    frames,
    message,
    model_call,
    observation,
)
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.checks.progress import streams_progressively_verdicts
from streamproof.suites.gateway.observation import Frame, GatewayObservation

RID = "GW-STREAMS-PROGRESSIVELY"
PIECES = ("Our support desk ", "is open ", "from 9 to 5, ", "Monday to Friday.")
SENT = (0.2, 0.4, 0.6, 2.1)
"""When the fake model sent each text chunk: three quickly, then a pause before the last."""


def paused_answer(
    delta_times: tuple[float, ...], sent: tuple[float, ...] = SENT
) -> GatewayObservation:
    """The four-chunk answer, its deltas arriving at ``delta_times``, then message and done."""
    specs = [*(delta(p) for p in PIECES), message("".join(PIECES)), DONE]
    times = [*delta_times, sent[-1] + 0.01, sent[-1] + 0.02]
    timed = tuple(
        Frame(**{**f.model_dump(), "t": t}) for f, t in zip(frames(*specs), times, strict=True)
    )
    call = model_call(0, text="".join(PIECES), chunks=len(sent), t=0.1).model_copy(
        update={"text_chunk_times": sent}
    )
    return observation(frames=timed, model_calls=(call,))


def test_a_gateway_that_forwards_each_chunk_passes() -> None:
    verdict = assert_passes(
        streams_progressively_verdicts(paused_answer((0.21, 0.41, 0.61, 2.11))), RID
    )
    assert "first delta at 0.21s" in verdict.message


def test_a_gateway_one_chunk_late_passes() -> None:
    # java-genai: each chunk surfaces when the next arrives; the last one with the end.
    assert_passes(streams_progressively_verdicts(paused_answer((0.41, 0.61, 2.11, 2.11))), RID)


def test_a_gateway_that_holds_every_frame_until_the_end_fails() -> None:
    held = paused_answer((2.11, 2.11, 2.11, 2.11))
    assert_fails(
        streams_progressively_verdicts(held),
        RID,
        "model call #0 sent its text chunks at",
        "its first delta arrived at 2.11s",
        "the frames were held back",
    )


def test_a_gateway_far_behind_on_a_loaded_machine_passes() -> None:
    # Measured under parallel CI load: the first delta 1.3 s after its chunk, still well before
    # the answer's last chunk.
    late = SENT[2] + 1.3
    assert_passes(streams_progressively_verdicts(paused_answer((late, late, late, 2.11))), RID)


def test_a_first_delta_only_after_the_last_chunk_fails() -> None:
    just_after = SENT[-1] + 0.001
    verdicts = streams_progressively_verdicts(paused_answer((just_after,) * 3 + (2.11,)))
    assert_fails(verdicts, RID, "not before 2.10s", "the frames were held back")


def test_an_answer_without_a_pause_is_not_judged() -> None:
    burst = (0.2, 0.21, 0.22, 0.23)
    obs = paused_answer((0.24, 0.24, 0.24, 0.24), sent=burst)
    assert_not_applicable(streams_progressively_verdicts(obs), RID, "paused after its second chunk")


def test_a_buffering_model_link_is_not_the_gateways_fault() -> None:
    paused = paused_answer((2.11, 2.11, 2.11, 2.11))
    obs = paused.model_copy(update={"model_path": "buffering-proxy"})
    assert_not_applicable(streams_progressively_verdicts(obs), RID, "held each answer")


def test_a_fault_on_a_link_makes_the_timing_unjudgeable() -> None:
    held = paused_answer((2.11, 2.11, 2.11, 2.11))
    fault = LinkEvent(t=0.3, link="model", connection=0, request=0, kind="fault")
    on_model = held.model_copy(update={"link_events": {"model": (fault,)}})
    assert_not_applicable(
        streams_progressively_verdicts(on_model), RID, "paused after its second chunk"
    )
    on_browser = held.model_copy(
        update={"link_events": {"browser": (fault.model_copy(update={"link": "browser"}),)}}
    )
    assert_not_applicable(streams_progressively_verdicts(on_browser), RID, "browser link")


def test_a_stream_without_deltas_fails() -> None:
    obs = paused_answer((0.21, 0.41, 0.61, 2.11)).model_copy(update={"frames": ()})
    assert_fails(streams_progressively_verdicts(obs), RID, "never")
