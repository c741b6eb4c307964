"""A fault's ``do``: the action vocabulary, one model per action and its arguments.

Pure and engine-neutral: :class:`Do` names exactly one action and accepts the YAML spellings
(a bare name such as ``rst``, a one-key mapping such as ``{delay: 2s}``, and the flat
``{status: 502, body: ..., content_type: ...}``), rejecting anything else with a message that
names the actions. Which trigger each action may fire on is checked where the two meet, in
:class:`~streamproof.faults.plan.Fault`; every name is importable from
:mod:`streamproof.faults.plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema

from streamproof.core.durations import Duration, format_duration
from streamproof.faults.when import _Model, _suggest

ActionName = Literal[
    "status", "delay", "drip", "split", "corrupt", "stall", "end_clean", "fin", "rst", "refuse"
]
CorruptKind = Literal["drop_blank_line", "truncate_json", "cr_only", "bom"]

ACTIONS: Final[tuple[ActionName, ...]] = get_args(ActionName)

_ARGLESS: Final = frozenset({"end_clean", "fin", "rst", "refuse"})
_OPTIONAL_ARGS: Final = frozenset({"stall", "split"})
_EXAMPLES: Final = {
    "status": "{status: 502}",
    "delay": "{delay: 2s}",
    "drip": "{drip: 100ms}",
    "corrupt": "{corrupt: drop_blank_line}",
}


class StatusArgs(_Model):
    """Answer with this status instead of contacting upstream (a load balancer's error page)."""

    code: int = Field(ge=200, le=599, strict=True)
    body: str | None = None
    """Default: an nginx-like HTML page naming the status (empty for 204 and 304)."""
    content_type: str = "text/html"

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"code": value} if isinstance(value, int) and not isinstance(value, bool) else value

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # The shorthand: a bare code is {code: ...}.
        code = {"type": "integer", "minimum": 200, "maximum": 599, "description": "{code: ...}"}
        return {"anyOf": [code, handler(core_schema)]}

    @model_validator(mode="after")
    def _bodyless(self) -> StatusArgs:
        if self.code in (204, 304) and self.body:
            raise ValueError(f"a {self.code} response has no body; remove body")
        return self

    def page(self) -> bytes:
        if self.body is not None:
            return self.body.encode("utf-8")
        if self.code in (204, 304):
            return b""
        try:
            phrase = HTTPStatus(self.code).phrase
        except ValueError:
            phrase = ""
        title = f"{self.code} {phrase}".strip()
        return (
            f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
            f"<center><h1>{title}</h1></center>\r\n</body>\r\n</html>\r\n"
        ).encode()


class SplitArgs(_Model):
    """Write each upstream chunk (each event, on an event stream) in ``pieces`` writes."""

    pieces: int = Field(3, ge=2, strict=True)
    gap: Duration = 0.005
    """Between pieces. Below a few ms TCP may coalesce the pieces again
    (docs/explanation/wire-facts/proxies.md §5)."""


class StallArgs(_Model):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    for_: Duration | None = Field(None, alias="for")
    """How long to swallow; forever when absent. Forwarding resumes at the next event
    boundary; what was swallowed meanwhile is lost."""


class Do(_Model):
    """Exactly one action. YAML: a bare name (``rst``) or a one-key mapping (``{delay: 2s}``).

    A status answer may also be written flat: ``{status: 502, body: ..., content_type: ...}``.
    """

    # ``None`` means "not this action"; a file may write null only where the action takes no
    # argument or an optional one (``{rst: null}``, ``{stall: null}``), as the schema says.
    status: StatusArgs | SkipJsonSchema[None] = None
    delay: Duration | SkipJsonSchema[None] = None
    """Hold back the first byte downstream this long."""
    drip: Duration | SkipJsonSchema[None] = None
    """Wait this long before forwarding each event (each chunk, if not an event stream)."""
    split: SplitArgs | None = None
    corrupt: CorruptKind | SkipJsonSchema[None] = None
    stall: StallArgs | None = None
    end_clean: Literal[True] | None = None
    fin: Literal[True] | None = None
    rst: Literal[True] | None = None
    refuse: Literal[True] | None = None

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The spellings :meth:`_shorthand` reads: a bare name, a one-key mapping (the model's
        own schema, held to one key), or the flat status answer."""
        one_key = handler(core_schema)
        mapping = handler.resolve_ref_schema(one_key)
        mapping.update(minProperties=1, maxProperties=1)
        flat_status = {
            "type": "object",
            "description": "a status answer written flat: {status: 502, body: ..., "
            "content_type: ...}",
            "properties": {
                "status": mapping["properties"]["status"],
                "body": {"type": "string"},
                "content_type": {"type": "string"},
            },
            "required": ["status"],
            "additionalProperties": False,
        }
        bare = {
            "enum": sorted(_ARGLESS | _OPTIONAL_ARGS),
            "description": "an action that needs no argument",
        }
        return {"anyOf": [bare, one_key, flat_status]}

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            name = value.strip()
            if name in _ARGLESS:
                return {name: True}
            if name in _OPTIONAL_ARGS:
                return {name: {}}
            if name in _EXAMPLES:
                raise ValueError(f"{name} needs a value, e.g. do: {_EXAMPLES[name]}")
            hint = _suggest(name, ACTIONS)
            raise ValueError(f"unknown action {name!r}{hint}; actions are {', '.join(ACTIONS)}")
        if isinstance(value, Mapping):
            value = _fold_status(value)
            unknown = [k for k in value if k not in ACTIONS]
            if unknown:
                key = str(unknown[0])
                raise ValueError(
                    f"unknown action {key!r}{_suggest(key, ACTIONS)}; "
                    f"actions are {', '.join(ACTIONS)}"
                )
            if not value:
                raise ValueError(f"do names no action; actions are {', '.join(ACTIONS)}")
            if len(value) != 1:
                names = ", ".join(str(k) for k in value)
                raise ValueError(
                    f"do must name exactly one action (got {names}); write one fault per action"
                )
            ((name, arg),) = value.items()
            if arg is None and name in _ARGLESS:
                return {name: True}
            if arg is None and name in _OPTIONAL_ARGS:
                return {name: {}}
            return dict(value)
        if isinstance(value, BaseModel):
            return value
        raise ValueError(
            "do must be an action name (e.g. rst) or a one-key mapping (e.g. {delay: 2s})"
        )

    @model_validator(mode="after")
    def _exactly_one(self) -> Do:
        given = [a for a in ACTIONS if getattr(self, a) is not None]
        if not given:
            raise ValueError(f"do names no action; actions are {', '.join(ACTIONS)}")
        if len(given) != 1:
            raise ValueError(f"do must name exactly one action (got {', '.join(given)})")
        return self

    @property
    def name(self) -> ActionName:
        for action in ACTIONS:
            if getattr(self, action) is not None:
                return action
        raise AssertionError("validated Do has an action")  # pragma: no cover

    def describe(self) -> str:
        """The action as a user would write it: ``rst``, ``stall: {for: 2s}``, ``drip: 100ms``."""
        name = self.name
        if name in _ARGLESS:
            return name
        if self.status is not None:
            return f"status: {self.status.code}"
        if self.delay is not None:
            return f"delay: {format_duration(self.delay)}"
        if self.drip is not None:
            return f"drip: {format_duration(self.drip)}"
        if self.split is not None:
            return f"split: {{pieces: {self.split.pieces}, gap: {format_duration(self.split.gap)}}}"
        if self.corrupt is not None:
            return f"corrupt: {self.corrupt}"
        if self.stall is not None and self.stall.for_ is not None:
            return f"stall: {{for: {format_duration(self.stall.for_)}}}"
        return name


def _fold_status(value: Mapping[Any, Any]) -> Mapping[Any, Any]:
    """``{status: 502, body: ..., content_type: ...}``: the flat spelling of a status answer."""
    extra = {k: value[k] for k in ("body", "content_type") if k in value}
    if "status" not in value or not extra:
        return value
    status = value["status"]
    if isinstance(status, int) and not isinstance(status, bool):
        status = {"code": status}
    if not isinstance(status, Mapping):
        return value
    rest = {k: v for k, v in value.items() if k not in extra and k != "status"}
    return {"status": {**status, **extra}, **rest}
