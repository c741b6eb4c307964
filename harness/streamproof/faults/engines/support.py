"""What each fault engine can do with each item of the plan: exactly, approximately (and how),
or not at all (and why).

The plan (:mod:`streamproof.faults.plan`) names effects; an engine produces them on a wire. Not
every engine can produce every effect: toxiproxy works on TCP bytes and cannot answer an HTTP
status, mitmproxy always accepts a connection and cannot refuse one. Each engine declares its
:class:`EngineSupport`, one :class:`Support` per plan item (a match key, a trigger, an action),
plus rules for combinations that depend on more than one item. A plan is judged against it at
load, so a scenario that asks an engine for something it cannot do is rejected before anything
runs, with a message naming the engine, the fault and the reason; an approximation is allowed
and its note goes into the link's records and the docs' table (docs/reference/faults.md).

Pure: no engine is imported or started here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from streamproof.faults.do import ACTIONS
from streamproof.faults.plan import Fault
from streamproof.faults.when import TRIGGERS

__all__ = [
    "MATCH_KEYS",
    "PLAN_ITEMS",
    "EngineSupport",
    "Fit",
    "Support",
    "items_of",
]

Fit = Literal["exact", "approximate", "rejected"]

MATCH_KEYS: Final = ("method", "path", "rpc", "occurrence")

PLAN_ITEMS: Final[tuple[str, ...]] = (
    *(f"when.{key}" for key in MATCH_KEYS),
    *(f"when.{trigger}" for trigger in TRIGGERS),
    *(f"do.{action}" for action in ACTIONS),
)
"""Every item of the plan an engine declares, in the order of the table in
docs/reference/faults.md."""


@dataclass(frozen=True)
class Support:
    """How an engine carries out one plan item."""

    fit: Fit
    note: str = ""
    """For ``approximate``: what differs; for ``rejected``: why it cannot be done."""

    def __post_init__(self) -> None:
        if self.fit != "exact" and not self.note:
            raise ValueError(f"a {self.fit} support needs a note saying how or why")


EXACT: Final = Support("exact")


def items_of(fault: Fault) -> list[str]:
    """The plan items one fault uses: its match keys, its trigger (the default one when none
    is written) and its action."""
    used = [f"when.{key}" for key in MATCH_KEYS if getattr(fault.when, key) is not None]
    used.append(f"when.{fault.trigger.kind}")
    used.append(f"do.{fault.action}")
    return used


Combination = Callable[[Fault], Support | None]
"""A rule on a whole fault (e.g. "after_event only with an action that cuts"): a support that
overrides the per-item ones, or None when the rule does not apply."""


@dataclass(frozen=True)
class EngineSupport:
    """One engine's declared support for every plan item."""

    engine: str
    items: Mapping[str, Support]
    combinations: Sequence[Combination] = field(default=())
    summary: str = ""
    """One line on what the engine is, for the docs."""

    def __post_init__(self) -> None:
        missing = [item for item in PLAN_ITEMS if item not in self.items]
        unknown = [item for item in self.items if item not in PLAN_ITEMS]
        if missing or unknown:
            raise ValueError(
                f"engine {self.engine}: support must name every plan item exactly "
                f"(missing {missing}, unknown {unknown})"
            )

    def judge(self, fault: Fault) -> list[tuple[str, Support]]:
        """How this engine carries out each item ``fault`` uses; a combination rule that
        applies comes first, under the item ``fault``."""
        judged = [(item, self.items[item]) for item in items_of(fault)]
        for rule in self.combinations:
            verdict = rule(fault)
            if verdict is not None:
                judged.insert(0, ("fault", verdict))
        return judged

    def rejections(self, plan: Sequence[Fault], where: str) -> list[str]:
        """Why this engine cannot run ``plan``: one line per rejected item, each naming
        ``where`` (e.g. ``links.model``), the fault's index and the engine; empty when it can."""
        problems: list[str] = []
        for index, fault in enumerate(plan):
            for item, support in self.judge(fault):
                if support.fit == "rejected":
                    what = f"{item} ({fault.describe()})" if item == "fault" else item
                    problems.append(
                        f"{where}[{index}]: engine {self.engine} cannot do {what}: {support.note}"
                    )
        return problems

    def approximations(self, plan: Sequence[Fault]) -> list[str]:
        """The notes of every approximate item ``plan`` uses, for the link's records."""
        notes: list[str] = []
        for index, fault in enumerate(plan):
            for item, support in self.judge(fault):
                if support.fit == "approximate":
                    notes.append(f"[{index}] {item}: {support.note}")
        return notes
