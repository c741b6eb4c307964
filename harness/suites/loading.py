"""Scenario files: YAML documents validated into each suite's scenario model, with errors that
name file, line and field.

A scenario file holds one or more YAML documents (separated by ``---``); each is one scenario,
and its ``kind`` (default ``gateway``) picks the suite whose model validates it. Everything is
validated at load time so that a bad scenario fails at collection, not halfway through a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness.suites.a2a_client.scenario import A2AClientScenario
from harness.suites.gateway.scenario import GatewayScenario

__all__ = ["LoadedScenario", "Scenario", "ScenarioError", "load_scenarios", "parse_scenarios"]

Scenario = GatewayScenario | A2AClientScenario

# --- loading -----------------------------------------------------------------------------------


class ScenarioError(Exception):
    """A scenario file that cannot be used; names where the problem is."""

    def __init__(self, file: str, line: int | None, field: str | None, problem: str) -> None:
        super().__init__(file, line, field, problem)
        self.file, self.line, self.field, self.problem = file, line, field, problem

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return (
            f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"
        )


@dataclass(frozen=True)
class LoadedScenario:
    scenario: Scenario
    file: str
    line: int
    """1-based line of the document's first key."""


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that also records the line of every mapping key and sequence item."""


def _documents(text: str, file: str) -> Iterator[tuple[Any, dict[tuple[Any, ...], int]]]:
    try:
        nodes = list(yaml.compose_all(text, Loader=_LineLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(file, line, None, f"malformed YAML: {problem}") from None
    for node in nodes:
        if node is None:
            continue
        lines: dict[tuple[Any, ...], int] = {}
        _index_lines(node, (), lines)
        loader = _LineLoader("")
        try:
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise ScenarioError(file, line, None, f"malformed YAML: {exc}") from None
        finally:
            loader.dispose()
        yield data, lines


def _index_lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*path, key.value)
            out[child] = key.start_mark.line + 1
            _index_lines(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, i), out)


def _line_for(loc: Sequence[Any], lines: Mapping[tuple[Any, ...], int]) -> int | None:
    path = tuple(loc)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())


def _field_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


def _yaml_loc(loc: Sequence[Any]) -> tuple[Any, ...]:
    """Pydantic locations include union member tags ("TextChunk", "function-after[...]"),
    which are not in the YAML; keep only what names a key or an index."""
    keep: list[Any] = []
    for part in loc:
        if isinstance(part, int) or (
            isinstance(part, str) and re.fullmatch(r"[a-z_][a-z0-9_]*", part)
        ):
            keep.append(part)
    return tuple(keep)


def parse_scenarios(text: str, file: str) -> list[LoadedScenario]:
    """Every scenario in ``text``; raises :class:`ScenarioError` at the first problem."""
    loaded: list[LoadedScenario] = []
    seen: dict[str, int] = {}
    for data, lines in _documents(text, file):
        doc_line = lines.get((), 1)
        if not isinstance(data, dict):
            raise ScenarioError(file, doc_line, None, "a scenario document must be a mapping")
        kind = data.get("kind", "gateway")
        model = _scenario_model(kind)
        if model is None:
            raise ScenarioError(
                file,
                lines.get(("kind",), doc_line),
                "kind",
                f"unknown scenario kind {kind!r}; kinds are gateway, a2a-client",
            )
        try:
            scenario = model.model_validate(data)
        except ValidationError as exc:
            err = _best_error(exc)
            loc = _yaml_loc(err["loc"])
            raise ScenarioError(
                file, _line_for(loc, lines), _field_path(loc), _error_text(err)
            ) from None
        if scenario.id in seen:
            raise ScenarioError(
                file,
                lines.get(("id",), doc_line),
                "id",
                f"duplicate scenario id {scenario.id!r} (first at line {seen[scenario.id]})",
            )
        seen[scenario.id] = doc_line
        loaded.append(LoadedScenario(scenario, file, doc_line))
    if not loaded:
        raise ScenarioError(file, None, None, "the file holds no scenario")
    return loaded


def _scenario_model(kind: Any) -> type[GatewayScenario] | type[A2AClientScenario] | None:
    if kind == "gateway":
        return GatewayScenario
    if kind == "a2a-client":
        return A2AClientScenario
    return None


def _best_error(exc: ValidationError) -> Any:
    """Of a union's alternatives, report the error that got furthest into the document."""
    errors = exc.errors(include_url=False)
    # Deepest first; at equal depth an unknown key (usually a typo) explains more than the
    # "field required" it causes.
    return max(errors, key=lambda e: (len(_yaml_loc(e["loc"])), e["type"] == "extra_forbidden"))


def _error_text(err: Any) -> str:
    msg = str(err["msg"])
    if err["type"] == "extra_forbidden":
        return "unknown key"
    return msg.removeprefix("Value error, ")


def load_scenarios(path: str | Path) -> list[LoadedScenario]:
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(file, None, None, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(file, None, None, f"not UTF-8 text: {exc.reason}") from None
    return parse_scenarios(text, file)
