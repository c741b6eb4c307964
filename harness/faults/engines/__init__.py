"""Fault engines: what carries out a link's fault plan (:mod:`harness.faults.plan`) on the wire.

Each engine makes links (:class:`~harness.faults.engines.link.FaultLink`) and declares what it
can do with each plan item (:mod:`~harness.faults.engines.catalog`). ``inline`` (the default) is
streamproof's own SSE-aware reverse proxy in :mod:`~harness.faults.engines.inline`; the others
run a real proxy the field uses: ``toxiproxy`` (:mod:`~harness.faults.engines.toxiproxy`).
:func:`open_engine` imports an engine only when it is asked for, so its dependencies load only
then.
"""

from __future__ import annotations

from harness.faults.engines.catalog import ENGINES, EngineName, engine_support
from harness.faults.engines.link import Engine, EngineUnavailable, FaultLink

__all__ = [
    "ENGINES",
    "Engine",
    "EngineName",
    "EngineUnavailable",
    "FaultLink",
    "engine_support",
    "open_engine",
]


def open_engine(name: str) -> Engine:
    """A new (not started) engine of kind ``name``; raises ``KeyError`` for an unknown one and
    :class:`EngineUnavailable` for one this machine cannot run."""
    engine_support(name)  # the message naming the engines
    if name == "inline":
        from harness.faults.engines.inline import InlineEngine

        return InlineEngine()
    if name == "toxiproxy":
        from harness.faults.engines.toxiproxy import ToxiproxyEngine

        return ToxiproxyEngine()
    raise EngineUnavailable(f"engine {name} is not part of this streamproof yet")
