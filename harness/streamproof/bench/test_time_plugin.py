"""The pytest plugin behind :mod:`streamproof.bench.test_time`: it times each test phase and each
fixture setup on the wall and CPU clocks and writes the records to the file named by
``STREAMPROOF_TEST_TIME_FILE`` (under xdist the workers send theirs with their reports, and the
controller writes them all)."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_RECORDS: list[dict[str, Any]] = []
_KEY = "streamproof_test_time"
_PENDING = pytest.StashKey[list[dict[str, Any]]]()
"""The records of one test not yet sent with a report."""


def _keep(item: pytest.Item, record: dict[str, Any]) -> None:
    item.stash.setdefault(_PENDING, []).append(record)


def _cpu() -> float:
    """CPU seconds of this process and of the children it has reaped."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


_CURRENT: list[pytest.Item] = []
"""The test whose phase is running: a module or session fixture set up then is charged to it."""


def _timed(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    _CURRENT[:] = [item]
    wall, cpu = time.monotonic(), _cpu()
    yield
    record = {
        "kind": "phase",
        "nodeid": item.nodeid,
        "phase": phase,
        "slow": item.get_closest_marker("slow") is not None,
        "wall": round(time.monotonic() - wall, 4),
        "cpu": round(_cpu() - cpu, 4),
    }
    _keep(item, record)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "teardown")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, None, None]:
    wall, cpu = time.monotonic(), _cpu()
    yield
    node = request.node if isinstance(request.node, pytest.Item) else next(iter(_CURRENT), None)
    direct = getattr(fixturedef.func, "__name__", "") == "get_direct_param_fixture_func"
    if node is not None and not direct:  # not a parametrize argument
        record = {
            "kind": "fixture",
            "name": fixturedef.argname,
            "scope": fixturedef.scope,
            "wall": round(time.monotonic() - wall, 4),
            "cpu": round(_cpu() - cpu, 4),
        }
        _keep(node, record)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, Any, None]:
    """Each phase's report carries the records made since the last one (they cross from an
    xdist worker to the controller with it)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    pending = item.stash.get(_PENDING, [])
    report.user_properties = [*report.user_properties, *((_KEY, r) for r in pending)]
    item.stash[_PENDING] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == _KEY and isinstance(value, dict):
            _RECORDS.append(value)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a worker: its records travel with its reports
    target = os.environ.get("STREAMPROOF_TEST_TIME_FILE")
    if target:
        Path(target).write_text(json.dumps(_RECORDS), encoding="utf-8")
