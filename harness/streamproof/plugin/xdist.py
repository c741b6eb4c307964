"""The streamproof plugin under pytest-xdist (``-n N``) and with ``--streamproof-shard I/N``.

Loaded by :mod:`streamproof.plugin` (``pytest_plugins``); cheap to import.

* **Sharding.** After ``-k`` and ``-m`` have deselected, only the scenarios of part I of N
  stay selected (:func:`streamproof.runtime.parallel.split`, balanced by the durations of the last
  report); the others are deselected as ``-k`` would. Other tests of the session are left alone.
* **Workers.** Each xdist worker is a pytest session of its own: its
  :class:`~streamproof.plugin.session.HarnessSession` starts its own fakes, links and target (on
  ports of its own: targets must not fix theirs, see
  :func:`streamproof.runtime.parallel.parallel_refusal`), and at its end closes them and sends
  its records to the controller (``workeroutput``) instead of writing a report.
* **Controller.** It runs no scenario: it hands the scenarios out longest first (by the
  durations of the last report, :class:`LongestFirst`), so the run does not end with one worker
  alone on a long scenario; it gathers the workers' records, puts them in collection order,
  writes the one ``results.json`` / ``report.html`` a serial run would write, and reorders
  ``junit.xml`` the same way. Interrupted (a signal, or a worker's Ctrl-C), it passes
  SIGTERM on to every worker still running, so each closes its target before xdist's own
  shutdown (which kills a worker that has not exited after 10 s) reaches it.
"""

from __future__ import annotations

import json
import os
import signal
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from streamproof.plugin.session import HarnessSession

_OUTPUT = "streamproof"
"""The key of a worker's ``workeroutput`` that holds its records (a JSON text)."""

_ORDER_KEY: pytest.StashKey[list[str]] = pytest.StashKey()
_NODES_KEY: pytest.StashKey[list[Any]] = pytest.StashKey()
SHARD_KEY: pytest.StashKey[dict[str, Any]] = pytest.StashKey()
"""What the shard of this session was (for the report)."""


def is_worker(config: pytest.Config) -> bool:
    """This pytest process is an xdist worker."""
    return hasattr(config, "workerinput")


def is_controller(config: pytest.Config) -> bool:
    """This pytest process hands the tests to xdist workers and runs none itself."""
    return not is_worker(config) and getattr(config.option, "dist", "no") != "no"


def _workers(config: pytest.Config) -> int | None:
    count = getattr(config.option, "numprocesses", None)
    return count if isinstance(count, int) else None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamproof", "streamproof conformance scenarios")
    group.addoption(
        "--streamproof-shard",
        metavar="I/N",
        default=None,
        help="run only part I (from 1) of N of the selected scenarios: a deterministic split, "
        "balanced by the durations of the last report (--streamproof-durations-from)",
    )
    group.addoption(
        "--streamproof-durations-from",
        metavar="FILE",
        default=None,
        help="a results.json whose durations balance --streamproof-shard and order the "
        "workers of -n, longest first (default: the "
        "results.json in the report folder, when there is one; else every scenario counts "
        "the same)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from streamproof.runtime.parallel import DurationsError, durations_of_report, parse_shard

    shard = config.getoption("--streamproof-shard", None)
    if shard is not None:
        try:
            parse_shard(shard)
        except ValueError as exc:
            raise pytest.UsageError(f"--streamproof-shard {exc}") from None
    durations = config.getoption("--streamproof-durations-from", None)
    if durations is not None:
        try:
            durations_of_report(Path(durations))
        except DurationsError as exc:
            raise pytest.UsageError(f"--streamproof-durations-from {exc}") from None
    workers = _workers(config)
    if is_controller(config) and workers is not None and workers > 1:
        problem = _refusal(config.getoption("--streamproof-target", None), workers)
        if problem is not None:
            raise pytest.UsageError(problem)
    if is_controller(config):
        config.stash[_NODES_KEY] = []


def _refusal(target_file: str | None, workers: int | str) -> str | None:
    """Why the target file cannot run on ``workers`` workers (None: it can, or it is not
    readable, which the run reports as it always does)."""
    if target_file is None:
        return None
    from streamproof.plugin.session import target_kind
    from streamproof.runtime.parallel import parallel_refusal
    from streamproof.suites import suite
    from streamproof.targets.errors import TargetConfigError

    kind = target_kind(target_file)
    if kind is None:
        return None
    try:
        target = suite(kind).load_target(target_file)
    except (TargetConfigError, KeyError, ValueError):
        return None
    return parallel_refusal(target, workers)


def _durations(config: pytest.Config) -> tuple[dict[str, float], str | None]:
    """The durations that balance the shards and order the workers, and the file they came
    from."""
    from streamproof.runtime.parallel import DurationsError, durations_of_report

    given = config.getoption("--streamproof-durations-from", None)
    label = os.environ.get("STREAMPROOF_DURATIONS_LABEL") or given
    if given is not None:
        return durations_of_report(Path(given)), label
    if config.getoption("--streamproof-run-dir", None):
        return {}, None  # `streamproof run` names the last run's report when it has one
    report_dir = config.getoption("--streamproof-report-dir", None)
    default = (Path(report_dir) if report_dir else config.rootpath / "reports") / "results.json"
    try:
        return durations_of_report(default), str(default)
    except DurationsError:
        return {}, None  # no usable last report: balanced by count


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Keep the scenarios of this shard (after ``-k``/``-m``: trylast)."""
    text = config.getoption("--streamproof-shard", None)
    if text is None:
        return
    from streamproof.runtime.parallel import parse_shard, split
    from streamproof.suites.loading import LoadedScenario

    shard = parse_shard(text)
    scenarios = [
        i
        for i, item in enumerate(items)
        if isinstance(getattr(item, "loaded", None), LoadedScenario)  # a ScenarioItem
    ]
    ids = [items[i].name for i in scenarios]
    durations, source = _durations(config)
    known = {sid: durations[sid] for sid in ids if sid in durations}
    part = split(ids, shard.count, known)[shard.index - 1]
    keep = {scenarios[i] for i in part}
    others = set(range(len(items))) - set(scenarios)
    deselected = [items[i] for i in scenarios if i not in keep]
    items[:] = [item for i, item in enumerate(items) if i in keep or i in others]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    config.stash[SHARD_KEY] = {
        "index": shard.index,
        "count": shard.count,
        "scenarios": len(part),
        "of": len(ids),
        "balanced_by": "durations" if known else "count",
        "durations_from": source if known else None,
    }


def shard_of(config: pytest.Config) -> dict[str, Any] | None:
    """Which part of the selection this session ran (``--streamproof-shard``), or None."""
    return config.stash.get(SHARD_KEY, None)


def order_longest_first(ids: Sequence[str | None], durations: Mapping[str, float]) -> list[int]:
    """The indexes of ``ids`` (scenario ids; None for an item that is no scenario) longest
    first by ``durations``: a scenario they do not know counts as their median, an item that
    is no scenario as nothing; ties keep the collection order. Without any duration of these
    ids the order is the collection's."""
    from streamproof.runtime.parallel import longest_first, median

    known = [durations[sid] for sid in ids if sid is not None and sid in durations]
    if not known:
        return list(range(len(ids)))
    default = median(known, 0.0)
    return longest_first([0.0 if sid is None else durations.get(sid, default) for sid in ids])


def _scenario_id(config: pytest.Config, nodeid: str) -> str | None:
    """The scenario id of a collected node (``path::id``), or None when it is no scenario."""
    from streamproof.plugin.shared import is_scenario_file

    path, _, name = nodeid.partition("::")
    return name if name and is_scenario_file(config.rootpath / path, config) else None


def _make_longest_first(base: type[Any]) -> type[Any]:
    class LongestFirst(base):  # type: ignore[misc]
        """xdist's load scheduling, with the pending scenarios handed out longest first (by
        the durations of the last report) and one at a time beyond the two each worker
        holds, so the run ends with every worker busy to near its end. A session without
        scenarios, or without durations of them, is scheduled as xdist does."""

        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self._ordered = False
            if config.getoption("maxschedchunk", None) is None:
                self.maxschedchunk = 1

        def _send_tests(self, node: Any, num: int) -> None:
            if not self._ordered and self.collection is not None:
                self._ordered = True
                durations, _ = _durations(self.config)
                ids = [_scenario_id(self.config, nodeid) for nodeid in self.collection]
                rank = {i: r for r, i in enumerate(order_longest_first(ids, durations))}
                self.pending.sort(key=lambda i: rank[i])
            super()._send_tests(node, num)

    return LongestFirst


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n N`` (xdist's ``--dist load``, its default): longest first; any other ``--dist``
    (a project's own ``loadgroup``, say) is xdist's."""
    if config.getvalue("dist") != "load":
        return None
    import importlib

    load = getattr(importlib.import_module("xdist.scheduler"), "LoadScheduling", None)
    if load is None or not hasattr(load, "_send_tests"):
        return None  # an xdist this plugin does not know: its own scheduling
    return _make_longest_first(load)(config, log)


# --- workers ------------------------------------------------------------------------------


def send_records(config: pytest.Config, holder: HarnessSession | None, scenarios: int) -> None:
    """On a worker at its end: close its environments and hand its records to the
    controller."""
    if holder is not None:
        holder.close()
    output: dict[str, Any] = getattr(config, "workeroutput", {})
    output[_OUTPUT] = json.dumps(
        {
            "scenarios": scenarios,
            "records": list(zip(holder.nodeids, holder.records, strict=True)) if holder else [],
            "targets": holder.targets if holder else {},
            "shard": config.stash.get(SHARD_KEY, None),
        }
    )


# --- controller ---------------------------------------------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_testnodeready(node: Any) -> None:
    nodes = node.config.stash.get(_NODES_KEY, None)
    if nodes is not None:
        nodes.append(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: Sequence[str]) -> None:
    config: pytest.Config = node.config
    if _ORDER_KEY in config.stash:
        return
    config.stash[_ORDER_KEY] = list(ids)
    from streamproof.plugin.shared import SESSION_KEY, is_scenario_file

    root = config.rootpath
    if any(is_scenario_file(root / nodeid.split("::", 1)[0], config) for nodeid in ids):
        # Scenarios will run: from now on SIGTERM and SIGHUP interrupt this process as Ctrl-C
        # does (the session installs that), so the workers are told and the report written.
        from streamproof.plugin.session import session_for

        session_for(config, SESSION_KEY)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Interrupted: tell every worker still running, before xdist's shutdown waits for it."""
    config = session.config
    if not is_controller(config) or int(exitstatus) != pytest.ExitCode.INTERRUPTED:
        return
    for node in config.stash.get(_NODES_KEY, []):
        if hasattr(node, "workeroutput"):
            continue  # that worker already finished
        pid = _pid(node)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass  # gone already


def _pid(node: Any) -> int | None:
    """The worker's process id, as execnet learnt it when the worker started (None if it
    cannot say)."""
    try:
        pid = node.gateway._rinfo().pid
    except Exception:
        return None
    return pid if isinstance(pid, int) and pid > 0 and pid != os.getpid() else None


def gather(
    config: pytest.Config, holder: HarnessSession | None
) -> tuple[HarnessSession | None, int]:
    """On the controller at its end: the workers' records merged into ``holder`` (made if
    needed), in collection order, and how many scenarios were selected; (None, 0) when the
    workers selected none (a project's own tests)."""
    from streamproof.plugin.session import session_for
    from streamproof.plugin.shared import SESSION_KEY, is_scenario_file
    from streamproof.runtime.parallel import merge_worker_records

    outputs: list[dict[str, Any]] = []
    for node in config.stash.get(_NODES_KEY, []):
        text = getattr(node, "workeroutput", {}).get(_OUTPUT)
        if isinstance(text, str):
            outputs.append(json.loads(text))
    order = config.stash.get(_ORDER_KEY, [])
    # Workers killed before they could answer still collected: the report says what was
    # selected, as a serial run interrupted before its first scenario does.
    collected = sum(
        1 for nodeid in order if is_scenario_file(config.rootpath / nodeid.split("::")[0], config)
    )
    scenarios = max([collected, *(int(o.get("scenarios", 0)) for o in outputs)])
    if not scenarios:
        return None, 0
    if holder is None:
        holder = session_for(config, SESSION_KEY)
    holder.records = merge_worker_records(
        order, ([(str(n), r) for n, r in o.get("records", [])] for o in outputs)
    )
    for output in outputs:
        for kind, info in (output.get("targets") or {}).items():
            holder.targets.setdefault(kind, info)  # the first worker's, ports and all
        if output.get("shard") and holder.shard is None:
            holder.shard = output["shard"]
    holder.workers = _workers(config) or len(config.stash.get(_NODES_KEY, []))
    return holder, scenarios


def reorder_junit(config: pytest.Config) -> None:
    """Put ``junit.xml``'s test cases in collection order (xdist writes them as they end)."""
    path = getattr(config.option, "xmlpath", None)
    order = config.stash.get(_ORDER_KEY, None)
    if not path or not order:
        return
    file = Path(os.path.expanduser(os.path.expandvars(path)))
    if not file.is_file():
        return
    from _pytest.junitxml import mangle_test_address

    rank: dict[tuple[str, str], int] = {}
    for i, nodeid in enumerate(order):
        names = mangle_test_address(nodeid)
        rank.setdefault((".".join(names[:-1]), names[-1]), i)
    try:
        tree = ET.parse(file)
    except (ET.ParseError, OSError):
        return
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite_element in suites:
        children = list(suite_element)
        cases = [c for c in children if c.tag == "testcase"]
        key = {
            id(c): rank.get((c.get("classname", ""), c.get("name", "")), len(rank)) for c in cases
        }
        ordered = iter(sorted(cases, key=lambda c: key[id(c)]))
        for child in children:
            suite_element.remove(child)
        for child in children:
            suite_element.append(next(ordered) if child.tag == "testcase" else child)
    tree.write(file, encoding="utf-8", xml_declaration=True)
