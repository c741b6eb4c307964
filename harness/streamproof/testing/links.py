"""``fault_link``: a fault proxy in front of any upstream, its plan in ``--fault`` words."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.inline import InlineProxy
from streamproof.faults.plan import Fault, PlanError, parse_plan
from streamproof.faults.records import LinkEvent
from streamproof.faults.shorthand import parse_fault
from streamproof.testing.hub import OP_S, Fakes, ScriptError

__all__ = ["FaultLink", "FaultLinks"]

# --- fault_link ---------------------------------------------------------------------------------


def _fault(value: str | Fault | Mapping[str, Any], where: str) -> Fault:
    if isinstance(value, Fault):
        return value
    try:
        if isinstance(value, str):
            return parse_fault(value)
        return parse_plan([dict(value)])[0]
    except (ValueError, PlanError) as exc:  # ShorthandError is a ValueError
        raise ScriptError(f"{where}: {exc}") from None


class FaultLink:
    """A fault proxy in front of one upstream: send requests to :attr:`url` instead."""

    __test__ = False

    def __init__(self, fakes: Fakes, proxy: InlineProxy) -> None:
        self._fakes = fakes
        self._proxy = proxy

    @property
    def url(self) -> str:
        """The proxy's base URL; a request's path and query are appended to the upstream's."""
        return self._proxy.base_url

    @property
    def upstream(self) -> str:
        return self._proxy.upstream

    def plan(self, *faults: str | Fault | Mapping[str, Any], time_scale: float = 1.0) -> None:
        """Replace the plan with ``faults`` (``--fault`` shorthand such as ``"after_event 3:
        rst"``, a plan item's dict, or a :class:`~streamproof.faults.plan.Fault`) and forget the
        records. Durations in the plan are multiplied by ``time_scale``."""
        checked = [_fault(f, f"fault_link plan item {i}") for i, f in enumerate(faults)]
        if not time_scale > 0:
            raise ScriptError(f"fault_link: time_scale must be positive, not {time_scale!r}")

        def _load() -> None:
            self._proxy.time_scale = TimeScale(time_scale)
            self._proxy.load(checked)
            self._proxy.set_epoch(time.monotonic())

        self._fakes.call(_load)

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._fakes.call(lambda: self._proxy.faults)

    @property
    def events(self) -> list[LinkEvent]:
        """Everything the link recorded since the last plan, in order."""
        return self._fakes.call(lambda: self._proxy.events)

    @property
    def fired(self) -> list[LinkEvent]:
        """The ``fault`` records: which plan item fired (``.fault.index``), when, why."""
        return [e for e in self.events if e.kind == "fault"]

    @property
    def forwarded(self) -> list[LinkEvent]:
        """The SSE events forwarded downstream (``.detail``: the event type)."""
        return [e for e in self.events if e.kind == "event"]

    @property
    def endings(self) -> list[LinkEvent]:
        """How each response ended (``.how``: clean, fin, rst...; ``.by``: who ended it)."""
        return [e for e in self.events if e.kind == "end"]

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int:
        return self._fakes.call(lambda: self._proxy.requests_seen(method, path, rpc))

    def wait_quiet(self, timeout: float = 5.0) -> None:
        """Wait until no request is in progress; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._proxy.wait_quiet(timeout), timeout + OP_S):
            raise TimeoutError(f"fault_link: a request was still in progress after {timeout:g}s")

    async def wait_quiet_async(self, timeout: float = 5.0) -> None:
        if not await self._fakes.wait_async(lambda: self._proxy.wait_quiet(timeout)):
            raise TimeoutError(f"fault_link: a request was still in progress after {timeout:g}s")


class FaultLinks:
    """The ``fault_link`` fixture: ``fault_link(upstream, *faults)`` gives the link to
    ``upstream`` with that plan. One proxy per upstream URL per session, reset per test."""

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes

    def __call__(
        self, upstream: str, *faults: str | Fault | Mapping[str, Any], time_scale: float = 1.0
    ) -> FaultLink:
        link = FaultLink(self._fakes, self._fakes.link(upstream))
        link.plan(*faults, time_scale=time_scale)
        return link
