"""The scenario an explore search runs: loaded as ``streamproof run`` loads it, its link faults
removed, and the space of fault plans drawn for it (:class:`~streamproof.explore.space.Space`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from streamproof.explore.options import ExploreError
from streamproof.explore.reproducer import has_link_faults, turn_data, with_plan
from streamproof.explore.space import (
    BROWSER_ACTIONS,
    PUSH_ACTIONS,
    PUSH_LINK,
    PUSH_MATCHES,
    Space,
    a2a_matches,
)
from streamproof.protocol.gemini import TextChunk
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.fixture_files import fixture_context, resolve_fixture
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import ScenarioError, load_scenarios

__all__ = ["SearchedScenario", "load_scenario"]


@dataclass
class SearchedScenario:
    """A scenario as the search runs it: its data without link faults, the model that loads it,
    and the space its fault plans are drawn from."""

    file: str
    data: dict[str, Any]
    model: type[Any]
    id: str
    kind: str
    horizon: float
    run_timeout: float
    space: Space
    turns: tuple[dict[str, Any], ...] = ()
    """Every model turn as plain chunks data (gateway), for a plan that changes one."""


_BINDING_SUFFIX = re.compile(r"^(?P<name>.+)\[(?P<binding>jsonrpc|rest|grpc)\]$")


def _split_binding(name: str) -> tuple[str, str | None]:
    """A name and the binding its ``[rest]`` suffix asks for (an A2A client scenario's run on
    that binding: docs/reference/a2a-client-contract.md#bindings)."""
    found = _BINDING_SUFFIX.match(name)
    return (found["name"], found["binding"]) if found else (name, None)


def _resolve(name: str) -> tuple[Path, str | None]:
    """The file that holds ``name`` and, when ``name`` is a scenario id, that id."""
    path = Path(name)
    if path.exists():
        return path, None
    holder, sep, wanted = name.rpartition("::")
    if sep and Path(holder).is_file():
        try:
            ids = [entry.scenario.id for entry in load_scenarios(holder)]
        except ScenarioError as exc:
            raise ExploreError(str(exc)) from None
        if wanted not in ids:
            raise ExploreError(f"{holder}: no scenario {wanted!r} (it holds {', '.join(ids)})")
        return Path(holder), wanted
    from streamproof.runtime.bundled import bundled_scenarios

    folder = bundled_scenarios()
    if folder is not None:
        for file in sorted(folder.rglob("*.yaml")):
            try:
                loaded = load_scenarios(file)
            except ScenarioError:
                continue
            if any(entry.scenario.id == name for entry in loaded):
                return file, name
    raise ExploreError(
        f"{name}: no such scenario file, and no bundled scenario has that id (FILE::ID names "
        "one scenario of a file)"
    )


def load_scenario(name: str) -> tuple[SearchedScenario, bool]:
    """The scenario at ``name`` (a file holding one scenario, or a bundled scenario's id) with
    its link faults removed, and whether it had any. An A2A client scenario's id with a binding
    suffix (``a2a_client/x[rest]``) is that scenario pinned to the binding."""
    name, binding = _split_binding(name)
    path, wanted = _resolve(name)
    if path.is_dir():
        raise ExploreError(f"{path}: a folder; explore takes one scenario file")
    try:
        loaded = load_scenarios(path)
    except ScenarioError as exc:
        raise ExploreError(str(exc)) from None
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    if wanted is not None:
        index = next(i for i, entry in enumerate(loaded) if entry.scenario.id == wanted)
    elif len(loaded) == 1:
        index = 0
    else:
        ids = ", ".join(entry.scenario.id for entry in loaded)
        raise ExploreError(
            f"{path}: holds {len(loaded)} scenarios ({ids}); name one of them by its id"
        )
    scenario = loaded[index].scenario
    # Canned streams (``fixture:``) are found from the scenario's folder up; the reproducer is
    # written elsewhere (reports/explore/), so it names each one by its absolute path.
    data = _absolute_fixtures(docs[index], path)
    if binding is not None:
        if not isinstance(scenario, A2AClientScenario):
            raise ExploreError(f"{name}[{binding}]: only an a2a-client scenario runs on a binding")
        data = {**data, "binding": binding}
    had_faults = has_link_faults(data)
    base = with_plan(data, {})
    model = type(scenario)
    try:
        stripped = model.model_validate(base, context=fixture_context(path))
    except ValueError as exc:
        raise ExploreError(
            f"{path}: without its link faults the scenario is invalid: {exc}"
        ) from None
    if isinstance(stripped, A2AClientScenario):
        steps = stripped.task or ()
        times = [float(step.at) for step in steps if getattr(step, "at", None) is not None]
        active = max(times) + 1.0 if times else None
        pushed = stripped.push is not None
        space = Space(
            ("a2a", PUSH_LINK) if pushed else ("a2a",),
            stripped.horizon,
            a2a_matches(stripped.server.wire),
            active,
            max(len(steps), 1),
            only={PUSH_LINK: PUSH_ACTIONS} if pushed else {},
            link_matches={PUSH_LINK: PUSH_MATCHES} if pushed else {},
        )
        if isinstance(base.get("task"), list) and len(base["task"]) > 1:
            space = replace(space, steps=len(base["task"]))
    elif isinstance(stripped, BrowserClientScenario):
        # The page's own link: every fault a network does to a stream, on the chat request
        # first; after_event counts the scenario's frames.
        space = Space(
            ("browser",),
            stripped.horizon,
            ({"method": "POST"}, {}),
            events=len(stripped.frames),
        )
    else:
        assert isinstance(stripped, GatewayScenario)
        links = ("browser", "model") if stripped.model_path == "direct" else ("browser",)
        space = Space(links, stripped.horizon, events=15, only={"browser": BROWSER_ACTIONS})
        space = replace(
            space,
            active=_model_active(stripped),
            quiet=max(stripped.horizon, stripped.limits.gateway_run_timeout * QUIET_PAST_BOUND),
            frames=_leave_frames(stripped),
            turns=_turn_shapes(stripped),
        )
        turns = tuple(turn_data(turn) if turn.chunks else {} for turn in stripped.model)
    found = SearchedScenario(
        file=str(path),
        data=base,
        model=model,
        id=scenario.id if binding is None else f"{scenario.id}[{binding}]",
        kind=scenario.kind,
        horizon=stripped.horizon,
        run_timeout=stripped.limits.run_timeout,
        space=space,
    )
    if isinstance(stripped, GatewayScenario):
        found.turns = turns
    return found, had_faults


MAX_LEAVE_FRAMES = 15
QUIET_PAST_BOUND = 1.5
"""A delay before a model chunk may last up to this many times the gateway's run bound."""


def _leave_frames(scenario: GatewayScenario) -> int | None:
    """How many frames the browser may leave after; ``None`` when the scenario has a drop of
    its own or no stream to leave."""
    request = scenario.request
    if request.disconnect_after_frames is not None or not request.streaming:
        return None
    if scenario.scripted_calls == "forever":
        return MAX_LEAVE_FRAMES
    # About a frame per chunk, two per function call (tool_call, tool_result), a message per
    # turn and the done frame.
    frames = sum(len(turn.chunks) + len(turn.function_calls) + 1 for turn in scenario.model)
    return min(frames + 1, MAX_LEAVE_FRAMES)


def _model_active(scenario: GatewayScenario) -> float | None:
    """Until when (scenario seconds) the fake model's script sends, about: its waits added up,
    plus a second; ``None`` when a turn repeats for ever."""
    if scenario.scripted_calls == "forever":
        return None
    waits = 0.0
    for turn in scenario.model:
        delays = [c.delay if c.delay is not None else turn.chunk_delay for c in turn.chunks]
        waits += (sum(delays) if delays else turn.chunk_delay) * int(turn.times)
    return waits + 1.0


def _turn_shapes(scenario: GatewayScenario) -> tuple[tuple[int, ...], ...]:
    """Per model turn, each chunk's text length (0: a function call); ``()`` for a turn that
    fails already (an HTTP or stream error): it is left alone."""
    shapes: list[tuple[int, ...]] = []
    for turn in scenario.model:
        if turn.is_error or not turn.chunks:
            shapes.append(())
            continue
        shapes.append(tuple(len(c.text) if isinstance(c, TextChunk) else 0 for c in turn.chunks))
    return tuple(shapes)


def _absolute_fixtures(data: Any, scenario_file: Path) -> Any:
    """``data`` with every ``fixture:`` path replaced by the file it names, resolved from
    ``scenario_file``'s folder up (left as written when it names no file: the loader said so
    already)."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key == "fixture" and isinstance(value, str):
                try:
                    out[key] = str(resolve_fixture(value, scenario_file))
                except ValueError:
                    out[key] = value
            else:
                out[key] = _absolute_fixtures(value, scenario_file)
        return out
    if isinstance(data, list):
        return [_absolute_fixtures(item, scenario_file) for item in data]
    return data
