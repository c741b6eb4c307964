"""The toxics the toxiproxy engine puts on a proxy: their names, their API bodies, and the ones a
plan needs before any client connects (see :mod:`~streamproof.faults.engines.toxiproxy`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from streamproof.core.durations import TimeScale
from streamproof.faults.plan import Fault

__all__ = [
    "ARM",
    "CUT",
    "DELAY_DOWN",
    "DELAY_UP",
    "DRIP",
    "NO_LIMIT",
    "SPLIT",
    "WHOLE",
    "Toxic",
    "ms",
    "static_toxics",
]

NO_LIMIT: Final = 1 << 62
WHOLE: Final = 1 << 30
"""A slicer ``average_size`` no chunk reaches: it never slices, only waits."""
CUT: Final = "streamproof-cut"
ARM: Final = "streamproof-arm-reset"
DELAY_UP: Final = "streamproof-delay-request"
DELAY_DOWN: Final = "streamproof-delay-response"
DRIP: Final = "streamproof-drip"
SPLIT: Final = "streamproof-split"


@dataclass(frozen=True)
class Toxic:
    kind: str
    stream: Literal["upstream", "downstream"]
    attributes: dict[str, int] = field(default_factory=dict)
    toxicity: float = 1.0

    def body(self, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "type": self.kind,
            "stream": self.stream,
            "toxicity": self.toxicity,
            "attributes": self.attributes,
        }


def ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def static_toxics(faults: Sequence[Fault], scale: TimeScale) -> dict[str, Toxic]:
    """The toxics a plan needs on the proxy before any client connects."""
    toxics: dict[str, Toxic] = {}
    if any(f.action == "rst" for f in faults):
        toxics[ARM] = Toxic("reset_peer", "downstream", {"timeout": 0}, toxicity=0.0)
    for name, trigger, stream in (
        (DELAY_UP, "on_request", "upstream"),
        (DELAY_DOWN, "on_response_headers", "downstream"),
    ):
        delays = (f.do.delay for f in faults if f.trigger.kind == trigger)
        seconds = sum(scale(d) for d in delays if d is not None)
        if seconds:
            toxics[name] = Toxic(
                "latency",
                cast(Literal["upstream", "downstream"], stream),
                {"latency": ms(seconds), "jitter": 0},
            )
    return toxics
