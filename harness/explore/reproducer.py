"""Turning a scenario and a fault plan into scenario data, and a found plan into a file.

Pure (no I/O): the scenario's YAML data with its link faults replaced (:func:`with_plan`),
the reproducer's file name and id (:func:`file_name`, :func:`reproducer_id`) and its text with
the header that says how it was found (:func:`reproducer_text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = [
    "Provenance",
    "file_name",
    "has_link_faults",
    "reproducer_id",
    "reproducer_text",
    "with_plan",
]

_LINK_NAMES = ("browser", "model", "a2a")


def has_link_faults(data: Mapping[str, Any]) -> bool:
    """Whether the scenario data plans any fault on a link."""
    links = data.get("links") or {}
    return isinstance(links, Mapping) and any(links.get(name) for name in _LINK_NAMES)


def with_plan(
    data: Mapping[str, Any], plan: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, Any]:
    """``data`` with every link's faults replaced by ``plan``'s (links ``plan`` leaves out lose
    theirs); the links' other keys (``engine``, ``forward``) are kept."""
    out = dict(data)
    raw = data.get("links")
    links: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    for name in _LINK_NAMES:
        links.pop(name, None)
    for name, faults in plan.items():
        if faults:
            links[name] = [dict(f) for f in faults]
    if links:
        out["links"] = links
    else:
        out.pop("links", None)
    return out


def file_name(scenario_id: str, requirement: str) -> str:
    """``a2a_client/x`` and ``A2A-C-RECOVERY`` -> ``a2a_client-x--A2A-C-RECOVERY.yaml``."""
    return f"{scenario_id.replace('/', '-')}--{requirement}.yaml"


def reproducer_id(scenario_id: str, requirement: str) -> str:
    """A scenario id that cannot clash with the original's (ids are lower case)."""
    base = re.sub(r"[^a-z0-9_.\-]", "-", scenario_id.replace("/", "-").lower())
    return f"explore/{base}--{requirement.lower()}"


@dataclass(frozen=True)
class Provenance:
    """How a reproducer was found, for its header."""

    scenario_file: str
    scenario_id: str
    requirement: str
    target: str
    bug: str | None
    seed: int | None
    examples: int
    wall_s: float
    fault: str
    rerun: str
    message: str


def _comment(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.splitlines()]


def reproducer_text(
    data: Mapping[str, Any],
    plan: Mapping[str, Sequence[Mapping[str, Any]]],
    found: Provenance,
) -> str:
    """The reproducer: ``data`` with ``plan`` on its links, its own id and title, the broken
    requirement as its requirement, and a header comment saying how it was found."""
    scenario = with_plan(data, plan)
    scenario["id"] = reproducer_id(found.scenario_id, found.requirement)
    scenario["title"] = f"{data.get('title', found.scenario_id)} (explore: {found.fault})"
    scenario["requirements"] = [found.requirement]
    first: tuple[str, ...] = ("id", "title", "kind")
    ordered: dict[str, Any] = {k: scenario[k] for k in first if k in scenario}
    ordered.update({k: v for k, v in scenario.items() if k not in ordered})
    header = [
        f"Found by `streamproof explore` from {found.scenario_id} ({found.scenario_file}),",
        "its link faults removed and a fault plan searched with hypothesis.",
        f"Breaks {found.requirement}: {found.message}",
        f"Fault: {found.fault}",
        f"Target: {found.target}; bug: {found.bug or 'none'}; "
        f"seed: {found.seed if found.seed is not None else 'random'}; "
        f"examples tried: {found.examples}; wall time: {found.wall_s:.1f}s",
        f"Rerun: {found.rerun}",
    ]
    body = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join([*(_comment("\n".join(header))), body])
