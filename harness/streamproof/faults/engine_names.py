"""The names of the fault engines, apart from the engines themselves, so a scenario's
``links.engine`` can name one without importing any engine (see
:mod:`streamproof.faults.engines`)."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["DEFAULT_ENGINE", "ENGINES", "EngineName"]

EngineName = Literal["inline", "toxiproxy", "mitmproxy"]
ENGINES: Final[tuple[EngineName, ...]] = get_args(EngineName)
DEFAULT_ENGINE: Final[EngineName] = "inline"
