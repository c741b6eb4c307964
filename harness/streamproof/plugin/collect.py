"""Collecting scenario files into items, one per scenario, marked with their kind and the
levels of their requirements; and what the session selected (how many scenarios, which kinds).

A suite may run one scenario several ways on the run's target (``variants``: the A2A client
suite runs a scenario once per binding the client declares): each run is an item of its own,
named by its own id (``<id>[rest]``).

Scenario ids are unique across everything one session collects: every file's load shares the
session's :class:`~streamproof.suites.loading.ScenarioIds`, so a file that uses an id another file
(or the same one) already used is a collection error naming both places. Like any collection
error it stops the session before anything runs (``streamproof run`` exits 2), whatever ``-k``
would have selected: the check is made at collection, before deselection.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from streamproof.plugin.items import ScenarioItem
from streamproof.plugin.shared import (
    COLLECTED_FILES_KEY,
    KINDS_KEY,
    SCENARIOS_KEY,
    is_scenario_file,
)

if TYPE_CHECKING:
    from streamproof.suites.loading import ScenarioIds

_IDS_KEY: pytest.StashKey[ScenarioIds] = pytest.StashKey()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_scenario_file(file_path, parent.config):
        stash = parent.config.stash
        stash[COLLECTED_FILES_KEY] = stash.get(COLLECTED_FILES_KEY, 0) + 1
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from streamproof.suites import REGISTRY, suite
        from streamproof.suites.loading import ScenarioError, ScenarioIds, load_scenarios

        ids = self.config.stash.setdefault(_IDS_KEY, ScenarioIds())
        try:
            loaded = load_scenarios(self.path, ids)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        target = self.config.getoption("--streamproof-target", None)
        for loaded_entry in loaded:
            expand = getattr(suite(loaded_entry.scenario.kind), "variants", None)
            runs = expand(loaded_entry.scenario, target) if expand else (loaded_entry.scenario,)
            for scenario in runs:
                entry = replace(loaded_entry, scenario=scenario)
                item = ScenarioItem.from_parent(self, name=scenario.id, loaded=entry)
                item.add_marker(scenario.kind.replace("-", "_"))
                binding = getattr(scenario, "run_binding", None)
                if binding is not None:  # -k binding_rest selects an A2A client's REST runs
                    item.extra_keyword_matches.add(f"binding_{binding}")
                levels = {REGISTRY[r].level.value.lower() for r in scenario.requirements}
                for level in sorted(levels):
                    item.add_marker(level)
                yield item


def pytest_collection_finish(session: pytest.Session) -> None:
    scenarios = [i for i in session.items if isinstance(i, ScenarioItem)]
    session.config.stash[SCENARIOS_KEY] = len(scenarios)
    kinds: list[str] = list(dict.fromkeys(i.loaded.scenario.kind for i in scenarios))
    session.config.stash[KINDS_KEY] = kinds
