"""The per-process harness session behind the pytest items: environments, runs, records.

One :class:`HarnessSession` per pytest process: it starts the environment (fakes and target)
on first use, runs each scenario item through the runner, renders failures for humans and
records every result for ``results.json`` (:mod:`streamproof.report.results`), which a CI gate
reads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest
import yaml

from streamproof.core.capabilities import INSTALL_SKIPS, ScenarioSkipped
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.report.baseline import Baseline, headline, load_baseline
from streamproof.report.html import write_html
from streamproof.report.results import results_report, write_results
from streamproof.report.runs import new_run, publish
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.suites import suite
from streamproof.targets.errors import TargetConfigError, TargetError

if TYPE_CHECKING:
    from streamproof.core.suite_interface import Environment
    from streamproof.suites.loading import LoadedScenario


class ScenarioItem(Protocol):
    """What the session needs of a pytest item (the plugin's ``ScenarioItem``)."""

    loaded: LoadedScenario
    user_properties: list[tuple[str, object]]

    @property
    def nodeid(self) -> str: ...


START_BUDGET = 180.0
"""Seconds the harness gives the environment to start (the target's own ready timeout is
shorter and gives the precise message)."""


def session_for(config: pytest.Config, key: pytest.StashKey[HarnessSession]) -> HarnessSession:
    holder = config.stash.get(key, None)
    if holder is None:
        holder = HarnessSession(config)
        config.stash[key] = holder
    return holder


class HarnessSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.target_file: str | None = config.getoption("--streamproof-target")
        self.bug: str | None = config.getoption("--streamproof-bug")
        self.time_scale: float = config.getoption("--streamproof-time-scale") or DEFAULT_TIME_SCALE
        self.strict: bool = config.getoption("--streamproof-strict")
        self.require_all: bool = bool(
            config.getoption("--streamproof-require-all")
            or config.getini("streamproof_require_all")
        )
        """A scenario skipped for want of an engine or component fails instead."""
        self.engine: str | None = config.getoption("--streamproof-engine")
        self.full_observations: bool = config.getoption("--streamproof-full-observations")
        self.concurrency: int = config.getoption("--streamproof-concurrency", None) or 1
        """How many copies of each scenario run at once against the one target."""
        baseline = config.getoption("--streamproof-baseline")
        # Already validated when pytest was configured (a bad file is a usage error there).
        self.baseline: Baseline | None = load_baseline(baseline) if baseline else None
        report_dir = config.getoption("--streamproof-report-dir")
        # As with the CLI, the report lands in reports/ by default (under pytest's rootdir).
        self.report_dir = Path(report_dir) if report_dir else config.rootpath / "reports"
        run_dir = config.getoption("--streamproof-run-dir", None)
        self.run_dir: Path | None = Path(run_dir) if run_dir else None
        """Where ``streamproof run`` wants the reports, as they are (it made that folder)."""
        self.records: list[dict[str, Any]] = []
        self.nodeids: list[str] = []
        """The pytest node id of each record (how a parallel run puts the workers' records
        back in collection order)."""
        self.workers: int | None = None
        """How many xdist workers ran the scenarios (set on the controller of ``-n N``)."""
        self.shard: dict[str, Any] | None = None
        """Which part of the selection this run is (``--shard I/N``), for the report."""
        self.observations: dict[int, Any] = {}
        """Every scenario's full observation (the suite's model), by the index of its record in
        :attr:`records`, whatever the report keeps of it."""
        self.started_at = dt.datetime.now(dt.UTC)
        self._t0 = time.monotonic()
        self._loop: BackgroundLoop | None = None
        self._envs: dict[str, Environment] = {}
        self._warming: dict[str, tuple[Environment, concurrent.futures.Future[None]]] = {}
        """Environments starting in the background while another kind's scenarios run."""
        self.kinds: list[str] = []
        """The scenario kinds this session selected, in the order their first scenario comes
        (set by the plugin): the environments :meth:`_warm_up` starts."""
        self._start_errors: dict[str, BaseException] = {}
        # Under plain pytest, SIGTERM and SIGHUP would kill the process and orphan the target:
        # make them interrupt like Ctrl-C while scenarios run (unless the program running
        # pytest, such as `streamproof run`, handles them itself).
        self.interrupts = Interrupts()
        self.interrupts.install(only_defaults=True)
        self.targets: dict[str, dict[str, Any]] = {}
        """Per scenario kind, the target its environment runs (for the report's provenance)."""

    # --- environment ----------------------------------------------------------------------

    def _environment(self, kind: str) -> Environment:
        """The environment for one kind of scenario, started on first use."""
        if kind in self._start_errors:
            raise self._start_errors[kind]
        env = self._envs.get(kind)
        if env is None:
            warming = self._warming.pop(kind, None)
            try:
                if warming is not None:
                    env, started = warming
                    self.targets[kind] = env.target_info
                    try:
                        started.result(timeout=START_BUDGET)
                    except TimeoutError:
                        started.cancel()
                        raise
                else:
                    env = self._make_environment(kind)
                    self.targets[kind] = env.target_info
                    if self._loop is None:
                        self._loop = BackgroundLoop()
                    self._loop.run(env.start(), timeout=START_BUDGET)
            except (TargetError, TargetConfigError, TimeoutError, OSError) as exc:
                self._start_errors[kind] = exc
                raise
            self._envs[kind] = env
            self.targets[kind] = env.target_info  # now with what it learnt at start
            self._warm_up()
        return env

    def _warm_up(self) -> None:
        """Start, in the background, the environment of each other kind the session selected
        (:attr:`kinds`): the reference gateway's start (about 2 s of imports in its own
        process) then overlaps the A2A client scenarios, which mostly wait
        (docs/explanation/performance.md,
        "Start and suite time"). A kind this run cannot start is left to its first scenario, which
        reports why as it always did."""
        assert self._loop is not None
        for kind in self.kinds:
            if kind in self._envs or kind in self._warming or kind in self._start_errors:
                continue
            try:
                env = self._make_environment(kind)
            except Exception:
                continue  # skipped or refused: its first scenario says so
            # Not in the report's targets until a scenario of its kind runs on it.
            future = asyncio.run_coroutine_threadsafe(env.start(), self._loop.loop)
            self._warming[kind] = (env, future)

    def _make_environment(self, kind: str) -> Environment:
        """The user's target for its own kind (scenarios of another kind are skipped, saying
        why), the bundled reference when no target is given; a ``--bug`` goes to the reference
        whose mutant it names."""
        given = target_kind(self.target_file) if self.target_file else None
        if given is not None and given != kind:
            raise ScenarioSkipped(
                f"{kind} scenarios need a target file of kind: {kind}, and this run's target "
                f"{self.target_file} is of kind: {given} (run them with their own target file, "
                f"or deselect them with -m 'not {kind.replace('-', '_')}')",
                cause="target-kind",
            )
        return suite(kind).environment(
            self.target_file, bug=self.bug, time_scale=self.time_scale, engine=self.engine
        )

    def run_item(
        self, item: ScenarioItem, progress: Callable[[str], None] | None = None
    ) -> str | None:
        """Run one scenario; the failure report, or None when every enforced rule holds.
        ``progress`` is told, about once a second, how far the scenario has come in scenario
        time against its horizon (its ``run_timeout``)."""
        scenario = item.loaded.scenario
        record: dict[str, Any] = {
            "id": scenario.id,
            "title": scenario.title,
            "file": item.loaded.file,
            "line": item.loaded.line,
            "kind": scenario.kind,
            "requirements": list(scenario.requirements),
        }
        index = len(self.records)
        self.records.append(record)
        self.nodeids.append(item.nodeid)
        started = time.monotonic()
        try:
            env = self._environment(scenario.kind)
            record["target"] = env.target_label
            assert self._loop is not None
            budget = env.scale(scenario.limits.run_timeout) + 60.0
            tick = None
            if progress is not None:
                horizon = scenario.horizon
                scale = self.time_scale

                def tick(real_s: float) -> None:
                    progress(f"{real_s / scale:.0f}s of {horizon:g}s scenario time")

            if self.concurrency > 1:
                run_concurrent = getattr(env, "run_concurrent", None)
                if run_concurrent is None:
                    raise ScenarioSkipped(
                        f"the {scenario.kind} suite does not run --concurrency "
                        f"{self.concurrency} yet: run it without",
                        cause="concurrency",
                    )
                running = run_concurrent(scenario, self.concurrency)
            else:
                running = env.run(scenario)
            result: Any = self._loop.run(running, timeout=budget, tick=tick)
            record["engines"] = env.link_engines  # which engine carried each link
            if self.concurrency > 1:
                record["concurrency"] = result.load
        except ScenarioSkipped as exc:
            if self.require_all and exc.cause in INSTALL_SKIPS:
                # A gate that asked for everything: what this install cannot run is a failure.
                why = f"required (--require-all) but not run: {exc}"
                record.update(outcome="failed", error=why, skip_cause=exc.cause)
                pytest.fail(why, pytrace=False)
            record.update(outcome="skipped", error=str(exc), skip_cause=exc.cause)
            pytest.skip(str(exc))
        except KeyboardInterrupt as exc:
            # Stopped by a signal: not judged, not failed, and nothing to rerun for.
            record.update(outcome="interrupted", error=str(exc) or "interrupted")
            raise
        except BaseException as exc:
            record.update(outcome="failed", error=f"{type(exc).__name__}: {exc}")
            if isinstance(exc, TargetError | TargetConfigError):
                record["target_error"] = True  # the target could not be started or reached
            raise
        finally:
            record["duration_s"] = round(time.monotonic() - started, 3)
        for verdict in result.verdicts:
            item.user_properties.append((verdict.requirement, verdict.outcome.value))
        enforced = [v for v in result.verdicts if self._enforced(v)]
        record["outcome"] = "failed" if enforced else "passed"
        known = self._known(scenario.id, enforced)
        new = [v for v in enforced if v.requirement not in known]
        if enforced and not new:
            record["known_failure"] = True  # fails its checks, not the run
        self.observations[index] = result.observation
        # A failure or an unmet SHOULD keeps all its evidence: the whole observation and each
        # verdict's expected and observed. Of a scenario where everything held, the suite's
        # summary and each verdict's message are enough, and the report stays small.
        unmet = any(v.outcome in (Outcome.FAIL, Outcome.NON_STRICT) for v in result.verdicts)
        full = self.full_observations or bool(enforced) or unmet
        evidence = None if full else {"expected", "observed"}
        record["verdicts"] = []
        for v in result.verdicts:
            entry = v.model_dump(mode="json", exclude_defaults=True, exclude=evidence)
            if self._enforced(v) and v.requirement in known:
                entry["baseline"] = known[v.requirement]  # a known failure: the entry's reason
            record["verdicts"].append(entry)
        record["observation_detail"] = "full" if full else "summary"
        record["observation"] = (
            result.observation.model_dump(mode="json")
            if full
            else suite(scenario.kind).summarize_observation(result.observation)
        )
        # The scenario's story in time, for the report's picture (passed or failed alike). It is
        # a drawing, not a verdict: should drawing ever fail, the verdicts stand and the report
        # says why the picture is missing.
        try:
            record["timeline"] = (
                suite(scenario.kind)
                .timeline(result.observation, list(result.verdicts))
                .model_dump(mode="json", exclude_defaults=True)
            )
        except Exception as exc:
            record["timeline_error"] = f"{type(exc).__name__}: {exc}"
        if not enforced:
            return None
        if not new:
            # Every enforced failure is a known one: an expected failure for pytest (JUnit
            # shows it as <skipped type="pytest.xfail">), which does not fail the session.
            first = next(v for v in enforced if v.requirement in known)
            more = f" (and {len(enforced) - 1} more)" if len(enforced) > 1 else ""
            pytest.xfail(f"known failure (baseline): {headline(first)}{more}")
        # The first line names the first new broken rule (a CI test tab shows it); the suite's
        # rendering follows.
        lines = [headline(new[0])]
        if known:
            lines.append("known failure(s) (baseline): " + ", ".join(sorted(known)))
        lines.append(suite(scenario.kind).render_failure(scenario.id, result, enforced))
        return "\n".join(lines)

    def _known(self, scenario_id: str, enforced: list[Verdict]) -> dict[str, str]:
        """Of ``enforced``, the requirements the baseline names for this scenario, with the
        reason it gives."""
        if self.baseline is None:
            return {}
        reasons = {
            v.requirement: self.baseline.reason(scenario_id, v.requirement) for v in enforced
        }
        return {requirement: why for requirement, why in reasons.items() if why is not None}

    def _enforced(self, verdict: Verdict) -> bool:
        return verdict.outcome is Outcome.FAIL or (
            self.strict and verdict.outcome is Outcome.NON_STRICT
        )

    # --- end of session -------------------------------------------------------------------

    def finish(self, exitstatus: int, *, interrupted: bool | None = None) -> None:
        """Stop the environments, then write the reports; ``interrupted``: a signal (or
        Ctrl-C) stopped the run, rather than a collection error (pytest's exit status 2 for
        both; default: that status)."""
        try:
            self.close()
        finally:
            self.write_report(exitstatus, interrupted=interrupted)

    def close(self) -> None:
        """Stop every environment this session started (targets, fakes, links). A second
        signal while they close is remembered, not raised: it must not leave a target behind
        (a parallel run's workers can get one from the terminal and one from the controller)."""
        self.interrupts.hold()
        try:
            for env, started in self._warming.values():
                # Never used (interrupted first): stop its start, then close what it started.
                started.cancel()
                with contextlib.suppress(Exception):
                    started.result(timeout=30)
                if self._loop is not None:
                    with contextlib.suppress(Exception):
                        self._loop.run(env.close(), timeout=30)
            self._warming.clear()
            for env in self._envs.values():
                if self._loop is not None:
                    # Teardown must never hide the results.
                    with contextlib.suppress(Exception):
                        self._loop.run(env.close(), timeout=30)
        finally:
            if self._loop is not None:
                self._loop.close()
                self._loop = None
            self._envs.clear()
            self.interrupts.restore()

    def write_report(self, exitstatus: int, *, interrupted: bool | None = None) -> Path:
        """``results.json`` and, beside it, ``report.html`` drawn from the same report: in the
        folder ``streamproof run`` made, or under pytest as the CLI lays them out (this run's
        own folder under ``runs/``, ``latest`` pointing at it, copies on top)."""
        report = self.report(exitstatus, interrupted=interrupted)
        folder = self.run_dir or new_run(self.report_dir)
        path = write_results(report, folder / "results.json")
        write_html(report, folder / "report.html")
        if self.run_dir is None:
            # pytest's own --junitxml goes where the user said: not this run's to replace.
            publish(self.report_dir, folder, names=("results.json", "report.html"))
        return path

    def report(self, exitstatus: int, *, interrupted: bool | None = None) -> dict[str, Any]:
        if interrupted is None:
            interrupted = any(r.get("outcome") == "interrupted" for r in self.records) or (
                int(exitstatus) == 2 and self.interrupts.exit_status is not None
            )
        return results_report(
            self.records,
            target_file=self.target_file,
            bug=self.bug,
            time_scale=self.time_scale,
            strict=self.strict,
            engine=self.engine,
            baseline=self.baseline,
            started_at=self.started_at,
            duration_s=time.monotonic() - self._t0,
            exitstatus=exitstatus,
            targets=self.targets,
            workers=self.workers,
            shard=self.shard,
            command_line=sys.argv,
            pytest_args=[str(arg) for arg in self.config.invocation_params.args],
            concurrency=self.concurrency,
            interrupted=interrupted,
        )


def target_kind(path: str) -> str | None:
    """The ``kind`` a target file declares (None when unreadable: the loader reports that)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    kind = data.get("kind", "gateway") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None
