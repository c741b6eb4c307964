"""What every fault engine offers the harness: a link, one proxied hop with a plan.

The runners talk to links only through :class:`FaultLink`, so a link can be carried out by
streamproof's inline proxy, by toxiproxy or by mitmproxy without a runner or a check knowing
which. The contract, for every engine:

* ``start()`` listens on loopback and returns the base URL clients use instead of the upstream;
  ``close()`` ends everything in progress and frees every port and process;
* ``load(plan)`` replaces the plan between scenarios and clears the records; the plan has been
  judged against the engine's declared support (:mod:`~streamproof.faults.engines.catalog`) before;
* ``events`` are :class:`~streamproof.faults.records.LinkEvent` records of what reached the client
  side of the hop, with the same meaning whatever the engine (``connect``, ``request``,
  ``response_headers``, ``event`` with its 1-based ``event_index``, ``fault``, ``end`` with
  ``how``/``by``), times relative to ``set_epoch``;
* ``requests_seen``, ``open_connections``, ``in_flight`` and ``wait_quiet`` answer what the
  runners ask between scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from streamproof.core.durations import TimeScale
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent

__all__ = ["Engine", "EngineUnavailable", "FaultLink"]


class EngineUnavailable(RuntimeError):
    """An engine that cannot run on this machine (not installed, not built); the message says
    what is missing and how to get it."""


class FaultLink(Protocol):
    """One proxied hop carried out by some engine."""

    link: str
    """The hop's name: ``browser``, ``model`` or ``a2a``."""

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str: ...

    async def close(self) -> None: ...

    @property
    def base_url(self) -> str: ...

    def load(self, faults: Sequence[Fault]) -> None: ...

    @property
    def faults(self) -> tuple[Fault, ...]: ...

    def set_epoch(self, t0: float) -> None: ...

    @property
    def events(self) -> list[LinkEvent]: ...

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int: ...

    @property
    def open_connections(self) -> int: ...

    @property
    def in_flight(self) -> int: ...

    async def wait_quiet(self, timeout: float) -> bool: ...


class Engine(Protocol):
    """A fault engine for one harness session: whatever it needs running (a toxiproxy server,
    a mitmproxy master) starts with :meth:`start` and stops with :meth:`close`; in between it
    makes links."""

    name: str

    async def start(self) -> None: ...

    def link(self, link: str, upstream: str, *, time_scale: float | TimeScale = 1.0) -> FaultLink:
        """A new link (not started) in front of ``upstream``, a base URL."""
        ...

    async def close(self) -> None: ...
