"""What ``streamproof validate`` reads: scenario files and target files, told apart, each
validated with every problem named as ``file:line: field: problem``.

**Which files are target files.** A file is read as a target file when:

1. it holds exactly one YAML document, and that document is a mapping;
2. it has none of the keys only scenarios have: the fields of any kind's scenario model that no
   target model has (``id``, ``title``, ``requirements``, ``model``, ``request``, ``expect``,
   ``client``, ``task``...);
3. it has at least one of the keys only target files have: the fields of any kind's target
   model that no scenario model has (``command``, ``url``, ``port``, ``endpoints``,
   ``startup_grace``, ``wires``...).

Both key sets come from the registry's models (:func:`scenario_only_keys`,
:func:`target_only_keys`), so a new suite or field moves them with it. ``kind`` belongs to both
and is not evidence either way; once a file is a target file, its ``kind`` (``gateway`` when
absent, or ``a2a-client``) picks the target model. Every other file is read as scenarios, so a
scenario with a typo in every key is never mistaken for a target file, and a target file with
a scenario key in it is reported as a scenario (whose errors then name the keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from streamproof.suites import kinds, suite
from streamproof.suites.loading import (
    Document,
    LoadedScenario,
    Problem,
    ScenarioError,
    ScenarioIds,
    keys_at,
    parse_scenarios,
    validation_problems,
    yaml_documents,
)

__all__ = [
    "CheckedFile",
    "check_file",
    "check_target_file",
    "is_target_document",
    "scenario_only_keys",
    "target_only_keys",
]


@cache
def _keys(which: str) -> frozenset[str]:
    models = [getattr(suite(kind), which) for kind in kinds()]
    return frozenset(key for model in models for key in keys_at(model, ()))


def scenario_only_keys() -> frozenset[str]:
    """Top-level keys of a scenario of any kind that no target file has."""
    return _keys("SCENARIO_MODEL") - _keys("TARGET_MODEL")


def target_only_keys() -> frozenset[str]:
    """Top-level keys of a target file of any kind that no scenario has."""
    return _keys("TARGET_MODEL") - _keys("SCENARIO_MODEL")


def is_target_document(data: Any) -> bool:
    """Whether one YAML document reads as a target file (rules 2 and 3 of the module)."""
    if not isinstance(data, dict):
        return False
    keys = {str(key) for key in data}
    return not keys & scenario_only_keys() and bool(keys & target_only_keys())


@dataclass(frozen=True)
class CheckedFile:
    """One file as ``validate`` found it."""

    file: str
    target_kind: str | None = None
    """The kind of a target file; ``None``: a scenario file."""
    scenarios: tuple[LoadedScenario, ...] = ()
    problems: tuple[Problem, ...] = field(default=())


def _target_problems(doc: Document, file: str) -> tuple[str, list[Problem]]:
    kind = doc.data.get("kind", "gateway")
    if kind not in kinds():
        line = doc.lines.get(("kind",), doc.line)
        known = ", ".join(kinds())
        return str(kind), [
            Problem(file, line, "kind", f"unknown target kind {kind!r}; kinds are {known}")
        ]
    model = suite(kind).TARGET_MODEL
    try:
        model.model_validate(doc.data)
    except ValidationError as exc:
        return kind, validation_problems(exc, model, doc.data, doc.lines, file)
    return kind, []


def _read(path: str | Path) -> tuple[str | None, CheckedFile | None]:
    file = str(path)
    try:
        return Path(path).read_text(encoding="utf-8"), None
    except OSError as exc:
        problem = Problem(file, None, None, f"cannot read: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        problem = Problem(file, None, None, f"not UTF-8 text: {exc.reason}")
    return None, CheckedFile(file, problems=(problem,))


def check_target_file(path: str | Path) -> CheckedFile:
    """Validate the file at ``path`` as a target file, whatever its keys (``--target`` says
    what it is), with every problem and its line."""
    file = str(path)
    text, unreadable = _read(path)
    if unreadable is not None:
        return unreadable
    assert text is not None
    documents, malformed = yaml_documents(text, file)
    if malformed:
        return CheckedFile(file, problems=tuple(malformed))
    if len(documents) != 1 or not isinstance(documents[0].data, dict):
        problem = Problem(file, None, None, "a target file is one YAML mapping")
        return CheckedFile(file, problems=(problem,))
    kind, problems = _target_problems(documents[0], file)
    return CheckedFile(file, target_kind=kind, problems=tuple(problems))


def check_file(path: str | Path, ids: ScenarioIds) -> CheckedFile:
    """Validate the file at ``path`` as a target file or as scenarios (see the module); ``ids``
    holds the scenario ids of the files checked before it."""
    file = str(path)
    text, unreadable = _read(path)
    if unreadable is not None:
        return unreadable
    assert text is not None
    documents, malformed = yaml_documents(text, file)
    if not malformed and len(documents) == 1 and is_target_document(documents[0].data):
        kind, problems = _target_problems(documents[0], file)
        return CheckedFile(file, target_kind=kind, problems=tuple(problems))
    try:
        return CheckedFile(file, scenarios=tuple(parse_scenarios(text, file, ids)))
    except ScenarioError as exc:
        return CheckedFile(file, problems=exc.problems)
