"""The fault plan: what a scenario asks a link to do, validated at load, engine-neutral.

A link's plan is a list of :class:`Fault`. Each fault is a request match, at most one trigger
and exactly one action::

    - when: {method: POST, path: "/chat/*", occurrence: 1, after_event: 3}
      do: rst
    - when: {rpc: message/stream, after: 40s}
      do: stall
    - do: {status: 502, body: "<html>bad gateway</html>", content_type: text/html}
    - when: {idle: 20s}
      do: end_clean
    - do: {split: {pieces: 3, gap: 5ms}}

The vocabulary follows the faults that matter to SSE clients in the field, as measured in
``research/faults.md``: the quiet stall and the proxy idle cut are the commonest reports
(§3, "stalled streams that never error"), and each end of a stream has its own client-visible
signature (§2.6: a clean early end raises nothing, a FIN without the chunked terminator is a
payload error, a reset is a connection error). The plan names the *effect*; an engine decides
how to produce it. The inline aiohttp proxy (:mod:`harness.faults.proxy`) implements all of
it; a toxiproxy engine could implement the TCP subset (§5: ``stall`` as ``timeout=0``,
``rst`` as ``reset_peer``, ``after_bytes`` + ``fin`` as ``limit_data``) and reject the rest.

Everything here is pure: the models, the request matching (:class:`PlanState`, which keeps the
per-fault occurrence counters) and the small trigger helpers the engines share. Combinations
that cannot happen on a wire are rejected at load with a message naming the fields, e.g. a
``status`` after the response began (the status line has already gone out), or a ``refuse``
anywhere but ``on_request``.

Matching: ``method`` (case-insensitive), ``path`` (an :func:`fnmatch.fnmatchcase` glob on the
path without the query; ``*`` also matches ``/``), ``rpc`` (the JSON-RPC ``method`` of a JSON
request body, e.g. ``message/stream``; a batch has none) and ``occurrence`` (1-based: which of
the requests matching this fault's method/path/rpc it applies to; default every one). Each
fault counts its own matches. Several faults may apply to one request; they act in plan order.

Triggers (at most one; the default is ``on_request`` for status/refuse/delay, else
``on_response_headers``):

* ``on_request: true``: before upstream is contacted;
* ``on_response_headers: true``: once the status line and headers have gone downstream (for
  ``delay``: once upstream's headers arrived, before they go downstream);
* ``after_event: N``: just after the Nth event forwarded (comments do not count; 0: at the
  start of the body); never fires on a body that is not an event stream;
* ``after_bytes: N``: once N upstream body bytes have been forwarded;
* ``after: DURATION``: that long after the response began (its headers went downstream);
* ``idle: DURATION``: nothing forwarded downstream for that long (a load balancer's idle
  timeout). Timers fire even while upstream sends nothing.

Actions (``do``): ``status`` (``{code, body, content_type}`` or ``status: 502``),
``delay: D`` (first byte late), ``drip: D`` (wait before each event), ``split: {pieces, gap}``,
``corrupt: drop_blank_line | truncate_json | cr_only | bom``, ``stall`` / ``stall: {for: D}``,
``end_clean``, ``fin``, ``rst``, ``refuse``. Allowed triggers per action: status and refuse
``on_request`` only; delay ``on_request`` or ``on_response_headers``; drip and split neither
``on_request`` nor ``idle``; corrupt and end_clean anything but ``on_request``; stall, fin and
rst anything. Durations are scaled by the link's time scale.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.durations import Duration, format_duration

__all__ = [
    "ACTIONS",
    "TRIGGERS",
    "ActionName",
    "CorruptKind",
    "Do",
    "Fault",
    "Links",
    "PlanError",
    "PlanState",
    "RequestInfo",
    "SplitArgs",
    "StallArgs",
    "StatusArgs",
    "Trigger",
    "TriggerKind",
    "When",
    "parse_plan",
    "rpc_method",
]

TriggerKind = Literal[
    "on_request", "on_response_headers", "after_event", "after_bytes", "after", "idle"
]
ActionName = Literal[
    "status", "delay", "drip", "split", "corrupt", "stall", "end_clean", "fin", "rst", "refuse"
]
CorruptKind = Literal["drop_blank_line", "truncate_json", "cr_only", "bom"]

TRIGGERS: Final[tuple[TriggerKind, ...]] = get_args(TriggerKind)
ACTIONS: Final[tuple[ActionName, ...]] = get_args(ActionName)
_MATCH_KEYS: Final = ("method", "path", "rpc", "occurrence")

_ARGLESS: Final = frozenset({"end_clean", "fin", "rst", "refuse"})
_OPTIONAL_ARGS: Final = frozenset({"stall", "split"})
_EXAMPLES: Final = {
    "status": "{status: 502}",
    "delay": "{delay: 2s}",
    "drip": "{drip: 100ms}",
    "corrupt": "{corrupt: drop_blank_line}",
}
_TOKEN = re.compile(r"^[A-Za-z]+$")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- when: match + trigger ---------------------------------------------------------------------


class When(_Model):
    """Which requests a fault applies to, and when on those requests it fires."""

    method: str | None = None
    """HTTP method, case-insensitive (stored upper-case)."""
    path: str | None = None
    """A glob on the request path, query excluded: ``/chat/*``."""
    rpc: str | None = Field(None, min_length=1)
    """The JSON-RPC ``method`` of the request body: ``message/stream``, ``tasks/resubscribe``."""
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
        return self.rpc is None or request.rpc == self.rpc


# --- do: the action ----------------------------------------------------------------------------


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
    """Between pieces. Below a few ms TCP may coalesce the pieces again (faults.md §5)."""


class StallArgs(_Model):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    for_: Duration | None = Field(None, alias="for")
    """How long to swallow; forever when absent. Forwarding resumes at the next event
    boundary; what was swallowed meanwhile is lost."""


class Do(_Model):
    """Exactly one action. YAML: a bare name (``rst``) or a one-key mapping (``{delay: 2s}``).

    A status answer may also be written flat: ``{status: 502, body: ..., content_type: ...}``.
    """

    status: StatusArgs | None = None
    delay: Duration | None = None
    """Hold back the first byte downstream this long."""
    drip: Duration | None = None
    """Wait this long before forwarding each event (each chunk, if not an event stream)."""
    split: SplitArgs | None = None
    corrupt: CorruptKind | None = None
    stall: StallArgs | None = None
    end_clean: Literal[True] | None = None
    fin: Literal[True] | None = None
    rst: Literal[True] | None = None
    refuse: Literal[True] | None = None

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


# --- the fault ---------------------------------------------------------------------------------


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


_DEFAULT_ON_REQUEST: Final = frozenset({"status", "refuse", "delay"})
_MID_STREAM: Final = frozenset({"after_event", "after_bytes", "after", "idle"})
_ALL: Final = frozenset(TRIGGERS)
_ALLOWED: Final[dict[str, frozenset[str]]] = {
    "status": frozenset({"on_request"}),
    "refuse": frozenset({"on_request"}),
    "delay": frozenset({"on_request", "on_response_headers"}),
    "drip": _ALL - {"on_request", "idle"},
    "split": _ALL - {"on_request", "idle"},
    "corrupt": _ALL - {"on_request"},
    "end_clean": _ALL - {"on_request"},
    "stall": _ALL,
    "fin": _ALL,
    "rst": _ALL,
}


def _why_not(action: str, trigger: str) -> str:
    if action == "status":
        return (
            "a status replaces the whole response, so it fires on_request, before upstream is "
            "contacted; once the response has begun its status line has already gone out"
        )
    if action == "refuse":
        return "refuse means no response at all, so it can only fire on_request"
    if action == "delay":
        return (
            "delay holds back the first byte, so it fires on_request or on_response_headers; "
            "to pause mid-stream use `stall: {for: ...}`"
        )
    if trigger == "on_request":
        return (
            f"{action} acts on the response body, which does not exist yet on_request; "
            "leave the trigger out to act from the first byte"
        )
    return (  # drip/split with idle
        f"{action} shapes traffic while it flows, and idle fires only when nothing flows; "
        "use after or after_event"
    )


class Fault(_Model):
    """One fault of a link's plan: match + at most one trigger (``when``) and an action."""

    when: When = When()
    do: Do

    @model_validator(mode="after")
    def _possible(self) -> Fault:
        action = self.do.name
        trigger = self.trigger.kind
        if trigger not in _ALLOWED[action]:
            raise ValueError(
                f"do: {action} cannot fire on when.{trigger}: {_why_not(action, trigger)}"
            )
        return self

    @property
    def action(self) -> ActionName:
        return self.do.name

    @property
    def trigger(self) -> Trigger:
        """The trigger, or the default: ``on_request`` for status/refuse/delay, else
        ``on_response_headers``."""
        given = self.when.triggers_given()
        if not given:
            default: TriggerKind = (
                "on_request" if self.do.name in _DEFAULT_ON_REQUEST else "on_response_headers"
            )
            return Trigger(default)
        kind = given[0]
        raw = getattr(self.when, kind)
        return Trigger(kind, None if raw is True else float(raw))

    def describe(self) -> str:
        return f"{self.trigger} -> {self.do.describe()}"


class Links(_Model):
    """A scenario's ``links:`` section: one plan per proxied hop."""

    browser: tuple[Fault, ...] = ()
    model: tuple[Fault, ...] = ()
    a2a: tuple[Fault, ...] = ()


# --- loading outside a scenario ----------------------------------------------------------------


class PlanError(ValueError):
    """An invalid plan; ``field`` is the path to the problem, e.g. ``[0].when.after_event``."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


_PLAN: Final = TypeAdapter(tuple[Fault, ...])


_TYPE_TAGS: Final = frozenset({"int", "float", "str", "bool", "tuple", "list", "dict", "none"})


def _loc_text(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[a-z_][a-z0-9_]*", part) and part not in _TYPE_TAGS:
            out += f".{part}" if out else part  # pydantic's union member tags are skipped
    return out


def parse_plan(data: Any) -> tuple[Fault, ...]:
    """A plan from YAML-shaped data (a list of faults); raises :class:`PlanError`."""
    if data is None:
        return ()
    if not isinstance(data, list | tuple):
        raise PlanError("", "a link's plan must be a list of faults")
    try:
        return _PLAN.validate_python(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        err = max(errors, key=lambda e: len(e["loc"]))
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        raise PlanError(_loc_text(err["loc"]), msg) from None


# --- pure request logic ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a fault can match on."""

    method: str
    path: str
    """Without the query string."""
    rpc: str | None = None


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


class PlanState:
    """A loaded plan with its per-fault occurrence counters (reset by making a new one)."""

    __slots__ = ("_matched", "faults")

    def __init__(self, faults: Sequence[Fault]) -> None:
        self.faults: tuple[Fault, ...] = tuple(faults)
        self._matched = [0] * len(self.faults)

    def select(self, request: RequestInfo) -> list[tuple[int, Fault]]:
        """The faults (with their plan index) that apply to ``request``, in plan order.

        Counts the request as one more occurrence for every fault whose match it meets.
        """
        chosen: list[tuple[int, Fault]] = []
        for i, fault in enumerate(self.faults):
            if not fault.when.matches(request):
                continue
            self._matched[i] += 1
            wanted = fault.when.occurrences
            if wanted is None or self._matched[i] in wanted:
                chosen.append((i, fault))
        return chosen

    def matched(self, index: int) -> int:
        """How many requests have matched fault ``index`` so far."""
        return self._matched[index]
