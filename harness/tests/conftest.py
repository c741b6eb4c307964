"""Shared test helpers.

``STREAMPROOF_REQUIRE_ALL=1`` (set by CI) turns a missing real component into a failure:
a test that needs google-adk, a2a-sdk, toxiproxy or a JDK must run there, never skip.
"""

from __future__ import annotations

import gc
import importlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

import pytest
from hypothesis import HealthCheck, settings

from harness.tests.cores import wait_for_cores
from streamproof.runtime.cpu import CpuGauge
from streamproof.targets.warm import sharing

if TYPE_CHECKING:
    from streamproof.faults.engines import Engine

pytest_plugins = ["pytester"]

# pytest keeps each test module's assertion-rewritten code in __pycache__ only where bytecode
# may be written; under PYTHONDONTWRITEBYTECODE (.ci/run sets it, and so do some machines) every
# worker rewrote all the test modules from source on every run, about 8 CPU-s each. The pytest
# processes write that cache whatever the environment says; what they start still obeys it
# (docs/explanation/performance.md#the-test-loop).
sys.dont_write_bytecode = False

# Hypothesis's default 200 ms deadline per example times the machine, not the code: the
# properties here are pure functions that take milliseconds, and under `make test`'s parallel
# workers on a 2-core machine (beside whatever else runs) one scheduler stall is longer than
# that, which hypothesis reports as a failure ("Unreliable test timings"). So no wall-clock
# deadline, and no too_slow health check, which measures the same thing while generating; each
# property keeps its example count. On CI hypothesis loads its own "ci" profile (the same
# deadline and health checks, derandomized, no example database), so it is left alone there;
# `pytest --hypothesis-profile NAME` still picks another.
settings.register_profile(
    "streamproof", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if settings.get_current_profile_name() != "ci":
    settings.load_profile("streamproof")


@pytest.fixture(scope="session", autouse=True)
def _warm_starts_shared() -> Iterator[None]:
    """The references' starts in every run a test makes (in this process or as a ``streamproof
    run`` command) fork from zygotes this worker owns: google-adk and a2a-sdk are imported
    once per worker and kind of start, not at every start
    (docs/explanation/performance.md#warm-starts)."""
    with sharing():
        yield


def _missing(name: str, why: object) -> NoReturn:
    if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
        pytest.fail(f"{name} is required (STREAMPROOF_REQUIRE_ALL=1) but missing: {why}")
    pytest.skip(f"{name} is not installed: {why}")


def require_module(name: str) -> ModuleType:
    """Import a real component, or skip (fail under STREAMPROOF_REQUIRE_ALL=1) without it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        _missing(name, exc)


def require_executable(name: str) -> Path:
    """The program ``name`` on PATH (``mvn``, ``java``), or skip (fail under
    STREAMPROOF_REQUIRE_ALL=1) without it."""
    found = shutil.which(name)
    if found is None:
        _missing(name, f"no {name!r} on PATH")
    return Path(found)


def require_toxiproxy() -> Path:
    """The toxiproxy-server binary the toxiproxy engine would run (``$STREAMPROOF_TOXIPROXY``,
    the project's build in .tools/bin, or PATH), or skip (fail under STREAMPROOF_REQUIRE_ALL=1)
    without one."""
    from streamproof.faults.engines.link import EngineUnavailable
    from streamproof.faults.engines.toxiproxy.server import find_binary

    try:
        return find_binary()
    except EngineUnavailable as exc:
        _missing("toxiproxy", exc)


def require_engine(name: str) -> Engine:
    """A new fault engine of kind ``name`` (:func:`~streamproof.faults.engines.open_engine`), or
    skip (fail under STREAMPROOF_REQUIRE_ALL=1) when this machine cannot run it."""
    from streamproof.faults.engines import EngineUnavailable, open_engine

    try:
        return open_engine(name)
    except EngineUnavailable as exc:
        _missing(f"engine {name}", exc)


def require_oracle(name: str, probe: Callable[[], object]) -> None:
    """Run an oracle's install check (``probe``: Node and its npm package, or the Python
    validator), or skip (fail under STREAMPROOF_REQUIRE_ALL=1) when it says the oracle cannot
    run here."""
    from streamproof.suites.gateway.oracles.errors import OracleUnavailable

    try:
        probe()
    except OracleUnavailable as exc:
        _missing(f"oracle {name}", exc)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what the imports and the collection made (about 320,000 objects in a worker):
    a full collection walked them all, 0.24 s on a quiet machine and longer on a busy one, a
    pause of the loop that serves the in-process fakes' scripted events, which a client's idle
    limit of 2 s at the default clock can see. The objects the tests make are still collected
    (docs/explanation/performance.md#a-third-worker)."""
    gc.collect()
    gc.freeze()


class _FirstSlowTestGate:
    """Under xdist, the first ``slow`` test of a module starts when the cores have time for it
    (harness/tests/cores.py): ``make test`` runs more workers than cores. Only the first: the
    wait blocks this thread, and a module that runs its scenarios in the background on its own
    event loop (the reference A2A client's) has that loop stopped between its tests, so a wait
    there froze its fake servers mid-run."""

    def __init__(self) -> None:
        self.module: object = None
        self.gauge: CpuGauge | None = None

    def enter(self, item: pytest.Item) -> None:
        if item.get_closest_marker("slow") is None or "PYTEST_XDIST_WORKER" not in os.environ:
            return
        module = getattr(item, "module", None)
        if module is self.module:
            return
        self.module = module
        if self.gauge is None:
            self.gauge = CpuGauge()
        wait_for_cores(self.gauge)


_GATE = _FirstSlowTestGate()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _GATE.enter(item)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``slow`` tests first (in their collected order), then the rest: under ``make
    test``'s workers (``--dist loadgroup --no-loadscope-reorder`` hands tests out in this
    order) each long end-to-end test starts as early as possible, and the unit tests fill the
    workers around them instead of queueing the slow ones behind themselves. Then the
    ``xdist_group`` of each test is put into its id, so that ``--dist loadgroup`` keeps a group
    on one worker (:func:`_group_ids`)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    _group_ids(config, items)


def _group_ids(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker under ``--dist loadgroup``: end each grouped test's id with
    ``@GROUP``, which is how the controller sees the group. pytest-xdist 3.8 does this by
    setting ``item._nodeid``, which pytest 9 no longer reads (a node's id lives in ``_id``), so
    its groups were silently ignored and the tests of one group (one module fixture, one
    planned pool of runs: run_pool) were spread over both workers, each paying for the
    group's shared work again. Done here, after xdist's own attempt, only where it did not
    take."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest, where xdist's own suffix works
        return
    for item in items:
        names = sorted(
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        )
        if names and "@" not in item.nodeid.rpartition("]")[2]:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(dict.fromkeys(names))}")  # type: ignore[attr-defined]
