"""The search space of ``streamproof explore``: hypothesis strategies over a scenario's links.

Pure: no I/O, no run. A :class:`Space` says which links a scenario has, how long it lasts
(its horizon, in scenario seconds) and, for the A2A link, which JSON-RPC methods a fault may
match. :func:`plans` draws a plan for every link from it: 0 to 3 faults in all, each a valid
:class:`~harness.faults.plan.Fault` (it is built through the model, so the plan vocabulary's
rules hold: an action only fires on a trigger it can fire on).

Every choice is drawn so that hypothesis's shrinking goes where a reader wants it to: a
shorter list (fewer faults), the earlier entry of every ``sampled_from`` and the smaller
integer. So the actions are ordered simplest first (a reset, a FIN, a clean early end, a
stall, then a status answer, a refusal, a late first byte, a bounded stall, a corruption, a
drip, a split), the triggers earliest first (at the response's start, after N events, after a
time, on the request, on an idle gap), counts and times shrink to 0, a fault matches the
first request of its kind (``occurrence: 1``) before every request, and on the A2A link it
matches ``message/stream`` first.

On a gateway's ``browser`` link (the harness's own connection to the gateway) the actions
drawn are those a browser does to a stream (:data:`BROWSER_ACTIONS`): it goes away (a reset, a
FIN, a clean early end: a closed tab, judged as ``request.disconnect_after_frames``), it is
slow (a stall: back-pressure the gateway must survive), or its bytes arrive dripped or split.
Never on the request (the gateway would never see it) and never a status answer, a refusal
or a corruption, which would put words in the gateway's mouth.

Left out on purpose: the scenario's own model-chunk boundaries and delays (the fake's script
is kept as written; the ``split``, ``drip`` and ``delay`` actions shape the wire instead), and
``after_bytes`` (``after_event`` says the same thing in a unit a scenario author reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import strategies as st

from harness.durations import format_duration
from harness.faults.plan import Fault

__all__ = [
    "ACTION_ORDER",
    "BROWSER_ACTIONS",
    "MAX_FAULTS",
    "TRIGGER_ORDER",
    "Space",
    "a2a_matches",
    "fault_data",
    "plan_data",
    "plans",
]

MAX_FAULTS: Final = 3
"""The most faults a drawn plan has, over all links: incidents have one cause, rarely three."""

MAX_AFTER_EVENT: Final = 30

ACTION_ORDER: Final[tuple[str, ...]] = (
    "rst",
    "fin",
    "end_clean",
    "stall",
    "status",
    "refuse",
    "delay",
    "stall_for",
    "corrupt",
    "drip",
    "split",
)
"""Simplest first: hypothesis shrinks towards the start of this tuple."""

TRIGGER_ORDER: Final[tuple[str, ...]] = (
    "on_response_headers",
    "after_event",
    "after",
    "on_request",
    "idle",
)
"""Earliest first. ``on_request`` comes after the body triggers because for most actions it
means "no response at all", a blunter fault than a cut at the response's start."""

_TRIGGERS_FOR: Final[Mapping[str, tuple[str, ...]]] = {
    "rst": TRIGGER_ORDER,
    "fin": TRIGGER_ORDER,
    "stall": TRIGGER_ORDER,
    "end_clean": ("on_response_headers", "after_event", "after", "idle"),
    "corrupt": ("after_event", "after", "idle"),
    "status": ("on_request",),
    "refuse": ("on_request",),
    "delay": ("on_request", "on_response_headers"),
    "stall_for": TRIGGER_ORDER,
    "drip": ("on_response_headers", "after_event", "after"),
    "split": ("on_response_headers", "after_event", "after"),
}

_CUTS: Final = 4

BROWSER_ACTIONS: Final = ("rst", "fin", "end_clean", "stall", "stall_for", "drip", "split")
"""The actions a gateway's browser link may get: cut (the browser leaves), held (a slow
browser), dripped or split; the gateway checks judge each as what the browser did."""

_BROWSER_LINK: Final = "browser"
_STATUS_CODES: Final = (502, 503, 504, 500, 404, 401)
_CORRUPTIONS: Final = ("truncate_json", "drop_blank_line", "bom", "cr_only")
_OCCURRENCES: Final[tuple[int | None, ...]] = (1, None, 2)


@dataclass(frozen=True)
class Space:
    """What a scenario offers to fault."""

    links: tuple[str, ...]
    """The links faults may go on, in the order a search prefers them."""
    horizon: float
    """The scenario's length in scenario seconds: time triggers fall within it."""
    matches: tuple[Mapping[str, str], ...] = ({},)
    """The request matches a fault may have (``{}``: every request), preferred first."""
    active: float | None = None
    """Until when (scenario seconds) the scripted traffic flows, if known: time triggers fall
    within it (a fault after the last event changes nothing). Default: the horizon."""
    events: int = MAX_AFTER_EVENT
    """About how many events a response carries: ``after_event`` counts up to it."""
    only: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per link, the only actions (names of :data:`ACTION_ORDER`) it may get, if restricted."""

    @property
    def trigger_horizon(self) -> float:
        return min(self.horizon, self.active) if self.active is not None else self.horizon

    def __post_init__(self) -> None:
        if not self.links:
            raise ValueError("a search space needs at least one link")
        if not self.horizon > 0:
            raise ValueError(f"the horizon must be positive, not {self.horizon!r}")
        if self.events < 0:
            raise ValueError(f"events cannot be negative, not {self.events!r}")
        for link, actions in self.only.items():
            unknown = [a for a in actions if a not in ACTION_ORDER]
            if link not in self.links or not actions or unknown:
                raise ValueError(f"only[{link!r}] must name some of {', '.join(ACTION_ORDER)}")


def a2a_matches(wire: str) -> tuple[dict[str, str], ...]:
    """What a fault on the A2A link may match, preferred first: the streaming call, any
    JSON-RPC call (``method: POST``: the agent card's GET is left alone), the resubscribe, the
    snapshot; spelt as the scenario's wire spells them (``both``: the 0.3 names)."""
    if wire == "1.0":
        stream, subscribe, get = "SendStreamingMessage", "SubscribeToTask", "GetTask"
    else:
        stream, subscribe, get = "message/stream", "tasks/resubscribe", "tasks/get"
    return ({"rpc": stream}, {"method": "POST"}, {"rpc": subscribe}, {"rpc": get})


def _seconds(horizon: float, *, at_least: float = 0.0) -> st.SearchStrategy[float]:
    """Times in half seconds from ``at_least`` to the horizon; shrinks towards ``at_least``."""
    lo = int(at_least * 2)
    hi = max(lo, int(horizon * 2))
    return st.integers(lo, hi).map(lambda n: n / 2)


def _duration(seconds: float) -> str:
    return format_duration(seconds)


@st.composite
def fault_data(draw: st.DrawFn, space: Space, link: str) -> dict[str, Any]:
    """One fault as YAML-shaped data, valid for ``link``."""
    # Half the faults are one of the four ways a stream is cut (what incidents mostly are),
    # half one of the rest; either way shrinking goes to a reset.
    allowed = space.only.get(link)
    if allowed is not None:
        action = draw(st.sampled_from([a for a in ACTION_ORDER if a in allowed]))
    else:
        action = draw(
            st.one_of(st.sampled_from(ACTION_ORDER[:_CUTS]), st.sampled_from(ACTION_ORDER[_CUTS:]))
        )
    triggers = _TRIGGERS_FOR[action]
    if link == _BROWSER_LINK:
        # A fault on the browser's request keeps it from the gateway: nothing to judge.
        triggers = tuple(t for t in triggers if t != "on_request")
    trigger = draw(st.sampled_from(triggers))
    when: dict[str, Any] = {}
    when.update(draw(st.sampled_from(space.matches)))
    occurrence = draw(st.sampled_from(_OCCURRENCES))
    if occurrence is not None:
        when["occurrence"] = occurrence
    if trigger in ("on_request", "on_response_headers"):
        when[trigger] = True
    elif trigger == "after_event":
        when["after_event"] = draw(st.integers(0, space.events))
    elif trigger == "after":
        when["after"] = _duration(draw(_seconds(space.trigger_horizon)))
    else:  # idle
        when["idle"] = _duration(draw(_seconds(space.trigger_horizon, at_least=0.5)))
    do: Any
    if action in ("rst", "fin", "end_clean", "stall", "refuse"):
        do = action
    elif action == "status":
        do = {"status": draw(st.sampled_from(_STATUS_CODES))}
    elif action == "delay":
        do = {"delay": _duration(draw(_seconds(space.horizon, at_least=0.5)))}
    elif action == "stall_for":
        do = {"stall": {"for": _duration(draw(_seconds(space.horizon, at_least=0.5)))}}
    elif action == "corrupt":
        do = {"corrupt": draw(st.sampled_from(_CORRUPTIONS))}
    elif action == "drip":
        do = {"drip": _duration(draw(st.integers(1, 10).map(lambda n: n / 10)))}
    else:  # split
        do = {"split": {"pieces": draw(st.integers(2, 8))}}
    return {"when": when, "do": do}


@st.composite
def _placed_fault(draw: st.DrawFn, space: Space) -> tuple[str, dict[str, Any]]:
    link = draw(st.sampled_from(space.links))
    return link, draw(fault_data(space, link))


@st.composite
def plan_data(draw: st.DrawFn, space: Space) -> dict[str, list[dict[str, Any]]]:
    """A plan for every link of ``space`` (YAML-shaped: link -> list of faults), 0 to
    :data:`MAX_FAULTS` faults in all."""
    placed = draw(st.lists(_placed_fault(space), max_size=MAX_FAULTS))
    out: dict[str, list[dict[str, Any]]] = {link: [] for link in space.links}
    for link, fault in placed:
        out[link].append(fault)
    return out


def plans(space: Space) -> st.SearchStrategy[dict[str, list[dict[str, Any]]]]:
    """:func:`plan_data`, each fault checked against the plan model on the way (a drawn fault
    the model refuses is a bug of this module, not a plan to try)."""

    def checked(plan: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        for faults in plan.values():
            for fault in faults:
                Fault.model_validate(fault)
        return plan

    return plan_data(space).map(checked)


def fault_count(plan: Mapping[str, Sequence[Any]]) -> int:
    return sum(len(faults) for faults in plan.values())


def describe_plan(plan: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """A one-line account of a plan: ``a2a: after: 4s -> stall`` (``no fault`` when empty)."""
    parts: list[str] = []
    for link, faults in plan.items():
        for fault in faults:
            model = Fault.model_validate(fault)
            match = [
                f"{key} {value}"
                for key in ("method", "rpc", "occurrence")
                if (value := getattr(model.when, key)) is not None
            ]
            where = f" ({', '.join(match)})" if match else ""
            parts.append(f"{link}{where}: {model.describe()}")
    return "; ".join(parts) or "no fault"
