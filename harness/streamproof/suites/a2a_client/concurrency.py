"""K calls of one A2A client scenario at once against one fake agent (``--concurrency K``): how
the calls are told apart, and what each keeps of the shared server's records.
:meth:`A2AClientEnvironment.run_concurrent
<streamproof.suites.a2a_client.runner.A2AClientEnvironment.run_concurrent>` drives them.

One target is one fake A2A server and its ``a2a`` link; the K copies are K client processes
started at once (the contract's client is a process per call), each with a prompt of its own
that ends in a marker (``sp-c3-1a2b3c4d``; a follow-up's text too). The fake runs keyed
(:meth:`~streamproof.fakes.a2a.FakeA2AServer.load` with ``keyed``): a new message is answered from
the script of the marker it holds, in which every status message, direct reply and text
artifact chunk ends in that marker (a structured artifact's chunks stay as written: JSON
cannot carry it). So a task belongs to the call whose message created it, and another call's
task id, context id or marked text in a call's result is cross-talk, seen exactly.

Each call is given the agent's URL under a path of its own (``<link>/sp-c3-1a2b3c4d``), and
the keyed fake's card sends it on there, so every request of a call names it (the card's fetch
included, where the contract starts its time limits). Of the shared server's records each call
keeps its own (:func:`split_ledger`): the requests under its path (or, from a client that drops
the path, those whose message holds its marker or that name its task), its tasks and their
events. Each call's observation has no link records (``link_events=None``): no fault acts on the
link under concurrency, so the server's records of what it sent are what the client received.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from streamproof.core.concurrency import copy_marker, percentile
from streamproof.fakes.a2a.ledger import A2ALedger, RequestRecord
from streamproof.fakes.a2a.script import A2AScript, ArtifactStep, StatusStep, Step
from streamproof.suites.a2a_client.checks.concurrency import Call, holders, task_owners
from streamproof.suites.a2a_client.scenario import A2AClientScenario

__all__ = [
    "STRUCTURED_SUFFIX",
    "call_marker",
    "load_figures",
    "owners",
    "split_ledger",
    "tag",
    "tag_script",
    "untaggable",
]

STRUCTURED_SUFFIX: Final = ".json"
"""An artifact whose name ends so is structured (parsed once whole): its text stays as written."""


def call_marker(index: int, token: str) -> str:
    """The marker of call ``index`` (0-based); ``token`` is the run's random part."""
    return copy_marker("c", index, token)


def tag(text: str, marker: str) -> str:
    """``text`` as a call's copy of the scenario says it: the marker at its end."""
    return f"{text} [{marker}]"


def untaggable(scenario: A2AClientScenario) -> str | None:
    """Why ``scenario`` cannot be run as K calls at once, or None when it can."""
    if scenario.links.a2a:
        return (
            "its fault plan acts on the a2a link the K calls share, so a fault could not be "
            "aimed at one call: run it without --concurrency"
        )
    if scenario.links.push:
        return (
            "its fault plan acts on the push link the K calls' deliveries share: run it "
            "without --concurrency"
        )
    if scenario.links.forward:
        return (
            "it reaches the agent through a forward proxy whose plan the K calls would share: "
            "run it without --concurrency"
        )
    return None


def _structured(steps: Sequence[Step]) -> set[str]:
    """The ids of the artifacts that are structured: a ``.json`` name or a data part."""
    out: set[str] = set()
    for step in steps:
        if isinstance(step, ArtifactStep):
            chunk = step.artifact
            if chunk.data is not None or (chunk.name or "").endswith(STRUCTURED_SUFFIX):
                out.add(chunk.id)
        elif isinstance(step, StatusStep) and step.follow_up:
            out |= _structured(step.follow_up)
    return out


def _tag_steps(steps: Sequence[Step], marker: str, structured: set[str]) -> tuple[Step, ...]:
    out: list[Step] = []
    for step in steps:
        if isinstance(step, StatusStep):
            update: dict[str, Any] = {}
            if step.message is not None:
                update["message"] = tag(step.message, marker)
            if step.follow_up is not None:
                update["follow_up"] = _tag_steps(step.follow_up, marker, structured)
            out.append(step.model_copy(update=update) if update else step)
        elif isinstance(step, ArtifactStep):
            chunk = step.artifact
            if chunk.text and chunk.id not in structured:
                chunk = chunk.model_copy(update={"text": tag(chunk.text, marker)})
            out.append(step.model_copy(update={"artifact": chunk}))
        else:
            out.append(step)
    return tuple(out)


def tag_script(script: A2AScript, marker: str) -> A2AScript:
    """The script of one call: every status message, the direct reply and each text chunk of a
    plain artifact end in ``marker``; times, states and structured artifacts are unchanged."""
    update: dict[str, Any] = {}
    if script.task is not None:
        update["task"] = _tag_steps(script.task, marker, _structured(script.task))
    if script.reply is not None:
        update["reply"] = script.reply.model_copy(update={"text": tag(script.reply.text, marker)})
    return script.model_copy(update=update)


def _holder(text: str, markers: Sequence[str]) -> int | None:
    held = holders(text, markers)
    return held[0] if len(held) == 1 else None


def owners(ledger: A2ALedger, markers: Sequence[str]) -> tuple[dict[str, int], dict[int, int]]:
    """Which call each task and each request belongs to: ``(task id -> call, request index ->
    call)``. A task is the call's whose marker its creating message holds. A request is the
    call's whose marker its path holds (each call is given the agent's URL under its own
    marker, and the card sends it on there), else whose marker its message holds, else whose
    task it names; a request none of these ties to one call (a client that dropped the path
    of its base URL, asking for something else than a message or a task) is in neither map."""
    tasks = task_owners(ledger, markers)
    by_message: dict[int, int] = {}
    for message in ledger.messages:
        holder = _holder(message.text, markers)
        if holder is not None:
            by_message[message.request] = holder
    requests: dict[int, int] = {}
    for record in ledger.requests:
        holder = _holder(record.path, markers)
        if holder is None:
            holder = by_message.get(record.index)
        if holder is None and record.task_id is not None:
            holder = tasks.get(record.task_id)
        if holder is not None:
            requests[record.index] = holder
    return tasks, requests


def split_ledger(ledger: A2ALedger, markers: Sequence[str]) -> list[A2ALedger]:
    """Each call's part of the shared server's records (see :func:`owners`), in the order of
    ``markers``."""
    task_owner, request_owner = owners(ledger, markers)
    out: list[A2ALedger] = []
    for i in range(len(markers)):

        def mine(request: int, i: int = i) -> bool:
            return request_owner.get(request) == i

        out.append(
            A2ALedger(
                requests=tuple(r for r in ledger.requests if mine(r.index)),
                tasks=tuple(t for t in ledger.tasks if task_owner.get(t.task_id) == i),
                messages=tuple(m for m in ledger.messages if mine(m.request)),
                gets=tuple(c for c in ledger.gets if mine(c.request)),
                resubscribes=tuple(c for c in ledger.resubscribes if mine(c.request)),
                cancels=tuple(c for c in ledger.cancels if mine(c.request)),
                task_events=tuple(e for e in ledger.task_events if task_owner.get(e.task_id) == i),
                webhooks=tuple(w for w in ledger.webhooks if task_owner.get(w.task_id) == i),
                deliveries=tuple(d for d in ledger.deliveries if task_owner.get(d.task_id) == i),
            )
        )
    return out


def _first_data_frame(record: RequestRecord) -> float | None:
    return next((f.t for f in record.frames if f.kind not in ("heartbeat", "ping")), None)


def load_figures(calls: Sequence[Call]) -> dict[str, Any]:
    """The server-and-link latency under the load of ``calls`` (real seconds). ``first_event``:
    from a call's first message to the first event the fake wrote on its stream; ``result``:
    from a call's first request to its result line (the whole call as its user waits for it)."""
    firsts: list[float] = []
    results: list[float] = []
    for call in calls:
        obs = call.observation
        messages = {m.request for m in obs.ledger.messages}
        streams = [r for r in obs.ledger.requests if r.index in messages]
        if streams:
            first = min(streams, key=lambda r: r.t)
            seen = _first_data_frame(first)
            if seen is not None:
                firsts.append(seen - first.t)
        if obs.turns and obs.turns[0].t_result is not None:
            start = min((r.t for r in obs.ledger.requests), default=obs.turns[0].t_start)
            results.append(max(obs.turns[0].t_result - start, 0.0))
    return {
        "sessions": len(calls),
        "first_event_s": _stats(firsts),
        "result_s": _stats(results),
    }


def _stats(values: Sequence[float]) -> Mapping[str, Any]:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "n": len(values)}
