"""The engines of one environment: opened when a link first needs them, closed together.

A run has a default engine (``--engine``, else ``inline``) and a scenario may name another for
a link (``links.engine``). :class:`EnginePool` picks the engine of each link for a scenario,
says why the run's default engine cannot carry out a scenario's plan (the scenario is then
skipped with that reason: it was the run's choice, not the scenario's), and starts each engine
once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.faults.engine_names import DEFAULT_ENGINE
from streamproof.faults.engines import Engine, EngineUnavailable, open_engine
from streamproof.faults.engines.catalog import engine_problems
from streamproof.faults.plan import Fault

__all__ = ["EnginePool"]


class EnginePool:
    def __init__(self, default: str | None = None) -> None:
        self.default: str = default or DEFAULT_ENGINE
        self._engines: dict[str, Engine] = {}

    def choose(
        self, plans: Mapping[str, Sequence[Fault]], named: Iterable[tuple[str, str]]
    ) -> tuple[dict[str, str], list[str]]:
        """The engine of each link in ``plans`` (``named`` by the scenario, else the default),
        and why the default engine cannot do the plans it was given (empty: it can)."""
        chosen = dict.fromkeys(plans, self.default)
        given = dict(named)
        chosen.update(given)
        defaulted = [(link, name) for link, name in chosen.items() if link not in given]
        return chosen, engine_problems(plans, defaulted)

    async def ready(self, names: Iterable[str]) -> None:
        """Start every engine in ``names`` now; raises :class:`ScenarioSkipped` naming the first
        one this machine cannot run (before anything in place is torn down)."""
        for name in dict.fromkeys(names):
            try:
                await self.get(name)
            except EngineUnavailable as exc:
                raise ScenarioSkipped(
                    f"this scenario needs engine {name}: {exc}", cause="engine"
                ) from None

    async def get(self, name: str) -> Engine:
        """Engine ``name``, started on first use."""
        engine = self._engines.get(name)
        if engine is None:
            engine = open_engine(name)
            await engine.start()
            self._engines[name] = engine
        return engine

    async def close(self) -> None:
        engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            await engine.close()
