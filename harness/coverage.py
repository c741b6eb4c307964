"""Which scenarios test which requirement, read from scenario files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.scenario import ScenarioError, load_scenarios


def scenarios_by_requirement(paths: Iterable[str | Path]) -> dict[str, list[str]]:
    """Requirement id -> ids of the scenarios that name it (unreadable files are left out;
    ``streamproof validate`` is the place that reports them)."""
    out: dict[str, list[str]] = {}
    for root in paths:
        root = Path(root)
        files = sorted(root.rglob("*.y*ml")) if root.is_dir() else [root]
        for file in files:
            try:
                loaded = load_scenarios(file)
            except ScenarioError:
                continue
            for entry in loaded:
                for rid in entry.scenario.requirements:
                    out.setdefault(rid, []).append(entry.scenario.id)
    return out
