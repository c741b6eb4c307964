"""A fault's ``when``: which requests it matches, and the one trigger it fires on.

Pure and engine-neutral: the :class:`When` model (the match keys and at most one trigger,
validated at load), the :class:`Trigger` an engine acts on once the default is resolved, and
what a request offers to be matched on (:class:`RequestInfo`, :func:`rpc_method`). The
vocabulary is described in :mod:`streamproof.faults.plan`, which assembles a fault from its
``when`` and its ``do`` (:mod:`streamproof.faults.do`) and from which every name is importable.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from streamproof.core.durations import Duration, format_duration
from streamproof.protocol.a2a import op_of, rest_method

TriggerKind = Literal[
    "on_request", "on_response_headers", "after_event", "after_bytes", "after", "idle"
]

TRIGGERS: Final[tuple[TriggerKind, ...]] = get_args(TriggerKind)
_MATCH_KEYS: Final = ("method", "path", "rpc", "occurrence")

_TOKEN = re.compile(r"^[A-Za-z]+$")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class When(_Model):
    """Which requests a fault applies to, and when on those requests it fires."""

    method: str | None = None
    """HTTP method, case-insensitive (stored upper-case)."""
    path: str | None = None
    """A glob on the request path, query excluded: ``/chat/*``."""
    rpc: str | None = Field(None, min_length=1)
    """The A2A method a request asks for: ``message/stream``, ``tasks/resubscribe``; either
    wire's spelling matches both (``SendStreamingMessage`` is ``message/stream``), on the
    JSON-RPC binding (the body's ``method``) and on REST (``POST /message:stream``)."""
    occurrence: StrictInt | tuple[StrictInt, ...] | None = None
    """1-based: which of this fault's matching requests it applies to (default: all)."""

    on_request: Literal[True] | None = None
    on_response_headers: Literal[True] | None = None
    after_event: int | None = Field(None, ge=0, strict=True)
    after_bytes: int | None = Field(None, ge=0, strict=True)
    after: Duration | None = None
    idle: Duration | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            for key in value:
                if key not in _MATCH_KEYS and key not in TRIGGERS:
                    hint = _suggest(str(key), (*_MATCH_KEYS, *TRIGGERS))
                    raise ValueError(
                        f"unknown key {key!r} in when{hint}; match keys are "
                        f"{', '.join(_MATCH_KEYS)}, triggers are {', '.join(TRIGGERS)}"
                    )
        return value

    @field_validator("method")
    @classmethod
    def _method(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not _TOKEN.match(v):
            raise ValueError(f"method must be an HTTP method like GET or POST, not {v!r}")
        return v.upper()

    @field_validator("path")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("/", "*")):
            raise ValueError(f"path must be a glob starting with '/' (or '*'), not {v!r}")
        return v

    @field_validator("occurrence")
    @classmethod
    def _occurrence(cls, v: int | tuple[int, ...] | None) -> int | tuple[int, ...] | None:
        if v is None:
            return v
        values = (v,) if isinstance(v, int) else v
        if not values:
            raise ValueError("occurrence must name at least one request (1-based)")
        for n in values:
            if isinstance(n, bool) or n < 1:
                raise ValueError(f"occurrence counts from 1 (the first matching request), not {n}")
        return v

    @model_validator(mode="after")
    def _one_trigger(self) -> When:
        given = self.triggers_given()
        if len(given) > 1:
            raise ValueError(
                f"when has {len(given)} triggers ({', '.join(given)}); a fault fires on at most "
                "one trigger, so write one fault per trigger"
            )
        return self

    def triggers_given(self) -> list[TriggerKind]:
        return [t for t in TRIGGERS if getattr(self, t) is not None]

    @property
    def occurrences(self) -> frozenset[int] | None:
        if self.occurrence is None:
            return None
        if isinstance(self.occurrence, int):
            return frozenset({self.occurrence})
        return frozenset(self.occurrence)

    def matches(self, request: RequestInfo) -> bool:
        """Whether ``request`` matches method, path and rpc (occurrence is counted elsewhere)."""
        if self.method is not None and request.method.upper() != self.method:
            return False
        if self.path is not None and not fnmatch.fnmatchcase(request.path, self.path):
            return False
        return self.rpc is None or same_rpc(request.rpc, self.rpc)


@dataclass(frozen=True, slots=True)
class Trigger:
    """A fault's trigger with its default resolved: ``kind`` and its count or seconds."""

    kind: TriggerKind
    value: float | None = None
    """The count for ``after_event``/``after_bytes``, seconds (unscaled) for ``after``/``idle``."""

    def __str__(self) -> str:
        if self.kind in ("on_request", "on_response_headers"):
            return self.kind
        if self.kind in ("after", "idle"):
            assert self.value is not None
            return f"{self.kind}: {format_duration(self.value)}"
        return f"{self.kind}: {self.value:g}"

    @property
    def at_response_start(self) -> bool:
        """Fires as the body starts: on_response_headers, ``after_event: 0``, ``after_bytes: 0``."""
        return self.kind == "on_response_headers" or (
            self.kind in ("after_event", "after_bytes") and self.value == 0
        )

    @property
    def timed(self) -> bool:
        """Fires on a clock (``after``, ``idle``), so an engine needs a timer, not a byte."""
        return self.kind in ("after", "idle")


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a fault can match on."""

    method: str
    path: str
    """Without the query string."""
    rpc: str | None = None


def same_rpc(seen: str | None, named: str) -> bool:
    """Whether a request's method ``seen`` is the method a fault ``named``: the same A2A
    operation in either wire's spelling (``message/stream`` and ``SendStreamingMessage``),
    else the same name."""
    if seen is None:
        return False
    op_seen, op_named = op_of(seen), op_of(named)
    if op_seen is not None and op_named is not None:
        return op_seen == op_named
    return seen == named


def request_rpc(method: str, path: str, body: bytes) -> str | None:
    """The A2A method a request asks for: the JSON-RPC ``method`` of its body, else the 1.0
    method its REST route stands for (``POST /message:stream``: ``SendStreamingMessage``), else
    ``None``. The fake A2A server records the same name, so the link's records and its pair."""
    named = rpc_method(body) if body else None
    return named if named is not None else rest_method(method, path)


def rpc_method(body: bytes) -> str | None:
    """The JSON-RPC ``method`` of a request body, or ``None`` (not JSON, a batch, no method)."""
    stripped = body.lstrip()
    if not stripped.startswith(b"{"):
        return None
    try:
        doc = json.loads(stripped)
    except ValueError:
        return None
    method = doc.get("method") if isinstance(doc, dict) else None
    return method if isinstance(method, str) else None
