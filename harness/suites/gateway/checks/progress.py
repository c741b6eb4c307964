"""GW-STREAMS-PROGRESSIVELY: the deltas of an answer reach the browser while it streams.

Seed ``000_08c89244bc50b181``: the controller sends every event as ADK emits it
(``.subscribe(ev -> send(emitter, seq.incrementAndGet(), ev), ...)``), "Partial events are
emitted to the caller", and the browser appends them to a draft until the message replaces it
("append deltas to a draft, then replace the draft with the message"); SSE mode is chosen
because it "improves time to first token and perceived latency". A gateway that holds its
frames until the run ends shows no draft at all: the deltas arrive with the message.

One chunk of lag is allowed: a model client may hand a chunk over only when the next one
arrives (java-genai's ``ResponseStream`` does), so a gateway on it shows the first chunk when
the second arrives. The rule judged: the first delta after a streamed model call starts reaches
the browser by the time that call's second text chunk was sent, plus :data:`LAG_TOLERANCE_S`.
Judged only where a gateway holding everything would be seen late: a streamed call that sent at
least three text chunks and whose last one came more than :data:`MARGIN_S` after that deadline,
with nothing on either link delaying or holding the bytes (a buffering model link, a fault on
the model link for that call, a fault on the browser link) and the browser still there.
"""

from __future__ import annotations

from harness.durations import on_both_clocks
from harness.requirements import from_violations, not_applicable
from harness.suites.gateway.checks.frames import no_stream
from harness.suites.gateway.observation import GatewayObservation, ModelCall
from harness.verdicts import Verdict

__all__ = ["LAG_TOLERANCE_S", "MARGIN_S", "streams_progressively_verdicts"]

LAG_TOLERANCE_S = 0.5
"""Real seconds a delta may trail the chunk that let it out (a loaded machine, the event loop)."""
MARGIN_S = 0.3
"""Real seconds the answer's last text chunk must come after the deadline for a gateway that
holds every frame to be seen late."""


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
        deadline = times[1] + LAG_TOLERANCE_S
        if times[-1] <= deadline + MARGIN_S:
            continue  # the answer came in a burst: holding it would not show
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
                f"after {both(deadline)} (the second chunk plus {LAG_TOLERANCE_S}s): the "
                "frames were held back"
            )
        else:
            shown.append(
                f"#{call.index}: first delta at {both(first.t)}, answer ended at {both(times[-1])}"
            )
    return [
        from_violations(
            rid,
            problems,
            rule="the deltas of a streamed answer reach the browser while the answer streams "
            "(one chunk of lag allowed): the first one by the time the model sent its second "
            "chunk",
            ok="deltas arrived while the answer streamed (" + "; ".join(shown) + ")",
            expected="the first delta by the second chunk (plus tolerance)",
            observed="; ".join(problems[:2]) if problems else "; ".join(shown),
        )
    ]
