"""The operations a :class:`~streamproof.faults.shaper.Shaper` yields, which the proxy performs
in order (see :mod:`streamproof.faults.shaper`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from streamproof.faults.plan import Fault, Trigger

__all__ = ["Finish", "Fired", "Forwarded", "Op", "Sleep", "Write"]


@dataclass(frozen=True, slots=True)
class Write:
    data: bytes


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class Fired:
    index: int
    fault: Fault
    trigger: Trigger
    note: str = ""


@dataclass(frozen=True, slots=True)
class Forwarded:
    """An event or a comment line went downstream (recorded after its bytes were written)."""

    kind: Literal["event", "comment"]
    event_index: int | None
    detail: str
    damage: str | None = None
    """How a corruption changed this event as a spec decoder reads it (see
    :mod:`streamproof.faults.shaper.damage`); ``None``: it arrived as sent."""


@dataclass(frozen=True, slots=True)
class Finish:
    how: Literal["clean", "fin", "rst"]
    index: int


Op = Write | Sleep | Fired | Forwarded | Finish
