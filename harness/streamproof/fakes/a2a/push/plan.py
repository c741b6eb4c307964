"""What the delivery faults do to each delivery: pure planning, no I/O.

:func:`plan_delivery` answers, for delivery ``n`` of a task, what the sender sends when the
task's update happens: a list of sends in order (forged ones, replays, the delivery itself,
a duplicate), or nothing now (lost, held for a delay, a reorder or after the terminal one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from streamproof.fakes.a2a.push.records import DeliveryFaultName
from streamproof.fakes.a2a.push.script import DeliveryFault

__all__ = ["Hold", "Plan", "Send", "plan_delivery"]


@dataclass(frozen=True)
class Send:
    """Send delivery ``delivery`` (or a forged one in its place) now."""

    delivery: int
    fault: DeliveryFaultName | None = None
    fault_index: int | None = None
    forged: bool = False


@dataclass(frozen=True)
class Hold:
    """Keep delivery ``delivery`` back: ``until`` says when it goes."""

    delivery: int
    until: Literal["lost", "delay", "next", "terminal"]
    fault_index: int
    delay: float = 0.0
    """``delay``: scenario seconds."""


@dataclass(frozen=True)
class Plan:
    sends: tuple[Send, ...]
    hold: Hold | None
    fired: tuple[int, ...]
    """The fault indexes this delivery fires."""


_HOLDS: dict[str, Literal["lost", "delay", "next", "terminal"]] = {
    "lose": "lost",
    "delay": "delay",
    "reorder": "next",
    "stale": "terminal",
}


def plan_delivery(faults: Sequence[DeliveryFault], n: int) -> Plan:
    """What happens when delivery ``n``'s update happens."""
    sends: list[Send] = []
    fired: list[int] = []
    for i, f in enumerate(faults):
        if f.do == "replay" and f.before == n:
            sends.append(Send(f.delivery, "replay", i))
            fired.append(i)
        elif f.do in ("wrong_token", "no_token") and f.delivery == n:
            name: DeliveryFaultName = "wrong_token" if f.do == "wrong_token" else "no_token"
            sends.append(Send(n, name, i, forged=True))
            fired.append(i)
    hold: Hold | None = None
    for i, f in enumerate(faults):
        if f.delivery == n and f.do in _HOLDS:
            hold = Hold(n, _HOLDS[f.do], i, f.by or 0.0)
            fired.append(i)
            break
    if hold is None:
        sends.append(Send(n))
        for i, f in enumerate(faults):
            if f.do == "duplicate" and f.delivery == n:
                sends.append(Send(n, "duplicate", i))
                fired.append(i)
    return Plan(tuple(sends), hold, tuple(fired))
