"""GW-RUN-BOUND and GW-RUN-BOUND-ERROR: a run that reaches its bound is stopped, visibly.

Seed, "A gateway: Event to Server-Sent Events": the controller gives its emitter 120 s
(``new SseEmitter(120_000L)``) and disposes the run on timeout (``emitter.onTimeout(sub::
dispose)``). That bound is what keeps a gateway from hanging when the model stream goes quiet
and nothing closes it: a NAT or a firewall that forgot the flow (a black hole), which
google-genai does not notice by itself (it sets no read timeout). The harness gives the gateway
a scaled bound through ``STREAMPROOF_RUN_TIMEOUT``; a target file with ``run_timeout: true``
says the gateway honours it, and only then is this judged.

Judged only when the run reached the bound: the stream had not ended by then, or a model call
was still open (on the fake or on the model link). A run that ended before its bound has
nothing to show here and is not applicable. Then, within the bound plus a tolerance, the stream
must have ended and every model call must be closed (MUST); and the stream should carry an
error frame, so the browser's draft is cleared (SHOULD: the seed's own controller only disposes
on timeout and never says why).

A stream still open at the bound is judged here once: the rules on how any stream ends
(GW-STREAM-TERMINAL, GW-ERROR-FRAME) leave it to these two unless it ended with a terminal
frame (:func:`open_at_bound`), and a stream that never ended is GW-RUN-BOUND's failure alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.observation import GatewayObservation

TOLERANCE_S = 1.0
"""Real seconds allowed past the bound (plus 10 % of it): the gateway's clock starts when it
gets the request, the harness's just before it sends it, and a loaded machine adds more."""
_ENDED = ("clean", "error")

MUST_ID = "GW-RUN-BOUND"
SHOULD_ID = "GW-RUN-BOUND-ERROR"


def run_bound_deadline(bound: float) -> float:
    return bound * 1.1 + TOLERANCE_S


def _model_link_ends(obs: GatewayObservation) -> list[tuple[int, float, float | None]]:
    """Per request on the model link: (request number, start, end or ``None``)."""
    starts: dict[int, float] = {}
    ends: dict[int, float] = {}
    for event in obs.link_events.get("model", ()):
        if event.request is None:
            continue
        if event.kind == "request":
            starts[event.request] = event.t
        elif event.kind == "end":
            ends.setdefault(event.request, event.t)
    return [(n, t, ends.get(n)) for n, t in sorted(starts.items())]


@dataclass(frozen=True)
class _Reached:
    """A run that reached its bound: what both requirements judge."""

    bound: float
    stream_end: float | None
    link_calls: list[tuple[int, float, float | None]]


def _reached(obs: GatewayObservation) -> _Reached | str:
    """The run reached its bound, or why there is nothing to judge."""
    bound = obs.run_bound_s
    if bound is None:
        return "not judged: the target does not declare that it honours a run bound (run_timeout)"
    if obs.disconnected_at is not None:
        return "not judged: the browser went away on purpose (GW-DISPOSE judges that run)"
    if obs.response.status is None or obs.response.end == "not-sse":
        return "not judged: no event stream began"
    stream_end = obs.response.elapsed if obs.response.end in _ENDED else None
    link_calls = _model_link_ends(obs)
    open_at_bound = [c for c in obs.model_calls if c.t_end is None or c.t_end > bound]
    open_on_link = [n for n, _, end in link_calls if end is None or end > bound]
    if stream_end is not None and stream_end <= bound and not open_at_bound and not open_on_link:
        shown = on_both_clocks(stream_end, obs.time_scale)
        return f"not judged: the run ended at {shown}, before its bound of {_both(obs, bound)}"
    return _Reached(bound, stream_end, link_calls)


def _both(obs: GatewayObservation, real_s: float) -> str:
    return on_both_clocks(real_s, obs.time_scale)


def open_at_bound(obs: GatewayObservation) -> float | None:
    """The run bound (real seconds) when the stream was still open when the gateway's declared
    bound came (it ended at or after it, or never): how such a stream ends is the bound's
    doing, judged once, by GW-RUN-BOUND (it ends, in time) and GW-RUN-BOUND-ERROR (with an
    error frame). ``None``: no bound declared, the browser left, no event stream, or the stream
    ended before the bound.

    The gateway's clock starts when it gets the request, after the harness's: a stream its
    bound ended ends at or after the bound on the harness's clock."""
    bound = obs.run_bound_s
    response = obs.response
    if bound is None or obs.disconnected_at is not None:
        return None
    if response.status is None or response.end in ("not-sse", "refused", "client-closed"):
        return None
    if response.end in _ENDED and response.elapsed <= bound:
        return None
    return bound


def bound_note(obs: GatewayObservation, bound: float) -> str:
    """Why a rule about how the stream ends leaves a bound-ended stream to GW-RUN-BOUND and
    GW-RUN-BOUND-ERROR (a sentence for a not-applicable verdict)."""
    ended = (
        f"ended at {_both(obs, obs.response.elapsed)} without a done or error frame"
        if obs.response.end in _ENDED
        else "never ended"
    )
    return (
        f"not judged: the stream was still open at the gateway's run bound of {_both(obs, bound)} "
        f"(STREAMPROOF_RUN_TIMEOUT) and {ended}: that the bound ends the run is GW-RUN-BOUND's "
        "rule and that it ends with an error frame is GW-RUN-BOUND-ERROR's (a SHOULD: the seed's "
        "controller only disposes on timeout, emitter.onTimeout(sub::dispose), sending nothing)"
    )


def run_bound_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-RUN-BOUND: at its bound the run is stopped, model call closed, stream ended."""
    reached = _reached(obs)
    if isinstance(reached, str):
        return [not_applicable(MUST_ID, reached)]
    bound, stream_end = reached.bound, reached.stream_end
    deadline = run_bound_deadline(bound)
    problems: list[str] = []
    if stream_end is None:
        problems.append(
            f"the stream had not ended when the harness stopped waiting after "
            f"{obs.stream_wait()} (bound {_both(obs, bound)})"
        )
    elif stream_end > deadline:
        problems.append(
            f"the stream ended only at {_both(obs, stream_end)} (bound {_both(obs, bound)})"
        )
    for call in obs.model_calls:
        if call.t_end is None:
            problems.append(f"model call #{call.index} was never closed")
        elif call.t_end > deadline:
            problems.append(f"model call #{call.index} stayed open until {_both(obs, call.t_end)}")
    for number, _, end in reached.link_calls:
        if end is None:
            problems.append(f"request #{number} on the model link was never closed")
        elif end > deadline:
            problems.append(
                f"request #{number} on the model link stayed open until {_both(obs, end)}"
            )
    return [
        from_violations(
            MUST_ID,
            problems,
            rule=f"a run still going at its bound ({_both(obs, bound)}, STREAMPROOF_RUN_TIMEOUT) "
            f"must be stopped: its model call closed and its stream ended within "
            f"{_both(obs, deadline)}",
            ok=f"the run reached its bound of {_both(obs, bound)} and was stopped: stream ended "
            f"at {_both(obs, stream_end or 0.0)}, every model call closed",
            expected=f"stream ended and model calls closed by {_both(obs, deadline)}",
            observed="; ".join(problems[:3]) if problems else "stopped at the bound",
        )
    ]


def run_bound_error_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """GW-RUN-BOUND-ERROR: the run stopped at its bound ends with an error frame."""
    reached = _reached(obs)
    if isinstance(reached, str):
        return [not_applicable(SHOULD_ID, reached)]
    if reached.stream_end is None:
        return [
            not_applicable(
                SHOULD_ID,
                f"not judged: the stream never ended (still open after {obs.stream_wait()}), so "
                "no frame ended it: GW-RUN-BOUND judges that",
            )
        ]
    frames = list(obs.frames)
    errors = [f for f in frames if f.event == "error"]
    after_error = [f.event for f in frames[frames.index(errors[-1]) + 1 :]] if errors else []
    problems: list[str] = []
    if not errors:
        seen = " ".join(f.event for f in frames[-4:]) or "no frames"
        problems.append(f"the stream ended without an error frame (last frames: {seen})")
    elif any(e != "done" for e in after_error):
        problems.append(f"frames followed the error frame: {' '.join(after_error)}")
    return [
        from_violations(
            SHOULD_ID,
            problems,
            rule="a run stopped by its bound should end with an error frame (then at most done), "
            "so the browser clears its draft and shows the failure",
            ok=f"the stopped run ended with an error frame ({errors[-1].data if errors else ''})",
            expected="error frame, then at most done",
            observed="; ".join(problems) if problems else "error frame at the end",
        )
    ]
