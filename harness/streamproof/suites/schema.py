"""JSON Schemas of the files a user writes: scenario files and target files, of every kind.

``streamproof schema`` prints :func:`scenario_schema` and ``streamproof schema --target``
:func:`target_schema`, for editors (a YAML language server reads JSON Schema). Each is a
``oneOf`` over the registry's kinds, told apart by ``kind``: a document without one is a
``gateway`` document, so only the other kinds' branches require ``kind``.

Both are generated from the models the loader validates with, so the spellings the loader
accepts are in them: durations as ``"20ms"``/``"1.5s"`` or seconds, a bare string for a text
chunk, a request or a reply, ``do: rst`` and the other short forms. Each type states its own
spellings where it reads them: ``json_schema_input_type`` on its before-validator
(:data:`~streamproof.core.durations.Duration`, :data:`~streamproof.protocol.gemini.Chunk`...) or the
model's ``__get_pydantic_json_schema__`` (:class:`~streamproof.faults.do.Do`).

What JSON Schema cannot say is left to ``streamproof validate``: rules across fields (a
fault's action against its trigger, a timeline's times in order, an idle limit shorter than the
deadline), requirement ids the registry knows, and scenario ids unique across files. A document
the schema rejects, the loader rejects; not every document it accepts is valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Union, cast

from pydantic import BaseModel, Discriminator, GetJsonSchemaHandler, Tag, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from streamproof.suites import kinds, suite

__all__ = ["DEFAULT_KIND", "DIALECT", "scenario_schema", "target_schema"]

DEFAULT_KIND = "gateway"
"""The kind of a scenario or target document that names none."""
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _kind_of(value: Any) -> str | None:
    if isinstance(value, Mapping):
        kind = value.get("kind", DEFAULT_KIND)
        return kind if isinstance(kind, str) else None
    kind = getattr(value, "kind", None)
    return kind if isinstance(kind, str) else None


class _ByKind:
    """The JSON Schema of a union told apart by ``kind``: every member but the default kind's
    requires ``kind``, so exactly one branch of the ``oneOf`` holds for any document."""

    def __init__(self, title: str, description: str) -> None:
        self.title = title
        self.description = description

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        branches = schema.get("oneOf", [schema])
        for branch in branches:
            member = handler.resolve_ref_schema(branch)
            if member["properties"]["kind"].get("const") != DEFAULT_KIND:
                required = member.setdefault("required", [])
                if "kind" not in required:
                    required.insert(0, "kind")
        return {"title": self.title, "description": self.description, **schema}


def _by_kind(models: Mapping[str, type[BaseModel]], title: str, description: str) -> dict[str, Any]:
    members = tuple(Annotated[model, Tag(kind)] for kind, model in models.items())
    # The members come from the registry, so the union is built at run time.
    union: Any = cast(Any, Annotated)[
        cast(Any, Union)[members], Discriminator(_kind_of), _ByKind(title, description)
    ]
    schema: dict[str, Any] = TypeAdapter(union).json_schema()
    return {"$schema": DIALECT, **schema}


def _kinds_text() -> str:
    return " or ".join(repr(kind) for kind in kinds())


def scenario_schema() -> dict[str, Any]:
    """One YAML document of a scenario file, any kind (a file may hold several, ``---``)."""
    return _by_kind(
        {kind: suite(kind).SCENARIO_MODEL for kind in kinds()},
        "streamproof scenario",
        f"One scenario document. kind: {_kinds_text()}; a document without kind is a "
        f"{DEFAULT_KIND} scenario. `streamproof validate` also checks what a schema cannot: "
        "rules across fields, requirement ids and unique scenario ids.",
    )


def target_schema() -> dict[str, Any]:
    """A target file, any kind."""
    return _by_kind(
        {kind: suite(kind).TARGET_MODEL for kind in kinds()},
        "streamproof target file",
        f"How to start or reach the system under test. kind: {_kinds_text()}; a file "
        f"without kind is a {DEFAULT_KIND} target.",
    )
