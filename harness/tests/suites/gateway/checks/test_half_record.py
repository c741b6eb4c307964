"""GW-NO-HALF-RECORD: a broken answer's deltas are never stored as the record."""

from __future__ import annotations

from harness.tests.suites.gateway.observations import (
    CHUNKS,
    LOOKUP,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    call_event,
    error_event,
    model_call,
    response_event,
    text_event,
    user_event,
    worked_example,
)
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.checks.persistence import no_half_record_verdicts

RESET = LinkEvent(t=0.3, link="model", connection=1, request=1, kind="end", how="rst", by="proxy")


def _broken(*stored: dict[str, object]) -> object:
    return worked_example(
        model_calls=(
            model_call(0, calls=[LOOKUP]),
            model_call(1, text=CHUNKS[0] + CHUNKS[1], chunks=2, completed=False),
        ),
        link_events={"model": (RESET,)},
        history=(user_event(), call_event(LOOKUP), response_event(), *stored),
    )


def test_no_broken_stream_is_not_applicable() -> None:
    assert_not_applicable(
        no_half_record_verdicts(worked_example()), "GW-NO-HALF-RECORD", "no model stream broke"
    )


def test_error_record_after_a_reset_passes() -> None:
    obs = _broken(error_event("UNAVAILABLE"))
    assert_passes(no_half_record_verdicts(obs), "GW-NO-HALF-RECORD")  # type: ignore[arg-type]


def test_deltas_stored_as_the_answer_fail() -> None:
    obs = _broken(error_event("UNAVAILABLE"), text_event(CHUNKS[0] + CHUNKS[1], id="draft"))
    assert_fails(
        no_half_record_verdicts(obs),  # type: ignore[arg-type]
        "GW-NO-HALF-RECORD",
        "what had arrived of model call #1's answer",
    )


def test_a_clean_cut_without_finish_reason_is_not_a_broken_stream() -> None:
    # A silent cut looks like a finished stream to the gateway: ADK stores what it got.
    silent = RESET.model_copy(update={"how": "clean"})
    obs = worked_example(
        model_calls=(
            model_call(0, calls=[LOOKUP]),
            model_call(1, text=CHUNKS[0], completed=False, closed_early=True),
        ),
        link_events={"model": (silent,)},
        history=(user_event(), call_event(LOOKUP), response_event(), text_event(CHUNKS[0])),
    )
    assert_not_applicable(no_half_record_verdicts(obs), "GW-NO-HALF-RECORD")


def test_a_reset_by_the_link_counts_even_when_the_model_wrote_its_whole_answer() -> None:
    # A buffering proxy (toxiproxy) can take the whole answer from the model, then reset the
    # gateway's side after the second event: the gateway still got half an answer.
    obs = worked_example(
        model_calls=(
            model_call(0, calls=[LOOKUP]),
            model_call(1, text="".join(CHUNKS), chunks=len(CHUNKS), completed=True),
        ),
        link_events={"model": (RESET,)},
        history=(
            user_event(),
            call_event(LOOKUP),
            response_event(),
            text_event(CHUNKS[0] + CHUNKS[1], id="draft"),
        ),
    )
    assert_fails(
        no_half_record_verdicts(obs),  # type: ignore[arg-type]
        "GW-NO-HALF-RECORD",
        "what had arrived of model call #1's answer",
    )
    ok = obs.model_copy(update={"history": (*obs.history[:3], error_event("UNAVAILABLE"))})
    assert_passes(no_half_record_verdicts(ok), "GW-NO-HALF-RECORD")  # type: ignore[arg-type]


def test_a_client_that_hangs_up_after_a_whole_answer_is_not_a_broken_stream() -> None:
    hung_up = RESET.model_copy(update={"by": "client"})
    obs = worked_example(
        model_calls=(
            model_call(0, calls=[LOOKUP]),
            model_call(1, text="".join(CHUNKS), chunks=len(CHUNKS), completed=True),
        ),
        link_events={"model": (hung_up,)},
    )
    assert_not_applicable(no_half_record_verdicts(obs), "GW-NO-HALF-RECORD")
