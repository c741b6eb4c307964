"""Parallel runs and CI sharding: what ``streamproof run -n N`` and ``--shard I/N`` decide
before anything runs, and how the workers' records become one report.

* :func:`parse_shard` reads ``I/N`` (1-based); :func:`split` divides the selected scenarios
  into N disjoint parts whose union is the whole selection, balanced by the durations a
  previous report recorded (:func:`durations_of_report`), else by count. The split depends only
  on the scenario ids, their order and the durations, so every job of a CI matrix (and every
  xdist worker of one job) computes the same parts.
* :func:`parallel_refusal` says why a target cannot run on several workers at once (a gateway
  attached by URL, a fixed port): each worker starts its own fakes, links and target.
* :func:`merge_worker_records` puts the records the workers sent back in collection order.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DurationsError",
    "Shard",
    "durations_of_report",
    "longest_first",
    "median",
    "merge_worker_records",
    "parallel_refusal",
    "parse_shard",
    "parse_workers",
    "split",
]

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/3"`` -> ``Shard(2, 3)``; anything else (``0/2``, ``3/2``, ``x``) is a ValueError
    saying what is expected."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not I/N (e.g. 1/4: the first of 4 parts)")
    index, count = int(match[1]), int(match[2])
    if count < 1:
        raise ValueError(f"{text!r}: N must be at least 1")
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: I must be between 1 and N ({count}); I counts from 1")
    return Shard(index, count)


def parse_workers(text: str) -> int | str:
    """``-n``'s value: a whole number of workers (0 or 1: one after another, in this process
    for 0) or ``auto`` (one per CPU, as pytest-xdist counts them)."""
    if text.strip() == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of workers or auto") from None
    if value < 0:
        raise ValueError(f"{text!r}: the number of workers cannot be negative")
    return value


class DurationsError(ValueError):
    """A durations file that cannot be read as a streamproof results.json."""


def durations_of_report(path: Path) -> dict[str, float]:
    """Seconds per scenario id as a previous run's ``results.json`` recorded them (scenarios
    without a duration are left out)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DurationsError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DurationsError(f"{path}: cannot read it: {exc}") from None
    except ValueError as exc:
        raise DurationsError(f"{path}: not JSON ({exc})") from None
    if not isinstance(report, dict) or report.get("tool") != "streamproof":
        raise DurationsError(f"{path}: not a streamproof results.json")
    scenarios = report.get("scenarios")
    if not isinstance(scenarios, list):
        raise DurationsError(f"{path}: a streamproof results.json without scenarios")
    durations: dict[str, float] = {}
    for record in scenarios:
        if not isinstance(record, dict):
            continue
        sid, seconds = record.get("id"), record.get("duration_s")
        if isinstance(sid, str) and isinstance(seconds, int | float) and seconds >= 0:
            durations[sid] = float(seconds)
    return durations


def median(values: Iterable[float], default: float) -> float:
    """The (upper) median of ``values``: what a run not measured before counts as; ``default``
    when there are none."""
    known = sorted(values)
    return known[len(known) // 2] if known else default


def longest_first(weights: Sequence[float]) -> list[int]:
    """The indexes of ``weights`` heaviest first; ties keep their order. How ``-n``, the
    shards and the mutant matrix hand out their runs."""
    return sorted(range(len(weights)), key=lambda i: (-weights[i], i))


def split(
    ids: Sequence[str], count: int, durations: Mapping[str, float] | None = None
) -> list[list[int]]:
    """The indexes of ``ids`` in each of ``count`` parts, each part in the order of ``ids``.

    Longest first, each scenario goes to the part with the least time so far (the lowest part
    on a tie). A scenario the durations do not know counts as their median (1 s without any),
    so a new scenario neither piles up on one part nor is taken for free. With no durations
    every scenario weighs the same and the parts differ in size by at most one."""
    default = median((durations or {}).values(), 1.0)
    weights = [(durations or {}).get(sid, default) for sid in ids]
    order = longest_first(weights)
    loads: list[tuple[float, int, int]] = [(0.0, 0, part) for part in range(count)]
    parts: list[list[int]] = [[] for _ in range(count)]
    for i in order:
        load, size, part = heapq.heappop(loads)
        parts[part].append(i)
        heapq.heappush(loads, (load + weights[i], size + 1, part))
    return [sorted(part) for part in parts]


def parallel_refusal(target: Any, workers: int | str) -> str | None:
    """Why ``target`` (a loaded target file, ``Suite.load_target``) cannot run on ``workers``
    workers at once, or None. Every worker starts its own target: one attached by ``url`` is
    a single running process that the workers would share (sessions, state and the fakes it
    was configured with), and a fixed port can be bound by one process only."""
    if workers == 1 or workers == 0:
        return None
    name = getattr(target, "name", "the target")
    if getattr(target, "url", None):
        return (
            f"-n {workers}: target {name} is attached by url ({target.url}), one running "
            "gateway that parallel workers cannot share (each worker starts its own target "
            "and fakes); run it with -n 1 or without -n, or give the target a command"
        )
    port = getattr(target, "port", 0)
    if isinstance(port, int) and port != 0:
        return (
            f"-n {workers}: target {name} listens on the fixed port {port}, which only one "
            "worker's target can bind; use port: 0 or port: auto, or run with -n 1"
        )
    fakes = getattr(target, "fakes", None)
    fixed: dict[str, int] = {}
    for which in ("model", "tools"):
        value = getattr(fakes, which, 0)
        if isinstance(value, int) and value:
            fixed[which] = value
    if fixed:
        ports = ", ".join(f"{which} {port}" for which, port in fixed.items())
        return (
            f"-n {workers}: target {name} fixes the fakes' ports ({ports}), which only one "
            "worker can bind; leave fakes at 0, or run with -n 1"
        )
    return None


def merge_worker_records(
    order: Sequence[str], outputs: Iterable[Sequence[tuple[str, dict[str, Any]]]]
) -> list[dict[str, Any]]:
    """The records of all workers (each a list of ``(node id, record)``) in collection order
    (``order``: the node ids as collected); a record whose node id is not in ``order`` comes
    after those that are, in the order the workers sent them."""
    position = {nodeid: i for i, nodeid in enumerate(order)}
    pairs = [pair for output in outputs for pair in output]
    ranked = sorted(range(len(pairs)), key=lambda i: (position.get(pairs[i][0], len(position)), i))
    return [pairs[i][1] for i in ranked]
