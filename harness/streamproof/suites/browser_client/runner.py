"""Browser-client scenario + target -> observation -> verdicts.

:class:`BrowserClientEnvironment` owns what lives for a whole test process: for a page, the
fake gateway, the ``browser`` link in front of it, the command serving the page (if any) and
one Chromium; for a reducer module, nothing but Node per scenario. :meth:`run` loads one
scenario into the fake (its frames, its history) and the link (its faults), opens the page in a
fresh browser context, types the prompt, and lets the fake play the frames one at a time: after
each, the page is given until it has received and rendered it, the settled screen is read, and
the tab is hidden if the scenario says so. Then the page's requests, every screen state and the
link's records become a :class:`~.observation.BrowserClientObservation` for the checks.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.core.durations import TimeScale
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.gateway import FakeGateway, GatewayFrame, history_events
from streamproof.fakes.gateway.ag_ui import ag_ui_blocks
from streamproof.faults.engines import FaultLink
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.fired import judge_fault_plan
from streamproof.faults.plan import Fault
from streamproof.suites.browser_client.checks import check_browser_client
from streamproof.suites.browser_client.drivers.page import PageDriver, with_query
from streamproof.suites.browser_client.drivers.reducer import run_reducer
from streamproof.suites.browser_client.observation import BrowserClientObservation
from streamproof.suites.browser_client.observe import (
    module_observation,
    page_observation,
)
from streamproof.suites.browser_client.page_server import PageServer
from streamproof.suites.browser_client.scenario import TRANSPORT, BrowserClientScenario
from streamproof.suites.browser_client.target import BrowserTarget
from streamproof.targets.errors import TargetError

__all__ = ["BrowserClientEnvironment", "BrowserClientScenarioResult", "on_the_wire"]

FRAME_WAIT_S: Final = 1.5
"""How long a frame the fake wrote has to reach the page's reader before the harness moves on
(a frame a fault held back, or a page that reads no stream)."""
FIRST_REQUEST_S: Final = 5.0
"""How long after the prompt was sent the page has to make its chat request."""
MIN_WATCH_S: Final = 1.5
"""After a stream that did not end at done or error, the harness watches the page at least this
long (real seconds): long enough to see a reader that retries after its default second."""
MIN_SETTLE_S: Final = 0.2


def on_the_wire(plan: tuple[Fault, ...], blocks: list[str]) -> tuple[Fault, ...]:
    """The scenario's plan as the link counts: ``after_event: N`` means after the Nth frame,
    which on a wire that sends several events per frame (AG-UI) is after that frame's last
    event, not after the Nth event."""
    ends, count = [0], 0
    for block in blocks:
        count += block.count("\n\n")
        ends.append(count)
    out = []
    for fault in plan:
        n = fault.when.after_event
        if n is not None and 0 < n < len(ends) and ends[n] != n:
            fault = fault.model_copy(
                update={"when": fault.when.model_copy(update={"after_event": ends[n]})}
            )
        out.append(fault)
    return tuple(out)


@dataclass(frozen=True)
class BrowserClientScenarioResult:
    observation: BrowserClientObservation
    verdicts: tuple[Verdict, ...]


class BrowserClientEnvironment:
    """The fake gateway, the ``browser`` link, the page's server and Chromium, started once."""

    def __init__(
        self,
        target: BrowserTarget,
        *,
        bug: str | None = None,
        time_scale: float = 1.0,
        engine: str | None = None,
    ) -> None:
        self.target = target
        self.bug = bug
        self.scale = TimeScale(time_scale)
        self.fake = FakeGateway(target.endpoints.chat, target.endpoints.history)
        self.engines = EnginePool(engine)
        self.link: FaultLink | None = None
        self.link_engine: str | None = None
        self._url: str | None = None
        self._fake_url: str | None = None
        self.server: PageServer | None = None
        self.driver: PageDriver | None = None

    @property
    def target_label(self) -> str:
        return f"{self.target.name}[bug={self.bug}]" if self.bug else self.target.name

    @property
    def link_engines(self) -> dict[str, str]:
        return {"browser": self.link_engine} if self.link_engine is not None else {}

    @property
    def target_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.target.kind,
            "name": self.target.name,
            "label": self.target_label,
            "capabilities": sorted(self.target.capabilities),
        }
        if self.target.command is not None:
            info["command"] = list(self.target.command)
        elif self.target.url is not None:
            info["url"] = self.target.url
        else:
            info["module"] = self.target.module
        return info

    async def start(self) -> None:
        if self.target.is_module:
            return
        self._fake_url = await self.fake.start()
        try:
            await self._use_engine(self.engines.default)
            assert self.target.screen is not None
            self.driver = PageDriver(self.target.screen)
            await self.driver.start()
        except BaseException:
            await self.close()
            raise

    async def _use_engine(self, name: str) -> None:
        if name == self.link_engine:
            return
        assert self._fake_url is not None
        if self.link is not None:
            await self.link.close()
            self.link, self.link_engine, self._url = None, None, None
        engine = await self.engines.get(name)
        link = engine.link("browser", self._fake_url, time_scale=self.scale)
        self._url = await link.start()
        self.link, self.link_engine = link, name
        if self.target.command is not None:
            # A page told the gateway through its environment is served anew for a new link.
            if self.server is not None and self.target.gateway.env is not None:
                await self.server.close()
                self.server = None
            if self.server is None:
                self.server = PageServer(self.target, gateway_url=self._url)
                await self.server.start()

    async def close(self) -> None:
        if self.driver is not None:
            await self.driver.close()
            self.driver = None
        if self.server is not None:
            await self.server.close()
            self.server = None
        if self.link is not None:
            await self.link.close()
            self.link = None
        await self.engines.close()
        await self.fake.close()

    def _page_url(self, session: str) -> str:
        base = self.server.url if self.server is not None else self.target.url
        assert base is not None and self._url is not None
        params = {"session": session}
        if self.target.gateway.param is not None:
            params[self.target.gateway.param] = self._url
        if self.bug is not None and self.target.bug_param is not None:
            params[self.target.bug_param] = self.bug
        return with_query(base, params)

    async def run(self, scenario: BrowserClientScenario) -> BrowserClientScenarioResult:
        if self.target.is_module:
            if TRANSPORT in scenario.needs:
                raise ScenarioSkipped(
                    f"target {self.target.name!r} is a reducer module, which has no transport: "
                    "this scenario cuts or ends the stream early, hides the tab or reads the "
                    "history endpoint; run it against a page"
                )
            return await self._run_module(scenario)
        return await self._run_page(scenario)

    async def _run_module(self, scenario: BrowserClientScenario) -> BrowserClientScenarioResult:
        assert self.target.module is not None
        frames = [
            {"type": f.type, "data": GatewayFrame(f.type, f.payload).data_text(), "id": str(i)}
            for i, f in enumerate(scenario.frames, start=1)
        ]
        states = await run_reducer(self.target.module, frames, self.bug)
        observation = module_observation(scenario, self.target_label, states, self.scale.factor)
        return BrowserClientScenarioResult(observation, tuple(check_browser_client(observation)))

    async def _run_page(self, scenario: BrowserClientScenario) -> BrowserClientScenarioResult:
        if self.link is None or self.driver is None:
            raise RuntimeError("BrowserClientEnvironment.run before start")
        chosen, problems = self.engines.choose(
            {"browser": scenario.links.browser}, scenario.links.engine.items()
        )
        if problems:
            raise ScenarioSkipped(
                f"the run's engine {self.engines.default} cannot carry out this scenario's "
                f"plan: {'; '.join(problems)}",
                cause="engine",
            )
        await self.engines.ready(chosen.values())
        await self._use_engine(chosen["browser"])
        link, driver, scale = self.link, self.driver, self.scale
        assert link is not None
        frames = [
            GatewayFrame(f.type, f.payload, scale(f.gap or 0.0), f.retry) for f in scenario.frames
        ]
        hides = {a.after_frame: scale(a.for_) for a in scenario.tab}
        hidden_at: list[float] = []
        tab_tasks: list[asyncio.Task[None]] = []
        t0 = time.monotonic()

        def ended() -> bool:
            return any(e.kind == "end" and e.method == "POST" for e in link.events)

        async def pace(index: int, block: str) -> None:
            if await driver.wait_received(block, FRAME_WAIT_S, gone=ended):
                await driver.settle()
            if index in hides:
                hidden_at.append(time.monotonic() - t0)
                # The tab's own task: a page that closes its stream on hide cancels the fake's
                # handler (this call), and the tab must still be shown again.
                task = asyncio.create_task(driver.hide(hides[index]))
                tab_tasks.append(task)
                await asyncio.shield(task)

        history = [i.model_dump(exclude_none=True) for i in scenario.stored_history()]
        blocks = (
            ag_ui_blocks(frames)
            if self.target.profile == "ag-ui"
            else [f.block(i) for i, f in enumerate(frames, start=1)]
        )
        self.fake.load(frames, history_events(history), pace, blocks)
        plan = on_the_wire(scenario.links.browser, blocks)
        link.load(plan)
        self.fake.set_epoch(t0)
        link.set_epoch(t0)
        wall_t0 = time.time() - (time.monotonic() - t0)
        session = f"session-{secrets.token_hex(4)}"
        await driver.open(self._page_url(session), wall_t0)
        try:
            problem = await driver.send(scenario.prompt)
            if problem is not None:
                # The target file's selectors do not fit the page: not a verdict on the page.
                raise TargetError(f"target {self.target.name!r}: {problem}")
            await self._play_out(scenario, frames, ended)
            if tab_tasks:
                await asyncio.gather(*tab_tasks)
                await self._watch(scenario)
            await driver.settle()
            received, states = await driver.states()
            observation = page_observation(
                scenario,
                target=self.target_label,
                time_scale=scale.factor,
                frames=frames,
                blocks=blocks,
                profile=self.target.profile,
                sent=dict(self.fake.sent),
                received=received,
                states=states,
                requests=list(self.fake.requests),
                link_events=tuple(link.events),
                reconnect_s=max(scale(scenario.limits.reconnect), 1.0),
                screen=self.target.screen,
                hidden_at=tuple(hidden_at),
                console_errors=tuple(driver.console_errors),
                plan=plan,
            )
            verdicts = judge_fault_plan(
                check_browser_client(observation),
                {"browser": plan},
                {"browser": observation.link_events or ()},
                scenario.requirements,
            )
            if any(v.outcome is Outcome.FAIL for v in verdicts):
                shot = await driver.screenshot()
                observation = observation.model_copy(update={"screenshot": shot})
        finally:
            await driver.leave()
        return BrowserClientScenarioResult(observation, tuple(verdicts))

    async def _play_out(
        self, scenario: BrowserClientScenario, frames: list[GatewayFrame], ended: Any
    ) -> None:
        """Wait for the run to be played and the page to be done with it: the chat request
        (bounded), every frame paced, then the page's reaction to how the stream ended."""
        scale = self.scale
        link, driver = self.link, self.driver
        assert link is not None and driver is not None
        end = time.monotonic() + FIRST_REQUEST_S
        while not any(e.kind == "request" and e.method == "POST" for e in link.events):
            if time.monotonic() >= end:
                return
            await asyncio.sleep(0.01)
        bound = sum(f.gap_s for f in frames) + len(frames) * (FRAME_WAIT_S + 1.0) + 10.0
        end = time.monotonic() + bound + sum(scale(a.for_) for a in scenario.tab)
        while not (self.fake.played or ended()):
            if time.monotonic() >= end:
                raise TargetError(
                    f"the run of {scenario.id} did not finish within {bound:.0f}s: the page "
                    "kept the stream open without reading it"
                )
            await asyncio.sleep(0.02)
        faulted = any(e.kind == "fault" for e in link.events)
        last = frames[-1]
        terminal = (
            last.type in ("done", "error")
            and not faulted
            and (self.fake.completed or await driver.received(self.fake.last_block))
        )
        if terminal:
            await asyncio.sleep(max(scale(scenario.limits.settle), MIN_SETTLE_S))
        else:
            await self._watch(scenario)

    async def _watch(self, scenario: BrowserClientScenario) -> None:
        """Watch what the page does after a stream that did not end at done or error (or after
        the tab came back): long enough for a history read, or a reader's default retry."""
        scale = self.scale
        await asyncio.sleep(
            max(scale(scenario.limits.settle), scale(scenario.limits.reconnect), MIN_WATCH_S)
        )
