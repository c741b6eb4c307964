"""A model answer that a fault on the model link kept from the gateway is owed nothing.

Issue 14's trust findings (``streamproof explore`` against the correct reference):

* ``end_clean`` on the first model response's headers: the gateway gets an empty 200 stream.
  ADK's aggregator emits nothing for it, the step yields no event and the run completes, so
  the seed's gateway sends a bare ``done``. GW-ERROR-FRAME, GW-TOOL-ONCE and
  GW-TOOL-CALL-FROM-AGGREGATE judged the function call the fake model wrote as delivered.
* a bounded ``stall`` (``stall: {for: 50ms}``) at the response's start swallows what arrives
  meanwhile (the plan vocabulary: "what was swallowed meanwhile is lost"): the gateway's
  message is the rest of the answer. GW-ANSWER-AS-MESSAGE and GW-NO-DOUBLE-RENDER judged the
  whole answer as delivered because the link's end was clean.

Each case is proven both ways: the reference's observation holds, and the same fault with the
defect each rule is about still fails under that rule's id.
"""

from __future__ import annotations

from typing import Any

from harness.tests.suites.gateway.observations import (
    ANSWER,
    CHUNKS,
    DONE,
    LOOKUP,
    assert_fails,
    assert_holds,
    assert_not_applicable,
    assert_passes,
    delta,
    frames,
    message,
    model_call,
    observation,
    text_event,
    tool_call,
    tool_result,
    tool_run,
    user_event,
    worked_example,
)
from streamproof.core.verdicts import Kind, Outcome
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.suites.gateway.checks.errors import error_frame_verdicts
from streamproof.suites.gateway.checks.expectations import gateway_expectation_verdicts
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls, model_link_calls
from streamproof.suites.gateway.checks.persistence import no_half_record_verdicts
from streamproof.suites.gateway.checks.rendering import (
    answer_as_message_verdicts,
    double_render_verdicts,
)
from streamproof.suites.gateway.checks.tools import (
    tool_call_from_aggregate_verdicts,
    tool_once_verdicts,
)
from streamproof.suites.gateway.observation import GatewayObservation


def _record(request: int, kind: str, t: float, **extra: Any) -> LinkEvent:
    return LinkEvent(t=t, link="model", connection=0, request=request, kind=kind, **extra)


def _fault(request: int, action: str, t: float) -> LinkEvent:
    return _record(request, "fault", t, fault=FaultRef(index=0, action=action))


def _events(request: int, count: int, t: float) -> list[LinkEvent]:
    return [
        _record(request, "event", t + i / 100, event_index=i + 1, detail="message")
        for i in range(count)
    ]


def _end(request: int, t: float, how: str = "clean", by: str = "upstream") -> LinkEvent:
    return _record(request, "end", t, how=how, by=by)


def _empty_first_answer(**overrides: Any) -> GatewayObservation:
    """The worked example with ``end_clean`` on the first response's headers: the fake wrote
    its function call, the gateway got an empty body, ADK's step yielded nothing."""
    fields: dict[str, Any] = {
        "frames": frames(DONE),
        "model_calls": (model_call(0, calls=[LOOKUP], t=0.05),),
        "tool_calls": (),
        "service_tools": ("lookupOrder",),
        "history": (user_event(),),
        "scripted_calls": 2,
        "link_events": {
            "model": (
                _record(0, "request", 0.04),
                _record(0, "response_headers", 0.05, status=200),
                _fault(0, "end_clean", 0.05),
                _end(0, 0.05, by="proxy"),
            )
        },
    }
    fields.update(overrides)
    return observation(**fields)


def test_an_empty_first_answer_owes_no_tool_step_and_no_error_frame() -> None:
    obs = _empty_first_answer()
    assert link_faulted_calls(obs) == {0}
    assert_not_applicable(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")
    assert_holds(tool_once_verdicts(obs), "GW-TOOL-ONCE")
    assert_holds(error_frame_verdicts(obs), "GW-ERROR-FRAME")
    script = [v for v in gateway_expectation_verdicts(obs) if v.requirement == "model"]
    assert all(v.outcome is Outcome.PASS for v in script), [v.render() for v in script]
    assert all(v.kind is Kind.EXPECTATION for v in script)


def test_the_same_run_without_the_fault_still_fails_every_rule() -> None:
    """A bare done after a delivered function call is a run stopped mid-loop."""
    obs = _empty_first_answer(link_events={})
    assert_fails(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")
    assert_fails(tool_once_verdicts(obs), "GW-TOOL-ONCE", "ran 0 time(s)")
    assert_fails(error_frame_verdicts(obs), "GW-ERROR-FRAME", "bare done")


def _first_cut_after_its_call(frame_specs: tuple[Any, ...], ran: int) -> GatewayObservation:
    """``end_clean`` after the first response's one event: the function call reached the
    gateway whole, so ADK's aggregate may run it; the second call is not faulted."""
    return worked_example(
        frames=frames(*frame_specs),
        tool_calls=tuple(tool_run() for _ in range(ran)),
        link_events={
            "model": (
                _record(0, "request", 0.04),
                _record(0, "response_headers", 0.05, status=200),
                *_events(0, 1, 0.05),
                _fault(0, "end_clean", 0.06),
                _end(0, 0.06, by="proxy"),
                _record(1, "request", 0.2),
                _record(1, "response_headers", 0.21, status=200),
                *_events(1, 3, 0.25),
                _end(1, 0.3),
            )
        },
    )


CORRECT = (
    tool_call("lookupOrder"),
    tool_result(1),
    *(delta(c) for c in CHUNKS),
    message(ANSWER),
    DONE,
)


def test_a_kept_back_call_that_did_arrive_may_still_be_shown_and_run_once() -> None:
    obs = _first_cut_after_its_call(CORRECT, ran=1)
    assert_passes(tool_call_from_aggregate_verdicts(obs), "GW-TOOL-CALL-FROM-AGGREGATE")
    assert_passes(tool_once_verdicts(obs), "GW-TOOL-ONCE")


def test_a_kept_back_call_does_not_excuse_a_partial_tool_call_nor_a_second_run() -> None:
    from_partial = (tool_call("lookupOrder"), *CORRECT)  # tool-call-from-partial
    obs = _first_cut_after_its_call(from_partial, ran=1)
    assert_fails(
        tool_call_from_aggregate_verdicts(obs),
        "GW-TOOL-CALL-FROM-AGGREGATE",
        "came from partial events",
    )
    twice = _first_cut_after_its_call(CORRECT, ran=2)  # act-on-partial-calls
    assert_fails(tool_once_verdicts(twice), "GW-TOOL-ONCE", "ran 2 time(s)")


PLAIN = ("Our support desk ", "is open ", "from 9 to 5, ", "Monday to Friday.")
SEEN = "".join(PLAIN[1:])


def _stalled_start(frame_specs: tuple[Any, ...], *, forwarded: int = 3) -> GatewayObservation:
    """``stall: {for: 50ms}`` on the response's start: the first of four chunks is swallowed,
    the other three forwarded, the link's end clean."""
    return observation(
        frames=frames(*frame_specs),
        model_calls=(model_call(0, text="".join(PLAIN), chunks=4, t=0.8),),
        link_events={
            "model": (
                _record(0, "request", 0.8),
                _record(0, "response_headers", 0.81, status=200),
                _fault(0, "stall", 0.81),
                *_events(0, forwarded, 0.82),
                _end(0, 0.83),
            )
        },
    )


def test_a_bounded_stall_that_swallowed_a_chunk_owes_no_whole_answer() -> None:
    obs = _stalled_start((*(delta(c) for c in PLAIN[1:]), message(SEEN), DONE))
    assert link_faulted_calls(obs) == {0}
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")
    assert_passes(double_render_verdicts(obs), "GW-NO-DOUBLE-RENDER")


def test_a_bounded_stall_that_swallowed_nothing_still_owes_the_answer() -> None:
    """Every chunk forwarded after the stall: the gateway got the whole answer."""
    missing = _stalled_start((*(delta(c) for c in PLAIN), DONE), forwarded=4)
    assert link_faulted_calls(missing) == frozenset()
    assert_fails(answer_as_message_verdicts(missing), "GW-ANSWER-AS-MESSAGE", "no message frame")


def test_a_stall_does_not_excuse_a_double_render_nor_a_message_unlike_its_deltas() -> None:
    again = _stalled_start((*(delta(c) for c in PLAIN[1:]), delta(SEEN), message(SEEN), DONE))
    assert_fails(double_render_verdicts(again), "GW-NO-DOUBLE-RENDER", "not how any model text")
    tidied = _stalled_start((*(delta(c) for c in PLAIN[1:]), message("is open, from 9"), DONE))
    assert_fails(answer_as_message_verdicts(tidied), "GW-ANSWER-AS-MESSAGE", "the deltas")


def test_a_request_the_link_reset_before_forwarding_it_is_no_model_call() -> None:
    """explore: ``rst`` on the model link's first request: the model client sent it again and
    the fake's only call (index 0) is the link's second request. The reset failed nothing."""
    obs = observation(
        frames=frames(*(delta(c) for c in PLAIN), message("".join(PLAIN)), DONE),
        model_calls=(model_call(0, text="".join(PLAIN), chunks=4, t=0.4),),
        history=(user_event(), text_event("".join(PLAIN))),
        link_events={
            "model": (
                _record(0, "request", 0.1),
                _fault(0, "rst", 0.1),
                _end(0, 0.1, how="rst", by="proxy"),
                _record(1, "request", 0.3),
                _record(1, "response_headers", 0.31, status=200),
                *_events(1, 4, 0.4),
                _end(1, 0.5),
            )
        },
    )
    assert model_link_calls(obs) == {1: 0}
    assert link_faulted_calls(obs) == frozenset()
    assert_holds(error_frame_verdicts(obs), "GW-ERROR-FRAME")
    assert_holds(no_half_record_verdicts(obs), "GW-NO-HALF-RECORD")
    assert_passes(answer_as_message_verdicts(obs), "GW-ANSWER-AS-MESSAGE")
    # the same reset with no request after it failed the run: a bare done fails
    alone = obs.model_copy(
        update={"link_events": {"model": obs.link_events["model"][:3]}, "model_calls": ()}
    )
    assert_fails(error_frame_verdicts(alone), "GW-ERROR-FRAME", "bare done")
