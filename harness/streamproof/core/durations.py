"""Durations as users write them in scenarios ("40s", "250ms", "1.5m"), and scaled time.

A scenario states times as the user lives them; ``--time-scale`` multiplies every one of them
before anything waits on it. :class:`Duration` keeps the written value so reports and error
messages can quote the scenario back to its author.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_SPELLING = r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)\s*$"
_PATTERN = re.compile(_SPELLING)


def parse_duration(value: Any) -> float:
    """Seconds from ``"250ms"``, ``"40s"``, ``"1.5m"``, ``"2h"`` or a bare number of seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like '40s'")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return float(value)
    if isinstance(value, str):
        match = _PATTERN.match(value)
        if match is None:
            raise ValueError(
                f"{value!r} is not a duration; write it as a number with a unit: "
                "'250ms', '40s', '1.5m', '2h'"
            )
        return float(match.group(1)) * _UNITS[match.group(2)]
    raise ValueError(
        f"a duration must be a number or a string like '40s', not {type(value).__name__}"
    )


def format_duration(seconds: float) -> str:
    """The shortest exact spelling of ``seconds`` that :func:`parse_duration` reads back."""
    if seconds and seconds < 1:
        return f"{round(seconds * 1000, 3):g}ms"
    return f"{round(seconds, 6):g}s"


DurationSpelling = (
    Annotated[float, Field(ge=0, description="seconds")]
    | Annotated[
        str,
        Field(
            pattern=_SPELLING,
            description="a number with a unit: '250ms', '40s', '1.5m', '2h' (also 'min')",
        ),
    ]
)
"""What a scenario or target file may write for a :data:`Duration`, as its JSON Schema says."""

Duration = Annotated[
    float,
    BeforeValidator(parse_duration, json_schema_input_type=DurationSpelling),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
"""Seconds, read from a user's spelling and written back as one."""


DEFAULT_TIME_SCALE = 0.1
"""Scenarios are written in the time users live (a 40 s proxy timeout, a 90 s deadline); at a
tenth of that the whole suite runs in about a minute and a half while delays stay far above
scheduling noise. Kept by measurement (``python -m streamproof.bench.flakes``,
docs/explanation/performance.md#the-default-clock): at 0.03 the correct Python client failed
the seed's worked example twice in 30 runs; at 0.05 the Python references passed 30 of 30,
but the whole test suite at 0.05 had the correct Java gateway miss its run bound (JVM costs
that do not scale) and two mutants survive (no-llm-budget under load, the Java no-dispose):
not exact."""


class TimeScale:
    """Multiplies scenario durations; checks compare scaled times with scaled tolerances."""

    __slots__ = ("factor",)

    def __init__(self, factor: float = 1.0) -> None:
        if not factor > 0:
            raise ValueError(f"--time-scale must be a positive number, not {factor!r}")
        self.factor = float(factor)

    def __call__(self, seconds: float) -> float:
        return seconds * self.factor

    def __repr__(self) -> str:
        return f"TimeScale({self.factor:g})"


def on_both_clocks(real_s: float, time_scale: float, scenario_s: float | None = None) -> str:
    """A duration on both clocks, real first: ``1.00s (10s scenario time)``; the real seconds
    alone at scale 1. ``scenario_s`` is the scenario's own figure when it is not simply
    ``real_s / time_scale`` (a floor that protects verdicts under load made the wait longer)."""
    real = f"{real_s:.2f}s"
    scenario = real_s / time_scale if scenario_s is None else scenario_s
    if abs(scenario - real_s) < 0.005:
        return real
    return f"{real} ({scenario:.3g}s scenario time)"
