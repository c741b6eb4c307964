"""Scenario files: YAML documents validated into each suite's scenario model, with errors that
name file, line and field.

A scenario file holds one or more YAML documents (separated by ``---``); each is one scenario,
and its ``kind`` (default ``gateway``) picks the suite whose model validates it. Everything is
validated at load time so that a bad scenario fails at collection, not halfway through a run.

A file with problems raises one :class:`ScenarioError` carrying every problem found in it:
every error of every document (a document's problems do not hide the next document's), each as
``file:line: field.path: problem``. Of a union's alternatives (a chunk is text, a function call
or an error) only the one the document evidently meant is reported, not one error per
alternative. Scenario ids must be unique within a file and, through a shared
:class:`ScenarioIds`, across the files of one validation or run.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.browser_client.scenario import BrowserClientScenario
from streamproof.suites.fixture_files import fixture_context
from streamproof.suites.gateway.scenario import GatewayScenario

__all__ = [
    "Document",
    "Lines",
    "LoadedScenario",
    "Problem",
    "Scenario",
    "ScenarioError",
    "ScenarioIds",
    "keys_at",
    "load_scenarios",
    "parse_scenarios",
    "validation_problems",
    "yaml_documents",
]

Scenario = GatewayScenario | A2AClientScenario | BrowserClientScenario

# --- loading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One thing wrong in an input file, and where: ``file:line: field: problem``."""

    file: str
    line: int | None
    field: str | None
    """The path to the value, e.g. ``model[1].chunks[0].text``; ``None``: the file itself."""
    problem: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return (
            f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"
        )


class ScenarioError(Exception):
    """A scenario file that cannot be used: every problem found in it, one per line of
    ``str()``. ``file``, ``line``, ``field`` and ``problem`` are the first problem's."""

    def __init__(self, *problems: Problem) -> None:
        if not problems:
            raise ValueError("a ScenarioError needs at least one problem")
        super().__init__(*problems)
        self.problems: tuple[Problem, ...] = problems
        first = problems[0]
        self.file, self.line, self.field, self.problem = (
            first.file,
            first.line,
            first.field,
            first.problem,
        )

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


@dataclass(frozen=True)
class LoadedScenario:
    scenario: Scenario
    file: str
    line: int
    """1-based line of the document's first key."""


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that also records the line of every mapping key and sequence item."""


_FastComposer: type[Any] = getattr(yaml, "CSafeLoader", _LineLoader)
"""LibYAML's parser, when PyYAML was built with it: about ten times faster at composing the
nodes (a whole run loads every scenario file once per process). The nodes are the same; a
file it refuses is composed again by the pure-Python parser, whose messages the problems
quote."""


Lines = dict[tuple[Any, ...], int]
"""YAML path (keys and indexes) -> 1-based line; ``()`` is the document's first line."""


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: its data and the line of every key and item."""

    data: Any
    lines: Lines

    @property
    def line(self) -> int:
        return self.lines.get((), 1)


def _malformed(file: str, exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    return Problem(file, line, None, f"malformed YAML: {problem}")


def yaml_documents(text: str, file: str) -> tuple[list[Document], list[Problem]]:
    """The file's documents with their lines; a document that cannot be built is a problem and
    the others are still read (a syntax error stops the whole file: nothing after it parses)."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_FastComposer))
        # LibYAML's extension is initialised once per process: where the yaml package was
        # imported again since (an in-process pytest run restores sys.modules after itself),
        # its nodes are of the first import's classes, which this one's constructor and line
        # index do not know.
        fast = all(node is None or isinstance(node, yaml.Node) for node in nodes)
    except yaml.YAMLError:
        fast = False
    if not fast:
        try:
            nodes = list(yaml.compose_all(text, Loader=_LineLoader))
        except yaml.YAMLError as exc:
            return [], [_malformed(file, exc)]
    documents: list[Document] = []
    problems: list[Problem] = []
    for node in nodes:
        if node is None:
            continue
        lines: Lines = {}
        _index_lines(node, (), lines)
        loader = _LineLoader("")
        try:
            documents.append(Document(loader.construct_document(node), lines))
        except yaml.YAMLError as exc:
            problems.append(_malformed(file, exc))
        finally:
            loader.dispose()
    return documents, problems


def _index_lines(node: yaml.Node, path: tuple[Any, ...], out: Lines) -> None:
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


# --- from pydantic's errors to problems in the file --------------------------------------------


@dataclass(frozen=True)
class _Located:
    """One pydantic error, placed in the document."""

    error: Any
    loc: tuple[Any, ...]
    """The path in the YAML: the keys and indexes of ``error["loc"]`` that are in the data."""
    choices: tuple[tuple[tuple[Any, ...], str], ...]
    """The union members the error belongs to: (pydantic location of the union, member tag)."""


def _locate(error: Any, data: Any) -> _Located:
    """Split pydantic's location into the YAML path and the union member tags.

    Pydantic's locations hold union member tags (``TextChunk``, ``int``,
    ``function-after[...]``) among the keys and indexes; walking the data tells them apart: a key
    or index that is in the data is a step in the YAML, and so is the key of a missing field;
    anything else is a tag."""
    raw = tuple(error["loc"])
    node = data
    keep: list[Any] = []
    choices: list[tuple[tuple[Any, ...], str]] = []
    for i, part in enumerate(raw):
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            keep.append(part)
            node = node[part]
        elif isinstance(node, dict) and part in node:
            keep.append(part)
            node = node[part]
        elif i == len(raw) - 1 and error["type"] == "missing" and isinstance(node, dict):
            keep.append(part)
        else:
            choices.append((raw[:i], str(part)))
    return _Located(error, tuple(keep), tuple(choices))


def _member_score(errors: Sequence[_Located]) -> tuple[int, int, int]:
    """How well a union member fits the document: the member whose errors got furthest into it;
    then the one whose unknown keys look like its missing ones (``txt`` for ``text``); then the
    one with fewer errors."""
    depth = max(len(e.loc) for e in errors)
    missing = [str(e.loc[-1]) for e in errors if e.error["type"] == "missing" and e.loc]
    unknown = [str(e.loc[-1]) for e in errors if e.error["type"] == "extra_forbidden" and e.loc]
    near = sum(1 for key in unknown if difflib.get_close_matches(key, missing, n=1))
    return depth, near, -len(errors)


def _meant(located: Sequence[_Located]) -> list[_Located]:
    """The errors of the union members the document meant, one member per union."""
    sites: dict[tuple[Any, ...], dict[str, list[_Located]]] = {}
    for entry in located:
        for site, tag in entry.choices:
            sites.setdefault(site, {}).setdefault(tag, []).append(entry)
    chosen = {
        site: max(members, key=lambda tag: _member_score(members[tag]))
        for site, members in sites.items()
    }
    kept = [e for e in located if all(chosen[site] == tag for site, tag in e.choices)]
    # A tuple's "at least N items" after its items failed says nothing the items do not.
    return [
        e
        for e in kept
        if e.error["type"] not in ("too_short", "too_long")
        or not any(len(o.loc) > len(e.loc) and o.loc[: len(e.loc)] == e.loc for o in kept)
    ]


def _expand(annotation: Any) -> list[Any]:
    """The types a field may hold: ``Annotated``, unions and ``Optional`` unwrapped."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _expand(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in get_args(annotation) for t in _expand(arg)]
    return [annotation]


def _step(tp: Any, part: Any) -> list[Any]:
    """The types one step of a pydantic location leads to from ``tp`` (none: not a step)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if isinstance(part, str):
            for name, field in tp.model_fields.items():
                if part in (name, field.alias):
                    return _expand(field.annotation)
            if part == tp.__name__:  # a union member's tag: this member
                return [tp]
        return []
    origin, args = get_origin(tp), get_args(tp)
    if origin in (tuple, list) and isinstance(part, int) and args:
        return _expand(args[0])
    if origin is dict and isinstance(part, str) and len(args) == 2:
        return _expand(args[1])
    return []


def keys_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys a document may write at pydantic location ``loc`` of ``model``: the field names
    (and aliases) of the models that can be there; of a union's members, every one's, unless
    the location's tag names the member."""
    here: list[Any] = [model]
    for part in loc:
        # A part that leads nowhere is a tag that names no model (int, function-after[...]).
        here = [t for tp in here for t in _step(tp, part)] or here
    keys: list[str] = []
    for tp in here:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            by_name = tp.model_config.get("populate_by_name", False)
            for name, field in tp.model_fields.items():
                spellings = [field.alias] if field.alias else []
                if not field.alias or by_name:
                    spellings.append(name)
                keys += [k for k in spellings if k not in keys]
    return keys


def _unknown_key(model: type[BaseModel], error: Any) -> str:
    """``unknown key; did you mean 'fault'?`` (difflib over the keys valid there)."""
    raw = tuple(error["loc"])
    keys = keys_at(model, raw[:-1])
    close = difflib.get_close_matches(str(raw[-1]), keys, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key; keys here are {', '.join(keys)}" if keys else "unknown key"


def _error_text(model: type[BaseModel], error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return _unknown_key(model, error)
    return str(error["msg"]).removeprefix("Value error, ")


def validation_problems(
    exc: ValidationError, model: type[BaseModel], document: Any, lines: Lines, file: str
) -> list[Problem]:
    """Every error of ``exc`` (from validating ``document`` as ``model``) as a problem at its
    line."""
    problems: list[Problem] = []
    for entry in _meant([_locate(e, document) for e in exc.errors(include_url=False)]):
        problem = Problem(
            file,
            _line_for(entry.loc, lines),
            _field_path(entry.loc),
            _error_text(model, entry.error),
        )
        if problem not in problems:
            problems.append(problem)
    # By line; on one line an unknown key first: it usually explains the "field required".
    return sorted(problems, key=lambda p: (p.line or 0, not p.problem.startswith("unknown key")))


# --- scenario ids ------------------------------------------------------------------------------


class ScenarioIds:
    """Scenario ids seen so far, each with where it was first seen. One registry per
    validation, per ``streamproof run`` and per pytest session, handed to every file's load,
    makes an id used twice an error wherever the two are: one file or two."""

    def __init__(self) -> None:
        self._first: dict[str, tuple[str, int]] = {}

    def claim(self, scenario_id: str, file: str, line: int) -> Problem | None:
        """Record ``scenario_id`` at ``file:line``; the problem when another place has it."""
        first = self._first.setdefault(scenario_id, (file, line))
        if first == (file, line):
            return None
        return Problem(
            file,
            line,
            "id",
            f"duplicate scenario id {scenario_id!r}, first at {first[0]}:{first[1]}",
        )


# --- loading -----------------------------------------------------------------------------------


def parse_scenarios(text: str, file: str, ids: ScenarioIds | None = None) -> list[LoadedScenario]:
    """Every scenario in ``text``; raises :class:`ScenarioError` with every problem in it.

    ``ids`` is the registry of the ids already loaded (a fresh one: this file alone)."""
    ids = ids if ids is not None else ScenarioIds()
    documents, problems = yaml_documents(text, file)
    loaded: list[LoadedScenario] = []
    for doc in documents:
        data, lines = doc.data, doc.lines
        if not isinstance(data, dict):
            problems.append(Problem(file, doc.line, None, "a scenario document must be a mapping"))
            continue
        kind = data.get("kind", "gateway")
        model = _scenario_model(kind)
        if model is None:
            problems.append(
                Problem(
                    file,
                    lines.get(("kind",), doc.line),
                    "kind",
                    f"unknown scenario kind {kind!r}; kinds are gateway, a2a-client",
                )
            )
            continue
        try:
            scenario = model.model_validate(data, context=fixture_context(file))
        except ValidationError as exc:
            problems += validation_problems(exc, model, data, lines, file)
            continue
        duplicate = ids.claim(scenario.id, file, lines.get(("id",), doc.line))
        if duplicate is not None:
            problems.append(duplicate)
            continue
        loaded.append(LoadedScenario(scenario, file, doc.line))
    if problems:
        raise ScenarioError(*sorted(problems, key=lambda p: p.line or 0))
    if not loaded:
        raise ScenarioError(Problem(file, None, None, "the file holds no scenario"))
    return loaded


def _scenario_model(
    kind: Any,
) -> type[GatewayScenario] | type[A2AClientScenario] | type[BrowserClientScenario] | None:
    if kind == "gateway":
        return GatewayScenario
    if kind == "a2a-client":
        return A2AClientScenario
    if kind == "browser-client":
        return BrowserClientScenario
    return None


def load_scenarios(path: str | Path, ids: ScenarioIds | None = None) -> list[LoadedScenario]:
    """The scenarios in the file at ``path`` (see :func:`parse_scenarios`)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(
            Problem(file, None, None, f"cannot read: {exc.strerror or exc}")
        ) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(Problem(file, None, None, f"not UTF-8 text: {exc.reason}")) from None
    return parse_scenarios(text, file, ids)
