"""K copies of one gateway scenario at once against one gateway process (``--concurrency K``):
how the copies are told apart and merged. :meth:`GatewayEnvironment.run_concurrent
<streamproof.suites.gateway.runner.GatewayEnvironment.run_concurrent>` drives them.

One target instance, K browser sessions: each copy gets its own session id, a user of the
target's (round robin, unless the scenario probes auth, which needs the first user as the
owner), and a marker of its own (``sp-s3-1a2b3c4d``) that goes into its user message, at the
end of every text chunk of its scripted model turns, and into the first string argument of each
of its function calls (``transfer_to_agent`` excepted: its argument names an agent). A canned
turn (``fixture``) is written from the chunks read from its file, so it carries the marker too.
The fake model runs keyed (:meth:`~streamproof.fakes.model.FakeModel.load_keyed`): a model request
belongs to the copy whose marker it holds (a model request carries the conversation so far, the
user message included), so each copy is answered from a script of its own; tool calls belong to
the copy whose marker their arguments hold. Cross-talk is then visible exactly: a marker in
another session's frame, history or model request.

Each copy is judged by the normal checks on its own observation, and the K observations by the
concurrency checks (:mod:`.checks.concurrency`). What cannot be aimed at one session is skipped
with the reason: a fault plan on a link (the links are shared), a function call with no string
argument.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamproof.core.concurrency import MAX_CONCURRENCY, copy_marker, merge_verdicts, percentile
from streamproof.core.verdicts import Verdict
from streamproof.fakes.records import ModelCall, ToolCall
from streamproof.faults.records import LinkEvent
from streamproof.protocol.gemini import CallChunk, FunctionCall, ModelTurn, TextChunk
from streamproof.suites.gateway.checks.concurrency import Session
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.scenario import GatewayScenario

__all__ = [
    "MAX_CONCURRENCY",
    "ConcurrentResult",
    "load_figures",
    "merge_verdicts",
    "own_link_events",
    "session_marker",
    "tag_turns",
    "tool_calls_of",
    "untaggable",
]

UNTAGGED_CALLS = ("transfer_to_agent",)
"""Function calls whose arguments must stay as scripted (an agent's name)."""


@dataclass(frozen=True)
class ConcurrentResult:
    """What a scenario run K times at once gave: the observation shown for it (the first copy
    that broke a rule, else the first), every verdict, each copy, and the load figures."""

    observation: GatewayObservation
    verdicts: tuple[Verdict, ...]
    sessions: tuple[Session, ...]
    unkeyed_calls: tuple[ModelCall, ...]
    load: dict[str, Any]


def session_marker(index: int, token: str) -> str:
    """The marker of copy ``index`` (0-based); ``token`` is the run's random part."""
    return copy_marker("s", index, token)


def _tag_call(call: FunctionCall, marker: str) -> FunctionCall | None:
    """``call`` with ``marker`` appended to its first string argument; None when it has none."""
    for name, value in call.args.items():
        if isinstance(value, str):
            return call.model_copy(update={"args": {**call.args, name: f"{value} {marker}"}})
    return None


def untaggable(scenario: GatewayScenario) -> str | None:
    """Why ``scenario`` cannot be run as K sessions at once, or None when it can."""
    if scenario.links.browser or scenario.links.model:
        return (
            "its fault plan acts on a link the K sessions share, so a fault could not be aimed "
            "at one session: run it without --concurrency"
        )
    for n, turn in enumerate(scenario.model):
        for chunk in turn.chunks:
            if isinstance(chunk, CallChunk) and chunk.function_call.name not in UNTAGGED_CALLS:
                if _tag_call(chunk.function_call, "x") is None:
                    return (
                        f"model turn {n + 1} calls {chunk.function_call.name} with no string "
                        "argument to carry a session's marker"
                    )
    return None


def tag_turns(turns: Sequence[ModelTurn], marker: str) -> tuple[ModelTurn, ...]:
    """The script of one copy: ``turns`` with ``marker`` at the end of every text chunk (any
    piece of one session's text shown in another's frame names its session) and appended to
    each function call's first string argument. A canned turn (``fixture``) is written from the
    chunks read from its file (the same parts, in the same order, after the same waits), not
    byte for byte: its bytes cannot carry a marker."""
    out: list[ModelTurn] = []
    for turn in turns:
        if turn.replay is not None:
            turn = ModelTurn.model_validate(turn.model_dump(exclude={"fixture"}))
        chunks: list[Any] = []
        for chunk in turn.chunks:
            if isinstance(chunk, TextChunk) and chunk.text:
                chunks.append(chunk.model_copy(update={"text": f"{chunk.text} [{marker}] "}))
            elif isinstance(chunk, CallChunk) and chunk.function_call.name not in UNTAGGED_CALLS:
                tagged = _tag_call(chunk.function_call, marker)
                chunks.append(
                    chunk if tagged is None else chunk.model_copy(update={"function_call": tagged})
                )
            else:
                chunks.append(chunk)
        out.append(turn.model_copy(update={"chunks": tuple(chunks)}))
    return tuple(out)


def own_link_events(
    events: Mapping[str, Sequence[LinkEvent]], session_id: str
) -> dict[str, tuple[LinkEvent, ...]]:
    """What one copy keeps of the shared links' records: the browser link's connections that
    carried a request of its session (the path names the session id). The model link is left
    out: its requests carry no session's name, and the fake model's records of the copy's
    calls (keyed by its marker) stand for them; no fault acts on it under concurrency."""
    browser = events.get("browser", ())
    mine = {
        e.connection
        for e in browser
        if e.kind == "request" and e.path is not None and session_id in e.path
    }
    return {"browser": tuple(e for e in browser if e.connection in mine)}


def tool_calls_of(calls: Sequence[ToolCall], marker: str) -> tuple[ToolCall, ...]:
    """The tool calls of the copy with ``marker``: those whose arguments hold it."""
    return tuple(c for c in calls if marker in json.dumps(c.arguments, ensure_ascii=False))


def load_figures(sessions: Sequence[Session]) -> dict[str, Any]:
    """The target's latency under the load of ``sessions`` (real seconds). ``first_frame``:
    from the chat request to the first frame, per session. ``frame``: per streamed text chunk,
    from the moment the fake model wrote it to the moment the delta that shows it reached the
    browser (the k-th text chunk a session's model calls wrote against its k-th delta frame)."""
    firsts = [s.observation.frames[0].t for s in sessions if s.observation.frames]
    lags: list[float] = []
    for s in sessions:
        written = sorted(t for c in s.observation.model_calls for t in c.text_chunk_times)
        shown = [f.t for f in s.observation.frames if f.event == "delta"]
        lags += [max(b - a, 0.0) for a, b in zip(written, shown, strict=False)]
    return {
        "sessions": len(sessions),
        "first_frame_s": {
            "p50": percentile(firsts, 50),
            "p95": percentile(firsts, 95),
            "n": len(firsts),
        },
        "frame_latency_s": {
            "p50": percentile(lags, 50),
            "p95": percentile(lags, 95),
            "n": len(lags),
        },
    }
