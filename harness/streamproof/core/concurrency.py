"""Concurrent sessions (``streamproof run --concurrency K``), what every suite shares: the bound
on K, percentiles, and how a scenario's load figures read on the console (core: no suite, no
I/O)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamproof.core.verdicts import Outcome, Verdict

__all__ = [
    "CONCURRENCY_RANGE",
    "MAX_CONCURRENCY",
    "copy_marker",
    "load_line",
    "merge_verdicts",
    "percentile",
]

MAX_CONCURRENCY = 32
"""The most copies of a scenario one run drives at once (one target, loopback only)."""
CONCURRENCY_RANGE = "must be 1 to " + str(MAX_CONCURRENCY) + " sessions at once, not {}"
"""What is wrong with a K out of range (``.format(K)``), after the option's name."""


def copy_marker(prefix: str, index: int, token: str) -> str:
    """The marker of copy ``index`` (0-based) of a scenario run K times at once: ``sp-s3-...``
    for a gateway session, ``sp-c3-...`` for a client call; ``token`` is the run's random
    part, so no text of the suite or the target holds it by chance."""
    return f"sp-{prefix}{index + 1}-{token}"


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0 to 100) of ``values`` by nearest rank, None when empty."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is 0 to 100, not {q}")
    ordered = sorted(values)
    rank = max(1, math.ceil(len(ordered) * q / 100))
    return round(ordered[rank - 1], 4)


def _ms(stats: Mapping[str, Any]) -> str:
    p50, p95 = stats.get("p50"), stats.get("p95")
    if p50 is None or p95 is None:
        return "n/a"
    return f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (n={stats.get('n', 0)})"


def load_line(scenario_id: str, load: Mapping[str, Any]) -> str:
    """One console line of a scenario's figures under load, each named by its ``load`` key
    (``first_frame_s``, ``frame_latency_s``, or a suite's own)."""
    parts = [
        f"{name.removesuffix('_s').replace('_', ' ')} {_ms(stats)}"
        for name, stats in load.items()
        if isinstance(stats, Mapping)
    ]
    return f"{scenario_id} x{load.get('sessions', '?')}: " + "; ".join(parts)


def merge_verdicts(
    per_session: Sequence[Sequence[Verdict]], noun: str = "session"
) -> list[Verdict]:
    """One verdict per requirement (and expectation) over the K copies: the worst copy's. Its
    message names the copy and how many copies broke the rule (``session 2/4: ... (broken in 2
    of 4 sessions)``), or says that every copy gave the same outcome (``all 4 sessions, session
    1/4 shown: ...``), or how many gave this one. ``noun`` names a copy (``session``, ``call``)."""
    # Imported here: the CLI reads this module's bounds for its --help, which builds no verdict
    # model (pydantic).
    from streamproof.core.verdicts import Outcome

    severity = {
        Outcome.FAIL: 5,
        Outcome.NON_STRICT: 4,
        Outcome.PASS: 3,
        Outcome.INFO: 2,
        Outcome.NOT_APPLICABLE: 1,
        Outcome.SKIP: 0,
    }
    k = len(per_session)
    order: list[tuple[str, str]] = []
    worst: dict[tuple[str, str], tuple[int, Verdict]] = {}
    outcomes: dict[tuple[str, str], list[Outcome]] = {}
    for i, verdicts in enumerate(per_session):
        for v in verdicts:
            key = (v.kind.value, v.requirement)
            if key not in worst:
                order.append(key)
            outcomes.setdefault(key, []).append(v.outcome)
            if key not in worst or severity[v.outcome] > severity[worst[key][1].outcome]:
                worst[key] = (i, v)
    out: list[Verdict] = []
    for key in order:
        i, v = worst[key]
        seen = outcomes[key]
        broke = sum(o in (Outcome.FAIL, Outcome.NON_STRICT) for o in seen)
        if broke:
            message = f"{noun} {i + 1}/{k}: {v.message} (broken in {broke} of {k} {noun}s)"
        elif len(seen) == k and all(o is v.outcome for o in seen):
            message = f"all {k} {noun}s, {noun} {i + 1}/{k} shown: {v.message}"
        else:
            same = sum(o is v.outcome for o in seen)
            message = f"{noun} {i + 1}/{k}: {v.message} ({v.outcome} in {same} of {k} {noun}s)"
        out.append(v.model_copy(update={"message": message}))
    return out
