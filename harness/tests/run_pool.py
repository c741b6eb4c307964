"""Whole runs planned ahead and overlapped: the tests of one xdist group each assert on a run of
their own (``streamproof run`` in a subprocess, mostly waiting on scripted time), and a module
fixture starts all of that group's runs a few at a time as soon as the first of them asks, so
later tests find theirs finished or under way instead of starting it then.

A test module lists, per test function, how to make its run from the test's parameters
(:class:`Plans`); the fixture (:func:`RunPool.fixture`) plans every test of the asking test's
``xdist_group`` that this session collected (so ``-k`` and ``--deselect`` still choose what runs)
and hands each test the result of its own run. Each run is exactly the run the test made alone
before, with its own report folder: only when it starts changes. The tests of a group must
share an ``xdist_group`` so that one worker, one pool, plans and reads them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.tests.cores import BUSY_LIMIT
from streamproof.runtime.cpu import Admission, GatedPool
from streamproof.targets.warm.command import RUN_PRELOAD, run_to_end

ROOT = Path(__file__).resolve().parents[2]

JOBS = int(os.environ.get("STREAMPROOF_TEST_RUN_JOBS", "4"))
"""Runs at once per pool at most (``STREAMPROOF_TEST_RUN_JOBS``; 1: one after another, as
before). Past the first, a run starts only while the cores have time for it
(harness/tests/cores.py): the other workers' tests share them."""


@dataclass(frozen=True)
class Run:
    """One finished ``streamproof`` command: its exit status, output and ``results.json``."""

    returncode: int
    stdout: str
    stderr: str
    report_dir: Path
    elapsed: float

    @property
    def report(self) -> dict[str, Any]:
        return json.loads((self.report_dir / "results.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def tail(self, out: int = 4000, err: int = 2000) -> str:
        return self.stdout[-out:] + self.stderr[-err:]


def streamproof_command(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python -m streamproof.cli ARGS`` from the repository root to its end, its output
    captured, as ``subprocess.run`` gives it; forked from this worker's zygote of ``streamproof``
    (docs/explanation/performance.md#warm-starts), which imported what a run imports."""
    return run_to_end(
        [sys.executable, "-m", "streamproof.cli", *args],
        cwd=str(ROOT),
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preload=RUN_PRELOAD,
    )


def streamproof_run(report_dir: Path, *args: str, timeout: float = 600) -> Run:
    """``streamproof ARGS --report-dir REPORT_DIR`` from the repository root, as a user runs it
    (:func:`streamproof_command`)."""
    started = time.monotonic()
    done = streamproof_command(*args, "--report-dir", str(report_dir), timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr, report_dir, time.monotonic() - started)


Plan = Callable[..., Any]
"""Makes one test's run (a :class:`Run`, or whatever the test reads): called with the test's
parameters and ``report_dir`` (its own)."""


@dataclass(frozen=True)
class Shared:
    """One run that several tests read: made once, by ``make(report_dir)``, named ``key``."""

    key: str
    make: Callable[[Path], Any]


Plans = Mapping[str, Plan | Shared]
"""Test function name -> how to make its run (its own, or one :class:`Shared` run)."""


def _group(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return None
    return str(marker.args[0] if marker.args else marker.kwargs.get("name"))


class RunPool:
    """The planned runs of one module on this worker, a few at a time (:data:`JOBS`)."""

    def __init__(self, plans: Plans, tmp: pytest.TempPathFactory, jobs: int = JOBS) -> None:
        self._plans = plans
        self._tmp = tmp
        self._executor = GatedPool(Admission(max(jobs, 1), cores=1, busy_limit=BUSY_LIMIT))
        self._futures: dict[str, Future[Any]] = {}
        self._groups: set[str | None] = set()

    def _key(self, item: pytest.Item) -> str:
        plan = self._plans.get(getattr(item, "originalname", item.name))
        return plan.key if isinstance(plan, Shared) else item.nodeid

    def _submit(self, item: pytest.Item) -> None:
        name = getattr(item, "originalname", item.name)
        key = self._key(item)
        if key in self._futures or name not in self._plans:
            return
        plan = self._plans[name]
        report_dir = self._tmp.mktemp((key if isinstance(plan, Shared) else name)[:40])
        if isinstance(plan, Shared):
            self._futures[key] = self._executor.submit(plan.make, report_dir)
            return
        callspec = getattr(item, "callspec", None)
        params = dict(callspec.params) if callspec is not None else {}
        self._futures[key] = self._executor.submit(plan, **params, report_dir=report_dir)

    def run_of(self, request: pytest.FixtureRequest) -> Any:
        """The asking test's run: on the first ask from its group, every planned test of that
        group in this session is started, a few at a time, in the order of the plans (list
        the longest first) and then of collection."""
        item = request.node
        assert isinstance(item, pytest.Item)
        group = _group(item)
        if group not in self._groups:
            self._groups.add(group)
            order = list(self._plans)
            mine = [
                other
                for other in request.session.items
                if other.module is item.module
                and _group(other) == group
                and getattr(other, "originalname", other.name) in self._plans
            ]
            mine.sort(key=lambda other: order.index(getattr(other, "originalname", other.name)))
            for other in mine:
                self._submit(other)
        self._submit(item)  # not planned with its group (e.g. no xdist_group): now
        return self._futures[self._key(item)].result()

    def close(self) -> None:
        self._executor.shutdown(cancel_pending=True)

    @staticmethod
    def fixture(plans: Plans, tmp: pytest.TempPathFactory) -> Iterator[RunPool]:
        """The body of a module fixture: ``yield from RunPool.fixture(PLANS,
        tmp_path_factory)``."""
        pool = RunPool(plans, tmp)
        try:
            yield pool
        finally:
            pool.close()
