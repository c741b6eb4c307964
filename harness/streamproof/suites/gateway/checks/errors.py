"""Checks on failures: error events and failed runs both reach the browser as ``error`` frames.

``docs/explanation/gateway-rules.md``: the controller's ``send`` turns an event with ``errorCode()``
into ``error`` ("Errors that are events. A model error can arrive as an event with
errorCode() set while the Flowable completes normally. Check the field; do not rely only on
onError."), and its ``onError`` handler sends ``error`` too. So ``error`` then ``done`` (an
error event on a run that completes) and two ``error`` frames (an error event, then the
exception: what Python ADK does on a model error) are both correct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streamproof.core.requirements import from_violations, info, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.fakes.records import is_retry
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls
from streamproof.suites.gateway.checks.run_bound import bound_note, open_at_bound
from streamproof.suites.gateway.checks.stream import label, left_early, no_stream, sequence
from streamproof.suites.gateway.observation import GatewayObservation, ModelCall

__all__ = ["error_event_verdicts", "error_frame_verdicts"]

ABORTED = "INVOCATION_ABORTED"
"""The error code ADK Python stores when the client disconnects: a record, not a run error."""


def _error_code(event: Mapping[str, Any]) -> str | None:
    code = event.get("errorCode", event.get("error_code"))
    return str(code) if code else None


def _error_event_reasons(obs: GatewayObservation) -> list[str]:
    """Why this run must have produced an ADK event with an error code (empty: it need not)."""
    reasons = [
        f"model call #{c.index} ended with finishReason {c.finish_reason_sent} (ADK gives that "
        f"aggregate errorCode {c.finish_reason_sent})"
        for c in obs.model_calls
        if c.completed and c.finish_reason_sent not in (None, "STOP")
    ]
    for i, event in enumerate(obs.history or ()):
        code = _error_code(event)
        if code and code != ABORTED and event.get("partial") is not True:
            reasons.append(f"the session stored event #{i} with errorCode {code}")
    return reasons


def error_event_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """An event with an error code becomes an ``error`` frame, even when the run completes."""
    rid = "GW-ERROR-EVENT"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    reasons = _error_event_reasons(obs)
    if not reasons:
        return [not_applicable(rid, "not judged: no event in this run carried an error code")]
    has_error = any(f.event == "error" for f in obs.frames)
    problems = [] if has_error else [f"{reasons[0]}, but the stream has no error frame"]
    return [
        from_violations(
            rid,
            problems,
            rule="an ADK event with an error code must become an error frame, even when the run "
            "then completes normally (error, then done)",
            ok=f"error frame sent for the error event: {reasons[0]}",
            expected="an error frame",
            observed=sequence(obs.frames),
        )
    ]


def _retried(call: ModelCall, calls: Sequence[ModelCall]) -> bool:
    """The next call resent the very same request (:func:`is_retry`): the model client retried
    (java-genai retries 5xx answers), so this failure did not end the run by itself."""
    following = next((c for c in calls if c.index == call.index + 1), None)
    return following is not None and (following.retry_of == call.index or is_retry(following, call))


def _run_failure_reasons(obs: GatewayObservation) -> list[str]:
    """Why this run failed (empty: it did not)."""
    reasons: list[str] = []
    for c in obs.model_calls:
        if _retried(c, obs.model_calls):
            continue
        if c.status >= 400 and (c.completed or c.error_sent is not None):
            reasons.append(f"model call #{c.index} answered HTTP {c.status}")
        elif c.error_sent is not None:
            status = c.error_sent.get("status") or c.error_sent.get("code") or "an error"
            reasons.append(f"model call #{c.index} failed mid-stream with {status}")
    link = obs.link_events.get("model", ())
    requests = [e.request for e in link if e.kind == "request" and e.request is not None]
    last_request = max(requests, default=None)
    for e in link:
        # A model stream the link cut loudly (reset, FIN without terminator) fails the run
        # just as a model error does: the model client raises. Unless the model client sent
        # another request after it (it retried a connection reset before any answer, say):
        # then the run went on past the cut.
        if e.kind == "end" and e.how in ("rst", "fin") and e.by == "proxy":
            if last_request is not None and e.request is not None and e.request < last_request:
                continue
            reasons.append(f"the model link cut model request #{e.request} ({e.how})")
    if obs.response.end == "error" and not any(f.event == "done" for f in obs.frames):
        detail = f": {obs.response.error}" if obs.response.error else ""
        reasons.append(f"the response broke off{detail}")
    if (stopped := _stopped_mid_loop(obs)) is not None:
        reasons.append(stopped)
    return reasons


def _stopped_mid_loop(obs: GatewayObservation) -> str | None:
    """The run was stopped with work left: the model's last answer asked for a tool, yet no
    model call followed the tool's answer (an LLM-call budget, or any other stop). ADK's flow
    always calls the model again after running the tools of an aggregated function call, so
    such a run did not complete; it failed (the seed's ``maxLlmCalls`` fails the Flowable)."""
    if not obs.model_calls or obs.response.end != "clean":
        return None
    last = obs.model_calls[-1]
    if last.index in link_faulted_calls(obs):
        # The model link kept that answer from the gateway (an empty 200 body, say): ADK saw
        # no function call, its step yielded nothing and the run ended normally.
        return None
    complete = last.completed and last.error_sent is None and last.status < 400
    if not (complete and last.function_calls_sent and last.finish_reason_sent in (None, "STOP")):
        return None
    served = obs.service_tools
    names_ = [str(fc.get("name", "?")) for fc in last.function_calls_sent]
    if served is None or not all(n in served for n in names_):
        # Only the contract's own tools are known to be ordinary (not long-running, no
        # skip_summarization): after them ADK's flow always calls the model again.
        return None
    names = ", ".join(names_)
    return (
        f"the run stopped after model call #{last.index} asked for {names}: no model call "
        "followed, so the run did not complete (e.g. its LLM-call budget stopped it)"
    )


def _retries(obs: GatewayObservation) -> list[ModelCall]:
    """The failed model calls the model client sent again."""
    return [
        c
        for c in obs.model_calls
        if (c.status >= 400 or c.error_sent is not None) and _retried(c, obs.model_calls)
    ]


def _failure(call: ModelCall) -> str:
    return (
        f"#{call.index} HTTP {call.status}" if call.status >= 400 else f"#{call.index} mid-stream"
    )


def error_frame_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A failed run ends with an ``error`` frame, never a hang or a bare ``done``.

    The seed's ``onError``: ``frame(emitter, seq.incrementAndGet(), "error",
    "{\\"retryable\\":true}"); emitter.complete();``. A model error (an HTTP error status, or an
    error in the middle of the stream) fails the run unless the model client retried it. A run
    still going at the gateway's declared bound that ends there without an error frame is the
    bound's ending, judged by GW-RUN-BOUND and GW-RUN-BOUND-ERROR alone.
    """
    rid = "GW-ERROR-FRAME"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if obs.response.end == "client-closed":
        return [left_early(obs, rid)]
    retried = _retries(obs)
    notes = (
        [
            info(
                rid,
                f"the model client retried {len(retried)} failed model call(s) "
                f"({', '.join(_failure(c) for c in retried)}); a retry is "
                "the client's choice, judged only by how the stream ends",
            )
        ]
        if retried
        else []
    )
    reasons = _run_failure_reasons(obs)
    if not reasons:
        return [*notes, not_applicable(rid, "not judged: the run did not fail")]
    error = next((f for f in obs.frames if f.event == "error"), None)
    bound = open_at_bound(obs)
    if bound is not None and error is None:
        # Still going at its bound (a model client retrying, say): the bound ended the run,
        # and GW-RUN-BOUND-ERROR alone says whether that ending shows an error.
        return [*notes, not_applicable(rid, bound_note(obs, bound))]
    problems: list[str] = []
    done = next((f for f in obs.frames if f.event == "done"), None)
    if error is None:
        bare = " (a bare done)" if done is not None else ""
        problems.append(f"{reasons[0]}, but the stream has no error frame{bare}")
    elif done is not None and done.index < error.index:
        problems.append(f"{reasons[0]}, but {label(done)} came before the first error frame")
    if obs.response.end == "timeout":
        problems.append(
            f"{reasons[0]}, and the stream was still open after {obs.stream_wait()} (it hung)"
        )
    return [
        *notes,
        from_violations(
            rid,
            problems,
            rule="a run that fails must end with an error frame (done may follow it), never a "
            "hang or a bare done",
            ok=f"the failure reached the browser as an error frame: {reasons[0]}",
            expected="... error  (or ... error done)",
            observed=f"{sequence(obs.frames)}; end {obs.response.end}",
        ),
    ]
