"""How long the harness waits on the gateway's runs, as the fakes see them: for a stream to end,
for a detached run to end, out the disposal bound, for the model calls still open to settle,
and for an orphaned run to fall quiet before the next scenario.
"""

from __future__ import annotations

import asyncio
import time

from streamproof.core.durations import TimeScale
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.faults.engines import FaultLink
from streamproof.suites.gateway.checks.disposal import MIN_BOUND as MIN_DISPOSE_BOUND
from streamproof.suites.gateway.checks.run_bound import run_bound_deadline
from streamproof.suites.gateway.scenario import GatewayScenario

__all__ = [
    "DISPOSE_MARGIN",
    "LINK_SETTLE_SECONDS",
    "MIN_RUN_TIMEOUT",
    "QUIET_SECONDS",
    "SETTLE_SECONDS",
    "Waits",
]

MIN_RUN_TIMEOUT = 10.0
"""The harness waits at least this long for a stream to end, whatever the time scale."""
DISPOSE_MARGIN = 0.25
"""Extra wait after the disposal bound before the harness looks, so a call closed right at
the bound is seen closed."""
QUIET_SECONDS = 0.5
"""After a run that did not end cleanly, the fakes must see no call for this long before the
next scenario starts (an orphaned run goes on calling the model between its steps)."""
LINK_SETTLE_SECONDS = 0.5
"""After a stream ended, how long (real time, at most) the harness lets the model link see the
gateway close a model call it has just given up (a run stopped at its bound closes its model
call just before its last frame): the link's records are read after that."""
SETTLE_SECONDS = 2.0
"""How long (scaled, at least 1 s) the harness waits after a stream ends for the model calls the
gateway still has open to finish, before it reads the history."""


class Waits:
    """The waits of a run on the fakes' clock (``t0``: the epoch both fakes record against)."""

    def __init__(self, model: FakeModel, tools: FakeTools, scale: TimeScale) -> None:
        self.model = model
        self.tools = tools
        self.scale = scale

    def quiet_for(self, t0: float) -> float:
        """Seconds since either fake last saw a call start or end (since ``t0`` when there was
        none)."""
        last = max(
            (
                *(c.t if c.t_end is None else max(c.t, c.t_end) for c in self.model.calls),
                *(c.t for c in self.tools.calls),
            ),
            default=0.0,
        )
        return time.monotonic() - t0 - last

    async def quiet(self, limit: float, t0: float) -> None:
        """Until neither fake has seen a call for QUIET_SECONDS and no model call is open (at
        most ``limit``). The quiet spell is counted from the last call's start or end, so one
        that has already passed (while the runner waited out the disposal bound, say) is not
        waited for again: the next scenario starts at once instead of QUIET_SECONDS later."""
        deadline = time.monotonic() + limit
        while True:
            await self.model.wait_idle(max(deadline - time.monotonic(), 0.0))
            quiet = self.quiet_for(t0)
            if quiet >= QUIET_SECONDS and not self.model.busy:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(max(QUIET_SECONDS - quiet, 0.01), left))

    def horizon(self, scenario: GatewayScenario) -> float:
        """How long the scripted model can keep a call busy: the scaled sum of its delays."""
        total = 0.0
        for turn in scenario.model:
            total += turn.chunk_delay + sum(
                c.delay if c.delay is not None else turn.chunk_delay for c in turn.chunks
            )
        return min(self.scale(total) + 5.0, 60.0)

    async def orphans(self, scenario: GatewayScenario, t0: float) -> None:
        """Let an orphaned run (a broken gateway) finish calling the fakes before the next
        scenario loads a new script, so runs never mix."""
        await self.quiet(self.horizon(scenario), t0)

    def detached(self, scenario: GatewayScenario, run_bound: float | None) -> float:
        """How long a detached run is given to end after the browser left: its run bound (the
        one the gateway was given, else the scenario's), never less than the script needs."""
        bound = run_bound or self.scale(scenario.limits.gateway_run_timeout)
        return max(bound + 2.0, self.horizon(scenario))

    def stream(self, scenario: GatewayScenario, declared_run_bound: float | None) -> float:
        """How long the harness waits for the stream to end: the scenario's ``run_timeout``
        (scaled, at least MIN_RUN_TIMEOUT), and never less than the run bound of a gateway that
        declares it honours one (plus GW-RUN-BOUND's tolerance). A gateway whose model client
        retries longer than that (ADK Java's defaults: about 57 s of backoff) is ended by its
        own bound, and the harness must still be listening when the error frame comes."""
        wait = max(self.scale(scenario.limits.run_timeout), MIN_RUN_TIMEOUT)
        if declared_run_bound is not None:
            wait = max(wait, run_bound_deadline(declared_run_bound))
        return wait

    async def disposal(self, scenario: GatewayScenario, t0: float, left_at: float) -> None:
        """Give the gateway its disposal bound after the browser left at ``left_at``, before
        the harness looks: a model stream still open or a call started since then is an
        orphaned run."""
        bound = max(self.scale(scenario.limits.dispose_within), MIN_DISPOSE_BOUND)
        delay = t0 + left_at + bound + DISPOSE_MARGIN - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    async def settle(self, model_link: FaultLink, end: str) -> None:
        """After a stream the browser saw to its end: the model calls still open finish, and
        the model link sees the gateway close one it has just given up."""
        await self.model.wait_idle(max(self.scale(SETTLE_SECONDS), 1.0))
        if end in ("clean", "error"):
            await model_link.wait_quiet(LINK_SETTLE_SECONDS)
