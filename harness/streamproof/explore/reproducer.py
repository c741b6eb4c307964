"""Turning a scenario and a fault plan into scenario data, and a found plan into a file.

Pure (no I/O): the scenario's YAML data with its link faults replaced and the plan's other
elements written into it as plain scenario YAML (:func:`with_plan`: the browser leaving is
``request.disconnect_after_frames``, a changed model turn is written out as its ``chunks``),
the reproducer's file name and id (:func:`file_name`, :func:`reproducer_id`) and its text with
the header that says how it was found (:func:`reproducer_text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from streamproof.core.durations import format_duration, parse_duration
from streamproof.explore.space import LEAVE, TASK, TURNS
from streamproof.protocol.gemini import CallChunk, ErrorChunk, ModelTurn, TextChunk

__all__ = [
    "Provenance",
    "changed_turn",
    "file_name",
    "has_link_faults",
    "later_steps",
    "reproducer_id",
    "reproducer_text",
    "turn_data",
    "with_plan",
]

_ERROR: dict[str, Any] = {
    "code": 503,
    "status": "UNAVAILABLE",
    "message": "The model is overloaded.",
}
"""The error a generated error event carries: the fake's default, Gemini's overload."""

_LINK_NAMES = ("browser", "model", "a2a", "push")


def has_link_faults(data: Mapping[str, Any]) -> bool:
    """Whether the scenario data plans any fault on a link."""
    links = data.get("links") or {}
    return isinstance(links, Mapping) and any(links.get(name) for name in _LINK_NAMES)


def turn_data(turn: ModelTurn) -> dict[str, Any]:
    """A streamed model turn as plain ``chunks`` YAML data (a fixture's events become chunks:
    the fake writes them in its own layout, with the recorded waits as each chunk's delay)."""
    chunks: list[dict[str, Any]] = []
    for chunk in turn.chunks:
        item: dict[str, Any]
        if isinstance(chunk, TextChunk):
            item = {"text": chunk.text}
        elif isinstance(chunk, CallChunk):
            item = {"function_call": chunk.function_call.model_dump(mode="json")}
        else:
            assert isinstance(chunk, ErrorChunk)
            item = {"error": chunk.error.model_dump(mode="json")}
        if chunk.delay is not None:
            item["delay"] = format_duration(chunk.delay)
        chunks.append(item)
    out: dict[str, Any] = {"chunks": chunks, "finish_reason": turn.finish_reason}
    if turn.chunk_delay:
        out["chunk_delay"] = format_duration(turn.chunk_delay)
    if turn.times != 1:
        out["times"] = turn.times
    if turn.retries is not None:
        out["retries"] = turn.retries
    if turn.agent is not None:
        out["agent"] = turn.agent
    return out


def changed_turn(turn: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    """``turn`` (as :func:`turn_data` writes it) with one change of a plan's
    :data:`~streamproof.explore.space.TURNS` applied."""
    out = dict(turn)
    chunks = [dict(c) for c in turn["chunks"]]
    if "error_after" in change:
        out["chunks"] = [*chunks[: change["error_after"]], {"error": dict(_ERROR)}]
        out.pop("finish_reason", None)
    elif "finish" in change:
        out["chunks"] = chunks
        out["finish_reason"] = change["finish"]
    elif "split" in change:
        k = change["split"] - 1
        text = chunks[k]["text"]
        half = len(text) // 2
        first = {**chunks[k], "text": text[:half]}
        second = {"text": text[half:], "delay": "0s"}
        out["chunks"] = [*chunks[:k], first, second, *chunks[k + 1 :]]
    else:
        delay = change["delay"]
        k = delay["chunk"] - 1
        chunks[k] = {**chunks[k], "delay": delay["for"]}
        out["chunks"] = chunks
    return out


def later_steps(steps: Sequence[Any], element: Mapping[str, Any]) -> list[Any]:
    """A task timeline with its steps from ``element["from_step"]`` (from 1) on moved
    ``element["later"]`` later."""
    later = parse_duration(element["later"])
    out: list[Any] = []
    for number, step in enumerate(steps, start=1):
        if number >= element["from_step"] and isinstance(step, Mapping) and "at" in step:
            step = {**step, "at": format_duration(parse_duration(step["at"]) + later)}
        out.append(step)
    return out


def with_plan(
    data: Mapping[str, Any],
    plan: Mapping[str, Sequence[Mapping[str, Any]]],
    turns: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """``data`` with every link's faults replaced by ``plan``'s (links ``plan`` leaves out lose
    theirs; the links' other keys, ``engine`` and ``forward``, are kept) and the plan's other
    elements written in: the browser leaving as ``request.disconnect_after_frames``, a changed
    model turn (``turns``: every turn as :func:`turn_data` writes it) as its chunks."""
    out = dict(data)
    for leave in plan.get(LEAVE, ())[:1]:
        request = data.get("request")
        fields = dict(request) if isinstance(request, Mapping) else {"text": request}
        fields["disconnect_after_frames"] = leave["after_frames"]
        out["request"] = fields
    changes = plan.get(TURNS, ())
    if changes:
        model = list(data.get("model") or ())
        for change in changes:
            index = change["turn"] - 1
            model[index] = changed_turn(turns[index], change)
        out["model"] = model
    for slower in plan.get(TASK, ())[:1]:
        out["task"] = later_steps(data.get("task") or (), slower)
    raw = data.get("links")
    links: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    for name in _LINK_NAMES:
        links.pop(name, None)
    for name, faults in plan.items():
        if faults and name in _LINK_NAMES:
            links[name] = [dict(f) for f in faults]
    if links:
        out["links"] = links
    else:
        out.pop("links", None)
    return out


def file_name(scenario_id: str, requirement: str) -> str:
    """``a2a_client/x`` and ``A2A-C-RECOVERY`` -> ``a2a_client-x--A2A-C-RECOVERY.yaml``."""
    return f"{scenario_id.replace('/', '-')}--{requirement}.yaml"


def reproducer_id(scenario_id: str, requirement: str) -> str:
    """A scenario id that cannot clash with the original's (ids are lower case)."""
    base = re.sub(r"[^a-z0-9_.\-]", "-", scenario_id.replace("/", "-").lower())
    return f"explore/{base}--{requirement.lower()}"


@dataclass(frozen=True)
class Provenance:
    """How a reproducer was found, for its header."""

    scenario_file: str
    scenario_id: str
    requirement: str
    target: str
    bug: str | None
    seed: int | None
    examples: int
    wall_s: float
    fault: str
    rerun: str
    message: str


def _comment(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.splitlines()]


def reproducer_text(
    data: Mapping[str, Any],
    plan: Mapping[str, Sequence[Mapping[str, Any]]],
    found: Provenance,
    turns: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The reproducer: ``data`` with ``plan`` on its links and in its request or model turns
    (see :func:`with_plan`), its own id and title, the broken requirement as its requirement,
    and a header comment saying how it was found."""
    scenario = with_plan(data, plan, turns)
    scenario["id"] = reproducer_id(found.scenario_id, found.requirement)
    scenario["title"] = f"{data.get('title', found.scenario_id)} (explore: {found.fault})"
    scenario["requirements"] = [found.requirement]
    first: tuple[str, ...] = ("id", "title", "kind")
    ordered: dict[str, Any] = {k: scenario[k] for k in first if k in scenario}
    ordered.update({k: v for k, v in scenario.items() if k not in ordered})
    header = [
        f"Found by `streamproof explore` from {found.scenario_id} ({found.scenario_file}),",
        "its link faults removed and a fault plan searched with hypothesis.",
        f"Breaks {found.requirement}: {found.message}",
        f"Fault: {found.fault}",
        f"Target: {found.target}; bug: {found.bug or 'none'}; "
        f"seed: {found.seed if found.seed is not None else 'random'}; "
        f"examples tried: {found.examples}; wall time: {found.wall_s:.1f}s",
        f"Rerun: {found.rerun}",
    ]
    if plan.get(LEAVE):
        header.append("The browser's leaving is request.disconnect_after_frames below.")
    for slower in plan.get(TASK, ()):
        header.append(
            f"The task's steps from step {slower['from_step']} on are {slower['later']} "
            "later below."
        )
    for change in plan.get(TURNS, ()):
        header.append(
            f"Model turn {change['turn']} is written out as its chunks below, changed so."
        )
    body = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join([*(_comment("\n".join(header))), body])
