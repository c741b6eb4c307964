"""Fault engines: what carries out a link's fault plan (:mod:`streamproof.faults.plan`) on the wire.

Each engine makes links (:class:`~streamproof.faults.engines.link.FaultLink`) and declares what it
can do with each plan item (:mod:`~streamproof.faults.engines.catalog`). ``inline`` (the default) is
streamproof's own SSE-aware reverse proxy in :mod:`~streamproof.faults.engines.inline`; the others
run a real proxy the field uses: ``toxiproxy`` (:mod:`~streamproof.faults.engines.toxiproxy`).
:func:`open_engine` imports an engine only when it is asked for, so its dependencies load only
then.
"""

from __future__ import annotations

import importlib.metadata

from streamproof.faults.engines.catalog import ENGINES, EngineName, engine_support
from streamproof.faults.engines.link import Engine, EngineUnavailable, FaultLink

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
        from streamproof.faults.engines.inline import InlineEngine

        return InlineEngine()
    if name == "mitmproxy":
        _require_mitmproxy()
        from streamproof.faults.engines.mitmproxy import MitmproxyEngine

        return MitmproxyEngine()
    if name == "toxiproxy":
        from streamproof.faults.engines.toxiproxy import ToxiproxyEngine

        return ToxiproxyEngine()
    raise EngineUnavailable(f"engine {name} has no implementation in this streamproof")


def _require_mitmproxy() -> None:
    """mitmproxy 12.3, the version the engine was measured on (it reaches into mitmproxy's
    connection handling for fin and rst), or :class:`EngineUnavailable` saying how to get it."""
    how = "it is a dependency of streamproof: reinstall streamproof (pip install --force-reinstall)"
    try:
        version = importlib.metadata.version("mitmproxy")
    except importlib.metadata.PackageNotFoundError:
        raise EngineUnavailable(
            f"engine mitmproxy needs mitmproxy 12.3.1, which is not installed: {how}"
        ) from None
    if version.split(".")[:2] != ["12", "3"]:
        raise EngineUnavailable(
            f"engine mitmproxy needs mitmproxy 12.3.1, found mitmproxy {version}: {how}"
        )
