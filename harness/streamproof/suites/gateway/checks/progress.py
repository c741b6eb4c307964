"""GW-STREAMS-PROGRESSIVELY: the deltas of an answer reach the browser while it streams.

``docs/explanation/gateway-rules.md``: the controller sends every event as ADK emits it
(``.subscribe(ev -> send(emitter, seq.incrementAndGet(), ev), ...)``), "Partial events are
emitted to the caller", and the browser appends them to a draft until the message replaces it
("append deltas to a draft, then replace the draft with the message"); SSE mode is chosen
because it "improves time to first token and perceived latency". A gateway that holds its
frames until the run ends shows no draft at all: the deltas arrive with the message.

Lag short of the whole answer is allowed: a model client may hand a chunk over only when the
next one arrives (java-genai's ``ResponseStream`` does), and a loaded machine (a CI runner with
parallel workers) was measured delivering a correct gateway's first delta 1.3 s real after the
chunk that carried it. The rule judged is the one a gateway holding its frames cannot meet: the
first delta after a streamed model call starts reaches the browser before that call's last text
chunk is sent (a gateway that holds every frame until the run ends sends nothing before the run
has its last chunk). Judged only where that is a clear window: a streamed call that sent at
least three text chunks and whose last one came more than :data:`PAUSE_S` after its second,
with nothing on either link delaying or holding the bytes (a buffering model link, a fault on
the model link for that call, a fault on the browser link) and the browser still there.
"""

from __future__ import annotations

from streamproof.core.durations import on_both_clocks
from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks.stream import no_stream
from streamproof.suites.gateway.observation import GatewayObservation, ModelCall

__all__ = ["PAUSE_S", "streams_progressively_verdicts"]

PAUSE_S = 0.8
"""Real seconds the answer's last text chunk must come after its second for the run to show
whether the gateway held its frames (a burst shows nothing either way)."""


def _faulted_on_model_link(obs: GatewayObservation) -> frozenset[int]:
    return frozenset(
        e.request
        for e in obs.link_events.get("model", ())
        if e.kind == "fault" and e.request is not None
    )


def _judged_calls(obs: GatewayObservation) -> list[tuple[ModelCall, float]]:
    """The calls this run can judge, each with its deadline for the first delta."""
    faulted = _faulted_on_model_link(obs)
    judged: list[tuple[ModelCall, float]] = []
    for call in obs.model_calls:
        times = call.text_chunk_times
        if not call.streaming or len(times) < 3 or call.index in faulted:
            continue
        if times[-1] <= times[1] + PAUSE_S:
            continue  # the answer came in a burst: holding it would not show
        deadline = times[-1]
        if obs.disconnected_at is not None and obs.disconnected_at < deadline:
            continue
        judged.append((call, deadline))
    return judged


def streams_progressively_verdicts(obs: GatewayObservation) -> list[Verdict]:
    rid = "GW-STREAMS-PROGRESSIVELY"
    if (skipped := no_stream(obs, rid)) is not None:
        return skipped
    if obs.model_link_buffers:
        return [not_applicable(rid, "not judged: the model link held each answer until it ended")]
    if any(e.kind == "fault" for e in obs.link_events.get("browser", ())):
        return [not_applicable(rid, "not judged: a fault on the browser link shaped the frames")]
    judged = _judged_calls(obs)
    if not judged:
        return [not_applicable(rid, "not judged: no streamed answer paused after its second chunk")]

    def both(real_s: float) -> str:
        return on_both_clocks(real_s, obs.time_scale)

    problems: list[str] = []
    shown: list[str] = []
    for call, deadline in judged:
        first = next((f for f in obs.frames if f.event == "delta" and f.t >= call.t), None)
        times = call.text_chunk_times
        if first is None or first.t > deadline:
            when = f"at {both(first.t)}" if first is not None else "never"
            problems.append(
                f"model call #{call.index} sent its text chunks at "
                f"{', '.join(both(t) for t in times)}, but its first delta arrived {when}, "
                f"not before {both(deadline)} (when the model sent the answer's last chunk): "
                "the frames were held back"
            )
        else:
            shown.append(
                f"#{call.index}: first delta at {both(first.t)}, answer ended at {both(times[-1])}"
            )
    return [
        from_violations(
            rid,
            problems,
            rule="the deltas of a streamed answer reach the browser while the answer streams: "
            "the first one before the model sends the answer's last chunk",
            ok="deltas arrived while the answer streamed (" + "; ".join(shown) + ")",
            expected="the first delta before the answer's last chunk",
            observed="; ".join(problems[:2]) if problems else "; ".join(shown),
        )
    ]
