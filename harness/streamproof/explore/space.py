"""The search space of ``streamproof explore``: hypothesis strategies over a scenario's links.

Pure: no I/O, no run. A :class:`Space` says which links a scenario has, how long it lasts
(its horizon, in scenario seconds) and, for the A2A link, which JSON-RPC methods a fault may
match. :func:`plans` draws a plan for every link from it: 0 to 3 faults in all, each a valid
:class:`~streamproof.faults.plan.Fault` (it is built through the model, so the plan vocabulary's
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

Besides link faults a gateway scenario offers two kinds of plan element that are not link
faults, each one element that shrinks on its own: the browser leaving after frame N
(:data:`LEAVE`, the scenario's ``request.disconnect_after_frames``; offered when the scenario
has no drop of its own) and a change to one of the fake model's scripted turns
(:data:`TURNS`): an error event after chunk K (the fake's ``{"error": ...}`` chunk, the rest
of the turn dropped), a finish reason that makes the turn an error event (``MAX_TOKENS``,
``SAFETY``), a text chunk split in two, or a delay before chunk K (up to :attr:`Space.quiet`:
past the gateway's run bound, a model that goes quiet and never closes). A client scenario whose
task is a timeline of steps offers one such element too (:data:`TASK`): the agent is slower,
its steps from step K (2 or later) on coming D seconds later. Left out on purpose:
``after_bytes`` (``after_event`` says the same thing in a unit a scenario author reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import strategies as st

from streamproof.core.durations import format_duration
from streamproof.faults.plan import Fault

__all__ = [
    "ACTION_ORDER",
    "BROWSER_ACTIONS",
    "ELEMENT_KEYS",
    "LEAVE",
    "MAX_FAULTS",
    "PUSH_ACTIONS",
    "PUSH_LINK",
    "PUSH_MATCHES",
    "TASK",
    "TRIGGER_ORDER",
    "TURNS",
    "TURN_CHANGES",
    "Space",
    "a2a_matches",
    "describe_element",
    "describe_plan",
    "fault_count",
    "fault_data",
    "plan_data",
    "plans",
    "single_elements",
    "turn_change_data",
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

PUSH_LINK: Final = "push"
PUSH_ACTIONS: Final = ("rst", "fin", "end_clean", "stall", "status", "refuse", "delay", "stall_for")
"""The actions the ``push`` link may get: a delivery cut, held, refused or answered in the
webhook's place; not a corruption, drip or split of the webhook's short answer, which the
sender only reads for its status."""
PUSH_MATCHES: Final[tuple[Mapping[str, str], ...]] = ({}, {"method": "POST"})
"""What a fault on the push link may match: any delivery (``occurrence`` picks one)."""

BROWSER_ACTIONS: Final = ("rst", "fin", "end_clean", "stall", "stall_for", "drip", "split")
"""The actions a gateway's browser link may get: cut (the browser leaves), held (a slow
browser), dripped or split; the gateway checks judge each as what the browser did."""

_BROWSER_LINK: Final = "browser"
_STATUS_CODES: Final = (502, 503, 504, 500, 404, 401)
_CORRUPTIONS: Final = ("truncate_json", "drop_blank_line", "bom", "cr_only")
_OCCURRENCES: Final[tuple[int | None, ...]] = (1, None, 2)

LEAVE: Final = "leave"
"""The plan key of the browser leaving: ``[{"after_frames": N}]`` (at most one)."""
TURNS: Final = "model_turns"
"""The plan key of changes to the fake model's turns: ``[{"turn": I, <change>}]`` (at most one
per turn; turns count from 1, as a reader does)."""
TASK: Final = "task_steps"
"""The plan key of a slower agent (client scenarios): ``[{"from_step": K, "later": D}]`` (at
most one; steps count from 1)."""
ELEMENT_KEYS: Final = (LEAVE, TURNS, TASK)
"""Plan keys that are not links, in the order a search prefers them."""
TURN_CHANGES: Final = ("error_after", "finish", "split", "delay")
"""Simplest first: an error event, a finish reason that is an error, a split, a delay."""
_ERROR_FINISHES: Final = ("MAX_TOKENS", "SAFETY")


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
    frames: int | None = None
    """The browser may leave after 1 to this many frames (:data:`LEAVE`; after the first, so
    the run has begun when it leaves); ``None``: not offered (the scenario has its own drop,
    or no streaming request)."""
    quiet: float | None = None
    """The longest delay before a model chunk (scenario seconds; default: the horizon). A
    gateway scenario sets it past the gateway's run bound, so a model that goes quiet for
    longer than the bound is in the space."""
    turns: tuple[tuple[int, ...], ...] = ()
    """The fake model's turns that may be changed (:data:`TURNS`): per turn, the length of each
    chunk's text (0 for a function call); an empty tuple for a turn that is not a stream (an
    ``http_error``), which is left alone."""

    steps: int = 0
    """How many steps the task's timeline has (:data:`TASK`: from the second on they may come
    later; the first, ``submitted``, stays at 0 s); below 2: not offered."""
    link_matches: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)
    """Per link, its own matches instead of :attr:`matches` (the ``push`` link's requests are
    webhook deliveries, not JSON-RPC calls)."""

    @property
    def places(self) -> tuple[str, ...]:
        """Where a plan element may go: the links, then the elements offered."""
        extra: tuple[str, ...] = (LEAVE,) if self.frames is not None else ()
        if any(self.turns):
            extra += (TURNS,)
        if self.steps >= 2:
            extra += (TASK,)
        return (*self.links, *extra)

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
        if self.frames is not None and self.frames < 1:
            raise ValueError(f"frames must be 1 or more, not {self.frames!r}")
        for link, actions in self.only.items():
            unknown = [a for a in actions if a not in ACTION_ORDER]
            if link not in self.links or not actions or unknown:
                raise ValueError(f"only[{link!r}] must name some of {', '.join(ACTION_ORDER)}")


def a2a_matches(wire: str) -> tuple[dict[str, str], ...]:
    """What a fault on the A2A link may match, preferred first: the streaming call, any
    JSON-RPC call (``method: POST``), the resubscribe, the snapshot, the agent card's fetch
    (``method: GET``, the link's only GET: the deadline bounds the whole call, the card's fetch
    included); spelt as the scenario's wire spells them (``both``: the 0.3 names)."""
    if wire == "1.0":
        stream, subscribe, get = "SendStreamingMessage", "SubscribeToTask", "GetTask"
    else:
        stream, subscribe, get = "message/stream", "tasks/resubscribe", "tasks/get"
    return (
        {"rpc": stream},
        {"method": "POST"},
        {"rpc": subscribe},
        {"rpc": get},
        {"method": "GET"},
    )


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
    elif link == PUSH_LINK:
        # A delivery's answer is a short body, no SSE events to count.
        triggers = tuple(t for t in triggers if t != "after_event") or ("on_response_headers",)
    trigger = draw(st.sampled_from(triggers))
    when: dict[str, Any] = {}
    when.update(draw(st.sampled_from(space.link_matches.get(link, space.matches))))
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
def turn_change_data(draw: st.DrawFn, space: Space) -> dict[str, Any]:
    """One change to one of the fake model's turns (``turn`` counts from 1)."""
    streams = [i for i, chunks in enumerate(space.turns) if chunks]
    index = draw(st.sampled_from(streams))
    chunks = space.turns[index]
    splittable = [k for k, length in enumerate(chunks) if length >= 2]
    changes = [c for c in TURN_CHANGES if c != "split" or splittable]
    change = draw(st.sampled_from(changes))
    out: dict[str, Any] = {"turn": index + 1}
    if change == "error_after":
        out["error_after"] = draw(st.integers(0, len(chunks) - 1))
    elif change == "finish":
        out["finish"] = draw(st.sampled_from(_ERROR_FINISHES))
    elif change == "split":
        out["split"] = draw(st.sampled_from(splittable)) + 1
    else:
        chunk = draw(st.integers(0, len(chunks) - 1)) + 1
        longest = space.quiet if space.quiet is not None else space.horizon
        seconds = draw(_seconds(longest, at_least=0.5))
        out["delay"] = {"chunk": chunk, "for": _duration(seconds)}
    return out


@st.composite
def _placed_fault(draw: st.DrawFn, space: Space) -> tuple[str, dict[str, Any]]:
    place = draw(st.sampled_from(space.places))
    if place == LEAVE:
        assert space.frames is not None
        return place, {"after_frames": draw(st.integers(1, max(space.frames, 1)))}
    if place == TURNS:
        return place, draw(turn_change_data(space))
    if place == TASK:
        step = draw(st.integers(2, space.steps))  # the first step (submitted) stays at 0s
        later = draw(_seconds(space.horizon, at_least=0.5))
        return place, {"from_step": step, "later": _duration(later)}
    return place, draw(fault_data(space, place))


@st.composite
def plan_data(draw: st.DrawFn, space: Space) -> dict[str, list[dict[str, Any]]]:
    """A plan for every place of ``space`` (YAML-shaped: link or element key -> list of
    elements), 0 to :data:`MAX_FAULTS` elements in all. The browser leaves at most once and a
    turn is changed at most once: a later element that would say otherwise is dropped."""
    placed = draw(st.lists(_placed_fault(space), max_size=MAX_FAULTS))
    out: dict[str, list[dict[str, Any]]] = {place: [] for place in space.places}
    for place, element in placed:
        if place in (LEAVE, TASK) and out[place]:
            continue
        if place == TURNS and any(c["turn"] == element["turn"] for c in out[TURNS]):
            continue
        out[place].append(element)
    return out


def plans(space: Space) -> st.SearchStrategy[dict[str, list[dict[str, Any]]]]:
    """:func:`plan_data`, each fault checked against the plan model on the way (a drawn fault
    the model refuses is a bug of this module, not a plan to try)."""

    def checked(plan: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        for place, faults in plan.items():
            if place in ELEMENT_KEYS:
                continue
            for fault in faults:
                Fault.model_validate(fault)
        return plan

    return plan_data(space).map(checked)


def single_elements(
    plan: Mapping[str, Sequence[Mapping[str, Any]]],
) -> list[dict[str, list[dict[str, Any]]]]:
    """Each element of ``plan`` alone (every other place left empty), in the plan's order;
    ``[]`` when ``plan`` has one element or none. Hypothesis's shrinker does not always drop
    an element that plays no part; the search tries these after it."""
    if fault_count(plan) < 2:
        return []
    out: list[dict[str, list[dict[str, Any]]]] = []
    for place, elements in plan.items():
        for element in elements:
            alone: dict[str, list[dict[str, Any]]] = {p: [] for p in plan}
            alone[place] = [dict(element)]
            out.append(alone)
    return out


def fault_count(plan: Mapping[str, Sequence[Any]]) -> int:
    return sum(len(faults) for faults in plan.values())


def describe_element(place: str, element: Mapping[str, Any]) -> str:
    """A plan element that is not a link fault, as a reader says it."""
    if place == LEAVE:
        return f"browser: leaves after frame {element['after_frames']}"
    if place == TASK:
        return f"task: steps from {element['from_step']} on come {element['later']} later"
    turn = f"model turn {element['turn']}"
    if "error_after" in element:
        return f"{turn}: error event after chunk {element['error_after']}"
    if "finish" in element:
        return f"{turn}: finish reason {element['finish']}"
    if "split" in element:
        return f"{turn}: chunk {element['split']} split in two"
    delay = element["delay"]
    return f"{turn}: {delay['for']} delay before chunk {delay['chunk']}"


def describe_plan(plan: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """A one-line account of a plan: ``a2a: after: 4s -> stall`` (``no fault`` when empty)."""
    parts: list[str] = []
    for link, faults in plan.items():
        if link in ELEMENT_KEYS:
            parts.extend(describe_element(link, element) for element in faults)
            continue
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
