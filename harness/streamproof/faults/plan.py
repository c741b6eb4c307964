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
``docs/explanation/wire-facts/proxies.md``: the quiet stall and the proxy idle cut are the
commonest reports
(§3, "stalled streams that never error"), and each end of a stream has its own client-visible
signature (§2.6: a clean early end raises nothing, a FIN without the chunked terminator is a
payload error, a reset is a connection error). The plan names the *effect*; an engine decides
how to produce it. The inline aiohttp proxy (:mod:`streamproof.faults.engines.inline`) implements
all of it; the toxiproxy and mitmproxy engines implement what their proxies can and declare the
rest approximate or rejected (:mod:`streamproof.faults.engines.catalog`).

Everything here is pure: the models, the request matching (:class:`PlanState`, which keeps the
per-fault occurrence counters) and the small trigger helpers the engines share. Combinations
that cannot happen on a wire are rejected at load with a message naming the fields, e.g. a
``status`` after the response began (the status line has already gone out), or a ``refuse``
anywhere but ``on_request``.

The ``when`` models live in :mod:`streamproof.faults.when` and the ``do`` models in
:mod:`streamproof.faults.do`; this module joins them into a :class:`Fault` (checking that the action
can fire on the trigger) and every public name is importable from here.

Each fault must fire during the scenario unless it says ``optional: true``: a scenario whose
required fault never fired (a target that bypasses the link, a trigger that never came) fails
with a verdict of its own kind, ``fault.fired`` (:mod:`streamproof.faults.fired`).

Matching: ``method`` (case-insensitive), ``path`` (an :func:`fnmatch.fnmatchcase` glob on the
path without the query; ``*`` also matches ``/``), ``rpc`` (the A2A method: the JSON-RPC
``method`` of a JSON request body, e.g. ``message/stream``, or the 1.0 method of an A2A REST
route, ``POST /message:stream``; either wire's spelling matches both; a batch has none) and
``occurrence`` (1-based: which of the requests matching this fault's method/path/rpc it applies
to; default every one). Each fault counts its own matches. Several faults may apply to one
request; they act in plan order.

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

import re
from collections.abc import Sequence
from typing import Any, Final, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from streamproof.faults.do import (
    ACTIONS,
    ActionName,
    CorruptKind,
    Do,
    SplitArgs,
    StallArgs,
    StatusArgs,
)
from streamproof.faults.engine_names import EngineName
from streamproof.faults.when import (
    TRIGGERS,
    RequestInfo,
    Trigger,
    TriggerKind,
    When,
    _Model,
    request_rpc,
    rpc_method,
    same_rpc,
)

__all__ = [
    "ACTIONS",
    "TRIGGERS",
    "ActionName",
    "CorruptKind",
    "Do",
    "Fault",
    "LinkName",
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
    "request_rpc",
    "rpc_method",
    "same_rpc",
]


# --- the fault ---------------------------------------------------------------------------------


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
    optional: bool = False
    """A fault the scenario does not require to fire (a timer that a quick target may outrun,
    say). Every other fault must fire: a run whose required fault never fired exercised
    nothing the scenario is built for, and says so (``fault.fired``)."""

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


LinkName = Literal["browser", "model", "a2a"]


class Links(_Model):
    """A scenario's ``links:`` section: one plan per proxied hop, and optionally the engine
    that must carry out a hop's plan (``engine: {model: mitmproxy}``; default: the run's
    ``--engine``, else ``inline``). The scenario models reject, at load, a named engine that
    cannot do its plan (:func:`streamproof.faults.engines.catalog.engine_problems`)."""

    browser: tuple[Fault, ...] = ()
    model: tuple[Fault, ...] = ()
    a2a: tuple[Fault, ...] = ()
    engine: dict[LinkName, EngineName] = Field(default_factory=dict)

    def plans(self) -> dict[str, tuple[Fault, ...]]:
        return {"browser": self.browser, "model": self.model, "a2a": self.a2a}


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


# --- matching requests against a loaded plan ---------------------------------------------------


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
