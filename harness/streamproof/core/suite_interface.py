"""What a suite provides to the harness (core: names no suite).

Each suite package has a ``suite`` module that satisfies :class:`Suite`; the registry in
:mod:`streamproof.suites` maps a scenario kind to it, and the CLI, the pytest plugin, the mutant
matrix and the reports use nothing else of a suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from streamproof.core.timeline import Timeline
    from streamproof.core.verdicts import Verdict

__all__ = ["Environment", "Reference", "Suite"]


@dataclass(frozen=True)
class Reference:
    """One bundled reference of a suite and the mutants proven against it (the mutant matrix
    runs the suite's scenarios against it, and against each mutant)."""

    name: str
    """The matrix's name for it: the suite's kind, plus what sets it apart from the default
    reference (a wire, a policy), e.g. ``gateway-ag-ui``."""
    target: Path
    """Its target file."""
    intended: Mapping[str, str]
    """Mutant name -> the requirement that must catch it."""
    concurrent: Mapping[str, int] = field(default_factory=dict)
    """Mutant name -> the sessions at once (``--concurrency``) its run needs."""
    mutant_runs: str | None = None
    """A ``-k`` expression the mutants' runs keep (the reference's run keeps every scenario):
    ``not binding_rest`` runs the A2A client's mutants on JSON-RPC only, its reference on
    every binding it declares."""


class Environment(Protocol):
    """A suite's fakes, links and target, started once and reset per scenario."""

    @property
    def target_label(self) -> str: ...

    @property
    def link_engines(self) -> dict[str, str]:
        """The engine that carries out each link right now (after a run: that run's)."""
        ...

    @property
    def target_info(self) -> dict[str, Any]:
        """What a report says of the target: ``kind``, ``name``, ``label``, ``command`` (the argv
        as run) or ``url``, ``capabilities`` (every one declared); plain JSON data."""
        ...

    def scale(self, seconds: float) -> float: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, scenario: Any) -> Any: ...


class Suite(Protocol):
    """What every suite's ``suite`` module provides
    (``harness/streamproof/suites/<name>/suite.py``)."""

    KIND: str
    SCENARIO_FOLDER: str
    SCENARIO_MODEL: type[BaseModel]
    TARGET_MODEL: type[BaseModel]
    BUGS: Mapping[str, Any]
    INTENDED: Mapping[str, str]
    DEFAULT_TARGET: Path

    def load_target(self, path: str | Path | None) -> Any: ...

    def references(self) -> tuple[Reference, ...]:
        """Every bundled reference with its mutants, the default one (``DEFAULT_TARGET``,
        ``INTENDED``) first, named after the kind."""
        ...

    def environment(
        self,
        target_file: str | Path | None,
        *,
        bug: str | None,
        time_scale: float,
        engine: str | None = None,
    ) -> Environment: ...

    def render_failure(self, scenario_id: str, result: Any, failing: list[Verdict]) -> str: ...

    def summarize_observation(self, observation: Any) -> dict[str, Any]:
        """The few facts of an observation that tell most (counts, the sequence of frames or
        requests as one short string, timings, faults fired), as plain JSON data: what
        ``results.json`` keeps of a scenario that passed, instead of the whole observation."""
        ...

    def timeline(self, observation: Any, verdicts: list[Verdict]) -> Timeline:
        """The scenario's story in time for the report's picture: the lanes of its path, what
        passed between them, the faults that fired, windows and results, and each failed or
        unmet requirement at its ``at`` (the end of the run when it has none), capped to
        :data:`streamproof.core.timeline.MAX_ITEMS` items."""
        ...
