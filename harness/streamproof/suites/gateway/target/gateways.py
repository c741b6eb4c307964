"""The gateways a run keeps: the one in use, behind its links, and those started for other
settings, parked while they still run.

A scenario whose settings (model-link engine, model path, run bound) differ from the previous
one's uses the gateway started for them earlier instead of paying a gateway start each time
(about 2 s for the reference gateway's imports; docs/explanation/performance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from streamproof.core.durations import TimeScale
from streamproof.fakes.model import FakeModel
from streamproof.faults.engines.pool import EnginePool
from streamproof.suites.gateway.links import Links
from streamproof.suites.gateway.scenario import GatewayLimits, ModelPath
from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.suites.gateway.target.running import RunningGateway, start_gateway

__all__ = ["MAX_PARKED", "GatewaySettings", "Gateways"]

MAX_PARKED = 3
"""How many gateways started for other settings stay running beside the one in use (the
bundled gateway suite uses four settings: direct, and three proxy paths or run bounds)."""

GatewaySettings = tuple[str, ModelPath, float]
"""What a gateway is started with and keeps while it runs: the model link's engine, the model
path and the run bound (real seconds)."""


@dataclass
class _Parked:
    """A gateway started for other settings, kept running with its own links while another
    is in use, to be used again when a scenario needs its settings."""

    gateway: RunningGateway
    links: Links


class Gateways:
    """The gateway in use with its links, and the parked ones."""

    def __init__(
        self,
        target: GatewayTarget,
        *,
        model: FakeModel,
        pool: EnginePool,
        scale: TimeScale,
        bug: str | None = None,
    ) -> None:
        self.target = target
        self.model = model
        self.pool = pool
        self.scale = scale
        self.bug = bug
        self.gateway: RunningGateway | None = None
        self.links = Links(pool, scale)
        self.settings: GatewaySettings | None = None
        """The settings the gateway in use was started with (None before the first start)."""
        self.model_url = ""
        self.contract_env: dict[str, str] = {}
        self._parked: dict[GatewaySettings, _Parked] = {}
        """Gateways of other settings, still running, the least recently used first."""
        self.starts = 0
        """How many times a gateway process was started (for the benchmarks)."""

    @property
    def run_bound(self) -> float | None:
        """The run bound (real seconds) the gateway in use was given."""
        return self.settings[2] if self.settings is not None else None

    @property
    def declared_run_bound(self) -> float | None:
        """:attr:`run_bound` when the target declares it honours one (``run_timeout``)."""
        return self.run_bound if "run_timeout" in self.target.declared else None

    async def start(self, model_url: str, contract_env: Mapping[str, str]) -> None:
        """The first gateway: direct to the model, the default run bound, both links on the
        run's engine."""
        self.model_url = model_url
        self.contract_env = dict(contract_env)
        default = self.pool.default
        run_bound = self.scale(GatewayLimits().gateway_run_timeout)
        await self._start((default, "direct", run_bound), default)

    async def use(self, wanted: GatewaySettings, browser_engine: str) -> RunningGateway:
        """Put a gateway of ``wanted`` settings in use, its browser link on ``browser_engine``."""
        if wanted != self._current():
            await self._switch(wanted, browser_engine)
        if browser_engine != self.links.engines.get("browser"):
            await self._browser_link(browser_engine)
        assert self.gateway is not None
        return self.gateway

    def _current(self) -> GatewaySettings | None:
        if self.gateway is None or "model" not in self.links.engines:
            return None
        return self.settings

    async def _start(self, settings: GatewaySettings, browser_engine: str) -> None:
        """Start a gateway of ``settings`` behind a new model link (the gateway reaches the fake
        model through it, so the scenario can reset, stall or split what the model sends),
        then its browser link."""
        model_engine, model_path, run_bound = settings
        self.links = Links(self.pool, self.scale)
        self.settings = settings
        model_env = await self._model_link(model_engine, model_path)
        env = {
            **self.contract_env,
            **model_env,
            "STREAMPROOF_RUN_TIMEOUT": f"{run_bound:.3f}",
        }
        self.gateway = await start_gateway(
            self.target, env, bug=self.bug, ready_scale=self.scale.factor
        )
        self.starts += 1
        await self._browser_link(browser_engine)

    async def _model_link(self, engine_name: str, model_path: ModelPath) -> dict[str, str]:
        """Start the model link of the gateway about to start; what the gateway is given to
        reach the model through it."""
        return await self.links.start_model(engine_name, model_path, self.model, self.model_url)

    async def _browser_link(self, engine_name: str) -> None:
        """Put the browser link of the gateway in use on ``engine_name``."""
        assert self.gateway is not None
        await self.links.start_browser(engine_name, self.gateway.base_url)

    async def _switch(self, wanted: GatewaySettings, browser_engine: str) -> None:
        """The gateway started for ``wanted`` earlier when it still runs, else a new one. The
        gateway in use is parked, running, with its links (the oldest parked one is closed
        beyond MAX_PARKED). A parked gateway is what a gateway kept between two scenarios of
        the same settings always was: nothing of one scenario is judged in another, since each
        has sessions and a script of its own and the runner waits for quiet after a run that
        did not end cleanly."""
        parked = self._parked.pop(wanted, None)
        current = self._current()
        if current is not None and self.gateway is not None:
            self._parked[current] = _Parked(self.gateway, self.links)
            while len(self._parked) > MAX_PARKED:
                oldest = next(iter(self._parked))
                await self._close_parked(self._parked.pop(oldest))
        self.gateway, self.links = None, Links(self.pool, self.scale)
        if parked is not None and parked.gateway.crashed() is None:
            self.gateway, self.links, self.settings = parked.gateway, parked.links, wanted
            return
        if parked is not None:
            await self._close_parked(parked)  # it died while parked: start it again
        await self._start(wanted, browser_engine)

    @staticmethod
    async def _close_parked(parked: _Parked) -> None:
        await parked.links.close()
        await parked.gateway.close()

    async def close(self) -> None:
        await self.links.close()
        if self.gateway is not None:
            await self.gateway.close()
        while self._parked:
            await self._close_parked(self._parked.pop(next(iter(self._parked))))
